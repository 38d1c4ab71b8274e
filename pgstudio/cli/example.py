"""``pgstudio example [NAME] [--out FILE] [--ungrouped]``: list the canonical designs or write one as JSON."""

from __future__ import annotations

import argparse
from .. import examples
from ._common import write_output

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "example"
HELP = "list canonical designs or write one as JSON"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help="canonical design name; omit to list them")
    p.add_argument("--out", help="write the design JSON here (default: print it)")
    p.add_argument("--ungrouped", action="store_true", help="the per-resource-barrier twin instead")


def run(args: argparse.Namespace) -> int:
    if not args.name:
        print("\n".join(examples.CANONICAL))
        return 0
    design = examples.example(args.name)
    if args.ungrouped:
        design = examples.ungrouped(design)
    if args.out:
        write_output(args.out, design.to_json())
        print(f"wrote {args.out}")
    else:
        print(design.to_json())
    return 0

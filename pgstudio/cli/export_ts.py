"""``pgstudio export-ts DESIGN [--out FILE]``: write a design as a CUTLASS Task Scheduling script."""

from __future__ import annotations

import argparse
import ast

from ..ts import to_ts
from ._common import design_argument, load_design, write_output

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "export-ts"
HELP = "write a design as a readable CUTLASS Task Scheduling (TS) script that TS's TaskManager accepts"


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("--out", help="write the script here (default: print it)")


def run(args: argparse.Namespace) -> int:
    text = to_ts(load_design(args.design))
    ast.parse(text)  # what we write is Python
    if args.out:
        write_output(args.out, text, keep=args.design)
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0

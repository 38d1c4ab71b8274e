"""``pgstudio export-ts DESIGN [--out FILE]``: write a design as a CUTLASS Task Scheduling script."""

from __future__ import annotations

import argparse

from ..ts import run_export_ts
from ._common import design_argument

NAME = "export-ts"
HELP = "write a design as a readable CUTLASS Task Scheduling (TS) script that TS's TaskManager accepts"


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("--out", help="write the script here (default: print it)")


def run(args: argparse.Namespace) -> int:
    return run_export_ts(args.design, args.out)

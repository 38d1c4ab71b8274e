"""``pgstudio import-ts SCRIPT [--out FILE]``: run a CUTLASS Task Scheduling script, write its design.

The script is Python and runs with your rights: import only your own scripts.  pgstudio never
runs a script on its own (design files are JSON and loading one executes nothing).  What the
script prints goes to stderr, so the JSON on stdout stays clean.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from ..ts import load
from ._common import write_output

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "import-ts"
HELP = ("run a CUTLASS Task Scheduling (TS) script under pgstudio's TS names and write the design it builds as JSON "
        "(SECURITY: the script is Python and runs with your rights; import only your own scripts)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", help="a TS design script (Python; its cutlass imports resolve to pgstudio.ts)")
    p.add_argument("--out", help="write the design JSON here (default: print it; the script's own output goes to "
                                 "stderr)")


def run(args: argparse.Namespace) -> int:
    with contextlib.redirect_stdout(sys.stderr):
        design = load(args.script)
    text = design.to_json()
    if args.out:
        write_output(args.out, text)
        print(f"wrote {args.out}: {design.summary()}")
    else:
        print(text)
    return 0

"""``pgstudio check FILE [--exhaustive] [--iterations K] [--inner N] [--method reduced|bfs] [--max-states N]``:
every diagnostic, the checker's verdict with its witness, the barrier layout.

With ``--exhaustive`` the checker runs even when the rule table already found errors: a witness
often shows what an error does (a count that completes a phase early, a release that lets a stage be
overwritten).  Exit status: 0 when valid and not UNSAFE, 1 otherwise.
"""

from __future__ import annotations

import argparse

from ..analysis.check import MAX_STATES, METHODS, check
from ..analysis.diagnostics import Report
from ..analysis.layout import barrier_layout, smem_layout
from ..analysis.validate import diagnostics
from ..errors import DesignError
from ..model.diagnostic import warning
from ._common import design_argument, load_design

NAME = "check"
HELP = "validate a design file: diagnostics, the exhaustive checker's verdict, the barrier layout"


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("--exhaustive", action="store_true", help="also run the exhaustive deadlock / race checker")
    p.add_argument("--iterations", type=int, default=4, help="iterations of the outermost loops the checker explores")
    p.add_argument("--inner", type=int, default=2, help="iterations of inner loops (k tiles) the checker explores")
    p.add_argument("--method", choices=METHODS, default="reduced",
                   help="reduced: partial-order reduced search (default); bfs: the plain search")
    p.add_argument("--max-states", type=int, default=MAX_STATES, help="state cap; reaching it gives INCOMPLETE")


def run(args: argparse.Namespace) -> int:
    design = load_design(args.design)
    diags = diagnostics(design)
    verdict = None
    if args.exhaustive:
        try:
            verdict = check(design, args.iterations, inner=args.inner, method=args.method,
                            max_states=args.max_states)
            diags.extend(verdict.diagnostics())
        except (DesignError, KeyError) as exc:  # a design too broken to run: say so, keep the rest
            diags.append(warning("check.skipped", f"the exhaustive checker could not run: {exc}", (),
                                 "fix the errors above first"))
    report = Report(design.name, tuple(diags), verdict)
    print(report)
    if verdict is not None and verdict.unsafe:
        print()
        print(f"witness ({len(verdict.witness)} steps):")
        print(verdict.table())
    print()
    try:
        print(barrier_layout(design).table())
        print(smem_layout(design).report())
    except Exception as exc:  # the diagnostics above say what is wrong
        print(f"(no barrier layout: {exc})")
    return 0 if report.ok else 1

"""``pgstudio check FILE [--exhaustive] [--iterations K] [--inner N] [--method reduced|bfs]
[--max-states N]``: every diagnostic, the checker's verdict with its witness, the barrier layout.

Replaces the foundation's ``check`` command (same output, more flags).  With ``--exhaustive``
the checker runs even when the rule table already found errors: a witness often shows what an
error does (a count that completes a phase early, a release that lets a stage be overwritten).
Exit status: 0 when valid and not UNSAFE, 1 otherwise.
"""

from __future__ import annotations

import argparse

from ..errors import DesignError
from ..model.diagnostic import warning
from .check import MAX_STATES, METHODS, check
from .diagnostics import Report
from .validate import diagnostics


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("design", help="a design JSON file (pgstudio example NAME --out FILE writes one)")
    p.add_argument("--exhaustive", action="store_true", help="also run the exhaustive deadlock / race checker")
    p.add_argument("--iterations", type=int, default=4, help="iterations of the outermost loops the checker explores")
    p.add_argument("--inner", type=int, default=2, help="iterations of inner loops (k tiles) the checker explores")
    p.add_argument("--method", choices=METHODS, default="reduced",
                   help="reduced: partial-order reduced search (default); bfs: the plain search")
    p.add_argument("--max-states", type=int, default=MAX_STATES, help="state cap; reaching it gives INCOMPLETE")


def cmd_check(args: argparse.Namespace) -> int:
    from ..cli import load_design
    from .layout import barrier_layout, smem_layout
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


cmd_check.add_args = _args


def demo_step(name, design, out) -> None:
    """``pgstudio demo``: every canonical design's verdict over 8 iterations and its simulated period."""
    from .simulate import simulate
    print(f"checker: {check(design, 8).summary()}")
    tl = simulate(design, iterations=8, inner=4)
    print(f"simulated (8 iterations, inner loops 4, H200 cost model): {tl.end:.0f} ns, period {tl.period():.0f} ns")


def _register() -> None:
    """Replace the foundation's ``check`` and add a demo step (the CLI imports this module to
    extend itself; the CLI import stays inside a function: analysis/ may not import it at
    module level)."""
    from .. import cli
    cli.command("check", "validate a design file: diagnostics, the exhaustive checker's verdict, the barrier layout")(
        cmd_check)
    cli.add_demo_hook(demo_step)


_register()

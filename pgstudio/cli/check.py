"""``pgstudio check FILE [--exhaustive] [--iterations K] [--inner N] [--method reduced|bfs] [--max-states N]
[--max-seconds S] [--max-memory MB]``:
every diagnostic, the checker's verdict with its witness, the barrier layout, and the predicted
kernel time of the design for its own problem (``analysis.predict``, with the calibrated machine).

With ``--exhaustive`` the checker runs on a design without rule errors only: a verdict about a
design the rules reject would be a verdict about something else ("checker: not run: fix the errors
above first").  A diagnostic with a mechanical fix lists it ("one-click fix: ..."; the studio shows
it as a button).  Exit status: 0 when valid and not UNSAFE, 1 otherwise.
"""

from __future__ import annotations

import argparse

from ..analysis.check import MAX_MEMORY, MAX_SECONDS, MAX_STATES, METHODS, check
from ..analysis.diagnostics import Report
from ..analysis.layout import barrier_layout, smem_layout
from ..analysis.predict import prediction
from ..analysis.validate import diagnostics
from ..errors import DesignError
from ..model.diagnostic import warning
from ._common import MAX_ITERATIONS, count, design_argument, load_design, positive_number

__all__ = ["NAME", "report_text", "HELP", "add_arguments", "NOT_RUN", "run", "predicted_text"]

NAME = "check"


def report_text(report: Report) -> str:
    """The report, each diagnostic followed by its one-click fixes (as the studio's buttons say)."""
    lines = [str(report).splitlines()[0]]
    for d in report.diagnostics:
        lines.append(f"  {d}")
        lines += [f"      one-click fix: {fx.label}" for fx in d.fixes]
    if report.verdict is not None:
        lines.append(f"  checker: {report.verdict.summary() if hasattr(report.verdict, 'summary') else report.verdict}")
    return "\n".join(lines)
HELP = "validate a design file: diagnostics, the exhaustive checker's verdict, the barrier layout"


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("--exhaustive", action="store_true", help="also run the exhaustive deadlock / race checker")
    p.add_argument("--iterations", type=count(1, MAX_ITERATIONS), default=4,
                   help="iterations of the outermost loops the checker explores")
    p.add_argument("--inner", type=count(1, MAX_ITERATIONS), default=2,
                   help="iterations of inner loops (k tiles) the checker explores")
    p.add_argument("--method", choices=METHODS, default="reduced",
                   help="reduced: partial-order reduced search (default); bfs: the plain search")
    p.add_argument("--max-states", type=count(1, 50 * MAX_STATES), default=MAX_STATES,
                   help="state cap; reaching it gives INCOMPLETE")
    p.add_argument("--max-seconds", type=positive_number(24 * 3600.0), default=MAX_SECONDS,
                   help="time budget of the checker, in seconds")
    p.add_argument("--max-memory", type=count(1, 1 << 20), default=MAX_MEMORY >> 20,
                   help="memory budget of the checker, in MB")


NOT_RUN = "checker: not run: fix the errors above first"


def run(args: argparse.Namespace) -> int:
    design = load_design(args.design)
    diags = diagnostics(design)
    verdict = None
    errors = any(d.is_error for d in diags)
    if args.exhaustive and not errors:
        try:
            verdict = check(design, args.iterations, inner=args.inner, method=args.method,
                            max_states=args.max_states, max_seconds=args.max_seconds,
                            max_memory=args.max_memory * (1 << 20))
            diags.extend(verdict.diagnostics())
        except DesignError as exc:  # a design the checker cannot run: say so, keep the rest
            diags.append(warning("check.skipped", f"the exhaustive checker could not run: {exc}", (),
                                 "fix the errors above first"))
    report = Report(design.name, tuple(diags), verdict)
    print(report_text(report))
    if args.exhaustive and errors:
        print(NOT_RUN)
    if verdict is not None and verdict.witness:  # UNSAFE, or a possible finding (INCOMPLETE)
        print()
        print(f"witness ({len(verdict.witness)} steps):")
        print(verdict.table())
    print()
    try:
        print(barrier_layout(design).table())
        print(smem_layout(design).report())
    except Exception as exc:  # the diagnostics above say what is wrong
        print(f"(no barrier layout: {exc})")
    print(predicted_text(design, errors))
    return 0 if report.ok else 1


def predicted_text(design, errors: bool) -> str:
    """One line: the predicted kernel time and what bounds it, or why there is none."""
    if errors:
        return "predicted kernel time: none (fix the errors above first)"
    try:
        p = prediction(design)
    except Exception as exc:  # a design the model cannot read: say so, keep the rest of the report
        return f"predicted kernel time: none ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    return (f"predicted kernel time: {p.ms:.4f} ms ({p.units} work units on {p.blocks} blocks in {p.rounds} round(s), "
            f"{p.period_ns:.0f} ns per iteration, {p.bound}-bound; model {p.machine})")

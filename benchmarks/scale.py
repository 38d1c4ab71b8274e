"""How analysis, pictures and code generation grow with the size of a design.

Designs are chains of groups (``pgstudio.examples.chain``): 1..31 groups of two members, then 31
groups of 3..8 members, from 5 to 251 resources, in Merge and in Fork.  For each size the table
gives the median wall time of: ``validate()``, ``barrier_layout()``, the text summary (report,
layout table, smem report), ``simulate(8 iterations)``, ``check(8 iterations)``, each picture
(dependency graph SVG through graphviz, barrier layout SVG, grouped vs ungrouped SVG, timeline
SVG) and ``emit()`` (sm_90a).  The last column is the growth of validate + layout from the row
before, per resource (1.0 = linear).  The verdicts use CPU time (this process and its children,
e.g. graphviz), which a busy machine disturbs less than wall time.

Targets: at 256 resources validate + layout <= 100 ms and all pictures <= 2 s; the
checker at 32 groups and 8 iterations <= 1 s.  The widest chain that fits in shared memory has
220 resources (31 x 7); the 251-resource row (31 x 8) exceeds it (``smem.capacity``), which
``validate`` reports, and its kernel is emitted with ``validate=False`` for the timing.  A step
that runs past ``--budget`` seconds is stopped (">budget") and not run at larger sizes ("skip").
Every step is timed cold: the design's memo of layouts and resolved plans (``analysis.memo``) is
dropped before each run, as a fresh edit in the studio starts with none.

    python benchmarks/scale.py [--modes Merge Fork] [--repeat 3] [--budget 20] [--quick]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import time
from typing import Callable

from pgstudio import barrier_layout, smem_layout
from pgstudio.analysis.check import check
from pgstudio.analysis.memo import forget
from pgstudio.analysis.simulate import simulate
from pgstudio.codegen import emit
from pgstudio.examples import chain
from pgstudio.render import barrier_figure, comparison_figure, dependency_graph, timeline_figure, to_svg

#: (groups, members per group): 5, 9, 17, 33, 65, 96, 127, 158, 189, 220 and 251 resources.
SIZES = [(1, 2), (3, 2), (7, 2), (15, 2), (31, 2), (31, 3), (31, 4), (31, 5), (31, 6), (31, 7), (31, 8)]
QUICK = [(1, 2), (7, 2), (31, 2), (31, 4), (31, 8)]
ITERATIONS = 8
STEPS = ["validate", "layout", "text", "simulate", "check", "graph", "barriers", "compare", "timeline", "emit"]
PICTURES = ["graph", "barriers", "compare", "timeline"]


class OverBudget(Exception):
    pass


def cpu_s() -> float:
    """CPU seconds of this process and its finished children (graphviz runs as a child)."""
    t = os.times()  # children: 10 ms ticks, fine for graphviz; this process: process_time's resolution
    return time.process_time() + t.children_user + t.children_system


def median_s(fn: Callable[[], object], repeat: int, budget: float) -> tuple[float, float] | None:
    """Median (wall, CPU) seconds of ``repeat`` runs, or None when one run passes ``budget``
    wall seconds (it is stopped)."""
    def stop(signum, frame):
        raise OverBudget()
    old = signal.signal(signal.SIGALRM, stop)
    walls, cpus = [], []
    try:
        for _ in range(repeat):
            signal.setitimer(signal.ITIMER_REAL, budget)
            t, c = time.perf_counter(), cpu_s()
            fn()
            walls.append(time.perf_counter() - t)
            cpus.append(cpu_s() - c)
            signal.setitimer(signal.ITIMER_REAL, 0)
    except OverBudget:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return statistics.median(walls), statistics.median(cpus)


def steps(design) -> dict[str, Callable[[], object]]:
    """Each step of one design, timed cold: the design's memo (its layouts and resolved plans,
    ``analysis.memo``) is dropped before every run, as a fresh edit in the studio starts with none."""
    tl = simulate(design, iterations=ITERATIONS, inner=2)

    def cold(fn: Callable[[], object]) -> Callable[[], object]:
        return lambda: (forget(design), fn())[1]
    return {name: cold(fn) for name, fn in {
        "validate": design.validate,
        "layout": lambda: barrier_layout(design),
        "text": lambda: (str(design.validate()), barrier_layout(design).table(), smem_layout(design).report()),
        "simulate": lambda: simulate(design, iterations=ITERATIONS, inner=2),
        "check": lambda: check(design, ITERATIONS, inner=1),
        "graph": lambda: dependency_graph(design).pipe(format="svg"),
        "barriers": lambda: to_svg(barrier_figure(design)),
        "compare": lambda: to_svg(comparison_figure(design)),
        "timeline": lambda: to_svg(timeline_figure(tl)),
        "emit": lambda: emit(design, validate=False),
    }.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=["Merge", "Fork"], choices=["Merge", "Fork", "FusedMerge"])
    parser.add_argument("--repeat", type=int, default=3, help="runs per step (the median is shown)")
    parser.add_argument("--budget", type=float, default=20.0,
                        help="seconds one run of a step may take; past it the step stops and larger sizes skip it")
    parser.add_argument("--quick", action="store_true", help="five sizes only")
    args = parser.parse_args()
    to_svg(barrier_figure(chain(1)))  # import matplotlib and graphviz before timing anything
    dependency_graph(chain(1)).pipe(format="svg")
    widths = {s: 9 for s in STEPS}
    head = f"{'mode':<6} {'res':>4} {'groups':>6} {'valid':>5} " + " ".join(f"{s:>{widths[s]}}" for s in STEPS)
    print(f"median wall milliseconds per step ({args.repeat} runs; check and emit 1 run; simulate / check: "
          f"{ITERATIONS} iterations); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(head + f" {'pictures':>9} {'growth':>6}")
    verdicts = []
    for mode in args.modes:
        skipped: set[str] = set()
        prev = None
        for n, width in (QUICK if args.quick else SIZES):
            design = chain(n, mode, width=width)
            report = design.validate()
            gone = set(skipped)  # over budget at a smaller size: not run here
            row: dict[str, tuple[float, float] | None] = {}
            for name, fn in steps(design).items():
                if name in skipped:
                    row[name] = None
                    continue
                row[name] = median_s(fn, 1 if name in ("check", "emit") else args.repeat, args.budget)
                if row[name] is None:
                    skipped.add(name)
            res = len(design.resources)
            wall = {k: (v[0] if v else None) for k, v in row.items()}
            cpu = {k: (v[1] if v else None) for k, v in row.items()}
            pictures = [sum(t[p] if t[p] is not None else float("inf") for p in PICTURES) for t in (wall, cpu)]
            vl = [t["validate"] + t["layout"] for t in (wall, cpu)]
            growth = "" if prev is None or not prev[1] else f"{(vl[1] / prev[1]) / (res / prev[0]):.2f}"
            prev = (res, vl[1])
            cells = " ".join(f"{1e3 * wall[s]:>{widths[s]}.1f}" if wall[s] is not None else
                             f"{'skip' if s in gone else '>budget':>{widths[s]}}" for s in STEPS)
            valid = "yes" if report.ok else "smem" if report.codes() == ["smem.capacity"] else "no"
            print(f"{mode:<6} {res:>4} {n:>6} {valid:>5} {cells} {1e3 * pictures[0]:>9.1f} {growth:>6}", flush=True)
            if (n, width) == SIZES[-1]:
                verdicts.append((f"{mode} {res} resources: validate + layout {1e3 * vl[0]:.1f} ms wall, "
                                 f"{1e3 * vl[1]:.1f} ms CPU", vl[1] <= 0.1, "<= 100 ms"))
                verdicts.append((f"{mode} {res} resources: all pictures {pictures[0]:.2f} s wall, {pictures[1]:.2f} s CPU",
                                 pictures[1] <= 2.0, "<= 2 s"))
            if (n, width) == (31, 2):
                text = (f"{cpu['check']:.2f} s CPU" if cpu["check"] is not None else f"over the {args.budget:.0f} s budget")
                verdicts.append((f"{mode} {n} groups: check({ITERATIONS} iterations) {text}",
                                 cpu["check"] is not None and cpu["check"] <= 1.0, "<= 1 s"))
    print()
    print("growth: CPU time of validate + layout per resource, relative to the row before (1.00 = linear)")
    for text, ok, target in verdicts:
        print(f"{text} (target {target}, CPU): {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()

"""``pgstudio sweep design.json``: the design space of one design.

Compiles every variant (stages x tile x grouping; bytes per stage for streaming designs,
BMxBNxBK shapes for GEMM designs) in worker processes, lists the invalid ones with their
diagnostics, and on a GPU verifies and times the valid ones and names the best.  Results are
appended to a JSON-lines file as they come, so a second run resumes; ``--ray`` runs the same
sweep on a Ray cluster (an address where nothing answers within ``CONNECT_TIMEOUT_S`` seconds is
one line and exit status 2, not a wait).  The sweep is ``explore.sweep.sweep``; the heatmap is
``render.sweep``'s.

Exit status: 0 when the sweep ran (without a GPU: every valid variant compiled); 1 when a variant
failed (NVRTC rejected generated code, a run did not verify) or no variant is valid; 2 for a
mistake the user can fix (a bad flag, an unreachable ``--ray`` address); 3 when variants could not
even be compiled (no NVRTC).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..explore.sweep import FAILED, GROUPINGS, NOT_RUN, ROUNDS, sweep
from ..model.limits import MAX_STAGES, MAX_WARPS
from ..render import to_png
from ..render.sweep import sweep_figure
from ..runtime.executor import NAMES
from ..runtime.executor.cluster import CONNECT_TIMEOUT_S
from ._common import MAX_ELEMENTS, count, design_argument, load_design, output_file, write_output

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "sweep"
HELP = "compile every stages x tile x grouping variant of a design; on a GPU verify and time them"


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("--stages", type=count(1, MAX_STAGES), nargs="+", help="stage counts to try (default: 2 4 6 8 for "
                   "streaming designs, 2..8 up to what shared memory holds for GEMM designs)")
    p.add_argument("--tiles", nargs="+", help="bytes per stage (streaming: 1024 2048 ...) or BMxBNxBK tile shapes "
                   "(GEMM: 128x256x64 ...); default: the design's")
    p.add_argument("--grouping", nargs="+", choices=GROUPINGS,
                   help="groupings to try (default: designed, ungrouped and the other Merge-family mode)")
    p.add_argument("--warps", type=count(1, MAX_WARPS), nargs="+", help="warps of each consumer task (streaming designs)")
    p.add_argument("--options", nargs="+", help="code options to try, e.g. default store=cs (streaming designs)")
    p.add_argument("--n", type=count(1, MAX_ELEMENTS), help="elements per tensor (streaming; default: the design's "
                   "num_elements)")
    p.add_argument("--rounds", type=count(1, 10_000), default=ROUNDS,
                   help="timed runs of every variant (their median is shown)")
    p.add_argument("--compile-only", action="store_true", help="compile every variant, time none (even on a GPU)")
    p.add_argument("--results", help="JSON-lines results file to append to and resume from "
                   "(default: DESIGN.sweep.jsonl beside the design file)")
    p.add_argument("--fresh", action="store_true", help="start the results file over instead of resuming it")
    p.add_argument("--no-results", action="store_true", help="keep results in memory only")
    p.add_argument("--executor", choices=NAMES, help="where to run: worker processes (embedded, the default), "
                   "this process (inline, for debugging), Ray, or null (the null runtime: timing jobs that launch "
                   "nothing)")
    p.add_argument("--workers", type=count(1, 256), help="compile workers of the embedded executor (default: one per core)")
    p.add_argument("--ray", metavar="ADDRESS", help="run on Ray: 'auto' (a running cluster), 'local' (start one "
                   f"here) or a cluster address, which must answer within {CONNECT_TIMEOUT_S:g} s; needs pip install "
                   "'pgstudio[cluster]'")
    p.add_argument("--png", help="save the heatmap here")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _executor(args: argparse.Namespace) -> Any:
    """What ``--executor``, ``--workers`` and ``--ray`` ask for: a name, an executor, or None."""
    if args.ray is not None:
        from ..runtime.executor.cluster import RayExecutor
        return RayExecutor(args.ray)
    if args.workers and args.executor in (None, "embedded"):  # --workers sizes the embedded executor only
        from ..runtime.executor.embedded import EmbeddedExecutor
        return EmbeddedExecutor(cpu_workers=args.workers)
    return args.executor


def run(args: argparse.Namespace) -> int:
    """Run the sweep, print its table, save the picture; the exit status (module docstring).

    Results go to ``--results`` (default: ``<design file>.sweep.jsonl`` beside the design file)
    and a second run resumes them."""
    design = load_design(args.design)
    if args.png:
        output_file(args.png)  # a bad path is said now, not after the whole sweep
    ex = _executor(args)
    path = None if args.no_results else Path(args.results) if args.results else Path(args.design).with_suffix(
        ".sweep.jsonl")
    try:
        table = sweep(design, args.stages, args.tiles, args.grouping, warps=args.warps, options=args.options, n=args.n,
                      rounds=args.rounds, executor=ex, results=path, resume=not args.fresh,
                      compile_only=args.compile_only or None, progress=not args.quiet)
    except KeyboardInterrupt:
        if path is not None:
            print(f"interrupted: what finished is in {path}; run the same command again to resume")
        raise
    finally:
        if args.ray is not None:
            ex.close()
    print(table.table())
    if path is not None:
        print(f"results: {path}" + (f" ({table.reused} variant(s) were already there)" if table.reused else ""))
    if args.png:
        write_output(args.png, to_png(sweep_figure(table)), keep=args.design)  # a bad path: one line, not a traceback
        print(f"wrote {args.png}")
    if table.count(FAILED):
        return 1
    if table.count(NOT_RUN):
        return 3
    return 0 if table.compiled else 1

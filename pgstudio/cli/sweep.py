"""``pgstudio sweep design.json``: the design space of one design.

Compiles every variant (stages x tile x grouping; bytes per stage for streaming designs,
BMxBNxBK shapes for GEMM designs) in worker processes, lists the invalid ones with their
diagnostics, and on a GPU verifies and times the valid ones and names the best.  Results are
appended to a JSON-lines file as they come, so a second run resumes; ``--ray`` runs the same
sweep on a Ray cluster.  The work is ``explore.sweep.run_sweep_cli``.
"""

from __future__ import annotations

import argparse

from ..model.limits import MAX_STAGES, MAX_WARPS
from ..runtime.executor import NAMES
from ..explore.sweep import GROUPINGS, ROUNDS, run_sweep_cli
from ._common import MAX_ELEMENTS, count, design_argument, load_design, output_file

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
                   "this process (inline, for debugging) or Ray")
    p.add_argument("--workers", type=count(1, 256), help="compile workers of the embedded executor (default: one per core)")
    p.add_argument("--ray", metavar="ADDRESS", help="run on Ray: 'auto' (a running cluster), 'local' (start one "
                   "here) or a cluster address; needs pip install 'pgstudio[cluster]'")
    p.add_argument("--png", help="save the heatmap here")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    design = load_design(args.design)
    if args.png:
        output_file(args.png)  # a bad path is said now, not after the whole sweep
    return run_sweep_cli(design, args.design, stages=args.stages, tiles=args.tiles, grouping=args.grouping,
                         warps=args.warps, options=args.options, n=args.n, rounds=args.rounds,
                         executor=args.executor or ("embedded" if args.workers else None), ray=args.ray,
                         workers=args.workers, results=args.results, fresh=args.fresh, no_results=args.no_results,
                         compile_only=args.compile_only, png=args.png, quiet=args.quiet)

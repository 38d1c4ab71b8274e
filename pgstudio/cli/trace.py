"""``pgstudio trace design.json --out trace.json``: what one kernel did, as Chrome / Perfetto trace JSON.

Runs the instrumented kernel on a GPU (``--png``: the measured timeline); ``--simulate`` writes
the simulator's timeline instead, no GPU needed.
"""

from __future__ import annotations

import argparse
import json

from ..analysis.cost import design_cost
from ..analysis.simulate import simulate
from ..codegen.instrument import Instrument
from ..errors import GpuUnavailable, PgStudioError
from ..render import to_png
from ..render.timeline import timeline_figure
from ..runtime._cupy import require_gpu
from ..runtime.executor import NAMES
from ..runtime.trace import chrome_trace, trace
from ._common import MAX_ELEMENTS, MAX_ITERATIONS, count, design_argument, load_design, output_file, write_output

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "trace"
HELP = "run a design's instrumented kernel and write its measured timeline as trace JSON"


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("--out", default="trace.json", help="Chrome / Perfetto trace JSON to write")
    p.add_argument("--png", help="also save the timeline picture of the first block here")
    p.add_argument("--simulate", action="store_true", help="the simulator's timeline instead of a GPU run")
    p.add_argument("--iterations", type=count(1, MAX_ITERATIONS), default=8,
                   help="iterations to simulate (with --simulate)")
    p.add_argument("--blocks", type=count(1, 1 << 16), default=2, help="blocks whose tasks stamp their steps")
    p.add_argument("--capacity", type=count(1, 1 << 16), default=512, help="step records kept per task lane")
    p.add_argument("--tiles", type=count(0, 1 << 16), default=2,
                   help="GEMM designs: work units recorded per sampled block, the first ones (0: every one)")
    p.add_argument("--k-tiles", type=count(0, 1 << 16), default=16,
                   help="GEMM designs: k tiles recorded of each recorded work unit, the first ones (0: every one)")
    p.add_argument("--n", type=count(1, MAX_ELEMENTS), help="elements per tensor (default: the design's num_elements)")
    p.add_argument("--blocks-per-sm", type=count(1, 64), help="blocks per SM (default: as many as fit)")
    p.add_argument("--executor", choices=NAMES, help="where the kernel runs: a GPU worker process (embedded, the "
                   "default), this process (inline, for debugging) or Ray")


def run(args: argparse.Namespace) -> int:
    design = load_design(args.design)
    for path in (args.out, args.png):  # a bad path is said before the kernel runs, not after
        if path:
            output_file(path)
    if args.simulate:
        cost, what = design_cost(design)
        timelines = [simulate(design, args.iterations, cost=cost)]
        doc = chrome_trace(timelines)
        print(timelines[0].summary())
        print(f"  simulated with the {what}")
        print(timelines[0].waiting())
    else:
        try:
            require_gpu()
        except GpuUnavailable as exc:
            why = str(exc).split("; without one")[0]
            raise GpuUnavailable(f"{why}; the simulator's timeline needs no GPU: "
                                 f"pgstudio trace {args.design} --simulate --out {args.out}") from None
        tr = trace(design, n=args.n, instrument=Instrument(args.blocks, args.capacity, args.tiles or None, args.k_tiles or None),
                   blocks_per_sm=args.blocks_per_sm, executor=args.executor)
        problems = tr.problems()
        if problems:
            raise PgStudioError("stamps out of order: " + "; ".join(problems[:3]))
        timelines = tr.timelines()
        doc = tr.chrome()
        print(tr.summary())
        for tl in timelines:
            print(tl.summary())
            print(tl.waiting())
    write_output(args.out, json.dumps(doc), keep=args.design)
    print(f"wrote {args.out} ({len(doc['traceEvents'])} trace events; open it in ui.perfetto.dev or chrome://tracing)")
    if args.png:
        write_output(args.png, to_png(timeline_figure(timelines[0])), keep=args.design)
        print(f"wrote {args.png}")
    return 0

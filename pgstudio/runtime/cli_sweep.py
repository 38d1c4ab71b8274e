"""``pgstudio sweep`` and ``pgstudio trace``: the design space, and what one kernel did.

``pgstudio sweep design.json`` lists every (grouping, stages, bytes per stage) variant, the
invalid ones with their diagnostics, and on a GPU verifies and times the valid ones and names
the best (``--png`` saves the heatmap).  ``pgstudio trace design.json --out trace.json`` runs the
instrumented kernel and writes Chrome / Perfetto trace JSON (``--png``: the measured timeline);
``--simulate`` writes the simulator's timeline instead, no GPU needed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .. import cli
from ..errors import PgStudioError


def _sweep_args(p: argparse.ArgumentParser) -> None:
    from .sweep import DEFAULT_GROUPINGS, GROUPINGS
    p.add_argument("design", help="a design JSON file")
    p.add_argument("--stages", type=int, nargs="+", default=[2, 4, 6, 8], help="stage counts to try")
    p.add_argument("--tiles", type=int, nargs="+", default=[1024, 2048, 4096, 8192], help="bytes per stage to try")
    p.add_argument("--grouping", nargs="+", default=list(DEFAULT_GROUPINGS), choices=GROUPINGS,
                   help="groupings to try (a mode equal to the design's own is the designed variant)")
    p.add_argument("--n", type=int, help="elements per tensor (default: the design's num_elements)")
    p.add_argument("--rounds", type=int, default=10, help="interleaved timed runs of every variant")
    p.add_argument("--png", help="save the heatmap here (needs matplotlib)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import sweep
    design = cli.load_design(args.design)
    table = sweep(design, args.stages, args.tiles, args.grouping, n=args.n, rounds=args.rounds,
                  progress=not args.quiet)
    print(table)
    if args.png and table.timed:
        from ..render import to_png
        Path(args.png).write_bytes(to_png(table.figure()))
        print(f"wrote {args.png}")
    return 0 if table.timed or not any(r.status == "not run" for r in table.rows) else 3


cmd_sweep.add_args = _sweep_args
cli.command("sweep", "compile, verify and time every stages x bytes x grouping variant of a design (GPU)")(cmd_sweep)


def _trace_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("design", help="a design JSON file")
    p.add_argument("--out", default="trace.json", help="Chrome / Perfetto trace JSON to write")
    p.add_argument("--png", help="also save the timeline picture of the first block here")
    p.add_argument("--simulate", action="store_true", help="the simulator's timeline instead of a GPU run")
    p.add_argument("--iterations", type=int, default=8, help="iterations to simulate (with --simulate)")
    p.add_argument("--blocks", type=int, default=2, help="blocks whose tasks stamp their steps")
    p.add_argument("--capacity", type=int, default=512, help="step records kept per task lane")
    p.add_argument("--n", type=int, help="elements per tensor (default: the design's num_elements)")
    p.add_argument("--blocks-per-sm", type=int, help="blocks per SM (default: as many as fit)")


def cmd_trace(args: argparse.Namespace) -> int:
    design = cli.load_design(args.design)
    if args.simulate:
        from ..analysis.simulate import simulate
        from .trace import chrome_trace
        timelines = [simulate(design, args.iterations)]
        doc = chrome_trace(timelines)
        print(timelines[0].summary())
    else:
        from ..codegen.instrument import Instrument
        from ._cupy import require_gpu
        from .trace import trace
        require_gpu()
        tr = trace(design, n=args.n, instrument=Instrument(args.blocks, args.capacity),
                   blocks_per_sm=args.blocks_per_sm)
        problems = tr.problems()
        if problems:
            raise PgStudioError("stamps out of order: " + "; ".join(problems[:3]))
        timelines = tr.timelines()
        doc = tr.chrome()
        print(tr.summary())
        for tl in timelines:
            print(tl.summary())
    Path(args.out).write_text(json.dumps(doc))
    print(f"wrote {args.out} ({len(doc['traceEvents'])} trace events; open it in ui.perfetto.dev or chrome://tracing)")
    if args.png:
        from ..render import to_png
        from ..render.timeline import timeline_figure
        Path(args.png).write_bytes(to_png(timeline_figure(timelines[0])))
        print(f"wrote {args.png}")
    return 0


cmd_trace.add_args = _trace_args
cli.command("trace", "run a design's instrumented kernel and write its measured timeline as trace JSON")(cmd_trace)

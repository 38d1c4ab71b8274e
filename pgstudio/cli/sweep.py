"""``pgstudio sweep design.json``: the design space of one design.

Lists every (grouping, stages, bytes per stage) variant, the invalid ones with their diagnostics,
and on a GPU verifies and times the valid ones and names the best (``--png`` saves the heatmap).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..render import to_png
from ..render.sweep import sweep_figure
from ..runtime.sweep import DEFAULT_GROUPINGS, GROUPINGS, sweep
from ._common import design_argument, load_design

NAME = "sweep"
HELP = "compile, verify and time every stages x bytes x grouping variant of a design (GPU)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("--stages", type=int, nargs="+", default=[2, 4, 6, 8], help="stage counts to try")
    p.add_argument("--tiles", type=int, nargs="+", default=[1024, 2048, 4096, 8192], help="bytes per stage to try")
    p.add_argument("--grouping", nargs="+", default=list(DEFAULT_GROUPINGS), choices=GROUPINGS,
                   help="groupings to try (a mode equal to the design's own is the designed variant)")
    p.add_argument("--n", type=int, help="elements per tensor (default: the design's num_elements)")
    p.add_argument("--rounds", type=int, default=10, help="interleaved timed runs of every variant")
    p.add_argument("--png", help="save the heatmap here (needs matplotlib)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    design = load_design(args.design)
    table = sweep(design, args.stages, args.tiles, args.grouping, n=args.n, rounds=args.rounds,
                  progress=not args.quiet)
    print(table)
    if args.png and table.timed:
        Path(args.png).write_bytes(to_png(sweep_figure(table)))
        print(f"wrote {args.png}")
    return 0 if table.timed or not any(r.status == "not run" for r in table.rows) else 3

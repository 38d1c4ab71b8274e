"""``pgstudio bench design.json``: verify and time a design against its ungrouped twin, CuPy and a device copy.

Where CuPy or a GPU is missing the command says so in one line (``GpuUnavailable``).  The kernels
run in a GPU worker process (``--executor inline``: in this one, for debugging; ``--executor
null``: on the null runtime, which launches nothing and prints a table that says so).
"""

from __future__ import annotations

import argparse

from ..explore.bench import tuned_benchmark
from ..runtime._cupy import require_gpu
from ..runtime.executor import NAMES, get_executor
from ._common import MAX_ELEMENTS, count, design_argument, load_design, positive_number

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "bench"
HELP = "verify and time a design against its ungrouped twin, CuPy and a device copy (GPU)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    design_argument(p)
    p.add_argument("--n", type=count(1, MAX_ELEMENTS), help="elements per tensor (default: the design's num_elements)")
    p.add_argument("--rounds", type=count(1, 10_000), default=30, help="interleaved timed runs of every variant")
    p.add_argument("--budget-ms", type=positive_number(600_000), default=1000.0,
                   help="watchdog budget of every barrier wait")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--executor", choices=NAMES, help="where the kernels run: a GPU worker process (embedded, the "
                   "default), this process (inline, for debugging), Ray, or null (the null runtime: every step "
                   "with nothing launched or timed, no GPU needed)")


def run(args: argparse.Namespace) -> int:
    design = load_design(args.design)
    if get_executor(args.executor).runtime != "null":
        require_gpu()  # one clear line when there is no CuPy or no GPU
    table = tuned_benchmark(design, n=args.n, rounds=args.rounds, budget_ms=args.budget_ms, progress=not args.quiet,
                            executor=args.executor)
    print(table)
    return 0

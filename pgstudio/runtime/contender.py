"""A benchmark's contenders while they are timed, and the table they become.

A ``Contender`` is one row of a benchmark -- the design's kernel, its twin, a library call, a
device copy -- as a named launch; ``interleave`` times all of them round after round on one clock
(``runtime.timing``), and ``table_of`` turns them into the ``BenchTable`` of either kind of kernel
(``bench`` for streaming designs, ``gemm_bench`` for GEMM ones).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Callable

from .backend import Backend
from .bench_table import BenchRow, BenchTable
from .launch import Workload, rate_of
from .progress import Progress
from .timing import batch_for, estimate_ms, time_interleaved


def nothing() -> None:
    """The launch of a contender on the null runtime."""


@dataclass
class Contender:
    """One row of a benchmark while it is timed: a named launch, what it is, and what one launch
    does (``amount``: bytes moved or flops, counted in ``unit``); ``peer``: a library call."""

    name: str
    what: str
    launch: Callable[[], None]
    amount: float
    unit: str = "GB/s"
    launcher: Any = None  # the generated kernel's Launcher (its watchdog is checked after timing)
    peer: bool = False
    times: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")

    @property
    def rate(self) -> float:
        return rate_of(self.amount, self.median_ms, self.unit)

    def row(self) -> BenchRow:
        return BenchRow(self.name, self.what, self.median_ms, self.rate, len(self.times), self.peer)


def interleave(contenders: list[Contender], *, rounds: int = 30, warmup: int = 3, progress: bool = True,
               on_progress: Callable[[int, int, str], None] | None = None, clock: Any = None) -> None:
    """Time every contender once per round, round after round; fills ``Contender.times`` (ms per
    launch) and checks the generated kernels' watchdogs afterwards.

    ``runtime.timing`` times each contender as a batch of back-to-back launches queued behind a
    GPU hold, so a short kernel's time is the GPU's and not the host's launch cost (the same
    rule for the design, its twin, the library and the device copy); the order rotates, so no
    contender is always first.  ``clock``: ``timing.CUDA_EVENTS`` by default, the null runtime's
    ``NULL_CLOCK`` (NaN times) for its contenders.
    """
    bar = Progress(rounds * len(contenders), "benchmark", "launch", enabled=progress, on_update=on_progress)
    try:
        batch = batch_for(estimate_ms(contenders[0].launch, clock=clock))
        times = time_interleaved([(str(i), v.launch) for i, v in enumerate(contenders)], rounds, warmup=warmup,
                                 batch=batch, on_launch=lambda i: bar.update(1, contenders[int(i)].name), clock=clock)
    finally:
        bar.close()
    for i, v in enumerate(contenders):
        v.times.extend(times[str(i)])
    for v in contenders:
        if v.launcher is not None:
            v.launcher.check_watchdog()


def table_of(design_name: str, work: Workload, contenders: list[Contender], note: str, backend: Backend) -> BenchTable:
    """The ``BenchTable`` of timed ``contenders`` over ``work``."""
    return BenchTable(design_name, work.problem, work.dtype, tuple(c.row() for c in contenders), note, work.unit,
                      work.shape, backend.measured)


__all__ = ["Contender", "interleave", "nothing", "table_of"]

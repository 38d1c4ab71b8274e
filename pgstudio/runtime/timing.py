"""Kernel times as the GPU sees them: CUDA events around launches queued while the GPU is held.

A launch costs the host tens of microseconds (Python, argument packing, a library's own
launcher), about as long as a short kernel runs.  Timed one launch at a time, a short kernel's
time would include that cost whenever the GPU drained its queue before the next launch arrived,
and peers with cheaper launchers would look faster than they are.  So every timed batch starts
behind a *hold*: a one-thread kernel that spins on ``%globaltimer`` long enough for the host to
queue the whole batch (start event, ``batch`` launches, end event) before the GPU reaches it.
The events then bracket kernels that run back to back, whoever launched them (pgstudio's
launcher, cuBLAS, Triton, a device copy): one rule for every variant, and no CUDA-graph capture,
which some libraries refuse.  Rounds interleave the variants in a rotating order, so clock and
thermal drift hit them alike.

Times are read from a *clock*: ``CUDA_EVENTS`` (the events above, on the current stream) for
every measurement, or ``NULL_CLOCK``, the null runtime's, which holds nothing, records nothing and
reads NaN -- so the rounds, batches and rotation run without a GPU and no figure they give can be
taken for a measurement.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

from ._cupy import cupy

HOLD_SOURCE = r"""
extern "C" __global__ void pg_hold(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""
#: Host time one launch may take, generously (slow Python launchers included): sizes the hold.
HOST_US_PER_LAUNCH = 150.0
#: The shortest hold: event records and the first launch after it.
HOLD_FLOOR_US = 300.0


@functools.cache
def _hold_kernel():
    return cupy().RawKernel(HOLD_SOURCE, "pg_hold")


def hold(us: float) -> None:
    """Queue a kernel that keeps the current stream busy for ``us`` microseconds."""
    cp = cupy()
    _hold_kernel()((1,), (1,), (cp.uint64(int(us * 1000)),))


def hold_us(batch: int) -> float:
    """How long to hold the GPU so the host can queue ``batch`` launches and two events."""
    return HOLD_FLOOR_US + HOST_US_PER_LAUNCH * batch


def batch_for(ms: float, target_ms: float = 1.0, most: int = 32) -> int:
    """Launches per timed batch so that a batch runs about ``target_ms`` (1 for long kernels, and
    for a time that is not a number: the null clock's).

    >>> batch_for(0.05), batch_for(2.0), batch_for(0.001), batch_for(float("nan"))
    (20, 1, 32, 1)
    """
    if not math.isfinite(ms):
        return 1
    return max(1, min(most, round(target_ms / max(ms, 1e-3))))


class CudaEvents:
    """The GPU's clock: CUDA events recorded on the current stream, behind a hold."""

    #: Its times are measurements.
    measured = True

    def synchronize(self) -> None:
        cupy().cuda.get_current_stream().synchronize()

    def hold(self, us: float) -> None:
        hold(us)

    def events(self) -> tuple[Any, Any]:
        """A fresh (start, end) pair, made before the launches they bracket."""
        cp = cupy()
        return cp.cuda.Event(), cp.cuda.Event()

    def record(self, event: Any) -> None:
        event.record()

    def wait(self, event: Any) -> None:
        event.synchronize()

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return cupy().cuda.get_elapsed_time(start, end)


class NullClock:
    """The null runtime's clock: no GPU, no events; every time it reads is NaN (not measured)."""

    measured = False

    def synchronize(self) -> None:
        pass

    def hold(self, us: float) -> None:
        pass

    def events(self) -> tuple[Any, Any]:
        return None, None

    def record(self, event: Any) -> None:
        pass

    def wait(self, event: Any) -> None:
        pass

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return math.nan


CUDA_EVENTS = CudaEvents()
NULL_CLOCK = NullClock()


def estimate_ms(fn: Callable[[], object], launches: int = 5, *, clock: Any = None) -> float:
    """Milliseconds per launch of ``fn``, roughly: ``launches`` back to back behind a hold."""
    clock = clock or CUDA_EVENTS
    fn()
    clock.hold(hold_us(launches))
    s, e = clock.events()
    clock.record(s)
    for _ in range(launches):
        fn()
    clock.record(e)
    clock.wait(e)
    return clock.elapsed_ms(s, e) / launches


def time_interleaved(variants: Sequence[tuple[str, Callable[[], object]]], rounds: int, *, warmup: int = 3,
                     batch: int = 1, on_launch: Callable[[str], None] | None = None,
                     clock: Any = None) -> dict[str, list[float]]:
    """Milliseconds per launch of every variant: each round times one batch of ``batch`` launches
    of each variant behind a hold (module docstring), the order rotating round by round.
    ``clock``: ``CUDA_EVENTS`` (the default) or ``NULL_CLOCK``."""
    clock = clock or CUDA_EVENTS
    for _, fn in variants:
        for _ in range(warmup):
            fn()
    clock.synchronize()
    times: dict[str, list[float]] = {name: [] for name, _ in variants}
    wait_us = hold_us(batch)
    for r in range(rounds):
        k = r % len(variants)
        events = []
        for name, fn in list(variants[k:]) + list(variants[:k]):
            clock.hold(wait_us)
            s, e = clock.events()
            clock.record(s)
            for _ in range(batch):
                fn()
            clock.record(e)
            events.append((name, s, e))
        clock.wait(events[-1][2])
        for name, s, e in events:
            times[name].append(clock.elapsed_ms(s, e) / batch)
            if on_launch is not None:
                on_launch(name)
    return times


__all__ = ["CUDA_EVENTS", "CudaEvents", "HOLD_SOURCE", "NULL_CLOCK", "NullClock", "batch_for", "estimate_ms", "hold",
           "hold_us", "time_interleaved"]

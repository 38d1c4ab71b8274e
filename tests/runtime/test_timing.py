"""runtime.timing: kernel times as the GPU sees them, whatever the host's launch cost.

A 20-microsecond kernel launched by a host that spends 100 microseconds before each launch
(a slow Python launcher) must time like the same kernel launched at once: the batch is queued
behind a hold, so the events bracket kernels that run back to back.  Timed one launch at a
time, the slow host's kernel would measure five times longer."""

from __future__ import annotations

import statistics
import time

import pytest

pytestmark = pytest.mark.gpu

KERNEL_US = 20.0


def _busy(us: float) -> None:
    end = time.perf_counter() + us * 1e-6
    while time.perf_counter() < end:
        pass


def test_a_slow_launcher_times_like_a_fast_one():
    from pgstudio.runtime.timing import hold, time_interleaved

    def fast() -> None:
        hold(KERNEL_US)

    def slow() -> None:
        _busy(100.0)
        hold(KERNEL_US)

    times = time_interleaved([("fast", fast), ("slow", slow)], rounds=10, batch=8)
    med = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}  # microseconds
    for name, us in med.items():
        assert KERNEL_US * 0.95 < us < KERNEL_US * 1.5, (name, med)
    assert abs(med["slow"] - med["fast"]) < 0.15 * med["fast"], med


def test_estimate_and_batch_size():
    from pgstudio.runtime.timing import batch_for, estimate_ms, hold

    ms = estimate_ms(lambda: hold(50.0))
    assert 0.045 < ms < 0.08, ms
    assert batch_for(ms) in range(12, 23)

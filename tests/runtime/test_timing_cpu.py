"""runtime.timing's arithmetic on a CPU: the batch size for a target batch time, the hold that
covers a batch's launches, and per-launch times divided out of a clock's batch times (a counting
clock stands in for CUDA events: each launch advances it by a known amount); the GPU's clock
without a GPU says so."""

from __future__ import annotations

import pytest

from pgstudio.errors import GpuUnavailable
from pgstudio.runtime import timing as T
from pgstudio.runtime._cupy import gpu_available


@pytest.mark.parametrize("ms, want", [(0.05, 20), (2.0, 1), (0.001, 32), (0.0, 32), (0.3, 3), (1.0, 1),
                                      (float("inf"), 1), (float("-inf"), 1)])
def test_a_batch_runs_about_the_target_time(ms, want):
    assert T.batch_for(ms) == want


def test_the_batch_size_follows_the_target_and_its_ceiling():
    assert T.batch_for(0.05, target_ms=0.5) == 10 and T.batch_for(0.05, target_ms=10.0) == 32
    assert T.batch_for(0.05, target_ms=10.0, most=100) == 100 and T.batch_for(0.05, most=4) == 4


def test_the_hold_covers_every_launch_of_the_batch():
    assert T.hold_us(0) == T.HOLD_FLOOR_US
    assert T.hold_us(20) == T.HOLD_FLOOR_US + 20 * T.HOST_US_PER_LAUNCH
    assert T.hold_us(8) - T.hold_us(7) == T.HOST_US_PER_LAUNCH


class CountingClock:
    """A clock whose time is the work launched so far: each variant adds its own cost per launch."""

    measured = True

    def __init__(self):
        self.now = 0.0
        self.holds: list[float] = []

    def synchronize(self):
        pass

    def hold(self, us):
        self.holds.append(us)

    def events(self):
        return [None], [None]

    def record(self, event):
        event[0] = self.now

    def wait(self, event):
        assert event[0] is not None, "waited on an event never recorded"

    def elapsed_ms(self, start, end):
        return end[0] - start[0]


def test_times_are_per_launch_whatever_the_batch():
    clock = CountingClock()
    cost = {"fast": 0.02, "slow": 0.5}

    def launcher(name):
        def launch():
            clock.now += cost[name]
        return launch
    seen = []
    times = T.time_interleaved([(n, launcher(n)) for n in cost], rounds=4, warmup=2, batch=5, clock=clock,
                               on_launch=seen.append)
    assert {n: [round(t, 9) for t in ts] for n, ts in times.items()} == {"fast": [0.02] * 4, "slow": [0.5] * 4}
    assert clock.holds == [T.hold_us(5)] * 8  # one hold before every batch of every round
    assert seen == ["fast", "slow", "slow", "fast", "fast", "slow", "slow", "fast"]  # the order rotates
    assert T.estimate_ms(launcher("slow"), launches=4, clock=clock) == pytest.approx(0.5)
    assert clock.holds[-1] == T.hold_us(4)


@pytest.mark.skipif(gpu_available(), reason="the no-GPU path")
def test_the_gpu_clock_without_a_gpu_says_so():
    assert T.CUDA_EVENTS.measured and not T.NULL_CLOCK.measured
    for call in (T.CUDA_EVENTS.synchronize, T.CUDA_EVENTS.events, lambda: T.CUDA_EVENTS.hold(10.0),
                 lambda: T.CUDA_EVENTS.elapsed_ms(None, None), lambda: T.estimate_ms(lambda: None)):
        with pytest.raises(GpuUnavailable, match="no GPU here"):
            call()

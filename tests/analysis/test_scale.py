"""Rules cost what the design costs: validation time grows linearly with schedule steps, and
absurd counts (10^8 warps, 10^8 stages) are reported by value, with no work or memory per warp,
thread, stage or element.  Times are compared between two sizes, never against a clock."""

from __future__ import annotations

import gc
import importlib.util
import tracemalloc
from pathlib import Path

import pytest

from pgstudio import DesignError, examples
from pgstudio.model.task import Task

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "analyze.py"


def _bench():
    """benchmarks/analyze.py: its long-schedule design and its CPU-time measure serve this test too."""
    spec = importlib.util.spec_from_file_location("bench_analyze", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _unrolled(steps: int):
    return _bench().unrolled(steps)


def _best_cpu_seconds(fn, repeat: int = 5) -> float:
    """The least CPU time of ``repeat`` calls (CPU time, so a loaded machine does not count; the
    least, so a cold cache does not), with Python's cycle collector held off: its passes walk the
    whole test run's heap, a cost that grows with what the suite built before, not with the design
    (5.5x measured alone with a 3-million-object heap and the collector off; 9.1x in a full run with it on)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _bench()._best(fn, repeat)
    finally:
        if enabled:
            gc.enable()


def test_validation_grows_linearly_with_schedule_steps():
    small, large = _unrolled(4096), _unrolled(16384)
    # every rule passes; the CUDA of 4,096 or more unrolled steps would pass NVRTC's source budget,
    # the one rule left, which runs only on a design nothing else refuses (analysis/buildable/rules.py)
    assert small.validate().codes() == large.validate().codes() == ["codegen.source_size"]
    assert _unrolled(2048).validate().ok
    ratio = _best_cpu_seconds(large.validate) / _best_cpu_seconds(small.validate)
    # 4x the steps: linear is 4x (3.9x measured); the quadratic rule this replaces took 11x
    assert ratio < 8, f"validate() took {ratio:.1f}x as long for 4x the schedule steps"


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_hundred_million_warps_is_refused_by_value():
    store = examples.merge_copy().task("store")
    with pytest.raises(DesignError, match="num_warps is 100000000"):
        Task("store", 4, 10**8, store.src_resources, store.dst_resources, store.schedule)


def test_tasks_past_the_block_are_reported_by_their_span():
    base = examples.merge_copy()
    store = base.task("store")
    wide = base.with_task(Task("store", 31, 32, store.src_resources, store.dst_resources, store.schedule))
    report, peak = _peak_bytes(wide.validate)
    assert "task.warps" in report.codes()
    assert any("tasks span 63 warps, expected at most 32" in e.message for e in report.errors)
    assert peak < 1 << 22  # bytes


def test_a_hundred_million_stages_is_refused_by_value():
    with pytest.raises(DesignError, match="num_stages is 100000000, expected an integer from 1 to 64"):
        examples.merge_copy(num_stages=10**8)


def test_the_most_stages_are_reported_by_capacity_without_work_per_stage():
    huge = examples.merge_copy(num_stages=64, tile_bytes=8192)
    report, peak = _peak_bytes(huge.validate)
    assert report.codes() == ["smem.capacity"] and peak < 1 << 22

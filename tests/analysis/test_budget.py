"""The checker's budget: past any of its limits it answers INCOMPLETE with the figures, never runs
out of memory and never runs on; bad limits are refused with a clear message."""

import dataclasses
import time
import tracemalloc

import pytest

from pgstudio import examples
from pgstudio.analysis.check import check
from pgstudio.analysis.program import unroll
from pgstudio.analysis.search import bfs
from pgstudio.analysis.statespace import StateSpace


def _stages(design, n):
    for r in design.pipelined:
        cfg = dataclasses.replace(r.pipeline_config, num_stages=n)
        design = design.with_resource(dataclasses.replace(r, pipeline_config=cfg), design.deps(r.name))
    return design


def test_the_state_budget_names_itself():
    v = check(examples.merge_gemm_resadd(), iterations=8, method="bfs", max_states=500)
    assert (v.status, v.cause, v.states) == ("INCOMPLETE", "budget", 500)
    assert "500 states (max_states)" in v.reason
    (diag,) = v.diagnostics()
    assert diag.code == "check.incomplete" and "not known to be safe" in diag.message and "max_states" in diag.hint


def test_the_memory_budget_stops_the_search_with_the_figures():
    v = check(examples.merge_gemm_resadd(), iterations=8, method="bfs", max_memory=3_000_000)
    assert v.status == "INCOMPLETE" and "memory budget (max_memory=3 MB" in v.reason and "B per state" in v.reason
    assert 100 < v.states < 200_000


def test_the_time_budget_stops_the_search():
    t = time.perf_counter()
    v = check(examples.merge_gemm_resadd(), iterations=8, method="bfs", max_seconds=1e-6)
    assert time.perf_counter() - t < 5
    assert v.status == "INCOMPLETE" and "time budget (max_seconds=1e-06)" in v.reason


@pytest.mark.parametrize("design, iterations", [
    (lambda: examples.merge_copy(num_elements=1 << 40), 1 << 20),  # a million iterations (stages stop at 64: limits.py)
    (lambda: examples.merge_copy(num_elements=1 << 40), None),  # the real loop count: 2**29 tiles
])
def test_a_program_too_big_to_build_is_refused_at_once(design, iterations):
    t = time.perf_counter()
    v = check(design(), iterations=iterations)
    assert time.perf_counter() - t < 2
    assert v.status == "INCOMPLETE" and v.states == 0 and "before any state is explored" in v.reason


def test_a_large_ring_within_budget_is_still_checked():
    v = check(_stages(examples.merge_copy(), 64), iterations=8)  # the largest ring a config may have
    assert v.safe, v.summary()


@pytest.mark.parametrize("kw, word", [({"max_states": 0}, "max_states"), ({"max_memory": -1}, "max_memory"),
                                      ({"max_seconds": float("nan")}, "max_seconds"), ({"max_states": 2.5}, "max_states")])
def test_bad_budgets_are_refused(kw, word):
    with pytest.raises(ValueError, match=word):
        check(examples.merge_copy(), **kw)


def test_no_time_limit_is_allowed():
    assert check(examples.merge_copy(), iterations=2, max_seconds=None).safe


def test_the_state_memory_estimate_follows_what_python_really_keeps():
    space = StateSpace(unroll(examples.merge_copy(num_stages=2), iterations=3))
    tracemalloc.start()
    try:
        result = bfs(space, max_states=50_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.states > 1000
    assert 0.5 * peak <= result.bytes <= 2 * peak

"""The checker's time budget holds inside its long steps: unrolling the program, compiling it into
transitions, the reduction's index, the search, cutting the witness down and writing it.  Each
polls one deadline from the call, so a check returns soon after ``max_seconds`` with INCOMPLETE
naming the step it was in (the fuzz corpus's wall times: ``tests/fuzz/test_check_deadline.py``)."""

import gc
import time

import pytest

from pgstudio import examples, mistakes
from pgstudio.analysis.budget import NEVER, Budget, Deadline, OutOfTime
from pgstudio.analysis.check import check, verdict_of
from pgstudio.analysis.occupancy import Occupancy
from pgstudio.analysis.program import unroll
from pgstudio.analysis.reduction import Reducer
from pgstudio.analysis.search import bfs, causal_slice
from pgstudio.analysis.statespace import StateSpace

PASSED = 1e-9  # a deadline that has passed by the time anything polls it


def _passed() -> Deadline:
    d = Deadline(PASSED)
    time.sleep(1e-3)
    return d


def test_a_deadline_without_seconds_never_passes():
    assert not NEVER.passed() and NEVER.left() is None
    NEVER.check("anything")
    assert list(NEVER.spans(5, "x", size=2)) == [(0, 2), (2, 4), (4, 5)]


def test_a_passed_deadline_names_the_step_it_stopped():
    with pytest.raises(OutOfTime, match="while building the tables") as stop:
        _passed().check(lambda: "building the tables")
    assert stop.value.seconds > 0
    assert "max_seconds=0.5" in Budget(max_seconds=0.5).out_of_time(stop.value)


def test_unrolling_the_real_loop_counts_stops_at_the_time_budget():
    """merge_copy at its real counts: over 100,000 executed steps, seconds to unroll."""
    t = time.perf_counter()
    v = check(examples.merge_copy(), iterations=None, inner=None, max_seconds=0.2)
    wall = time.perf_counter() - t
    assert wall < 0.4, wall
    assert (v.status, v.cause) == ("INCOMPLETE", "budget")
    assert "time budget (max_seconds=0.2) while unrolling the program" in v.reason
    assert "executed steps built" in v.reason and v.states == 0


def test_every_long_step_polls_the_deadline():
    program = unroll(examples.merge_gemm(), iterations=2, inner=1)
    with pytest.raises(OutOfTime, match="unrolling the program"):
        unroll(examples.merge_gemm(), iterations=2, inner=1, deadline=_passed())
    with pytest.raises(OutOfTime, match="compiling the program into transitions"):
        StateSpace(program, _passed())
    space = StateSpace(program)
    with pytest.raises(OutOfTime, match="who holds which stage"):
        Occupancy(space.code, space.roots, _passed())
    with pytest.raises(OutOfTime, match="indexing the program for the reduction"):
        Reducer(space, _passed())
    with pytest.raises(OutOfTime, match="indexing the program for the reduction"):
        bfs(space, reduced=True, deadline=_passed())  # the checker's deadline: it names the step
    capped = bfs(space, reduced=True, max_seconds=PASSED)  # a search of its own: capped, as before
    assert capped.capped and capped.stop == "seconds"


def test_the_search_reports_the_seconds_since_the_check_began():
    v = check(examples.merge_gemm_resadd(), iterations=8, method="bfs", max_seconds=0.3)
    assert v.status == "INCOMPLETE" and "time budget (max_seconds=0.3)" in v.reason
    said = float(v.reason.split("stopped after ")[1].split(" s")[0])
    assert 0.3 <= said < 0.6


def _unsafe(name: str, **kw):
    design = mistakes.mistake(name)
    space = StateSpace(unroll(design, **kw))
    result = bfs(space, reduced=True)
    assert result.violation is not None
    return space, result


def test_cutting_the_witness_down_is_skipped_past_the_deadline():
    space, result = _unsafe("undersized_consumer_group", iterations=4, inner=2)
    sliced = causal_slice(space, result.trace)
    assert 0 < len(sliced) < len(result.trace)  # the cut applies ...
    assert causal_slice(space, result.trace, _passed()) is result.trace  # ... unless out of time: the whole run


def test_a_witness_past_the_deadline_shows_its_start_a_gap_and_the_violation():
    space, result = _unsafe("never_releases", iterations=64, inner=8)  # a deadlock after about 500 steps
    full = verdict_of(space, result, "reduced")
    cut = verdict_of(space, result, "reduced", Budget(max_seconds=0.5), deadline=_passed())
    assert full.status == cut.status == "UNSAFE" and full.kind == cut.kind == "deadlock"
    n = len(result.trace)
    assert len(full.witness) > n and not any(r.agent == "(...)" for r in full.witness)
    (gap,) = [r for r in cut.witness if r.agent == "(...)"]
    assert f"{n - 1:,} steps not shown" in gap.action and "max_seconds=0.5" in gap.action
    assert cut.witness[1].index == n - 1  # the violating step keeps its number
    assert [r.note for r in cut.witness if r.note] == [r.note for r in full.witness if r.note]  # every blocked task
    indices = [r.index for r in cut.witness]
    assert indices == sorted(indices) and len(set(indices)) == len(indices)


def test_the_cycle_collector_waits_until_the_check_returns(monkeypatch):
    """A full pass of Python's cycle collector over a big heap (a long notebook session, a test
    run) can stall a check for a second where no poll reaches: the checker holds it off while it
    builds and searches, and puts it back as it was, also when the check stops at its deadline."""
    import pgstudio.analysis.check as checker
    seen = []

    def watched_unroll(*args, **kw):
        seen.append(gc.isenabled())
        return unroll(*args, **kw)
    monkeypatch.setattr(checker, "unroll", watched_unroll)
    v = check(examples.merge_copy(), iterations=None, inner=None, max_seconds=0.2)
    assert v.cause == "budget" and seen == [False] and gc.isenabled()
    gc.disable()
    try:
        assert check(examples.merge_copy(), iterations=2).status == "SAFE" and not gc.isenabled()
    finally:
        gc.enable()
    assert seen == [False, False]

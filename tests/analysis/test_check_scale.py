"""The checker's cost per state stays flat as designs grow: on chains of groups (the states grow
linearly with the depth) the reduction's work per state -- conflict tests and the wait questions
it answers -- does not grow with the number of tasks.  Counted, not timed, so the test is steady
on a loaded machine; ``benchmarks/check.py`` has the times."""

import pytest

from pgstudio import examples
from pgstudio.analysis import reduction
from pgstudio.analysis.check import check


@pytest.fixture
def work(monkeypatch):
    counts = {"conflict": 0, "wait questions": 0}
    conflict, base = reduction.conflict, reduction._Query._base

    def counted_conflict(a, b):
        counts["conflict"] += 1
        return conflict(a, b)

    def counted_base(self, y, k):
        counts["wait questions"] += 1
        return base(self, y, k)

    monkeypatch.setattr(reduction, "conflict", counted_conflict)
    monkeypatch.setattr(reduction._Query, "_base", counted_base)
    return counts


@pytest.mark.parametrize("mode", ["Merge", "Fork", "FusedMerge"])
def test_reduction_work_per_state_does_not_grow_with_the_chain(mode, work):
    per_state, states = {}, {}
    for n in (4, 24):
        for k in work:
            work[k] = 0
        v = check(examples.chain(n, mode), iterations=4)
        assert v.safe, v.summary()
        states[n] = v.states
        per_state[n] = sum(work.values()) / v.states
    assert states[24] <= 1.25 * states[4] * 24 / 4  # states: linear in the depth
    assert per_state[24] <= 1.25 * per_state[4], per_state  # work per state: flat


def test_the_deepest_chain_is_checked_within_its_budget():
    v = check(examples.chain(examples.MAX_CHAIN_GROUPS, "Fork"), iterations=8)
    assert v.safe and v.states < 5000, v.summary()

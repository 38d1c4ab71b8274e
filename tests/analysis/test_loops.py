"""Loop shrinking keeps bounds that differ different (by the same amount), and says so when it
cannot: the checker then answers INCOMPLETE, never a wrong SAFE."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgstudio import examples
from pgstudio.analysis.check import check
from pgstudio.analysis.loops import shrink, shrink_points
from pgstudio.analysis.program import unroll
from pgstudio.errors import DesignError
from pgstudio.model.schedule import CapturedSchedule, Loop
from pgstudio.model.task import Task


def _rebound(design, task, start, stop, step=1):
    t = design.task(task)
    loop = t.schedule.nodes[0]
    sched = CapturedSchedule(t.schedule.name, (Loop(start, stop, step, loop.body),))
    return design.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources, sched))


def loaders_4_store_5(num_stages=4):
    """A planted deadlock of mismatched loop counts: merge_copy whose loaders loop ``domain_loop(0, 4)`` and
    whose store task loops ``domain_loop(0, 5)``: the store task waits forever for a fifth tile."""
    d = examples.merge_copy(num_stages=num_stages)
    for name, stop in (("load_a", 4), ("load_b", 4), ("store", 5)):
        d = _rebound(d, name, 0, stop)
    return d


@pytest.mark.parametrize("iterations", range(1, 10))
def test_the_planted_deadlock_is_found_at_every_iteration_count(iterations):
    d = loaders_4_store_5()
    counts = shrink(d, iterations).counts
    assert counts["#5"] - counts["#4"] == 1  # the store task still loops once more than its loaders
    v = check(d, iterations=iterations)
    assert (v.status, v.kind) == ("UNSAFE", "deadlock"), v.summary()
    assert "store" in v.where


def test_the_plain_search_finds_it_too_at_the_count_that_used_to_merge_the_bounds():
    v = check(loaders_4_store_5(num_stages=2), iterations=4, method="bfs")
    assert (v.status, v.kind) == ("UNSAFE", "deadlock")


def test_equal_bounds_stay_equal_and_small_starts_stay_put():
    d = examples.merge_copy()
    real = d.problem_dict["num_tiles"]
    d = _rebound(_rebound(d, "load_a", 0, real), "load_b", 1, "num_tiles")  # a literal equal to the symbol
    shrunk = shrink(d, 6)
    assert shrunk.counts == {"num_tiles": 6, f"#{real}": 6} and shrunk.exact
    p = unroll(d, iterations=6)
    loads = {t: sum(r.step.op == "load" for r in runs) for t, runs in zip(p.tasks, p.runs)}
    assert loads == {"load_a": 6, "load_b": 5, "store": 0}


def test_differences_up_to_twice_the_ring_are_kept_exactly():
    base = examples.merge_copy(num_stages=2)
    d = base.replace(problem={**base.problem_dict, "more": 4100})
    for name, stop in (("load_a", 4096), ("load_b", 4096), ("store", "more")):
        d = _rebound(d, name, 0, stop)
    shrunk = shrink(d, 3)
    assert shrunk.exact and shrunk.counts == {"#4096": 3, "more": 7}  # 4100 - 4096 = 4 = 2 S, kept
    assert check(d, iterations=3).kind == "deadlock"


def test_a_larger_difference_is_a_caveat_and_the_verdict_is_incomplete_not_unsafe_or_safe():
    base = examples.merge_copy()
    d = base.replace(problem={**base.problem_dict, "half_tiles": base.problem_dict["num_tiles"] // 2})
    uneven = _rebound(d, "store", 0, "half_tiles")  # loaders loop twice as long: a real bug, counts compressed
    v = check(uneven, iterations=4)
    assert v.status == "INCOMPLETE" and v.cause == "loops" and v.kind == "deadlock"
    assert "half_tiles" in v.reason and "num_tiles" in v.reason and v.witness
    (diag,) = v.diagnostics()
    assert diag.code == "check.incomplete" and "possible deadlock" in diag.message and "loops=" in diag.hint
    # with values the user chooses to keep the relation, the verdict is definite again
    v = check(uneven, iterations=4, loops={"half_tiles": 2, "num_tiles": 8})
    assert (v.status, v.kind) == ("UNSAFE", "deadlock")


def test_loops_that_make_different_bounds_equal_are_a_caveat():
    d = loaders_4_store_5()
    shrunk = shrink(d, 8, loops={"#5": 4})
    assert not shrunk.exact and "#5" in shrunk.caveats[0]
    v = check(d, iterations=8, loops={"#5": 4})
    assert v.status == "INCOMPLETE" and v.cause == "loops"


def test_a_step_keeps_its_residue():
    d = examples.merge_copy()
    d = d.replace(problem={**d.problem_dict, "num_tiles": 4096})
    d = _rebound(d, "store", 0, "num_tiles", 2)
    for it in (3, 4, 5):
        assert shrink(d, it).counts["num_tiles"] % 2 == 0  # 4096 is even: whole pairs


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_iterations_must_be_a_positive_integer(bad):
    with pytest.raises(DesignError, match="iterations"):
        check(examples.merge_copy(), iterations=bad)


def test_none_keeps_the_real_counts():
    d = loaders_4_store_5()
    assert shrink(d, None).counts == {"#4": 4, "#5": 5}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 60), min_size=1, max_size=8, unique=True), st.integers(1, 10),
       st.integers(1, 8), st.sampled_from([1, 2, 3]))
def test_shrinking_is_strictly_monotone_and_exact_unless_it_says_so(values, cap, span, modulus):
    values = sorted(values)
    image = shrink_points(values, cap, span, modulus)
    imgs = [image[v][0] for v in values]
    assert imgs == sorted(set(imgs))  # strictly increasing: different stays different, order kept
    for v in values:
        img, note = image[v]
        if v <= cap:
            assert img == v
        else:
            assert img % modulus == v % modulus and img >= cap
    big = [v for v in values if v > cap]
    for lo, hi in zip(big, big[1:]):  # above the cap, differences are kept, or a caveat says why
        kept = image[hi][0] - image[lo][0] == hi - lo
        assert kept or image[hi][1]
        assert not image[hi][1] or hi - lo > span

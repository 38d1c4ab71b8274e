"""Totals of waits and arrivals per barrier (``analysis.uses``): the iteration rule and the
checker read the same count."""

from __future__ import annotations

from pgstudio import examples
from pgstudio.analysis.check import check
from pgstudio.analysis.uses import barrier_uses, kept
from pgstudio.model.schedule import CapturedSchedule, Loop
from pgstudio.model.task import Task


def _retask(d, name, nodes):
    t = d.task(name)
    return d.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources,
                                      CapturedSchedule(t.schedule.name, nodes)))


def _gemm():
    d = examples.merge_gemm(num_stages=2)
    return d.replace(problem={**d.problem_dict, "num_tiles": 2, "num_k_tiles": 3})


def _k_body(d, task="load_a"):
    outer = d.task(task).schedule.nodes[0]
    return outer, outer.body[0]


def test_a_loader_that_commits_two_stages_per_k_step_is_refused():
    d = _gemm()
    outer, inner = _k_body(d)
    d = _retask(d, "load_a", (Loop(outer.start, outer.stop, 1, (Loop(inner.start, inner.stop, 1,
                                                                     inner.body + inner.body),)),))
    report = d.validate()
    diag = next(x for x in report.diagnostics if x.code == "schedule.iterations")
    assert "'load_a'=12" in diag.message and "'mma'=6" in diag.message and "ab.full_0" in diag.message
    assert check(d).kind == "deadlock"


def test_a_flat_loader_against_the_nested_mma_is_accepted_and_checked_safe():
    d = _gemm()
    d = d.replace(problem={**d.problem_dict, "tiles_times_k": 6})
    _, inner = _k_body(d)
    d = _retask(d, "load_a", (Loop(0, "tiles_times_k", 1, inner.body),))
    assert "schedule.iterations" not in d.validate().codes()
    v = check(d)
    assert v.safe, v.summary()
    # the default shrinking cannot keep 6 = 2 x 3 (the symbol and the product shrink apart) ...
    real = barrier_uses(d)
    assert real["ab.full_0"] == {("load_a", "arrive"): 6, ("mma", "wait"): 6}
    # ... so the checker unrolled the real counts, which are small
    assert dict(v.loops) == {"num_k_tiles": 3, "num_tiles": 2, "tiles_times_k": 6}


def test_big_real_counts_that_shrinking_cannot_keep_are_incomplete_with_the_reason():
    d = examples.merge_gemm(num_stages=2)
    n, k = d.problem_dict["num_tiles"], d.problem_dict["num_k_tiles"]
    d = d.replace(problem={**d.problem_dict, "tiles_times_k": n * k})
    _, inner = _k_body(d)
    d = _retask(d, "load_a", (Loop(0, "tiles_times_k", 1, inner.body),))
    v = check(d)
    assert v.incomplete and v.cause == "loops" and "totals of waits and arrivals" in v.reason, v.summary()


def test_kept_keeps_small_totals_and_differences_and_big_ones_big():
    real = {"s": {("a", "arrive"): 9000, ("b", "wait"): 9000, ("c", "wait"): 3}}
    assert kept(real, {"s": {("a", "arrive"): 9, ("b", "wait"): 9, ("c", "wait"): 3}}, 4) == []
    assert kept(real, {"s": {("a", "arrive"): 4, ("b", "wait"): 9, ("c", "wait"): 3}}, 4)  # 4 is not big
    assert kept(real, {"s": {("a", "arrive"): 10, ("b", "wait"): 9, ("c", "wait"): 3}}, 4)  # equal ones differ

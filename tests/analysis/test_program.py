"""Unrolling: loop counts shrink but keep their differences; cursors walk stages, rounds and
parities as semantics.md section 5 says; actions are the protocol table's, on concrete slots."""

import pytest

from pgstudio import examples, mistakes
from pgstudio.analysis.layout import barrier_layout
from pgstudio.analysis.program import loop_counts, unroll


def test_loop_counts_shrink_outer_and_inner_loops():
    d = examples.merge_gemm()
    assert loop_counts(d, 8, 2) == {"num_tiles": 8, "num_k_tiles": 2}
    real = d.problem_dict
    assert loop_counts(d, None, None) == {"num_tiles": real["num_tiles"], "num_k_tiles": real["num_k_tiles"]}
    assert loop_counts(d, 8, 2, {"num_k_tiles": 3})["num_k_tiles"] == 3


def test_shrinking_keeps_loops_of_different_lengths_different():
    d = mistakes.mismatched_iterations()  # load_b's loop starts at 1
    p = unroll(d, iterations=5)
    loads = {t: sum(1 for r in runs if r.step.op == "load") for t, runs in zip(p.tasks, p.runs)}
    assert loads == {"load_a": 5, "load_b": 4, "store": 0}


def test_a_cursor_walks_stages_rounds_and_parities():
    p = unroll(examples.merge_copy(num_stages=2), iterations=5)
    runs = dict(zip(p.tasks, p.runs))
    acquires = [r for r in runs["load_a"] if r.step.op == "acquire"]
    assert [(r.stage, r.round, r.acts[0].parity) for r in acquires] == [
        (0, 0, 1), (1, 0, 1), (0, 1, 0), (1, 1, 0), (0, 2, 1)]  # producers start at parity 1
    waits = [r for r in runs["store"] if r.step.op == "wait" and r.step.target == "smem_a"]
    assert [(r.stage, r.acts[0].parity) for r in waits] == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 0)]
    layout = barrier_layout(p.design)
    first = layout.set_for("smem_a", "full").first
    assert [r.acts[1].slot for r in acquires] == [first, first + 1, first, first + 1, first]


def test_merge_consumer_releases_the_shared_empty_barrier_once_with_every_thread():
    p = unroll(examples.merge_copy(), iterations=1)
    (release,) = [r for r in dict(zip(p.tasks, p.runs))["store"] if r.step.op == "release"]
    (act,) = release.acts
    assert (act.verb, act.set, act.arrivals) == ("arrive", "ab.shared_empty", 128)
    assert release.frees == ("smem_a", "smem_b")


def test_fork_arms_its_shared_full_barrier_once_per_stage_and_one_copy_fills_both_views():
    p = unroll(examples.fork_copy(), iterations=1)
    load = dict(zip(p.tasks, p.runs))["load"]
    arms = [(r.step.target, a.verb, a.tx) for r in load for a in r.acts if a.verb == "arrive_expect_tx"]
    assert arms == [("smem_y", "arrive_expect_tx", 8192)]  # at the last member acquire, merged bytes
    (copy,) = [r for r in load if r.step.op == "load"]
    assert copy.written == ("smem_x", "smem_y") and copy.copy_bytes == 8192


def test_the_copy_lands_the_tile_while_expect_tx_arms_the_configured_bytes():
    p = unroll(mistakes.half_tx_bytes(), iterations=1)
    runs = dict(zip(p.tasks, p.runs))["load_a"]
    expect = [a.tx for r in runs for a in r.acts if a.verb == "arrive_expect_tx"]
    lands = [a.tx for r in runs for a in r.acts if a.verb == "complete_tx"]
    assert (expect, lands) == ([4096], [8192])


def test_mma_reads_its_operands_itself_and_counts_its_flops():
    d = examples.merge_gemm()
    p = unroll(d, iterations=1, inner=1)
    (mma,) = [r for r in dict(zip(p.tasks, p.runs))["mma"] if r.step.op == "mma"]
    assert mma.dma and [r for r, _, _ in mma.reads] == ["smem_a", "smem_b"]
    (m, n), k = d.resource("tmem_c").tile, d.resource("smem_a").tile[-1]
    assert mma.flops == 2 * m * n * k


def test_a_bound_that_is_not_a_number_is_a_clear_error():
    from pgstudio.errors import DesignError
    d = examples.merge_copy().replace(problem={"num_tiles": "many"})
    with pytest.raises(DesignError, match="num_tiles"):
        unroll(d)

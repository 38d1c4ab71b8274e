"""The discrete-event simulator: exact barrier states step by step, GPU-like behaviour of wrong
counts, and a steady-state period that responds to stages, tile bytes and bandwidth."""

import pytest

from pgstudio import (Design, GmemTensor, MemoryResource, Task, create_tma_async_pipeline_cfg, domain_loop, examples,
                      mistakes, schedule)
from pgstudio.analysis.cost import H200, CostModel
from pgstudio.analysis.mbarrier import Mbarrier
from pgstudio.analysis.simulate import Simulator, simulate
from pgstudio.analysis.timeline import ARRIVE, BLOCKED, PHASE_FLIP
from pgstudio.model.resource import Compute


@schedule
def _load(src, dst):
    with domain_loop(0, "num_tiles"):
        dst.try_acquire()
        dst.acquire()
        dst.load(src)
        dst.commit()


@schedule
def _drain(src, out):
    with domain_loop(0, "num_tiles"):
        src.try_wait()
        src.wait()
        out.store(val=src.read())
        src.release()


def tiny(stages: int = 2, tiles: int = 3) -> Design:
    """One TmaAsync pipeline: a 1-warp loader, a 4-warp drain; 1 KiB tiles."""
    a = GmemTensor("gmem_a")
    s = MemoryResource("smem", create_tma_async_pipeline_cfg(num_stages=stages, num_bytes=1024), Compute("copy"),
                       "float32", (256,))
    d = GmemTensor("gmem_d", compute=Compute("store", "smem"))
    return Design("tiny", [a, s, d], {s: [a], d: [s]}, [],
                  [Task("load", 0, 1, [a], [s], _load(a, s)), Task("drain", 1, 4, [s], [d], _drain(s, d))],
                  {"num_tiles": tiles})


def test_barrier_states_after_every_action_of_a_small_pipeline():
    sim = Simulator(tiny(), iterations=3)
    tl = sim.run()
    assert tl.meta_dict["status"] == "complete"
    # slots: full[0], full[1] (count 1, 1024 tx bytes per phase), empty[0], empty[1] (count 128)
    F0, F1, E0, E1 = range(4)
    steps = [(s.agent, s.action, s.states) for s in sim.snapshots]
    fresh_e = Mbarrier(128, 0, 0)
    expected = [
        ("load", "wait smem.empty[0] parity 1", (Mbarrier(1, 0, 0), Mbarrier(1, 0, 0), fresh_e, fresh_e)),
        ("load", "arrive.expect_tx smem.full[0] 1024 B", (Mbarrier(0, 1024, 0), Mbarrier(1, 0, 0), fresh_e, fresh_e)),
        ("load", "wait smem.empty[1] parity 1", (Mbarrier(0, 1024, 0), Mbarrier(1, 0, 0), fresh_e, fresh_e)),
        ("load", "arrive.expect_tx smem.full[1] 1024 B", (Mbarrier(0, 1024, 0), Mbarrier(0, 1024, 0), fresh_e, fresh_e)),
        # the copy's bytes complete phase 0 of full[0]: pending reloads to the init count
        ("load.tma", "copy lands 1024 B on smem.full[0]", (Mbarrier(1, 0, 1), Mbarrier(0, 1024, 0), fresh_e, fresh_e)),
        ("drain", "wait smem.full[0] parity 0", (Mbarrier(1, 0, 1), Mbarrier(0, 1024, 0), fresh_e, fresh_e)),
        # all 128 drain threads arrive: empty[0] completes phase 0, the loader's third acquire passes
        ("drain", "arrive smem.empty[0] x128", (Mbarrier(1, 0, 1), Mbarrier(0, 1024, 0), Mbarrier(128, 0, 1), fresh_e)),
        ("load", "wait smem.empty[0] parity 0", (Mbarrier(1, 0, 1), Mbarrier(0, 1024, 0), Mbarrier(128, 0, 1), fresh_e)),
        ("load", "arrive.expect_tx smem.full[0] 1024 B",
         (Mbarrier(0, 1024, 1), Mbarrier(0, 1024, 0), Mbarrier(128, 0, 1), fresh_e)),
    ]
    assert steps[:len(expected)] == expected
    final = sim.states
    assert (final[F0].phase, final[F1].phase, final[E0].phase, final[E1].phase) == (2, 1, 2, 1)
    assert all(b.pending == c and b.tx == 0 for b, c in zip(final, (1, 1, 128, 128)))


def test_fused_merge_producers_share_one_full_barrier_with_their_own_bytes():
    sim = Simulator(examples.fused_merge_copy(num_stages=1, tile_bytes=4096), iterations=1)
    sim.run()
    full = sim.program.layout.set_for("smem_a", "full").first  # init count 2 (one per tma producer)
    trace = [(s.agent, s.states[full]) for s in sim.snapshots if "shared_full" in s.action]
    assert trace == [
        ("load_a", Mbarrier(1, 4096, 0)),  # each producer arms its own bytes on the shared barrier
        ("load_b", Mbarrier(0, 8192, 0)),
        ("load_a.tma", Mbarrier(0, 4096, 0)),  # all arrived, half the bytes in: still phase 0
        ("load_b.tma", Mbarrier(2, 0, 1)),  # the last bytes complete it, pending reloads to 2
        ("store", Mbarrier(2, 0, 1)),  # the single collapsed wait passes
    ]


def test_the_drain_blocks_on_the_full_barrier_until_the_copy_lands():
    tl = simulate(tiny(), iterations=3)
    first = tl.blocked("drain")[0]
    (landing,) = [e for e in tl.events if e.kind == PHASE_FLIP and e.barrier == "smem.full" and e.stage == 0
                  and e.iteration == 0]
    assert (first.barrier, first.stage, first.phase) == ("smem.full", 0, 0)
    assert first.end == landing.start  # woken the moment the phase completes
    assert landing.task == "load.tma"
    copy = [e for e in tl.lane("load.tma") if e.op == "copy"][0]
    assert copy.duration == pytest.approx(H200.bulk_latency_ns + 1024 / H200.dram_bytes_per_ns)


def test_every_event_names_its_barrier_and_instants_have_no_duration():
    tl = simulate(examples.merge_gemm(), iterations=2, inner=2)
    assert tl.meta_dict["status"] == "complete"
    for e in tl.events:
        if e.kind in (ARRIVE, PHASE_FLIP):
            assert e.start == e.end and e.barrier and e.stage >= 0
        if e.kind == BLOCKED:
            assert e.end >= e.start and e.barrier and e.stage >= 0 and e.phase in (0, 1)
    assert set(tl.lanes) == {"mma", "epilogue", "load_a", "load_a.tma", "load_b", "load_b.tma"}


def test_runs_are_deterministic():
    assert simulate(examples.fork_gemm_act(), iterations=3, inner=2) == simulate(examples.fork_gemm_act(), iterations=3,
                                                                                  inner=2)


def test_a_consumer_that_never_releases_leaves_the_loaders_blocked():
    tl = simulate(mistakes.never_releases(), iterations=8)
    meta = tl.meta_dict
    assert meta["status"] == "deadlock"
    assert {s.split(":")[0] for s in meta["stuck"]} == {"load_a", "load_b"}
    last = tl.blocked("load_a")[-1]
    assert (last.barrier, last.stage, last.phase, last.iteration) == ("ab.shared_empty", 0, 0, 4)


def test_an_undersized_consumer_group_completes_two_phases_per_release():
    sim = Simulator(mistakes.undersized_consumer_group(), iterations=2)
    sim.run()
    layout = sim.program.layout
    empty0 = layout.set_for("smem_a", "empty").first
    first_release = next(s for s in sim.snapshots if s.action.startswith("arrive ab.shared_empty[0]"))
    assert first_release.states[empty0] == Mbarrier(64, 0, 2)  # 128 arrivals on a count of 64


def test_half_the_tx_bytes_lets_the_consumer_in_before_the_copy_is_done():
    sim = Simulator(mistakes.half_tx_bytes(), iterations=1)
    tl = sim.run()
    full_a = sim.program.layout.set_for("smem_a", "full").first
    flip = next(e for e in tl.events if e.kind == PHASE_FLIP and e.slot == full_a)
    copy = next(e for e in tl.lane("load_a.tma") if e.op == "copy")
    # the bytes land in one event here, but the phase flips when half of them are in and the other
    # half counts against the next phase
    assert flip.start == copy.end and sim.states[full_a] == Mbarrier(1, -4096, 1)


def _period(design, iterations=48, **kw):
    return simulate(design, iterations=iterations, **kw).period()


def test_more_stages_never_slow_the_steady_state_down():
    periods = [_period(examples.merge_copy(num_stages=s)) for s in (1, 2, 4)]
    assert periods[0] > periods[1] >= periods[2] > 0


def test_bigger_tiles_take_longer_per_iteration():
    small, big = (_period(examples.merge_copy(tile_bytes=b)) for b in (8192, 16384))
    assert big > small


def test_the_cost_model_is_overridable_and_bandwidth_bound_designs_follow_it():
    base = _period(examples.merge_copy())
    faster = _period(examples.merge_copy(), cost=CostModel(dram_bytes_per_ns=2 * H200.dram_bytes_per_ns))
    assert faster < base
    assert H200.replace(barrier_ns=5).barrier_ns == 5 and H200.barrier_ns == 10


def test_inner_loops_run_their_real_count_unless_told():
    d = examples.merge_gemm()
    tl = simulate(d, iterations=1)
    mmas = [e for e in tl.lane("mma") if e.op == "mma"]
    assert len(mmas) == d.problem_dict["num_k_tiles"]
    assert len([e for e in simulate(d, iterations=1, inner=2).lane("mma") if e.op == "mma"]) == 2


def test_calibrated_costs_make_stages_hide_load_latency_as_the_kernel_time_model_says():
    from pgstudio.analysis.predict import prediction
    periods, predicted = {}, {}
    for s in (2, 3, 4, 5):
        d = examples.merge_gemm(num_stages=s, bn=128)
        periods[s] = simulate(d, iterations=2, cost="calibrated").period("mma")
        predicted[s] = prediction(d).period_ns
    assert periods[2] > periods[3] > periods[4] == periods[5]
    assert periods[2] / periods[4] > 2.0
    for s in periods:
        assert periods[s] == pytest.approx(predicted[s], rel=0.1)


def test_with_the_release_lag_an_mma_gives_a_stage_back_after_the_next_mma_is_issued():
    from pgstudio.analysis.cost import calibrated_cost
    d = examples.merge_gemm(num_stages=4, bn=128)
    tl = simulate(d, iterations=1, inner=3, cost=calibrated_cost(d))
    mmas = [e for e in tl.lane("mma") if e.op == "mma"]
    releases = [e for e in tl.lane("mma") if e.kind == "arrive" and e.barrier.startswith("ab")]
    assert len(mmas) == len(releases) == 3
    assert releases[0].start == mmas[1].start and releases[1].start == mmas[2].start
    assert releases[2].start >= mmas[2].end  # the last one when the k loop ends
    plain = simulate(d, iterations=1, inner=3)
    first = next(e for e in plain.lane("mma") if e.kind == "arrive" and e.barrier.startswith("ab"))
    assert first.start < [e for e in plain.lane("mma") if e.op == "mma"][1].start


def test_a_release_lag_of_two_gives_each_stage_back_two_mmas_later():
    from pgstudio.analysis.cost import calibrated_cost
    d = examples.merge_gemm(num_stages=4, bn=128)
    tl = simulate(d, iterations=1, inner=4, cost=calibrated_cost(d).replace(mma_release_lag=2))
    mmas = [e for e in tl.lane("mma") if e.op == "mma"]
    releases = [e for e in tl.lane("mma") if e.kind == "arrive" and e.barrier.startswith("ab")]
    assert len(mmas) == len(releases) == 4
    assert releases[0].start == mmas[2].start and releases[1].start == mmas[3].start
    assert min(r.start for r in releases[2:]) >= mmas[3].end  # the last two when the k loop ends
    assert tl.meta_dict["status"] == "complete"


def test_an_sm90_mma_takes_its_staging_buffer_at_commit_and_runs_the_next_mainloop_meanwhile():
    # the epilogue of a wide tile stores for longer than a 4-k-tile mainloop: where the MMA
    # acquires at the tile's start (sm_100a: tensor memory) it waits before every mainloop; on
    # sm_90a (registers) it runs the mainloop and waits only to write the registers out
    slow_store = H200.replace(thread_bytes_per_ns=0.05)
    d90 = examples.merge_gemm(num_stages=3)
    d100 = d90.with_targets("sm_100a")
    for d in (d90, d100):
        assert d.targets[0] in ("sm_90a", "sm_100a")
    t90 = simulate(d90, iterations=3, inner=4, cost=slow_store)
    t100 = simulate(d100, iterations=3, inner=4, cost=slow_store)
    assert t90.meta_dict["status"] == t100.meta_dict["status"] == "complete"

    def waits_before_mainloop(tl):
        """The MMA's blocked waits on the staging buffer, and how many of them a tile's mainloop
        (its first mma) follows before the accumulator's commit (an arrive on tmem_c.full)."""
        lane = tl.lane("mma")
        marks = sorted((e.start, e.op == "mma") for e in lane
                       if e.op == "mma" or (e.kind == ARRIVE and e.barrier.startswith("tmem_c.full")))
        blocked = [e for e in lane if e.kind == BLOCKED and e.barrier.startswith("tmem_c.empty")]
        return sum(1 for b in blocked if next(is_mma for t, is_mma in marks if t >= b.end)), blocked
    before90, blocked90 = waits_before_mainloop(t90)
    before100, blocked100 = waits_before_mainloop(t100)
    assert before100 == 2 and before90 == 0  # tiles 2 and 3 wait before their mainloop on sm_100a only
    assert blocked90  # ... sm_90a still waits, at commit, for the slow store
    assert t90.end < t100.end


def test_an_sm90_commit_takes_the_time_to_write_the_registers_to_the_staging_buffer():
    from pgstudio.analysis.workload import workload
    d90 = examples.merge_gemm(num_stages=3)
    staging = workload(d90).staging_bytes
    assert staging == 128 * 256 * 2  # the fp32 accumulator as 16-bit outputs

    def commits(d):
        tl = simulate(d, iterations=2, inner=2)
        return [e.duration for e in tl.lane("mma") if e.op == "commit" and e.target == "tmem_c"]
    c90, c100 = commits(d90), commits(d90.with_targets("sm_100a"))
    want = H200.smem_work(staging, d90.task("mma").num_threads)
    assert len(c90) == len(c100) == 2
    assert all(c >= want for c in c90) and want > 200  # 64 KiB at the SM's shared-memory rate
    assert all(c < want / 5 for c in c100)  # tensor memory: nothing to write out, barrier steps only


def test_acquire_at_commit_moves_the_wait_and_keeps_every_step():
    from pgstudio.analysis.program import unroll
    from pgstudio.analysis.simulate import acquire_accumulator_at_commit
    prog = unroll(examples.merge_gemm(), iterations=2, inner=2)
    moved = acquire_accumulator_at_commit(prog)
    mma = prog.tasks.index("mma")
    before, after = prog.runs[mma], moved.runs[mma]
    assert [r.step for r in before] == [r.step for r in after]
    acquires = [j for j, r in enumerate(before) if r.step.op == "acquire" and r.step.target == "tmem_c"]
    commits = [j for j, r in enumerate(before) if r.step.op == "commit" and r.step.target == "tmem_c"]
    assert len(acquires) == len(commits) == 2
    for a, c in zip(acquires, commits):
        assert before[a].acts and not after[a].acts
        assert after[c].acts == before[a].acts + before[c].acts
    others = [t for t in range(len(prog.tasks)) if t != mma]
    assert all(prog.runs[t] == moved.runs[t] for t in others)


def test_an_unknown_cost_name_is_refused():
    with pytest.raises(ValueError, match="'calibrated'"):
        simulate(examples.merge_copy(), cost="fast")


def test_period_of_one_lane_then_of_the_busiest_both_answer():
    """period() caches per task; the cache once took the name of the method that computes a
    period, so a second task's period raised TypeError."""
    tl = simulate(examples.merge_copy(), iterations=8)
    fresh = simulate(examples.merge_copy(), iterations=8)
    assert tl.period("store") == fresh.period("store") and tl.period() == fresh.period() > 0


def test_the_period_spans_successive_iterations_only():
    """A measured GEMM timeline records a window of each work unit's k tiles (iterations 0..3, then
    100..103): the jump between windows is no period."""
    from pgstudio.analysis.timeline import WORK, Event, Timeline
    its = [0, 1, 2, 3, 100, 101, 102, 103]
    starts = [0, 10, 20, 30, 5000, 5010, 5020, 5030]
    tl = Timeline.from_events("d", [Event("mma", "mma", WORK, t, t + 5, iteration=i) for i, t in zip(its, starts)],
                              ("mma",), "measured")
    assert tl.period("mma") == 10


def test_loads_run_ahead_of_the_mma_by_at_most_their_stages():
    """issued_ahead: per MMA k tile, the loads issued by its start minus its index; the simulated
    merge_gemm keeps its 3 stages full in the steady state."""
    tl = simulate(examples.merge_gemm(num_stages=3), iterations=12)
    lead = tl.issued_ahead("load_a", "mma", 3)
    assert len(lead) == tl.iterations - 3 and max(lead) <= 3
    assert sorted(lead[3:])[len(lead[3:]) // 2] >= 2

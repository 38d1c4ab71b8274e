"""Measured timelines: decoding stamp buffers (synthetic ones on the CPU, written here from the
layout ``codegen.instrument`` documents), the Chrome trace JSON, and on a GPU the real thing."""

import json
import struct

import pytest

from pgstudio import examples
from pgstudio.analysis.simulate import simulate
from pgstudio.analysis.timeline import ARRIVE, BLOCKED, SYNC, WORK
from pgstudio.codegen import emit
from pgstudio.codegen.instrument import BLOCKED_BIT, ITER_BITS, ITER_SHIFT, TIMED_BIT, TIMED_EVERY, Instrument
from pgstudio.errors import PgStudioError
from pgstudio.runtime.trace import chrome_trace, decode

GHZ = 2.0  # the synthetic SM clock


class Buffer:
    """A stamp buffer written the way the kernel writes it (uint4 words, per-lane slabs)."""

    def __init__(self, src):
        info = dict(src.info["instrument"])
        self.tasks, self.cap, self.blocks = len(info["tasks"]), info["capacity"], info["blocks"]
        self.words = [0] * (info["buffer_bytes"] // 4)

    def lane(self, block, task, start_gt, start_clk, steps, count=None, quantum=1, timed_every=1):
        """steps: (site, blocked, iteration, start ns after the lane start, duration ns); every
        ``timed_every``-th record reads the global timer (at the step's end), as the kernel does."""
        base = (block * self.tasks + task) * (self.cap + 1) * 4
        self.words[base:base + 4] = [len(steps) if count is None else count, start_gt % 2**32, start_gt >> 32,
                                     start_clk % 2**32]
        for i, (site, blocked, it, t, dur) in enumerate(steps[:self.cap]):
            timed = i % timed_every == 0
            g = (start_gt + t + dur) // quantum * quantum if timed else 0
            code = site | blocked << BLOCKED_BIT | timed << TIMED_BIT | (it % 2**ITER_BITS) << ITER_SHIFT
            self.words[base + 4 * (i + 1):base + 4 * (i + 2)] = [g % 2**32, (start_clk + int(t * GHZ)) % 2**32,
                                                                 int(dur * GHZ), code]

    def bytes(self):
        return struct.pack(f"<{len(self.words)}I", *self.words)


@pytest.fixture
def merge_src():
    return emit(examples.merge_copy(), instrument=Instrument(blocks=2, capacity=8))


def test_decode_names_every_stamp_as_the_simulator_would(merge_src):
    buf = Buffer(merge_src)
    t0, c0 = 2**32 - 300, 2**32 - 50  # both clocks wrap their low 32 bits during the run
    buf.lane(0, 0, t0, c0, [(1, 0, 0, 10, 20), (2, 0, 0, 40, 10), (1, 1, 4, 1000, 500), (2, 0, 4, 1500, 8)])
    buf.lane(0, 2, t0, c0, [(1, 1, 0, 5, 900), (3, 0, 0, 905, 5), (6, 0, 0, 920, 200), (7, 0, 0, 1130, 10)])
    tr = decode(merge_src, buf.bytes())
    assert tr.blocks == (0,) and not tr.problems()
    tl = tr.timeline()
    assert tl.source == "measured" and tl.lanes == ("load_a", "load_a.tma", "load_b", "store")
    # load_a's first copy, issued at 40 ns, landed when the store task's blocked wait on full_0
    # ended (905 ns); its second (iteration 4) has no recorded waiter, so no copy event
    (copy,) = tl.lane("load_a.tma")
    assert (copy.op, copy.kind, copy.barrier, copy.slot, copy.stage, copy.iteration) == \
        ("copy", WORK, "ab.full_0", 0, 0, 0)
    assert copy.start == pytest.approx(40) and copy.end == pytest.approx(905)
    assert tl.meta_dict["copies_landed_by"] == 0  # it was observed landing, not bounded
    fit = tr.fits[0]
    assert fit.fitted and fit.ns_per_cycle == pytest.approx(1 / GHZ)
    # the store task's first wait found full_0 closed: 900 ns blocked on slot 0, parity 0
    (wait_block,) = [e for e in tl.blocked("store")]
    assert (wait_block.barrier, wait_block.slot, wait_block.stage, wait_block.phase) == ("ab.full_0", 0, 0, 0)
    assert wait_block.start == pytest.approx(5) and wait_block.duration == pytest.approx(900)
    # load_a's acquire in iteration 4 (4 stages: stage 0 again, round 1) waited for parity 0 on the empty slot
    (acq_block,) = tl.blocked("load_a")
    assert (acq_block.barrier, acq_block.slot, acq_block.stage, acq_block.phase, acq_block.iteration) == \
        ("ab.shared_empty", 8, 0, 0, 4)
    store = [e for e in tl.lane("store") if e.op == "store"]
    assert store[0].kind == WORK and store[0].duration == pytest.approx(200) and store[0].start == pytest.approx(920)
    arrivals = [(e.task, e.barrier) for e in tl.events if e.kind == ARRIVE]
    assert ("load_a", "ab.full_0") in arrivals and ("store", "ab.shared_empty") in arrivals
    waits = [e for e in tl.lane("store") if e.op == "wait"]
    assert [e.kind for e in waits] == [SYNC, SYNC] and waits[0].duration == 0  # blocked time is its own event
    import pickle  # trace() runs in a worker process: its Trace crosses back pickled
    assert pickle.loads(pickle.dumps(tr)).timeline().events == tl.events


def test_a_gemm_trace_counts_each_cursor_in_its_own_loop():
    """merge_gemm's MMA lane stamps its k-loop steps with the k loop's pass count (across tiles)
    and its accumulator hand-over with the tile loop's: the decoder names A / B stages from the
    first, and the accumulator's round (the MMAs' phase) from the last tile-level stamp."""
    src = emit(examples.merge_gemm(num_stages=3), instrument=Instrument(blocks=1, capacity=64))
    buf = Buffer(src)
    mma, loads, t = [], [], 0
    for tile in range(2):
        mma.append((1, 0, tile, t, 5))  # acquire the accumulator (tile loop)
        t += 10
        for k in range(4 * tile, 4 * tile + 4):
            blocked = int(k == 0)
            loads += [(1, 0, k, t - 8, 2), (2, 0, k, t - 5, 2)]  # load_a: acquire, issue (k loop)
            mma += [(3, blocked, k, t, 300 if blocked else 5), (5, 0, k, t + 310, 5), (8, 0, k, t + 320, 40),
                    (9, 0, k, t + 370, 5)]
            t += 400
        mma.append((10, 0, tile, t, 20))  # commit (tile loop)
        t += 30
    buf.lane(0, 0, 10_000, 0, mma)
    buf.lane(0, 2, 10_000, 0, loads)
    tl = decode(src, buf.bytes()).timeline()
    assert tl.lanes == ("mma", "epilogue", "load_a", "load_a.tma", "load_b")  # the simulator's lanes
    waits = [e for e in tl.lane("mma") if e.op == "wait" and e.target == "smem_a"]
    assert [(e.iteration, e.stage, e.phase, e.slot) for e in waits] == \
        [(k, k % 3, (k // 3) & 1, k % 3) for k in range(8)]  # ab.full_0 is slots 0..2
    mmas = [e for e in tl.lane("mma") if e.op == "mma"]
    assert [e.iteration for e in mmas] == list(range(8))
    assert [e.phase for e in mmas] == [0] * 4 + [1] * 4  # the accumulator's round is the tile's
    commits = [e for e in tl.lane("mma") if e.op == "commit"]
    assert [(e.iteration, e.barrier, e.slot) for e in commits] == [(0, "tmem_c.full", 9), (1, "tmem_c.full", 9)]
    (first_copy, *rest) = tl.lane("load_a.tma")
    assert first_copy.end == pytest.approx(10 + 300)  # the MMA's blocked wait for k tile 0 ended when it landed
    assert len(rest) == 7 and tl.meta_dict["copies_landed_by"] == 7  # the others were complete when waited on


def test_full_slabs_missing_blocks_and_wrapped_iterations(merge_src):
    buf = Buffer(merge_src)
    steps = [(6, 0, it, 100 * k, 50) for k, it in enumerate(range(2**ITER_BITS - 3, 2**ITER_BITS + 5))]
    buf.lane(1, 2, 5_000, 7, steps, count=20)  # 8 kept, 12 more stamped after the slab filled
    tr = decode(merge_src, buf.bytes())
    assert tr.blocks == (1,)  # block 0 wrote nothing (it did not run)
    lane = tr.lane(1, "store")
    assert lane.dropped == 12 and len(lane.stamps) == 8
    assert [s.iteration for s in lane.stamps] == list(range(2**ITER_BITS - 3, 2**ITER_BITS + 5))
    assert tr.timeline(1).meta_dict["dropped"]["store"] == 12
    with pytest.raises(PgStudioError, match="block 0 was not sampled"):
        tr.timeline(0)


def test_a_coarse_global_timer_is_resolved_by_the_cycle_counter(merge_src):
    src = emit(examples.merge_copy(), instrument=Instrument(blocks=1, capacity=64))
    buf = Buffer(src)
    # pairs of steps 37 ns apart, one pair every 3.1 us, on a global timer that ticks once per microsecond
    truth = [3100 * (i // 2) + 37 * (i % 2) for i in range(64)]
    buf.lane(0, 2, 10**9, 123, [(6, 0, i, t, 20) for i, t in enumerate(truth)], quantum=1000)
    tr = decode(src, buf.bytes())
    assert tr.fits[0].step_ns >= 1000
    fine = [e.start for e in tr.timeline().lane("store") if e.op == "store"]
    assert [b - a for a, b in zip(fine[::2], fine[1::2])] == pytest.approx([37] * 32, abs=0.5)
    assert max(abs(f - t) for f, t in zip(fine, truth)) < 500  # the line through the coarse ticks
    coarse = [e.start for e in tr.timeline(clock="globaltimer").lane("store") if e.op == "store"]
    assert sum(b - a == 0 for a, b in zip(coarse[::2], coarse[1::2])) > 20  # the raw timer mostly cannot


def test_sparse_timer_readings_are_enough_for_the_clock_fit():
    """The kernel reads the global timer on every TIMED_EVERY-th record only (it costs far more
    than the cycle counter): the fit through those readings still places every step."""
    src = emit(examples.merge_copy(), instrument=Instrument(blocks=1, capacity=64))
    buf = Buffer(src)
    truth = [137 * i + 11 * (i % 5) for i in range(64)]
    buf.lane(0, 2, 10**9, 5, [(6, 0, i, t, 20) for i, t in enumerate(truth)], timed_every=TIMED_EVERY)
    tr = decode(src, buf.bytes())
    lane = tr.lane(0, "store")
    assert [s.gt is not None for s in lane.stamps] == [i % TIMED_EVERY == 0 for i in range(64)]
    fit = tr.fits[0]
    assert fit.fitted and fit.points == 1 + 64 // TIMED_EVERY and fit.ns_per_cycle == pytest.approx(1 / GHZ)
    for clock in ("cycles", "globaltimer"):
        starts = [e.start for e in tr.timeline(clock=clock).lane("store") if e.op == "store"]
        assert starts == pytest.approx(truth, abs=0.5), clock
    assert tr.problems() == []


def test_wall_clock_sized_timer_values_keep_nanoseconds(merge_src):
    """%globaltimer counts nanoseconds since 1970 (~1.8e18): a double near there resolves only
    256 ns, so the decoder must subtract a reference as an integer before any float."""
    buf = Buffer(merge_src)
    truth = [1000 * i + 37 * (i % 3) for i in range(8)]
    for block in (0, 1):
        buf.lane(block, 2, 1_764_420_000_123_456_789 + 3 * block, 5, [(6, 0, i, t, 20) for i, t in enumerate(truth)])
    tr = decode(merge_src, buf.bytes())
    for clock in ("cycles", "globaltimer"):
        starts = [e.start for e in tr.timeline(0, clock=clock).lane("store") if e.op == "store"]
        assert starts == pytest.approx(truth, abs=0.5), clock
    later = [e.start for e in tr.timeline(1).lane("store") if e.op == "store"]
    assert later == pytest.approx([t + 3 for t in truth], abs=0.5)  # blocks stay on one time axis


def test_out_of_order_stamps_are_reported(merge_src):
    buf = Buffer(merge_src)
    buf.lane(0, 2, 0, 0, [(6, 0, 0, 100, 50), (7, 0, 0, 120, 5)])  # starts before the store ended
    problems = decode(merge_src, buf.bytes()).problems()
    assert len(problems) == 1 and "task 'store'" in problems[0] and "stamp 1" in problems[0]


def test_decode_refuses_what_it_cannot_read(merge_src):
    with pytest.raises(PgStudioError, match="not instrumented"):
        decode(emit(examples.merge_copy()), b"\0" * 64)
    with pytest.raises(PgStudioError, match="holds 64 bytes"):
        decode(merge_src, b"\0" * 64)


def test_chrome_trace_has_one_thread_per_lane_and_microsecond_times(merge_src):
    buf = Buffer(merge_src)
    buf.lane(0, 0, 1000, 0, [(1, 0, 0, 10, 20), (2, 0, 0, 40, 10)])
    buf.lane(0, 2, 1000, 0, [(1, 1, 0, 5, 900), (6, 0, 0, 920, 200)])
    buf.lane(1, 2, 1500, 0, [(6, 0, 0, 20, 100)])
    tr = decode(merge_src, buf.bytes())
    doc = json.loads(json.dumps(tr.chrome()))  # plain JSON
    evs = doc["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    # block 0's load_a issued a copy that the store task was seen waiting for: its copy lane
    assert sorted(names) == [(0, t) for t in range(4)] + [(1, t) for t in range(3)]
    assert names[(0, 3)] == "store (warps 4..7)" and names[(0, 0)] == "load_a (warp 0)"
    assert names[(0, 1)] == "load_a.tma (warp 0)" and names[(1, 2)] == "store (warps 4..7)"
    procs = [e["args"]["name"] for e in evs if e["name"] == "process_name"]
    assert procs == ["merge_copy (measured, block 0)", "merge_copy (measured, block 1)"]
    blocked = [e for e in evs if e.get("cat") == BLOCKED]
    assert len(blocked) == 1 and blocked[0]["name"] == "blocked on ab.full_0[0]"
    assert blocked[0]["dur"] == pytest.approx(0.9) and blocked[0]["tid"] == 3  # 900 ns, in microseconds
    assert all(e["dur"] >= 0 for e in evs if e["ph"] == "X")
    assert {e["ph"] for e in evs} == {"M", "X", "i"}


def test_chrome_trace_of_a_simulated_timeline():
    tl = simulate(examples.fork_copy(), 4)
    doc = chrome_trace(tl)
    lanes = [e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"]
    assert lanes == ["load (warp 0)", "load.tma (warp 0)", "copy_out (warps 4..7)", "relu_out (warps 8..11)"]
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == sum(1 for e in tl.events if e.kind in (WORK, SYNC, BLOCKED))


def test_cli_writes_a_simulated_trace(tmp_path, capsys):
    from pgstudio.cli import main
    design = tmp_path / "d.json"
    design.write_text(examples.merge_copy().to_json())
    out = tmp_path / "t.json"
    assert main(["trace", str(design), "--simulate", "--iterations", "6", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["otherData"]["source"] == "simulated" and doc["traceEvents"]
    assert "wrote" in capsys.readouterr().out


# -- on the GPU ------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_measured_merge_copy_timeline():
    from pgstudio.runtime.trace import trace
    stages = 4
    tr = trace(examples.merge_copy(num_stages=stages), n=1 << 24, instrument=Instrument(blocks=2, capacity=512))
    assert tr.meta_dict["verified"] is True  # the instrumented kernel still computes D = A + B
    assert tr.problems() == []  # stamps are monotonic per lane (both clocks)
    assert tr.blocks == (0, 1)
    for block in tr.blocks:
        tl = tr.timeline(block)
        # one lane per task, and the copy engine's lane of each loader (the copies seen landing)
        assert tl.source == "measured" and tl.lanes == ("load_a", "load_a.tma", "load_b", "load_b.tma", "store")
        for lane in tl.lanes:
            starts = [e.start for e in tl.lane(lane) if e.kind in (WORK, SYNC, BLOCKED) and e.op != "blocked"]
            assert starts == sorted(starts)
        # the first tile comes from DRAM: the store task's first wait finds its full barrier closed
        first = [e for e in tl.blocked("store") if e.iteration == 0]
        assert first and first[0].barrier.startswith("ab.full_") and first[0].duration > 0
        # a fresh empty barrier lets the first `stages` acquires through; later ones wait for releases
        early = [e for lane in ("load_a", "load_b") for e in tl.blocked(lane) if e.iteration < stages]
        assert early == []
        late = [e for lane in ("load_a", "load_b") for e in tl.blocked(lane)]
        assert late and all(e.barrier == "ab.shared_empty" for e in late)
        assert tl.period() > 0


@pytest.mark.gpu
def test_measured_fork_copy_has_both_consumers():
    from pgstudio.runtime.trace import trace
    tr = trace(examples.fork_copy(), n=1 << 22, instrument=Instrument(blocks=1, capacity=64))
    tl = tr.timeline()
    assert tr.meta_dict["verified"] and tr.problems() == []
    assert tl.lanes == ("load", "load.tma", "copy_out", "relu_out")
    assert {e.op for e in tl.lane("relu_out")} >= {"wait", "store", "release"}


GEMM_TRACED = ("merge_gemm", "fused_merge_gemm", "merge_gemm_resadd", "fork_gemm_act")


@pytest.mark.gpu
@pytest.mark.parametrize("name", GEMM_TRACED)
def test_measured_gemm_timeline_shows_the_pipeline(name):
    from pgstudio.runtime.trace import trace
    design = examples.CANONICAL[name]()
    stages = design.resource("smem_a").pipeline_config.num_stages
    tr = trace(design, instrument=Instrument(blocks=2))  # the default window: 2 work units x 16 k tiles
    assert tr.meta_dict["verified"] is True and tr.problems() == []
    assert tr.blocks == (0, 1) and tr.meta_dict["window"] == (2, 16)
    tasks = [t.name for t in design.tasks]
    mma = next(t.name for t in design.tasks for s in t.schedule.steps() if s.op == "mma")
    loads = ("load_a", "load_b")  # the operand loads in the k loop (merge_gemm_resadd's load_r is per tile)
    store = next(t.name for t in design.tasks for s in t.schedule.steps() if s.op == "store")
    num_k = design.problem_dict["num_k_tiles"]
    for block in tr.blocks:
        tl = tr.timeline(block)
        assert tl.source == "measured" and set(tasks) <= set(tl.lanes)
        assert any(lane.endswith(".tma") for lane in tl.lanes)  # the copies the waiters saw land
        # the window: k tiles 0..15 of the first two work units (iterations count every k tile)
        recorded = sorted({e.iteration for e in tl.lane(mma) if e.op == "mma"})
        assert recorded == [u * num_k + kt for u in range(2) for kt in range(16)], recorded
        for load in loads:
            lead = tl.issued_ahead(load, mma, stages)
            assert lead and max(lead) <= stages  # the protocol: never more than the stages ahead
            steady = sorted(lead[stages:])
            assert steady and steady[len(steady) // 2] >= stages - 2, (load, steady[:20])  # loads run ahead
        # the first k tile comes from DRAM: the MMA's first wait finds its full barrier closed
        first = [e for e in tl.blocked(mma) if e.iteration == 0]
        assert first and "full" in first[0].barrier and first[0].duration > 0
        stores = [e for e in tl.lane(store) if e.op == "store"]
        assert stores and all(e.duration > 0 for e in stores)
        # the first unit's epilogue (its wait, store and release) runs beside the second unit's mainloop
        second = [e for e in tl.lane(mma) if e.op == "mma" and e.iteration >= num_k]
        epilogue_end = max(e.end for e in tl.lane(store) if e.iteration == 0)
        assert second and second[0].start < epilogue_end, (second[0].start, epilogue_end)
        assert tl.period() > 0


def test_a_gemm_trace_says_which_window_it_recorded():
    src = emit(examples.merge_gemm(), instrument=Instrument(blocks=1, capacity=8, tiles=2, k_tiles=16))
    buf = Buffer(src)
    buf.lane(0, 0, 1000, 500, [(1, 0, 0, 10, 20)])
    tr = decode(src, buf.bytes())
    assert tr.meta_dict["window"] == (2, 16)
    assert "(recorded: the first 2 work unit(s), of each the first 16 k tiles)" in tr.summary()
    assert tr.timeline().meta_dict["window"] == (2, 16)
    every = emit(examples.merge_gemm(), instrument=Instrument(blocks=1, capacity=8, tiles=None, k_tiles=None))
    assert "(recorded: every work unit(s), of each every k tile)" in decode(every, Buffer(every).bytes()).summary()


def test_a_trace_says_what_it_holds_and_refuses_what_it_cannot_show(merge_src, tmp_path):
    buf = Buffer(merge_src)
    buf.lane(0, 0, 1000, 500, [(1, 0, 0, 10, 20)])
    tr = decode(merge_src, buf.bytes(), meta=(("kernel", merge_src.entry), ("n", 4096)))
    assert tr.meta_dict == {"kernel": merge_src.entry, "n": 4096}
    assert str(tr) == tr.summary() and "1 stamps" in tr.summary()
    lone = Buffer(merge_src)
    lone.lane(0, 0, 1000, 500, [])  # the lane's start alone: too few points to fit a clock
    fit = decode(merge_src, lone.bytes()).fits[0]
    assert not fit.fitted and fit.points == 1 and fit.step_ns is None
    with pytest.raises(KeyError, match="no lane for task 'nope' in block 0"):
        tr.lane(0, "nope")
    with pytest.raises(PgStudioError, match="clock 'wall' is not known; use one of cycles, globaltimer"):
        tr.timeline(clock="wall")
    path = tmp_path / "t.json"
    tr.save(str(path))
    assert json.loads(path.read_text())["otherData"]["generator"] == "pgstudio"
    empty = decode(merge_src, Buffer(merge_src).bytes())
    with pytest.raises(PgStudioError, match="holds no stamps"):
        empty.timeline()
    with pytest.raises(PgStudioError, match="whole 32-bit words; got 7 bytes"):
        decode(merge_src, b"\0" * 7)


def test_a_stamp_at_a_site_the_step_table_lacks_is_still_a_step(merge_src):
    """A site past the table (a buffer from another build of the design) is drawn as a plain
    sync step named by its number, in its lane and at its time, never dropped or a crash."""
    buf = Buffer(merge_src)
    buf.lane(0, 0, 1000, 0, [(1, 0, 0, 10, 20), (9, 1, 0, 40, 10)])  # load_a's table has 4 sites
    tl = decode(merge_src, buf.bytes()).timeline(0)
    odd = [e for e in tl.events if e.op == "site 9"]
    assert len(odd) == 1 and odd[0].kind == SYNC and odd[0].task == "load_a" and odd[0].iteration == 0
    assert odd[0].duration == pytest.approx(10.0) and odd[0].warps == (0, 1)


def test_the_chrome_trace_draws_only_the_lanes_of_its_timeline():
    from pgstudio.analysis.timeline import Event, Timeline
    tl = Timeline("d", (Event("load", "load", WORK, 0.0, 10.0), Event("ghost", "load", WORK, 0.0, 10.0),
                        Event("load", "arrive", ARRIVE, 10.0, 10.0, barrier="full")), (("load", 0, 1),))
    doc = chrome_trace(tl)
    steps = [e for e in doc["traceEvents"] if e["ph"] != "M"]
    assert [(e["tid"], e["name"], e["ph"]) for e in steps] == [(0, "load", "X"), (0, "arrive full", "i")]
    assert doc["otherData"] == {"design": "d", "source": "simulated", "generator": "pgstudio"}
    assert chrome_trace([])["traceEvents"] == [] and chrome_trace([])["otherData"]["design"] == ""


def test_samples_are_the_grids_last_blocks(merge_src):
    """The kernel samples the grid's last blocks (a persistent schedule gives them a work unit
    fewer when units do not divide evenly): sample k is block first_sampled_block + k."""
    assert "const u32 pg_ins_b = blockIdx.x + PG_INS_BLOCKS - gridDim.x;" in merge_src.code
    buf = Buffer(merge_src)
    buf.lane(1, 2, 1000, 0, [(6, 0, 0, 10, 20)])
    tr = decode(merge_src, buf.bytes(), meta=(("grid", 132), ("first_sampled_block", 130)))
    assert tr.blocks == (1,) and tr.timeline(1).meta_dict["grid_block"] == 131

"""Barrier layout (semantics.md section 4): slot counts, order, offsets, init counts, tx bytes,
the cross-checks against TS, and the shared-memory layout."""

import dataclasses

import pytest

from pgstudio import (Agent, CooperativeGroup, Design, DesignError, GmemTensor, MemoryResource, PipelineGroup,
                      PipelineGroupMode, PipelineType, Task, TmemAccumulator, barrier_layout, smem_layout)
from pgstudio import examples
from pgstudio.analysis.layout import BARRIER_BYTES, DATA_ALIGN, SMEM_CAPACITY
from pgstudio.model.config import FACTORIES

Merge, Fork, FusedMerge = PipelineGroupMode.Merge, PipelineGroupMode.Fork, PipelineGroupMode.FusedMerge
T = PipelineType


def threads(n):
    return CooperativeGroup(Agent.Thread, n)


def res(name, ptype, stages=4, nbytes=1024, aliases=None, **groups):
    return MemoryResource(name=name, pipeline_config=FACTORIES[ptype](num_stages=stages, num_bytes=nbytes, **groups),
                          aliases=aliases)


# Per mode, three members of one collapsed kind whose other-side counts and bytes all differ, so
# a count or byte figure in the wrong slot shows.
MEMBERS = {
    Merge: [(T.TmaUmma, 1024, {}), (T.AsyncUmma, 2048, {"producer_group": threads(64)}), (T.UmmaUmma, 512, {})],
    Fork: [(T.TmaAsync, 1024, {"consumer_group": threads(128)}), (T.TmaUmma, 2048, {}),
           (T.TmaAsync, 4096, {"consumer_group": threads(32)})],
    FusedMerge: [(T.TmaAsync, 1024, {}), (T.AsyncAsync, 2048, {"producer_group": threads(64)}),
                 (T.UmmaAsync, 512, {})],
}


def merge_copy(**kw):
    return examples.merge_copy(**{"num_stages": 4, "tile_bytes": 8192, **kw})


def fork_copy():
    return examples.fork_copy(num_stages=4, tile_bytes=8192)


def gemm_design():
    """The GEMM mainloop as plain data: LoadA, LoadB -> MMA (Merge) -> tmem_c -> epilogue."""
    a, b = res("smem_a", T.TmaUmma, nbytes=16384), res("smem_b", T.TmaUmma, nbytes=16384)
    acc = TmemAccumulator("tmem_c", FACTORIES[T.UmmaAsync](num_stages=2, num_bytes=65536))
    ab = PipelineGroup("ab", [a, b], Merge)
    tasks = [Task("mma", 0, 4, ["smem_a", "smem_b"], ["tmem_c"]), Task("epilogue", 4, 4, ["tmem_c"], ["gmem_d"]),
             Task("load_a", 8, 1, ["gmem_a"], ["smem_a"]), Task("load_b", 9, 1, ["gmem_b"], ["smem_b"])]
    gm = [GmemTensor(n) for n in ("gmem_a", "gmem_b", "gmem_d")]
    return Design("gemm", [gm[0], gm[1], a, b, acc, gm[2]],
                  {"smem_a": ["gmem_a"], "smem_b": ["gmem_b"], "tmem_c": ["smem_a", "smem_b"], "gmem_d": ["tmem_c"]},
                  [ab], tasks)


def build(mode, n, stages):
    members = [res(f"m{i}", t, stages, b, **g) for i, (t, b, g) in enumerate(MEMBERS[mode][:n])]
    return PipelineGroup("g", members, mode), [m.pipeline_config for m in members]


def expected_sets(mode, cfgs):
    """(label, init count, tx bytes) per barrier set, straight from semantics.md section 4's table."""
    tma = [c for c in cfgs if c.producer_kind.value == "tma"]
    if mode is Merge:
        return [(f"full_{i}", c.arrive_count("producer"), c.num_bytes if c in tma else 0) for i, c in enumerate(cfgs)] + \
               [("shared_empty", cfgs[0].arrive_count("consumer"), 0)]
    if mode is Fork:
        return [("shared_full", cfgs[0].arrive_count("producer"), sum(c.num_bytes for c in cfgs) if tma else 0)] + \
               [(f"empty_{i}", c.arrive_count("consumer"), 0) for i, c in enumerate(cfgs)]
    return [("shared_full", sum(c.arrive_count("producer") for c in cfgs), sum(c.num_bytes for c in tma)),
            ("shared_empty", cfgs[0].arrive_count("consumer"), 0)]


@pytest.mark.parametrize("stages", range(1, 9))
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("mode", list(PipelineGroupMode))
def test_group_layout(mode, n, stages):
    group, cfgs = build(mode, n, stages)
    layout = barrier_layout(group)
    want = expected_sets(mode, cfgs)
    per_set = (n + 1) if mode is not FusedMerge else 2
    assert layout.num_barriers == per_set * stages == len(want) * stages
    assert layout.num_bytes == BARRIER_BYTES * layout.num_barriers
    expected_slots = [(label, stage, count, tx) for label, count, tx in want for stage in range(stages)]
    assert [(s.barrier, s.stage, s.arrive_count, s.tx_bytes) for s in layout.slots] == expected_slots
    assert [s.offset for s in layout.slots] == [BARRIER_BYTES * i for i in range(layout.num_barriers)]
    assert [s.index for s in layout.slots] == list(range(layout.num_barriers))
    assert {s.owner for s in layout.slots} == {"g"}  # the group owns its slots, members none
    assert [s.first for s in layout.sets] == [i * stages for i in range(len(want))]


def test_merge_shared_empty_serves_every_member_and_full_i_its_own():
    group, _ = build(Merge, 3, 2)
    layout = barrier_layout(group)
    assert layout.set_for("m1", "full").name == "g.full_1"
    assert layout.set_for("m1", "empty").name == layout.set_for("m2", "empty").name == "g.shared_empty"
    assert layout.slot("g.shared_empty", 1).index == 7


# -- the cross-checks with TS (semantics.md section 4), 4 stages -------------------------------------

def counts(layout):
    return [s.init_count for s in layout.sets]


def test_ts_merge_tma_umma_plus_async_umma():
    a = res("a", T.TmaUmma, nbytes=16384)
    b = res("b", T.AsyncUmma, producer_group=threads(128))
    layout = barrier_layout(PipelineGroup("ab", [a, b], Merge))
    assert layout.num_barriers == 12 and counts(layout) == [1, 128, 1]
    assert [s.tx_bytes for s in layout.sets] == [16384, 0, 0]


def test_ts_merge_async_async_plus_tma_async():
    a = res("a", T.AsyncAsync, producer_group=threads(32), consumer_group=threads(128))
    b = res("b", T.TmaAsync, consumer_group=threads(128))
    layout = barrier_layout(PipelineGroup("ab", [a, b], Merge))
    assert layout.num_barriers == 12 and counts(layout) == [32, 1, 128]


def test_ts_fork_tma_umma_plus_tma_async():
    a = res("a", T.TmaUmma, consumer_group=threads(1))
    b = res("b", T.TmaAsync, consumer_group=threads(4))
    layout = barrier_layout(PipelineGroup("ab", [a, b], Fork))
    assert layout.num_barriers == 12 and counts(layout) == [1, 1, 4]


def test_ts_fused_merge_tma_umma_plus_tma_umma():
    layout = barrier_layout(PipelineGroup("ab", [res("a", T.TmaUmma), res("b", T.TmaUmma)], FusedMerge))
    assert layout.num_barriers == 8
    assert [(s.label, s.init_count) for s in layout.sets] == [("shared_full", 2), ("shared_empty", 1)]


def test_ts_fused_merge_tma_umma_plus_async_umma():
    a, b = res("a", T.TmaUmma), res("b", T.AsyncUmma, producer_group=threads(128))
    layout = barrier_layout(PipelineGroup("ab", [a, b], FusedMerge))
    assert layout.sets[0].label == "shared_full" and layout.sets[0].init_count == 129
    assert layout.sets[0].tx_bytes == 1024  # only the tma member's bytes are transactions


def test_aliased_fork_arms_one_copy_of_bytes():
    x = res("x", T.TmaUmma, nbytes=8192)
    y = res("y", T.TmaAsync, nbytes=8192, aliases="x")
    assert barrier_layout(PipelineGroup("xy", [x, y], Fork)).sets[0].tx_bytes == 8192


# -- ungrouped resources and whole designs -----------------------------------------------------------

@pytest.mark.parametrize("ptype,nbytes,full,tx,empty", [
    (T.TmaAsync, 4096, 1, 4096, 128), (T.AsyncUmma, 4096, 128, 0, 1), (T.UmmaAsync, 0, 1, 0, 128),
    (T.AsyncAsync, 64, 128, 0, 128), (T.TmaUmma, 16, 1, 16, 1), (T.UmmaUmma, 0, 1, 0, 1)])
def test_ungrouped_resource_layout(ptype, nbytes, full, tx, empty):
    layout = barrier_layout(res("r", ptype, stages=3, nbytes=nbytes))
    assert [(s.barrier, s.stage, s.arrive_count, s.tx_bytes, s.owner) for s in layout.slots] == \
        [("full", i, full, tx, "r") for i in range(3)] + [("empty", i, empty, 0, "r") for i in range(3)]


def test_unpipelined_resources_have_no_layout():
    with pytest.raises(DesignError, match="'r' has no pipeline_config, so it has no barriers"):
        barrier_layout(MemoryResource("r"))
    with pytest.raises(TypeError, match="got int"):
        barrier_layout(3)


def test_design_layout_places_each_group_at_its_first_member():
    layout = barrier_layout(gemm_design())
    assert [(s.name, s.first, s.stages, s.init_count) for s in layout.sets] == [
        ("ab.full_0", 0, 4, 1), ("ab.full_1", 4, 4, 1), ("ab.shared_empty", 8, 4, 1),
        ("tmem_c.full", 12, 2, 1), ("tmem_c.empty", 14, 2, 128)]
    assert layout.num_barriers == 16 and layout.slots[-1].offset == 15 * BARRIER_BYTES
    shared = layout.set_for("smem_b", "empty")
    assert (shared.arrivers, shared.waiters) == (("mma",), ("load_a", "load_b"))
    full = layout.set_for("tmem_c", "full")
    assert (full.arrivers, full.waiters) == (("mma",), ("epilogue",))
    table = layout.table()
    assert table.splitlines()[0].split() == ["set", "slots", "offsets", "arrive", "tx", "bytes", "arrivers", "waiters"]
    assert "ab.shared_empty  8..11   64..88" in table and table.endswith("16 barriers, 128 bytes")


def test_design_layout_of_a_fork():
    layout = barrier_layout(fork_copy())
    assert [(s.label, s.init_count, s.tx_bytes) for s in layout.sets] == [
        ("shared_full", 1, 8192), ("empty_0", 128, 0), ("empty_1", 128, 0)]
    assert layout.sets[0].waiters == ("copy_out", "relu_out")


# -- shared memory -----------------------------------------------------------------------------------

def test_smem_layout_of_merge_copy():
    smem = smem_layout(merge_copy())
    assert [(b.resource, b.offset, b.num_bytes) for b in smem.buffers] == [("smem_a", 0, 32768), ("smem_b", 32768, 32768)]
    assert (smem.data_bytes, smem.barrier_offset, smem.barrier_bytes) == (65536, 65536, 96)
    assert smem.total_bytes == 65632 and smem.fits and smem.capacity == SMEM_CAPACITY == 232448
    assert smem.report() == "smem: data 65536 B + barriers 96 B = 65632 B of 232448 B (28.2%)"


def test_aliased_buffers_share_storage_in_any_order():
    smem = smem_layout(fork_copy())
    assert smem.buffer("smem_y").offset == smem.buffer("smem_x").offset == 0
    assert smem.buffer("smem_y").alias_of == "smem_x" and smem.data_bytes == 32768
    d = examples.fork_gemm_act(num_stages=2)
    flipped = d.replace(resources=sorted(d.resources, key=lambda r: r.name != "smem_act"))  # the view first
    smem = smem_layout(flipped)
    assert smem.buffer("smem_a").offset == smem.buffer("smem_act").offset
    assert smem.data_bytes == smem_layout(d).data_bytes


def test_tmem_is_not_shared_memory_and_buffers_are_aligned():
    smem = smem_layout(gemm_design())
    assert smem.tmem_bytes == 65536 * 2  # the accumulator's 2 stages
    assert [b.resource for b in smem.buffers] == ["smem_a", "smem_b"]
    small = smem_layout(merge_copy(num_stages=3, tile_bytes=48))  # 144 B buffers
    assert [b.offset for b in small.buffers] == [0, DATA_ALIGN] and small.data_bytes == DATA_ALIGN + 144
    assert small.barrier_offset == DATA_ALIGN + 144  # already 16-byte aligned


def test_a_design_that_does_not_fit_says_so():
    smem = smem_layout(merge_copy(tile_bytes=32768))
    assert smem.data_bytes == 2 * 4 * 32768 and not smem.fits
    assert smem.report().endswith("DOES NOT FIT")
    one_over = smem_layout(merge_copy(), capacity=65631)
    assert not one_over.fits and smem_layout(merge_copy(), capacity=65632).fits


def test_layout_values_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        barrier_layout(merge_copy()).slots[0].offset = 4



# -- what the GEMM kernel allocates: one figure for users, the capacity rule and the generator --------

@pytest.mark.parametrize("name", ["merge_gemm", "merge_gemm_resadd", "fork_gemm_act", "fused_merge_gemm"])
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_gemm_layout_is_what_the_kernel_requests(name, arch):
    from pgstudio.codegen import emit
    d = examples.example(name)
    smem = smem_layout(d, arch=arch)
    src = emit(d, arch=arch)
    assert smem.total_bytes == src.smem_bytes and smem.fits
    (st,) = smem.staging
    assert st.resource == "tmem_c" and st.offset == smem.data_bytes and st.offset % DATA_ALIGN == 0
    bn = d.problem_dict["BN"]
    if st.dtype == "float32":  # plain rows, padded against bank conflicts
        assert st.rows == 128 and st.pitch == bn * 4 + 16 and not st.swizzled
    else:  # 16-bit: 128-byte swizzled panels of 64 columns, no padding (the TMA layout)
        assert st.rows == 128 and st.swizzled and st.panel_cols == 64 and st.stage_bytes == 128 * bn * 2
    assert smem.barrier_offset == st.offset + st.num_bytes and smem.slack == 1024
    assert smem.extra_bytes == (16 if arch == "sm_100a" else 0)  # TMEM address slot + one mma_done barrier


def test_the_figure_counts_the_accumulator_staging():
    d = examples.merge_gemm()
    smem = smem_layout(d)
    assert smem.report() == ("smem (sm_90a): data 147456 B + accumulator staging 65536 B (float16) + barriers 88 B + "
                             "alignment 1024 B = 214104 B of 232448 B (92.1%)")
    big = examples.merge_gemm(num_stages=4)  # operand stages alone would fit: 196608 B
    turned = smem_layout(big)  # sm_90a: the staging takes each tile in two turns of 128 columns
    assert turned.fits and turned.staging[0].turns == 2 and turned.staging_bytes == 32768
    assert "accumulator staging 32768 B (float16, each tile in 2 turns)" in turned.report()
    assert big.validate().ok
    whole = smem_layout(big, arch="sm_100a")  # tensor memory drains through a whole tile's staging
    assert whole.data_bytes < SMEM_CAPACITY and not whole.fits and whole.staging[0].turns == 1
    assert whole.report().endswith("DOES NOT FIT")
    assert "smem.capacity" in big.with_targets("sm_100a").validate().codes()


def test_staging_takes_turns_only_where_the_kernel_can_hand_a_tile_over_in_parts():
    fits_whole = smem_layout(examples.merge_gemm(num_stages=3))
    assert fits_whole.staging[0].turns == 1  # whatever fitted before keeps its whole-tile staging
    quarter = smem_layout(examples.merge_gemm(num_stages=4, acc_stages=2))  # two stages: a quarter tile each
    assert quarter.fits and quarter.staging[0].turns == 4 and quarter.staging[0].stage_bytes == 16384
    # the residual's epilogue reads R beside the accumulator: no turns
    resadd = examples.merge_gemm_resadd(num_stages=3, bm=128, bn=256, bk=64, compact=True)
    assert smem_layout(resadd).staging[0].turns == 1 and not smem_layout(resadd).fits
    # split-K stages float32 partial sums: no turns
    split = examples.merge_gemm(num_stages=4, split_k=2)
    assert smem_layout(split).staging[0].turns == 1 and not smem_layout(split).fits
    fork = smem_layout(examples.fork_gemm_act(num_stages=4, bm=128, bn=256, bk=64, compact=True))
    assert fork.fits and fork.staging[0].turns == 2  # its epilogue drains the accumulator alone


def test_staging_is_float32_when_it_fits_and_the_operand_type_otherwise():
    assert smem_layout(examples.merge_gemm_resadd(num_stages=3)).staging[0].dtype == "float32"  # D = acc + R: fp32 sum
    assert smem_layout(examples.merge_gemm()).staging[0].dtype == "float16"
    forced = smem_layout(examples.merge_gemm(), staging_dtype="float32")
    assert forced.staging[0].dtype == "float32" and not forced.fits


def test_staging_is_the_output_type_when_every_output_is_the_accumulator():
    """fork_gemm_act's D0 is the accumulator itself (D1 = act(A) does not read it), so staging in
    fp16 loses nothing and lets the TMA engine store it; split-K partials stay float32."""
    st = smem_layout(examples.fork_gemm_act()).staging[0]
    assert st.dtype == "float16" and st.swizzled
    assert smem_layout(examples.merge_gemm(bn=128, num_stages=4)).staging[0].dtype == "float16"
    assert smem_layout(examples.merge_gemm(bn=128, num_stages=4, split_k=2)).staging[0].dtype == "float32"
    forced = smem_layout(examples.merge_gemm(), staging_dtype="float32")
    forced = smem_layout(examples.merge_gemm(), staging_dtype="float32")
    assert forced.staging[0].dtype == "float32" and not forced.fits


def test_the_default_figure_is_the_tightest_target():
    d = examples.merge_gemm().with_targets("sm_90a", "sm_100a")
    assert smem_layout(d).arch == "sm_100a" and smem_layout(d).total_bytes == smem_layout(d, arch="sm_100a").total_bytes
    assert smem_layout(examples.merge_copy()).arch == "sm_90a" and not smem_layout(examples.merge_copy()).staging

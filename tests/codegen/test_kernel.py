"""The generated kernel's structure follows the design: one branch per task, barrier storage and
counts exactly as the layout says, one bounded wait per protocol wait, a line map back to the design."""

import re

import pytest

from pgstudio import examples
from pgstudio.analysis.layout import barrier_layout, smem_layout
from pgstudio.analysis.resolve import resolve
from pgstudio.codegen import emit
from pgstudio.errors import CompileError, DesignError
from stream_designs import async_compute, cp_async_copy, mixed_merge, wrong_count

STREAMING = [examples.example(n) for n in examples.STREAMING]
DESIGNS = STREAMING + [examples.ungrouped(d) for d in STREAMING] + [async_compute(), cp_async_copy(), mixed_merge()]


@pytest.fixture(params=DESIGNS, ids=lambda d: d.name)
def design(request):
    return request.param


def test_one_branch_per_task_over_its_warp_range(design):
    src = emit(design)
    branches = re.findall(r"if \(pg_warp >= (\d+) && pg_warp < (\d+)\) \{  // task (\w+)", src.code)
    assert [(t.name, t.warp_idx, t.warp_idx + t.num_warps) for t in design.tasks] == \
           [(name, int(lo), int(hi)) for lo, hi, name in branches]
    assert src.block == (design.num_warps * 32, 1, 1)


def test_barrier_storage_is_the_layout(design):
    src = emit(design)
    layout, smem = barrier_layout(design), smem_layout(design)
    found = re.findall(r"constexpr u32 (PG_BAR_\d+) = (\d+);  // ([\w.]+): (\d+) stages, arrive count (\d+), tx (\d+) B",
                       src.code)
    assert [(name, int(off), int(st), int(cnt), int(tx)) for _, off, name, st, cnt, tx in found] == \
           [(s.name, layout.slots[s.first].offset, s.stages, s.init_count, s.tx_bytes) for s in layout.sets]
    assert f"constexpr u32 PG_BAR_BASE = {smem.barrier_offset};" in src.code
    assert src.smem_bytes == smem.total_bytes
    # every slot is initialised once, with its set's count, by the init loop of that set
    inits = re.findall(r"for \(u32 s = 0; s < (\d+); \+\+s\) pg_mbar_init\(pg_bar \+ (PG_BAR_\d+) \+ 8u \* s, (\d+)u\);",
                       src.code)
    const_of = {name: c for c, _, name, *_ in found}
    assert [(const_of[s.name], s.stages, s.init_count) for s in layout.sets] == \
           [(c, int(st), int(cnt)) for st, c, cnt in inits]
    for b in smem.buffers:
        assert re.search(rf"constexpr u32 PG_BUF_{b.resource} = {b.offset};", src.code)
    init = src.code.index("pg_mbar_init_fence();")
    assert src.code.index("__syncthreads();") > init
    assert src.code.count("__syncthreads()") == 1  # no block barrier after the roles split
    assert "__trap" not in src.code and "trap;" not in src.code


def test_every_protocol_wait_is_one_bounded_wait(design):
    src = emit(design)
    plans = resolve(design)
    sites = src.info["sites"]
    want = [(t, a.set) for t, plan in plans.items() for s in plan.steps() for a in s.actions if a.verb == "wait"]
    assert [(task, bset) for _, task, bset, _, _ in sites] == want
    lines = src.code.splitlines()
    for site, task, _bset, step, line in sites:
        assert lines[line - 1].lstrip().startswith("if (!pg_wait(pg_rec, pg_budget_ns,")
        assert f", {site}, " in lines[line - 1]
        assert src.element_at(line) == f"{task}: {step}"
    assert len(re.findall(r"\bpg_wait\(pg_rec", src.code)) == len(sites)


def test_arrivals_follow_the_protocol_table(design):
    """Arrive / expect_tx / copy calls per task equal the resolver's actions (the code invents none)."""
    src = emit(design)
    plans = resolve(design)
    code = src.code
    for t in design.tasks:
        start = code.index(f"// task {t.name}:")
        end = code.index("return;\n", code.index("for (long long pg_tile", start))
        body = code[start:end]
        acts = [a for s in plans[t.name].steps() for a in s.actions]
        assert body.count("pg_mbar_arrive_expect_tx(") == sum(a.verb == "arrive_expect_tx" for a in acts)
        assert body.count("pg_bulk_g2s(") + body.count("pg_bulk_g2s_hint(") == \
            sum(a.verb == "complete_tx" for a in acts)
        arrives = body.count("pg_mbar_arrive(") + body.count("pg_cp_async_arrive_noinc(")
        assert arrives == sum(a.verb == "arrive" for a in acts)


def test_fork_arms_its_shared_full_barrier_once_with_the_merged_bytes():
    d = examples.fork_copy()
    plan = resolve(d)["load"]
    expects = [a for s in plan.steps() for a in s.actions if a.verb == "arrive_expect_tx"]
    assert [(a.set, a.bytes) for a in expects] == [("xy.shared_full", d.group("xy").merged_config.num_bytes)]
    assert str(plan.steps().__next__().step).startswith("xy.smem_x")


def test_collapsed_sides_share_one_cursor():
    merge = resolve(examples.merge_copy())
    assert [c.name for c in merge["store"].cursors] == ["consumer:ab"]
    assert [c.name for c in merge["load_a"].cursors] == ["producer:smem_a"]
    fork = resolve(examples.fork_copy())
    assert [c.name for c in fork["load"].cursors] == ["producer:xy"]
    twin = resolve(examples.ungrouped(examples.merge_copy()))
    assert [c.name for c in twin["store"].cursors] == ["consumer:smem_a", "consumer:smem_b"]
    fused = resolve(examples.fused_merge_copy())
    waits = [a.set for s in fused["store"].steps() for a in s.actions if a.verb == "wait"]
    assert waits == ["ab.shared_full"]


def test_cursors_start_at_the_semantics_phases():
    src = emit(examples.merge_copy())
    assert "int pg_c0_i = 0; u32 pg_c0_p = 1u;  // cursor producer:smem_a" in src.code
    assert "int pg_c0_i = 0; u32 pg_c0_p = 0u;  // cursor consumer:ab" in src.code


def test_tail_tiles_shrink_the_copy_and_its_expected_bytes():
    code = emit(examples.merge_copy()).code
    assert "pg_mbar_arrive_expect_tx(pg_bar + PG_BAR_0 + ((u32)pg_c0_i << 3), pg_copy_bytes);" in code
    assert "if (pg_copy_bytes) pg_bulk_g2s(" in code
    tail = ["const float pg_v_gmem_a = pg_ld1(gmem_a + pg_base + pg_e);",
            "const float pg_v_gmem_b = pg_ld1(gmem_b + pg_base + pg_e);",
            "const float pg_v_gmem_d = (pg_v_gmem_a + pg_v_gmem_b);",
            "pg_st1(gmem_d + pg_base + pg_e, pg_v_gmem_d);"]
    assert "\n".join(" " * 10 + ln for ln in tail) in code


def test_dtypes_and_arches_change_the_source():
    f32 = emit(examples.merge_copy())
    bf16 = emit(examples.merge_copy(dtype="bfloat16"))
    assert "const u16* __restrict__ gmem_a" in bf16.code and "cvt.rn.bf16x2.f32" in bf16.code
    assert "const float* __restrict__ gmem_a" in f32.code
    assert emit(examples.merge_copy(), arch="sm_100a").key != f32.key
    assert f32.info["tile_elems"] == 2048 and bf16.info["tile_elems"] == 4096


def test_async_producers_use_threads_or_cp_async():
    assert "pg_cp_async16(pg_smem_base + PG_BUF_smem_c" in emit(cp_async_copy()).code
    assert "pg_cp_async_arrive_noinc(pg_bar" in emit(cp_async_copy()).code
    code = emit(async_compute()).code
    assert "pg_cp_async16(pg_smem_base" not in code and "fmaxf(pg_x0[pg_i], 0.0f)" in code


def test_validation_runs_unless_skipped():
    with pytest.raises(DesignError, match="129 threads"):
        emit(wrong_count("empty"))
    src = emit(wrong_count("empty"), validate=False)
    assert "128u);  // ab.shared_empty" not in src.code and "129u);  // ab.shared_empty" in src.code


def test_emit_raises_one_design_error_listing_every_error():
    d = examples.merge_gemm(bk=24, bn=96, dtype="float32", b_major="mn")
    errors = d.validate().errors
    assert [e.code for e in errors] == ["codegen.bk_swizzle", "codegen.bn_tile", "codegen.b_major"]
    with pytest.raises(DesignError) as info:
        emit(d)
    text = str(info.value)
    assert text.startswith("design 'merge_gemm' cannot be built for sm_90a: 3 error(s)")
    assert all(f"[{e.code}] {e.message} (fix: {e.hint})" in text for e in errors)
    assert info.value.diagnostics == errors and info.value.code == "codegen.bk_swizzle"


def test_emit_checks_the_arch_it_builds_for():
    d = examples.merge_gemm(bm=256, bn=64)  # BM=256 is two m64 blocks per warpgroup on sm_90a; sm_100a issues M=128
    assert d.validate().ok and emit(d, arch="sm_90a").code
    with pytest.raises(DesignError, match=r"\[codegen.bm_rows\] BM is 256; the sm_100a path issues M=128"):
        emit(d, arch="sm_100a")
    assert "codegen.bm_rows" in d.with_targets("sm_90a", "sm_100a").validate().codes()


def test_mma_designs_go_to_the_gemm_generator():
    assert emit(examples.merge_gemm()).info["kind"] == "gemm"
    assert emit(examples.merge_gemm(), b_major="k").info["b_major"] == "k"
    with pytest.raises(CompileError, match="apply to MMA designs only"):
        emit(examples.merge_copy(), b_major="k")


def test_bad_options_are_refused():
    with pytest.raises(CompileError, match="arch 'sm_80'"):
        emit(examples.merge_copy(), arch="sm_80")
    with pytest.raises(CompileError, match="tuning store='xx'"):
        emit(examples.merge_copy(), tuning={"store": "xx"})


def test_unsupported_streaming_shapes_say_what_to_change():
    d = examples.merge_copy()
    mixed = d.with_resource(d.resource("gmem_b").__class__("gmem_b", dtype="float16"))
    with pytest.raises(DesignError, match="mix element types") as info:
        emit(mixed, validate=False)
    assert info.value.code == "codegen.dtype_mix"
    bad = d.with_resource(d.resource("gmem_d").__class__(
        "gmem_d", compute=d.resource("gmem_d").compute.__class__("store", "open(smem_a)")), ["smem_a", "smem_b"])
    with pytest.raises(DesignError, match="'open', which is not an allowed function"):
        emit(bad, validate=False)

"""The tensor-core GEMM generator: barrier protocol in the text, plan rules, and NVRTC builds for
sm_90a (with wgmma / HGMMA, no spills) and sm_100a (tcgen05)."""

import dataclasses
import re
import shutil
import subprocess

import pytest

from gemm_designs import ALL, gemm_design, kernel_counts
from pgstudio import barrier_layout
from pgstudio.analysis.resolve import ResolvedLoop, resolve
from pgstudio.codegen import emit, gemm
from pgstudio.codegen.gemm import emit_gemm
from pgstudio.analysis.buildable.gemm_plan import plan_gemm
from pgstudio.errors import DesignError
from pgstudio.examples import fork_gemm_act, merge_gemm, merge_gemm_resadd
from pgstudio.model import Agent, CooperativeGroup


def _inits(code: str) -> list[tuple[int, int]]:
    return [(int(off) // 8, int(cnt)) for off, cnt in re.findall(r"pg_mbar_init\(bar0 \+ (\d+)u, (\d+)u\)", code)]


@pytest.mark.parametrize("name,twin", ALL)
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_barrier_inits_are_the_layout(name, twin, arch):
    d = gemm_design(name, twin)
    src = emit_gemm(d, arch=arch)
    layout = barrier_layout(d, arch)
    want = kernel_counts(d, arch)
    assert _inits(src.code) == [(s.index, want[s.offset]) for s in layout.slots]


def test_the_mma_warpgroups_add_to_the_released_sets_only():
    d = merge_gemm()  # two MMA warpgroups release the group's shared empty barrier
    layout = barrier_layout(d)
    counts = dict(_inits(emit_gemm(d).code))
    shared_empty = layout.set_for("smem_a", "empty")
    full = layout.set_for("smem_a", "full")
    assert counts[shared_empty.first] == 2 * shared_empty.init_count
    assert counts[full.first] == full.init_count
    assert "layout count 1: each of the 2 MMA warpgroups arrives" in emit_gemm(d).code
    assert dict(_inits(emit_gemm(d, arch="sm_100a").code))[shared_empty.first] == shared_empty.init_count


@pytest.mark.parametrize("name,twin", [("merge_gemm", False), ("merge_gemm", True), ("fork_gemm_act", False)])
def test_umma_release_is_one_elected_arrive_per_warpgroup_after_wgmma_wait(name, twin):
    code = emit_gemm(gemm_design(name, twin)).code
    mma = code[code.index("task 'mma'"):code.index("done_mma:")]
    releases = re.findall(r"(wgmma_wait<\d>\(\);[^\n]*\n(?:.*\n){0,2}?\s*if \(\(tt & 127\) == 0\) \{\n"
                          r"(?:\s*pg_mbar_arrive\(.*// umma release of .*\n)+)", mma)
    assert len(releases) == 2  # in the k loop (previous stage) and after it (last stage)
    assert all("named_bar_sync" not in r for r in releases)  # no meeting of the warpgroups per k tile
    loop = mma[mma.index("for (kt = 0"):mma.index("wgmma_wait<0>")]
    assert "named_bar_sync" not in loop
    # the accumulator commit: staged registers, a barrier of the MMA threads, one elected arrive
    assert re.search(r"st_shared_\w+\(\(?stg.*\n(?:.*\n)*?\s*named_bar_sync\(1, 256\);\n\s*if \(tt == 0\) pg_mbar_arrive", mma)


def test_grouped_merge_releases_one_shared_barrier_and_the_twin_two():
    grouped = emit_gemm(merge_gemm()).code
    twin = emit_gemm(gemm_design("merge_gemm", True)).code
    assert grouped.count("// umma release of ab") == 2
    assert twin.count("// umma release of smem_a") == 2 and twin.count("// umma release of smem_b") == 2


def test_fork_arms_the_shared_full_barrier_once_with_the_merged_bytes():
    d = gemm_design("fork_gemm_act")
    code = emit_gemm(d).code
    load = code[code.index("task 'load_a'"):code.index("done_load_a:")]
    shared_full = barrier_layout(d).set_for("smem_a", "full")
    assert shared_full.shared
    assert load.count("pg_mbar_arrive_expect_tx") == 1
    assert f"pg_mbar_arrive_expect_tx((bar0 + 8u * ({shared_full.first} + s_fa)), {shared_full.tx_bytes}u)" in load


def test_fused_merge_producers_each_expect_their_own_bytes_on_the_shared_full_barrier():
    d = gemm_design("fused_merge_gemm")
    code = emit_gemm(d).code
    full = barrier_layout(d).set_for("smem_a", "full")
    a, b = (d.resource(r).pipeline_config.num_bytes for r in ("smem_a", "smem_b"))
    assert full.init_count == 2 and full.tx_bytes == a + b
    assert f"(bar0 + 8u * ({full.first} + s_smem_a)), {a}u)" in code
    assert f"(bar0 + 8u * ({full.first} + s_smem_b)), {b}u)" in code


def test_async_producer_uses_cp_async_and_arrives_noinc():
    code = emit_gemm(gemm_design("merge_gemm_async_b")).code
    load = code[code.index("task 'load_b'"):code.index("done_load_b:")]
    assert "cp_async_16(" in load and "cp_async_arrive_noinc(" in load and "tma_load_2d" not in load
    assert "fence_proxy_async();" in code[code.index("task 'mma'"):]


# -- the walker reads the resolver's plans -----------------------------------------------------------

#: (verb, first slot of the barrier set) of every barrier operation in a task's branch, in order.
_BARRIER_OPS = re.compile(r"(wd_wait|pg_mbar_arrive_expect_tx|pg_mbar_arrive|pg_cp_async_arrive_noinc|umma_commit|"
                          r"tma_load_2d)\((?:[^;]*?, )?\(bar0 \+ 8u \* \((\d+) \+")
_VERB = {"wd_wait": "wait", "pg_mbar_arrive_expect_tx": "arrive_expect_tx", "pg_mbar_arrive": "arrive",
         "pg_cp_async_arrive_noinc": "arrive", "umma_commit": "arrive", "tma_load_2d": "complete_tx"}


def _branch(code: str, task: str) -> str:
    return code[code.index(f"// task '{task}'"):code.index(f"done_{task}:")]


def _dedup(ops):
    """One complete_tx per load step (a tile of several 64-column panels issues one copy each)."""
    return [op for i, op in enumerate(ops) if not (op[0] == "complete_tx" and i and ops[i - 1] == op)]


@pytest.mark.parametrize("name,twin", ALL)
def test_sm100a_barrier_operations_are_the_plan_in_order(name, twin):
    """On sm_100a nothing is deferred: each task's barrier operations are its plan's actions."""
    d = gemm_design(name, twin)
    code = emit_gemm(d, arch="sm_100a").code
    layout = barrier_layout(d)
    first = {s.name: s.first for s in layout.sets}
    for t, plan in resolve(d, layout).items():
        want = _dedup([(str(a.verb), first[a.set]) for rs in plan.steps() for a in rs.actions])
        got = _dedup([(_VERB[f], int(slot)) for f, slot in _BARRIER_OPS.findall(_branch(code, t))])
        assert got == want, t


def _with_plans(monkeypatch, change):
    """Make emit_gemm walk plans that ``change(action) -> action`` rewrote."""
    real = gemm.emit.resolve

    def nodes(ns):
        return tuple(ResolvedLoop(n.loop, nodes(n.body)) if isinstance(n, ResolvedLoop) else
                     dataclasses.replace(n, actions=tuple(change(a) for a in n.actions)) for n in ns)

    monkeypatch.setattr(gemm.emit, "resolve", lambda design, layout=None: {
        t: dataclasses.replace(p, nodes=nodes(p.nodes)) for t, p in real(design, layout).items()})


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_expect_tx_bytes_and_barrier_sets_come_from_the_plan(monkeypatch, arch):
    d = gemm_design("fork_gemm_act")
    layout = barrier_layout(d)
    shared_full, empty_0 = layout.set_for("smem_a", "full"), layout.set_for("smem_a", "empty")
    before = emit_gemm(d, arch=arch).code
    assert f"{shared_full.tx_bytes}u);  // expect_tx" in before and "12345u);  // expect_tx" not in before
    # a plan whose expect_tx carries other bytes, and whose empty_0 waits use the shared full set
    _with_plans(monkeypatch, lambda a: dataclasses.replace(a, bytes=12345) if a.verb == "arrive_expect_tx" else
                dataclasses.replace(a, set=shared_full.name) if a.set == empty_0.name else a)
    load = _branch(emit_gemm(d, arch=arch).code, "load_a")
    assert load.count("12345u);  // expect_tx") == 1 and f"{shared_full.tx_bytes}u);" not in load
    assert f"(bar0 + 8u * ({empty_0.first} + s_fa))" not in load
    assert load.count(f"wd_wait((bar0 + 8u * ({shared_full.first} + s_fa))") == 1


def test_cursor_start_phases_come_from_the_plan():
    code = emit_gemm(merge_gemm()).code
    plans = resolve(merge_gemm())
    for t, plan in plans.items():
        branch = _branch(code, t)
        for c in plan.cursors:
            assert f"u32 ph_{c.owner} = {c.start_phase}u;  // cursor {c.name}" in branch


def _wrong_epilogue_count():
    """merge_gemm whose accumulator declares 1 consumer warp, but its epilogue task has 4."""
    d = merge_gemm()
    r = d.resource("tmem_c")
    cfg = dataclasses.replace(r.pipeline_config, consumer_group=CooperativeGroup(Agent.Warp, 1))
    return d.with_resource(dataclasses.replace(r, pipeline_config=cfg), d.deps("tmem_c"))


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_emit_without_validation_builds_a_wrong_gemm_as_asked(arch):
    d = _wrong_epilogue_count()
    assert "config.arrive_count" in {x.code for x in d.validate().errors}
    with pytest.raises(DesignError):
        emit(d, arch=arch)
    with pytest.raises(DesignError):
        emit_gemm(d, arch=arch)
    empty = barrier_layout(d).set_for("tmem_c", "empty")
    for src in (emit(d, arch=arch, validate=False), emit_gemm(d, arch=arch, validate=False)):
        assert f"pg_mbar_init(bar0 + {8 * empty.first}u, 32u);  // tmem_c.empty[0]" in src.code


def test_epilogue_expressions_go_through_the_checked_grammar(monkeypatch):
    code = emit_gemm(gemm_design("merge_gemm_resadd")).code
    assert "o0[e] = (x_tmem_c0[e] + x_smem_r0[e]);" in code
    act = emit_gemm(gemm_design("fork_gemm_act")).code
    assert "o0[e] = fmaxf(x_smem_act0[e], 0.0f);" in act
    d = gemm_design("merge_gemm_resadd")
    out = d.resource("gmem_d")
    bad = d.with_resource(dataclasses.replace(out, compute=dataclasses.replace(out.compute, expr="tmem_c + smem_r; x")),
                          d.deps("gmem_d"))
    with pytest.raises(DesignError) as info:
        emit_gemm(bad, validate=False)
    assert info.value.code == "compute.expr"


def test_plan_picks_staging_and_fits_shared_memory():
    big = plan_gemm(merge_gemm()).plan
    assert big.staging.dtype == "float16" and big.smem_bytes <= 232448 and big.num_threads == 384
    assert plan_gemm(merge_gemm_resadd(num_stages=3)).plan.staging.dtype == "float32"
    assert plan_gemm(merge_gemm(), acc_stage_dtype="float16").plan.staging.dtype == "float16"


@pytest.mark.parametrize("kw,code", [
    (dict(bk=24), "codegen.bk_swizzle"),  # a 48-byte row is no swizzled panel
    (dict(bn=96), "codegen.bn_tile"),
    (dict(stage="float32"), "smem.capacity"),  # fp32 staging of 128 x 256 does not fit beside 3 stages
])
def test_plan_rejects_what_it_cannot_generate(kw, code):
    stage = kw.pop("stage", None)
    planned = plan_gemm(merge_gemm(**kw), acc_stage_dtype=stage)
    assert planned.plan is None and [d.code for d in planned.problems] == [code]
    with pytest.raises(DesignError) as info:
        emit_gemm(merge_gemm(**kw), acc_stage_dtype=stage)
    assert info.value.code == code and "fix:" in str(info.value) and info.value.diagnostics == planned.problems


def test_streaming_designs_are_not_gemms():
    from pgstudio.examples import merge_copy
    with pytest.raises(DesignError) as info:
        emit_gemm(merge_copy())
    assert info.value.code == "codegen.accumulator"


def test_kernel_source_describes_the_launch():
    src = emit_gemm(merge_gemm(dtype="bfloat16"), b_major="k")
    info = src.info
    assert info["dtype"] == "bfloat16" and info["tile"] == (128, 256, 64) and info["b_major"] == "k"
    assert [p.kind for p in src.params][:2] == ["tensormap", "tensormap"]
    assert dict(info["gmem_spaces"]) == {"gmem_a": "MK", "gmem_b": "NK", "gmem_d": "MN"}
    assert src.block == (384, 1, 1) and src.grid is None and "M" not in src.code.split("extern \"C\"")[0][-200:]
    assert emit_gemm(merge_gemm(m=1000)).code == emit_gemm(merge_gemm(m=8192)).code  # shape is a kernel argument


# -- NVRTC -----------------------------------------------------------------------------------------

def _build(name, twin, arch):
    from pgstudio.runtime.compile import compile_cubin
    src = emit_gemm(gemm_design(name, twin), arch=arch)
    return src, compile_cubin(src, options=("--ptxas-options=-v",))


@pytest.mark.nvrtc
@pytest.mark.parametrize("name,twin", ALL)
def test_compiles_for_sm90a_without_spills(name, twin):
    src, cub = _build(name, twin, "sm_90a")
    assert cub.data[:4] == b"\x7fELF"
    assert re.search(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", cub.log)
    assert "serialized" not in cub.log and "C75" not in cub.log, cub.log  # wgmma pipelined, no ignored hints
    regs = int(re.search(rf"Compiling entry function '{src.entry}'[\s\S]*?Used (\d+) registers", cub.log).group(1))
    assert regs <= 65536 // src.block[0]


@pytest.mark.nvrtc
@pytest.mark.parametrize("name,twin", ALL)
def test_compiles_for_sm100a(name, twin):
    _, cub = _build(name, twin, "sm_100a")
    assert cub.data[:4] == b"\x7fELF"


def _cuobjdump():
    return shutil.which("cuobjdump")


@pytest.mark.nvrtc
@pytest.mark.skipif(_cuobjdump() is None, reason="no cuobjdump (with nvdisasm) on PATH")
def test_sm90a_sass_has_hgmma_and_sm100a_sass_has_utcmma(tmp_path):
    for arch, op in (("sm_90a", "HGMMA.64x256x16.F32"), ("sm_100a", "UTCHMMA")):
        _, cub = _build("merge_gemm", False, arch)
        path = tmp_path / f"k_{arch}.cubin"
        path.write_bytes(cub.data)
        sass = subprocess.run([_cuobjdump(), "--dump-sass", str(path)], capture_output=True, text=True, check=True).stdout
        assert op in sass
        assert not re.search(r"\b(LDL|STL)\b", sass)


def test_a_plain_output_is_stored_by_the_tma_engine():
    """D = the accumulator in its own type: staged in TMA layout (swizzled panels) and stored by
    the TMA engine, one box per panel, the staging buffer released once the engine has read it.
    An output computed from the accumulator and staged tiles (D = acc + R) is computed over the
    staging buffer in place and stored the same way where the tile takes turns through its staging
    (``GemmPlan.in_place``); through one whole-tile stage the threads still write it."""
    code = emit_gemm(merge_gemm()).code
    assert code.count("tma_store_2d(&tm_gmem_d,") == 4  # BN 256 = 4 panels of 64 columns
    assert re.search(r"bulk_commit\(\);\n\s*bulk_wait_read\(\);.*\n\s*}\n\s*named_bar_sync\(2, 64\);", code)
    assert "fence_proxy_async();  // the staging writes -> the TMA engine" in code
    whole = emit_gemm(merge_gemm_resadd()).code
    assert "tma_store_2d(&" not in whole and "*(uint4*)(g_gmem_d" in whole
    resadd = emit_gemm(merge_gemm_resadd(compact=True, bn=256, num_stages=3, turns=4, acc_stages=2)).code
    assert "tma_store_2d(&tm_gmem_d," in resadd and "*(uint4*)(g_gmem_d" not in resadd
    assert "gmem_d computed over the staging buffer, in place" in resadd
    assert resadd.index("fence_proxy_async();  // the threads' writes") < resadd.index("tma_store_2d(&tm_gmem_d,")


def test_cluster_pairs_share_a_tile_by_multicast_and_release_it_in_both_blocks():
    plain = emit_gemm(merge_gemm(bn=128, num_stages=4)).code
    src = emit_gemm(merge_gemm(bn=128, num_stages=4, cluster=(1, 2)))
    code = src.code
    assert "__cluster_dims__(2, 1, 1)" in code and src.info["cluster"] == (1, 2)
    assert code.count("tma_load_2d_mc(") == 2  # the helper and A's one panel (B is loaded by each block alone)
    assert "m0 + cl_rank * 64" in code  # this block's half of A's 128 rows
    assert code.count("pg_mbar_arrive_cluster(peer_addr(") == 2  # the MMA's release, in the k loop and after it
    empty = re.findall(r"pg_mbar_init\(bar0 \+ \d+u, (\d+)u\);  // ab\.shared_empty", code)
    assert empty and set(empty) == {"4"}  # both blocks' two MMA warpgroups release a stage of the shared A
    assert code.count("cluster_sync();") == 2  # after the barrier init, and before leaving
    for word in ("__cluster_dims__", "tma_load_2d_mc", "cluster_sync", "peer_addr"):
        assert word not in plain
    share_b = emit_gemm(merge_gemm(cluster=(2, 1))).code
    assert "k0 + cl_rank * 32" in share_b and "mb = mb * 2 + cl_rank" in share_b


def test_fork_side_output_is_stored_in_slices_by_the_n_tile_columns():
    """D1 = relu(A) does not depend on the N tile: each N-tile column stores its own contiguous
    slice of every k tile, so every chunk is written by exactly one column and no column holds a
    stage for a whole tile's stores (that every element is written is the GPU tests'
    poisoned-D1 check, at ragged shapes too)."""
    for d in (gemm_design("fork_gemm_act"), fork_gemm_act(bk=32)):
        code = emit_gemm(d).code
        act = code[code.index("task 'act'"):code.index("done_act:")]
        p = d.problem_dict
        chunks = p["BM"] * p["BK"] // 8
        m = re.search(r"const int slice = \((\d+) \+ tiles_n - 1\) / tiles_n, lo = nb \* slice, "
                      r"hi = min\(lo \+ slice, (\d+)\);", act)
        assert m and int(m.group(1)) == int(m.group(2)) == chunks
        assert "% tiles_n == nb" not in act and "nb == 0" not in act
        assert re.search(r"if \(it \+ 0 \+ tt < hi && gr0 < M && gc0 < K\)", act)
        for tiles_n in (1, 3, 16, 32, 200, 2000):  # the slices of the columns cover each chunk once
            slice_ = -(-chunks // tiles_n)
            owners = [nb for nb in range(tiles_n) for c in range(nb * slice_, min(nb * slice_ + slice_, chunks))]
            assert len(owners) == chunks


def test_wgmma_groups_in_flight_set_how_late_each_stage_is_given_back(monkeypatch):
    """With N wgmma groups in flight the MMA waits for the group of N k tiles back, gives that
    stage back, and after the k loop gives back the last N stages; N stays below the stages."""
    from pgstudio.analysis.buildable import gemm_limits
    monkeypatch.setattr(gemm_limits, "WGMMA_IN_FLIGHT", 2)
    code = emit_gemm(merge_gemm(bn=128, num_stages=4)).code
    mma = code[code.index("task 'mma'"):code.index("done_mma:")]
    assert "wgmma_wait<2>();" in mma and "wgmma_wait<1>();" not in mma
    assert re.search(r"if \(kt >= 2\) \{\n\s*if \(\(tt & 127\) == 0\) \{\n\s*pg_mbar_arrive\(\(bar0 \+ 8u \* \(\d+ \+ "
                     r"\(s_ab >= 2 \? s_ab - 2 : s_ab \+ 2\)\)\)\);", mma)
    drain = mma[mma.index("wgmma_wait<0>();"):]
    assert drain.index("if (num_k_tiles >= 2)") < drain.index("if (num_k_tiles >= 1)")
    assert gemm_limits.wgmma_in_flight(2) == 1 and gemm_limits.wgmma_in_flight(4) == 2


def test_deep_pipelines_keep_two_wgmma_groups_in_flight_shallow_ones_one():
    from pgstudio.analysis.buildable.gemm_limits import wgmma_in_flight
    assert [wgmma_in_flight(s) for s in (1, 2, 3, 4, 5, 6, 8)] == [0, 1, 1, 1, 1, 2, 2]
    deep = emit_gemm(merge_gemm(128, 8192, 8192, num_stages=8, bn=64, dtype="bfloat16")).code
    shallow = emit_gemm(merge_gemm(num_stages=3)).code
    assert "wgmma_wait<2>();" in deep and "wgmma_wait<1>();" not in deep
    assert "wgmma_wait<1>();" in shallow and "wgmma_wait<2>();" not in shallow

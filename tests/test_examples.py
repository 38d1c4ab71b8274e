"""The canonical designs: each is valid and has the shape the issue describes."""

import pytest

from pgstudio import DesignError, PipelineGroupMode, barrier_layout, smem_layout, ungrouped
from pgstudio.examples import CANONICAL, MAX_CHAIN_GROUPS, STREAMING, chain, example

Merge, Fork, FusedMerge = PipelineGroupMode.Merge, PipelineGroupMode.Fork, PipelineGroupMode.FusedMerge


def ops(design, task):
    return [str(s) for s in design.task(task).schedule.body]


@pytest.mark.parametrize("name", list(CANONICAL))
def test_every_canonical_design_is_valid_and_fits(name):
    design = example(name)
    assert design.name == name
    report = design.validate()
    assert report.ok and report.diagnostics == (), str(report)
    assert smem_layout(design).fits
    twin = ungrouped(design)
    assert twin.groups == () and [r.name for r in twin.resources] == [r.name for r in design.resources]
    assert barrier_layout(twin).num_barriers > barrier_layout(design).num_barriers


@pytest.mark.parametrize("name,stages", [(n, s) for n in ("merge_copy", "fork_copy", "fused_merge_copy") for s in (1, 2, 8)]
                         + [(n, s) for n in ("merge_gemm", "fork_gemm_act", "fused_merge_gemm") for s in (1, 2)])
def test_stage_counts_are_a_parameter(name, stages):
    design = example(name, num_stages=stages)
    assert design.validate().ok
    group = design.groups[0]
    per = 2 if group.mode is FusedMerge else len(group.members) + 1
    assert barrier_layout(group).num_barriers == per * stages


def test_merge_copy():
    d = example("merge_copy")
    assert [(t.name, t.dst_resources) for t in d.tasks if t.name.startswith("load")] == [
        ("load_a", ("smem_a",)), ("load_b", ("smem_b",))]
    assert d.group("ab").mode is Merge and d.resource("gmem_d").compute.expr == "smem_a + smem_b"
    store = ops(d, "store")
    assert store.count("ab.release()") == 1 and not any(s.endswith(".release()") and s != "ab.release()" for s in store)


def test_fork_copy():
    d = example("fork_copy")
    assert d.group("xy").mode is Fork and d.resource("smem_y").aliases == "smem_x"
    assert d.task("load").dst_resources == ("smem_x", "smem_y") and ops(d, "load")[-1] == "xy.commit()"
    assert [t.name for t in d.consumers("smem_x")] == ["copy_out"] and [t.name for t in d.consumers("smem_y")] == ["relu_out"]


def test_fused_merge_copy():
    d = example("fused_merge_copy")
    assert d.group("ab").mode is FusedMerge
    assert ops(d, "store")[:2] == ["ab.try_wait()", "ab.wait()"] and ops(d, "store")[-1] == "ab.release()"


def test_merge_gemm():
    d = example("merge_gemm")
    assert d.group("ab").mode is Merge and d.deps("tmem_c") == ("smem_a", "smem_b")
    assert d.task("mma").src_resources == ("smem_a", "smem_b") and d.task("mma").dst_resources == ("tmem_c",)
    assert d.task("epilogue").src_resources == ("tmem_c",) and d.resource("tmem_c").memory.value == "tmem"
    assert ops(d, "mma").count("ab.release()") == 1


def test_merge_gemm_resadd_has_two_merges():
    d = example("merge_gemm_resadd")
    assert [(g.name, g.mode, g.member_names) for g in d.groups] == [
        ("ab", Merge, ("smem_a", "smem_b")), ("cr", Merge, ("tmem_c", "smem_r"))]
    assert ops(d, "epilogue")[-1] == "cr.release()" and d.deps("gmem_d") == ("tmem_c", "smem_r")


def test_fork_gemm_act():
    d = example("fork_gemm_act")
    assert d.group("fa").mode is Fork and d.group("fa").member_names == ("smem_a", "smem_act")
    assert d.task("load_a").dst_resources == ("smem_a", "smem_act")
    assert [t.name for t in d.consumers("smem_a")] == ["mma"] and [t.name for t in d.consumers("smem_act")] == ["act"]
    assert "max(smem_act" in d.resource("gmem_d1").compute.expr


def test_fused_merge_gemm():
    d = example("fused_merge_gemm")
    assert d.group("ab").mode is FusedMerge
    assert barrier_layout(d.group("ab")).num_barriers == 2 * d.resource("smem_a").num_stages
    assert ops(d, "mma")[2:4] == ["ab.try_wait()", "ab.wait()"]


def test_streaming_names_and_unknown_names():
    assert set(STREAMING) <= set(CANONICAL)
    with pytest.raises(DesignError, match="no example named 'gemm'; examples: merge_copy, fork_copy"):
        example("gemm")


# -- generated chains -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [Merge, Fork, FusedMerge])
@pytest.mark.parametrize("n", [1, 2, 5, MAX_CHAIN_GROUPS])
def test_a_chain_of_groups_is_valid_and_fits(mode, n):
    d = chain(n, mode)
    report = d.validate()
    assert report.ok and report.diagnostics == (), str(report)
    assert smem_layout(d).fits and d.num_warps == n + 1
    assert [g.mode for g in d.groups] == [mode] * n
    assert [t.name for t in d.tasks] == ["load", *(f"step_{k}" for k in range(1, n)), "store"]
    last = n - 1
    assert d.resource("gmem_d").compute.expr == f"s{last}_a + s{last}_b"
    if n > 1:  # each group is computed from the one before
        assert d.deps(f"s{last}_a") == d.deps(f"s{last}_b") == (f"s{last - 1}_a", f"s{last - 1}_b")
        assert d.task(f"step_{last}").src_resources == (f"s{last - 1}_a", f"s{last - 1}_b")


def test_chain_streams_through_the_code_generator_and_the_reference():
    np = pytest.importorskip("numpy")
    from pgstudio.codegen import emit
    from pgstudio.runtime.reference import reference
    for mode in (Merge, Fork, FusedMerge):
        d = chain(4, mode.name, dtype="bfloat16", tile_bytes=2048)
        src = emit(d)
        assert src.entry == f"pg_chain_{mode.name.lower()}_4" and "s3_b" in src.code
        assert d.resource("s1_a").pipeline_config.num_bytes == 2048
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(9).astype(np.float32), rng.standard_normal(9).astype(np.float32)
    ref = reference(chain(6), {"gmem_a": a, "gmem_b": b}, np, "float32")["gmem_d"]
    x = np.stack([a, b]).astype(np.float64)
    for _ in range(5):  # each step: (a, b) -> (a + b, (b - a) / 2); D = a + b of the last group
        x = np.array([[1, 1], [-0.5, 0.5]]) @ x
    assert np.allclose(ref, x[0] + x[1], rtol=1e-5, atol=1e-6)


def test_chain_values_stay_in_range_at_any_depth():
    np = pytest.importorskip("numpy")
    from pgstudio.runtime.data import from_float32
    from pgstudio.runtime.reference import reference
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(4096).astype(np.float32), rng.standard_normal(4096).astype(np.float32)
    peak = np.abs(np.stack([a, b])).max()
    for dtype in ("float32", "float16"):
        ins = {"gmem_a": from_float32(np, a, dtype), "gmem_b": from_float32(np, b, dtype)}
        d = reference(chain(MAX_CHAIN_GROUPS, dtype=dtype), ins, np, dtype)["gmem_d"]
        assert np.isfinite(d).all() and 0.1 * peak < np.abs(d).max() < 4 * peak


@pytest.mark.parametrize("kwargs,match", [
    (dict(n_groups=0), "chain of 0 groups: expected an integer from 1 to 31"),
    (dict(n_groups=MAX_CHAIN_GROUPS + 1), "32-warp block"),
    (dict(n_groups=2.0), "chain of 2.0 groups"),
    (dict(n_groups=2, mode="Zip"), "chain mode is 'Zip', expected one of Merge, Fork, FusedMerge"),
    (dict(n_groups=2, dtype="int8"), "chain dtype is 'int8'"),
])
def test_chain_rejects_what_it_cannot_build(kwargs, match):
    with pytest.raises(DesignError, match=match):
        chain(**kwargs)


@pytest.mark.parametrize("mode", [Merge, Fork, FusedMerge])
def test_a_wide_chain_is_valid_up_to_what_shared_memory_holds(mode):
    """Wide chains make the scale benchmark's large designs: 31 groups of 7 fit, of 8 do not."""
    d = chain(31, mode, width=7)
    assert len(d.resources) == 220 and d.validate().ok, str(d.validate())
    assert d.group("g3").member_names == tuple(f"s3_{x}" for x in "abcdefg")
    assert d.resource("s3_g").compute.expr == "0.5f * (s2_g + s2_a)" and d.deps("s3_g") == ("s2_g", "s2_a")
    assert d.resource("gmem_d").compute.expr == " + ".join(f"s30_{x}" for x in "abcdefg")
    wider = chain(31, mode, width=8)
    assert len(wider.resources) == 251 and wider.validate().codes() == ["smem.capacity"]


def test_a_wide_chain_streams_through_the_reference():
    np = pytest.importorskip("numpy")
    from pgstudio.runtime.reference import reference
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    d = reference(chain(3, width=3), {"gmem_a": a, "gmem_b": b}, np, "float32")["gmem_d"]
    x = [a, b, a]  # group 0 copies gmem_a, gmem_b, gmem_a
    for _ in range(2):
        x = [np.float32(0.5) * (x[i] + x[(i + 1) % 3]) for i in range(3)]
    assert np.array_equal(d, x[0] + x[1] + x[2])


@pytest.mark.parametrize("width", [1, 17, 2.0])
def test_a_chain_width_out_of_range_is_refused(width):
    with pytest.raises(DesignError, match=f"chain width {width!r}: expected an integer from 2 to 16"):
        chain(3, width=width)

"""The design-space sweep: variants built valid by construction (tile bytes from tile shapes,
stages bounded by shared memory), invalid ones with their diagnostics, the compile-only path
without a GPU, the results table (text and HTML) and its pictures; on a GPU, a small sweep
verifies and times."""

import math

import pytest

from pgstudio import examples
from pgstudio.analysis import predict
from pgstudio.analysis.layout import barrier_layout
from pgstudio.analysis.buildable.gemm_plan import plan_gemm
from pgstudio.errors import PgStudioError
from pgstudio.render.display import bundle
from pgstudio.render.sweep import sweep_figure
from pgstudio.runtime._cupy import gpu_available
from pgstudio.explore.sweep import (COMPILED, INVALID, OK, SweepRow, SweepTable, sweep, with_grouping, with_stages,
                                    with_tile)
from pgstudio.explore.sweep_jobs import compile_variant
from pgstudio.explore.sweep_space import Variant, parse_options, parse_tile, space_for, with_consumer_warps


def test_stages_and_tile_bytes_resize_every_main_pipeline_and_the_problem():
    d = with_tile(with_stages(examples.merge_copy(), 6), (2048,))
    for name in ("smem_a", "smem_b"):
        cfg = d.resource(name).pipeline_config
        assert (cfg.num_stages, cfg.num_bytes) == (6, 2048)
        assert d.resource(name).tile == (512,)
    p = d.problem_dict
    assert p["tile_elems"] == 512 and p["num_tiles"] == (1 << 24) // 512
    assert all(m.pipeline_config.num_stages == 6 for m in d.groups[0].members)
    assert d.validate().ok


def test_gemm_tile_bytes_follow_the_tile_shape():
    d = with_tile(examples.merge_gemm(), (128, 128, 128))
    a, b, acc = (d.resource(n) for n in ("smem_a", "smem_b", "tmem_c"))
    assert (a.tile, a.pipeline_config.num_bytes) == ((128, 128), 128 * 128 * 2)
    assert (b.tile, b.pipeline_config.num_bytes) == ((128, 128), 128 * 128 * 2)
    assert (acc.tile, acc.pipeline_config.num_bytes) == ((128, 128), 128 * 128 * 4)
    p = d.problem_dict
    assert (p["BM"], p["BN"], p["BK"], p["num_tiles"], p["num_k_tiles"]) == (128, 128, 128, 32 * 32, 32)
    assert d.validate().ok and plan_gemm(d).plan.bn == 128
    # the stage count varies the operand tiles only: the accumulator and a one-stage residual keep theirs
    r = with_stages(examples.merge_gemm_resadd(), 2)
    assert [r.resource(n).pipeline_config.num_stages for n in ("smem_a", "smem_b", "tmem_c", "smem_r")] == [2, 2, 1, 1]
    with pytest.raises(PgStudioError, match="is a GEMM design: its tiles are BMxBNxBK shapes"):
        with_tile(examples.merge_gemm(), (8192,))
    with pytest.raises(PgStudioError, match="is a streaming design: its tiles are bytes per stage"):
        with_tile(examples.merge_copy(), (128, 128, 64))


def test_with_grouping_derives_the_fused_merge_schedules():
    fused = with_grouping(examples.merge_copy(), "FusedMerge")
    ref = examples.fused_merge_copy()
    assert fused.groups[0].mode.value == "FusedMerge" and fused.validate().ok
    assert barrier_layout(fused).num_barriers == barrier_layout(ref).num_barriers
    ops = [(s.op, s.via) for s in fused.task("store").schedule.steps()]
    assert ops == [(s.op, s.via) for s in ref.task("store").schedule.steps()]
    assert with_grouping(examples.merge_copy(), "ungrouped").groups == ()
    with pytest.raises(PgStudioError, match="grouping 'Zip' is not known"):
        with_grouping(examples.merge_copy(), "Zip")


def test_consumer_warps_resize_the_consumer_groups_and_keep_tasks_apart():
    d = with_consumer_warps(examples.fork_copy(), 8)
    assert [(t.name, t.warp_idx, t.num_warps) for t in d.tasks] == [("load", 0, 1), ("copy_out", 4, 8),
                                                                    ("relu_out", 12, 8)]
    assert d.resource("smem_x").pipeline_config.consumer_group.num_threads == 256
    assert d.validate().ok
    with pytest.raises(PgStudioError, match="GEMM design: its warps are fixed"):
        with_consumer_warps(examples.merge_gemm(), 8)


def test_the_default_space_of_merge_copy_is_48_variants():
    d = examples.merge_copy()
    space = space_for(d)
    vs, note = space.variants(d)
    # Merge is merge_copy's own mode: the designed variant, not repeated
    assert space.groupings == ("designed", "ungrouped", "FusedMerge") and note == ""
    assert len(vs) == 48 and len({v.key for v in vs}) == 48
    assert {(v.num_stages, v.tile) for v in vs} == {(s, (b,)) for s in (2, 4, 6, 8) for b in (1024, 2048, 4096, 8192)}
    assert vs[0].key == "designed/s2/t1024" and vs[0].label == "designed 2x1024B"
    assert Variant.from_dict(vs[5].as_dict()) == vs[5]
    # a Fork's members are views of one buffer: merging them is not a default variant
    assert space_for(examples.fork_copy()).groupings == ("designed", "ungrouped")


@pytest.mark.parametrize("name", list(examples.CANONICAL))
def test_every_default_variant_of_every_canonical_design_is_valid_and_generates(name):
    from pgstudio.explore.sweep_jobs import _emit
    d = examples.example(name)
    space = space_for(d)
    vs, note = space.variants(d)
    assert vs
    for v in vs:
        built = v.build(d)
        report = built.validate()
        assert report.ok, (v.label, [e.code for e in report.errors])
        _emit(built, v, "sm_90a")  # the generator accepts it too
    if space.kind == "gemm":  # stages are bounded by shared memory: what was left out really overflows
        left_out = {(g, s, t) for g in space.groupings for s in space.stages for t in space.tiles} - \
            {(v.grouping, v.num_stages, v.tile) for v in vs}
        assert ("left out because their stages overflow shared memory" in note) == bool(left_out)
        for g, s, t in sorted(left_out)[:6]:
            built = Variant(g, s, t).build(d)
            assert "smem.capacity" in built.validate().codes()  # the one capacity rule, staging included


def test_explicit_stages_beyond_shared_memory_are_invalid_with_the_rule():
    d = examples.merge_copy()
    space = space_for(d, [4, 16], [16384], ["designed", "Fork"])
    vs, note = space.variants(d)
    assert note == "" and [v.label for v in vs] == ["designed 4x16384B", "designed 16x16384B", "Fork 4x16384B",
                                                    "Fork 16x16384B"]
    rec = compile_variant(d.to_json(), vs[1].as_dict()).value
    assert rec["status"] == INVALID and "smem.capacity" in rec["codes"]
    assert "[smem.capacity]" in rec["message"] and "shared memory" in rec["message"]
    fork = compile_variant(d.to_json(), vs[2].as_dict()).value
    assert fork["status"] == INVALID and "group.collapsed_task" in fork["codes"]


def test_bad_axes_are_clear_messages():
    d = examples.merge_copy()
    with pytest.raises(PgStudioError, match="grouping 'Zip' is not known"):
        space_for(d, grouping=["Zip"])
    with pytest.raises(PgStudioError, match="num_stages=0 is not a positive whole number"):
        space_for(d, [0])
    with pytest.raises(PgStudioError, match="tile '12ab' is neither bytes per stage"):
        parse_tile("12ab")
    assert parse_tile("128x256x64") == (128, 256, 64) and parse_tile(4096) == (4096,)
    assert parse_options("store=cs") == (("store", "cs"),) and parse_options("default") == ()
    with pytest.raises(PgStudioError, match="option store=fast is not known"):
        parse_options("store=fast")
    with pytest.raises(PgStudioError, match="GEMM design; code options"):
        space_for(examples.merge_gemm(), options=["store=cs"])


def _table(unit="GB/s"):
    rows = [SweepRow("designed", 4, (4096,), OK, 0.50, 3000.0, 32768, 3, runs=10),
            SweepRow("designed", 8, (4096,), OK, 0.40, 3750.0, 65536, 3, runs=10),
            SweepRow("ungrouped", 4, (4096,), OK, 0.45, 3333.0, 32768, 3, runs=10),
            SweepRow("Fork", 4, (4096,), INVALID, message="[group.collapsed_task] a Fork needs one producer task",
                     codes=("group.collapsed_task",))]
    return SweepTable("merge_copy", "134,217,728 float32 elements", unit, tuple(rows))


def test_the_table_names_the_best_variant_and_every_reason():
    t = _table()
    assert t.best.label == "designed 8x4096B"
    text = t.table()
    assert text.rstrip().endswith("best: designed 8x4096B at 0.4000 ms (3,750 GB/s)")
    line = next(ln for ln in text.splitlines() if ln.startswith("designed") and "  4  " in ln)
    assert "1.250" in line  # 0.5 ms / 0.4 ms
    assert "Fork 4x4096B invalid: [group.collapsed_task] a Fork needs one producer task" in text
    assert t.row("ungrouped", 4, 4096).median_ms == 0.45
    assert math.isnan(t.row("Fork", 4, 4096).median_ms)
    html = bundle(t)["text/html"]
    assert "<table class='pg-table pg-sweep-table'>" in html and "<th>GB/s</th>" in html
    assert "<td style='text-align:left'>[group.collapsed_task] a Fork needs one producer task</td>" in html


@pytest.mark.parametrize("kind", ["heatmap", "bars"])
def test_the_pictures(kind):
    pytest.importorskip("matplotlib")
    t = _table()
    fig = sweep_figure(t, kind=kind)
    texts = [x.get_text() for ax in fig.axes for x in ax.texts] + [x.get_text() for x in fig.texts]
    assert any("best designed 8x4096B" in x for x in texts)
    if kind == "heatmap":
        assert [ax.get_title() for ax in fig.axes[:3]] == ["designed", "ungrouped", "Fork"]
        assert "invalid" in texts and "3,750" in texts
    else:
        labels = [x.get_text() for x in fig.axes[0].get_yticklabels()]
        assert labels == ["designed 8x4096B", "ungrouped 4x4096B", "designed 4x4096B"]
    with pytest.raises(ValueError, match="kind 'pie'"):
        sweep_figure(t, kind="pie")
    assert "image/svg+xml" in bundle(t)


def test_a_compile_only_sweep_is_pictured_by_shared_memory():
    pytest.importorskip("matplotlib")
    rows = [SweepRow("designed", s, (128, 256, 64), COMPILED, smem_bytes=s * 50000, cubin_bytes=20000)
            for s in (2, 3)]
    t = SweepTable("merge_gemm", "4096 x 4096 x 4096 float16 GEMM", "TFLOP/s", tuple(rows),
                   note="no GPU here: compiled 2 of 2 variants for sm_90a; nothing was timed")
    fig = sweep_figure(t)
    texts = [x.get_text() for ax in fig.axes for x in ax.texts] + [x.get_text() for x in fig.texts]
    assert any("shared memory per block" in x for x in texts) and "97.7" in texts
    assert "best: none (no GPU here: compiled 2 of 2 variants" in t.table()


@pytest.mark.gpu
def test_a_small_sweep_on_the_gpu():
    t = sweep(examples.merge_copy(), [2, 4], [4096], ["designed", "ungrouped", "FusedMerge", "Fork"], n=1 << 22,
              rounds=3, progress=False)
    status = {r.label: r.status for r in t.rows}
    assert [s for k, s in status.items() if not k.startswith("Fork")] == [OK] * 6
    assert all(s == INVALID for k, s in status.items() if k.startswith("Fork"))
    assert t.best is not None and t.best.median_ms == min(r.median_ms for r in t.timed)
    assert all(r.runs == 3 and r.rate > 0 for r in t.timed)


@pytest.mark.nvrtc
def test_warps_and_code_options_are_axes_too(tmp_path, monkeypatch):
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path / "cache"))
    t = sweep(examples.merge_copy(), [4], [4096], ["designed"], warps=[4, 8], options=["default", "store=cs"],
              executor="inline", compile_only=True, progress=False)
    assert [r.label for r in t.rows] == ["designed 4x4096B 4w", "designed 4x4096B 4w store=cs",
                                         "designed 4x4096B 8w", "designed 4x4096B 8w store=cs"]
    assert t.count(COMPILED) == 4
    head = t.table().splitlines()[1].split()
    assert head[:6] == ["grouping", "stages", "tile", "warps", "options", "status"]
    assert len({r.cubin_bytes for r in t.rows}) > 1  # four different kernels, not one compiled four times


@pytest.mark.skipif(gpu_available(), reason="the no-GPU path")
@pytest.mark.parametrize("name, variant", [("merge_copy", Variant("FusedMerge", 4, (4096,))),
                                           ("merge_gemm", Variant("designed", 2, (128, 128, 64)))])
def test_the_timing_job_rebuilds_its_variant_and_stops_at_the_gpu(name, variant):
    from pgstudio.errors import GpuUnavailable
    from pgstudio.explore.sweep_jobs import time_variant
    design = examples.example(name)
    with pytest.raises(GpuUnavailable):
        time_variant(design.to_json(), variant.as_dict(), {"rounds": 3, "warmup": 1})


def test_a_compiled_sweep_is_ranked_by_the_predicted_kernel_time():
    base = examples.merge_gemm()
    rows = [SweepRow("designed", s, (128, 128, 64), COMPILED) for s in (2, 3, 4)]
    rows.append(SweepRow("Fork", 4, (128, 128, 64), INVALID, message="[group.collapsed_task] no", codes=("x",)))
    t = SweepTable("merge_gemm", "4096 x 4096 x 4096 float16 GEMM", "TFLOP/s", tuple(rows)).with_predictions(base)
    assert "predicted ms" in t.columns() and math.isnan(t.rows[-1].predicted_ms)
    want = [predict(with_stages(with_tile(base, (128, 128, 64)), s)) for s in (2, 3, 4)]
    assert [r.predicted_ms for r in t.rows[:3]] == pytest.approx(want)
    assert want[0] > want[1] > want[2]  # stages hide the load latency
    assert t.predicted_best.num_stages == 4
    assert t.verdict().endswith(f"predicted best: designed 4x128x128x64 at {want[2]:.4f} ms")
    line = next(ln for ln in t.table().splitlines() if ln.startswith("designed") and "  2  " in ln)
    assert f"{want[0]:.4f}" in line
    assert "predicted ms" not in SweepTable("x", "", "GB/s", tuple(rows)).columns()  # no model asked: no column

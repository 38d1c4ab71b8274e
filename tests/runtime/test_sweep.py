"""The design-space sweep: variant enumeration, invalid variants with their diagnostics, the
no-GPU path, the table and its pictures; on a GPU, a small sweep verifies and times."""

import math

import pytest

from pgstudio import examples
from pgstudio.analysis.layout import barrier_layout
from pgstudio.errors import PgStudioError
from pgstudio.render.display import bundle
from pgstudio.render.sweep import sweep_figure
from pgstudio.runtime._cupy import gpu_available
from pgstudio.runtime.sweep import (INVALID, NOT_RUN, OK, SweepRow, SweepTable, sweep, variants, with_grouping,
                                    with_stages)


def test_with_stages_resizes_every_pipelined_resource_and_the_problem():
    d = with_stages(examples.merge_copy(), 6, 2048)
    for name in ("smem_a", "smem_b"):
        cfg = d.resource(name).pipeline_config
        assert (cfg.num_stages, cfg.num_bytes) == (6, 2048)
        assert d.resource(name).tile == (512,)
    p = d.problem_dict
    assert p["tile_elems"] == 512 and p["num_tiles"] == (1 << 24) // 512
    assert all(m.pipeline_config.num_stages == 6 for m in d.groups[0].members)
    assert d.validate().ok


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


def test_variants_enumerate_stages_x_bytes_x_groupings():
    vs = variants(examples.merge_copy(), [2, 4, 6, 8], [1024, 2048, 4096, 8192],
                  ["designed", "ungrouped", "Merge", "FusedMerge"])
    # Merge is merge_copy's own mode: the designed variant, not repeated
    assert [v.grouping for v in vs[::16]] == ["designed", "ungrouped", "FusedMerge"]
    assert len(vs) == 48 and all(v.valid for v in vs)
    assert {(v.num_stages, v.tile_bytes) for v in vs} == {(s, b) for s in (2, 4, 6, 8) for b in (1024, 2048, 4096, 8192)}


def test_invalid_variants_carry_their_diagnostics():
    vs = {v.label: v for v in variants(examples.merge_copy(), [4, 16], [4096, 16384], ["designed", "Fork"])}
    too_big = vs["designed 16x16384B"]
    assert not too_big.valid and any("[smem.capacity]" in p and "shared memory exceeded" in p for p in too_big.problems)
    assert vs["designed 4x4096B"].valid
    fork = vs["Fork 4x4096B"]
    assert not fork.valid and any(p.startswith("[group.collapsed_task]") for p in fork.problems)
    with pytest.raises(PgStudioError, match="grouping 'Zip'"):
        variants(examples.merge_copy(), grouping=["Zip"])


@pytest.mark.skipif(gpu_available(), reason="the no-GPU path")
def test_without_a_gpu_valid_variants_are_listed_not_run():
    t = sweep(examples.merge_copy(), [2, 16], [16384], ["designed", "Fork"], progress=False)
    status = {r.label: r.status for r in t.rows}
    assert status == {"designed 2x16384B": NOT_RUN, "designed 16x16384B": INVALID,
                      "Fork 2x16384B": INVALID, "Fork 16x16384B": INVALID}
    # the reason nothing ran: no GPU (CuPy installed) or no CuPy at all (a CPU-only install)
    assert t.best is None
    assert "no GPU" in t.rows[0].message or "needs CuPy" in t.rows[0].message
    text = t.table()
    assert "designed 16x16384B invalid: [smem.capacity]" in text and "best: none" in text
    assert "1 valid variant(s) not run" in text


def _table():
    rows = [SweepRow("designed", 4, 4096, OK, 0.50, 3000.0, 32768, 3, runs=10),
            SweepRow("designed", 8, 4096, OK, 0.40, 3750.0, 65536, 3, runs=10),
            SweepRow("ungrouped", 4, 4096, OK, 0.45, 3333.0, 32768, 3, runs=10),
            SweepRow("Fork", 4, 4096, INVALID, message="[group.collapsed_task] ...")]
    return SweepTable("merge_copy", 1 << 27, "float32", tuple(rows))


def test_the_table_names_the_best_variant():
    t = _table()
    assert t.best.label == "designed 8x4096B"
    text = t.table()
    assert text.rstrip().endswith("best: designed 8x4096B at 0.4000 ms (3,750 GB/s)")
    line = next(ln for ln in text.splitlines() if ln.startswith("designed") and "  4  " in ln)
    assert "1.250" in line  # 0.5 ms / 0.4 ms
    assert "Fork 4x4096B invalid: [group.collapsed_task]" in text
    assert t.row("ungrouped", 4, 4096).median_ms == 0.45
    assert math.isnan(t.row("Fork", 4, 4096).median_ms)


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


@pytest.mark.skipif(gpu_available(), reason="the no-GPU path")
def test_cli_sweep_without_a_gpu(tmp_path, capsys):
    from pgstudio.cli import main
    f = tmp_path / "d.json"
    f.write_text(examples.merge_copy().to_json())
    assert main(["sweep", str(f), "--stages", "4", "32", "--tiles", "8192", "--grouping", "designed", "--quiet"]) == 3
    out = capsys.readouterr().out
    assert "designed 32x8192B invalid: [smem.capacity]" in out and "not run" in out


@pytest.mark.gpu
def test_a_small_sweep_on_the_gpu():
    t = sweep(examples.merge_copy(), [2, 4], [4096], ["designed", "ungrouped", "FusedMerge", "Fork"], n=1 << 22,
              rounds=3, progress=False)
    status = {r.label: r.status for r in t.rows}
    assert [s for k, s in status.items() if not k.startswith("Fork")] == [OK] * 6
    assert all(s == INVALID for k, s in status.items() if k.startswith("Fork"))
    assert t.best is not None and t.best.median_ms == min(r.median_ms for r in t.timed)
    assert all(r.runs == 3 and r.gbps > 0 for r in t.timed)

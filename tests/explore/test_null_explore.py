"""The explorer on the null runtime, on a CPU: a sweep's timing jobs, the tuners' searches and the
tuned benchmark (``pgstudio.benchmark``) take every step a GPU run takes and measure nothing; no
variant counts as timed, the choices are the model's and say so, and no tuning is cached."""

import math

import pytest

import pgstudio
from pgstudio import examples
from pgstudio.explore import tuning
from pgstudio.explore.sweep import COMPILED, sweep
from pgstudio.explore.sweep_jobs import time_variant
from pgstudio.explore.sweep_space import Variant
from pgstudio.runtime.verify import NOT_RUN, NULL_RUNTIME


@pytest.mark.parametrize("name, variant", [("merge_copy", Variant("FusedMerge", 4, (4096,))),
                                           ("merge_gemm", Variant("designed", 2, (128, 128, 64)))])
def test_the_timing_job_on_the_null_runtime_runs_and_times_nothing(name, variant):
    rec = time_variant(examples.example(name).to_json(), variant.as_dict(), {"rounds": 3, "warmup": 1,
                                                                               "runtime": "null"})
    assert rec["status"] == COMPILED and rec["measured"] is False and rec["phase"] == "run"
    assert rec["message"].startswith(f"{NULL_RUNTIME}: the timing job ran") and "median_ms" not in rec
    assert rec["kernel"].startswith("pg_")


@pytest.mark.nvrtc
def test_a_null_sweep_compiles_runs_every_timing_job_and_times_none(tmp_path, monkeypatch):
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path / "cache"))
    results = tmp_path / "r.jsonl"
    t = sweep(examples.merge_copy(), [2, 4], [4096], ["designed", "Fork"], n=1 << 20, rounds=2, executor="null",
              results=results, progress=False)
    status = {r.label: r.status for r in t.rows}
    assert status == {"designed 2x4096B": COMPILED, "designed 4x4096B": COMPILED, "Fork 2x4096B": "invalid",
                      "Fork 4x4096B": "invalid"}
    assert t.best is None and t.timed == () and t.predicted_best is not None
    assert t.note.startswith(f"{NULL_RUNTIME}: compiled 2 of 4 variants") and "null runtime" in t.executor
    assert all(r.where.startswith("null runtime") and NULL_RUNTIME in r.message for r in t.rows if r.status == COMPILED)
    assert f"best: none ({NULL_RUNTIME}" in t.table()
    import json
    lines = [json.loads(ln) for ln in results.read_text().splitlines()]
    assert lines[0]["settings"]["runtime"] == "null"
    assert [r["status"] for r in lines[1:] if r["phase"] == "run"] == [COMPILED, COMPILED]
    again = sweep(examples.merge_copy(), [2, 4], [4096], ["designed", "Fork"], n=1 << 20, rounds=2,
                  executor="null", results=results, progress=False)
    assert again.reused == 2  # the invalid ones; a null run leaves the valid ones to be timed again


def test_tuning_on_the_null_runtime_is_the_models_choice_and_is_never_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path))
    design = examples.merge_copy()
    t = tuning.tune_stream(design, 1 << 22, executor="null")
    assert NULL_RUNTIME in t.source and "not measured" in t.source and math.isnan(t.rate)
    assert " stages x " in t.settings or t.settings == "as designed"
    g = tuning.tune_gemm_design(examples.merge_gemm(), executor="null")
    p = examples.merge_gemm().problem_dict
    from pgstudio.analysis.buildable.gemm_shapes import gemm_tiles
    first = gemm_tiles(p["M"], p["N"], p["K"], "float16", 132)[0]
    assert g.settings == first.label and "the model's first choice" in g.source and NULL_RUNTIME in g.source
    assert g.design.problem_dict["BM"] == first.bm and g.design.problem_dict["BN"] == first.bn
    assert not (tmp_path / "tuning").exists()  # nothing measured, nothing remembered


def test_the_gemm_search_takes_every_step_on_the_null_runtime():
    from pgstudio.analysis.buildable.gemm_shapes import gemm_tiles
    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.explore.reshape import with_gemm_tiles
    from pgstudio.runtime.backend import NULL
    d = examples.merge_gemm()
    tiles = gemm_tiles(4096, 4096, 4096, "float16", 132)[:3]
    work = NULL.gemm_workload(d, emit_gemm(d), 4096, 4096, 4096)
    tuned, records = tuning.tune_gemm("merge_gemm", lambda t: with_gemm_tiles(d, t), tiles, work, rounds=2,
                                      backend=NULL)
    assert [r["tiles"] for r in records] == [t.label for t in tiles] and tuned.settings == tiles[0].label
    assert all(r["status"] == NOT_RUN and math.isnan(r["median_ms"]) and math.isnan(r["error"]) for r in records)


def test_the_tuned_benchmark_on_the_null_runtime(tmp_path, monkeypatch):
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path))
    t = pgstudio.benchmark(examples.merge_copy(), rounds=2, progress=False, executor="null")
    assert not t.measured and t.note.startswith("tuned: ") and NULL_RUNTIME in t.note
    assert t.rows[0].name == "merge_copy" and "device copy" in [r.name for r in t.rows]
    assert all(math.isnan(r.median_ms) for r in t.rows) and not (tmp_path / "tuning").exists()
    plain = pgstudio.benchmark(examples.merge_copy(), rounds=2, progress=False, executor="null", tune=False)
    assert plain.note == "" and "merge_copy as designed" not in [r.name for r in plain.rows]
    g = pgstudio.benchmark(examples.merge_gemm(), rounds=2, progress=False, executor="null")
    assert g.unit == "TFLOP/s" and "the model's first choice" in g.note and not g.measured


def test_a_notebook_benchmark_cell_without_a_gpu_compiles_and_says_so(monkeypatch):
    """``timed_or_compiled`` on a machine without a GPU: no table, both targets compiled (or why
    not, in a line), then what a GPU run recorded; nothing raised."""
    from pgstudio.explore import bench
    from pgstudio.runtime import _cupy

    monkeypatch.setattr(_cupy, "gpu_available", lambda: False)
    lines: list[str] = []
    bench.timed_or_compiled(examples.merge_copy(), out=lines.append)
    assert lines[0] == "no GPU here: merge_copy is compiled, not timed"
    assert [ln.split(":")[0].strip() for ln in lines[1:3]] == ["sm_90a", "sm_100a"]
    assert all("B cubin" in ln or "not compiled (" in ln for ln in lines[1:3]) and len(lines) == 4


def test_the_tuner_offers_a_residual_design_its_slices(monkeypatch):
    """With a residual beside the accumulator the tuner's list also holds the twins that stage it
    in column slices (``gemm_shapes.residual_turns``); a design without one does not get them."""
    seen = {}

    def fake(family, build, tiles, data, **kw):
        seen[family] = [t.label for t in tiles]
        return tuning.Tuned(build(tiles[0]), tiles[0].label, "fake"), []
    monkeypatch.setattr(tuning, "tune_gemm", fake)
    tuning.tune_gemm_design(examples.merge_gemm_resadd(8192, 8192, 8192, bn=256, bk=32, compact=True), executor="null")
    tuning.tune_gemm_design(examples.merge_gemm(8192, 8192, 8192), executor="null")
    assert any("R in 4 turns x 2" in x for x in seen["merge_gemm_resadd"])
    assert not any("turns" in x for x in seen["merge_gemm"])

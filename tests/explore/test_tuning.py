"""Default tuning (explore.tuning): the per-device cache of choices, the GEMM tile candidates a
search measures, when a benchmark tunes (``explore.bench.choose_tuning``), and (GPU)
``pgstudio.benchmark(design)`` with no options searching once, then reading the cache, and saying
which settings ran."""

from __future__ import annotations

import json

import pytest

from pgstudio import examples
from pgstudio.analysis.buildable.gemm_shapes import SHAPES_16BIT, gemm_tiles
from pgstudio.explore import tuning


def test_a_choice_is_kept_per_device_and_key(tmp_path, monkeypatch):
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path))
    assert tuning.cached("GPU_A-132sm-cc90", "stream/x") is None
    tuning.remember("GPU_A-132sm-cc90", "stream/x", {"rate": 1.0})
    tuning.remember("GPU_A-132sm-cc90", "stream/y", {"rate": 2.0})
    tuning.remember("GPU_B-148sm-cc100", "stream/x", {"rate": 3.0})
    assert tuning.cached("GPU_A-132sm-cc90", "stream/x") == {"rate": 1.0}
    assert tuning.cached("GPU_A-132sm-cc90", "stream/y") == {"rate": 2.0}
    assert tuning.cached("GPU_B-148sm-cc100", "stream/x") == {"rate": 3.0}
    assert json.loads(tuning.cache_file("GPU_A-132sm-cc90").read_text())["stream/x"] == {"rate": 1.0}


def test_a_damaged_cache_file_is_searched_again_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path))
    path = tuning.cache_file("GPU_A")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert tuning.cached("GPU_A", "k") is None
    tuning.remember("GPU_A", "k", {"rate": 1.0})  # replaces the damaged file
    assert tuning.cached("GPU_A", "k") == {"rate": 1.0}


@pytest.mark.parametrize("m,n,k", [(128, 8192, 8192), (512, 8192, 8192), (8192, 8192, 8192), (4168, 3000, 1000)])
def test_gemm_candidates_include_the_plain_default_and_split_k_for_few_tiles(m, n, k):
    tiles = gemm_tiles(m, n, k, "float16", sms=132)
    bm, bn, bk, stages, _ = SHAPES_16BIT[0]
    assert any((t.bm, t.bn, t.bk, t.stages, t.split_k) == (bm, bn, bk, stages, 1) for t in tiles)
    units = max(-(-m // t.bm) * -(-n // t.bn) * t.split_k for t in tiles)
    if -(-m // bm) * -(-n // bn) * 2 <= 132:  # under half a wave of output tiles: some candidate splits K
        assert any(t.split_k > 1 for t in tiles) and units <= 132
    else:  # a split would only add waves
        assert all(t.split_k == 1 for t in tiles)


@pytest.mark.gpu
def test_benchmark_with_no_options_searches_once_then_reads_the_cache(tmp_path, monkeypatch):
    from pgstudio import benchmark
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path))
    first = benchmark(examples.merge_copy(), n=1 << 22, rounds=3, progress=False, executor="inline")
    assert first.note.startswith("tuned: ") and "search of" in first.note
    assert "tuned:" in str(first).splitlines()[0]
    second = benchmark(examples.merge_copy(), n=1 << 22, rounds=3, progress=False, executor="inline")
    assert "cached for" in second.note
    assert first.note.split(" (")[0] == second.note.split(" (")[0]  # the same settings
    assert all(r.median_ms > 0 for r in second.rows)


@pytest.mark.gpu
def test_benchmark_of_a_gemm_design_runs_the_tuned_choice_and_says_which(tmp_path, monkeypatch):
    from pgstudio.runtime._cupy import require_gpu
    require_gpu()
    from pgstudio.examples import merge_gemm
    from pgstudio import benchmark
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path))
    given = merge_gemm(512, 1024, 2048, bn=128, num_stages=2)  # a choice the tuner would not make
    t = benchmark(given, rounds=3, progress=False, executor="inline")
    assert t.note.startswith("tuned: ") and "search of" in t.note and t.design == "merge_gemm"
    names = [r.name for r in t.rows]
    assert names[0] == "merge_gemm" and "merge_gemm_as_designed" in names  # the design as given, beside it
    again = benchmark(given, rounds=3, progress=False, executor="inline")
    assert "cached for" in again.note and again.note.split(" (")[0] == t.note.split(" (")[0]
    plain = benchmark(given, rounds=3, twin=False, tune=False, progress=False, executor="inline")
    assert plain.note == "" and "merge_gemm_as_designed" not in [r.name for r in plain.rows]

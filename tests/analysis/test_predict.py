"""The kernel-time model: the physics it claims, the shipped H200 fit and its files."""

from __future__ import annotations

import json

import pytest

from pgstudio import examples
from pgstudio.analysis import H200_DATASHEET, predict, prediction
from pgstudio.analysis.calibrate import calibrate, fit_machine, read_recording
from pgstudio.analysis.fitted import (H200_FILE, H200_REPO_FIGURES, calibration_file, default_machine, load_machine,
                                      recordings_of, save_machine, shipped_h200)
from pgstudio.analysis.kernel_fit import Recording, Run, errors, rank_correlation
from pgstudio.analysis.machine import FITTABLE
from pgstudio.analysis.predict import predict_workload, soft_max
from pgstudio.analysis.workload import Workload, workload


def _gemm_ms(**kw):
    return predict(examples.merge_gemm(**kw))


def test_every_canonical_design_has_a_positive_kernel_time():
    for name in examples.CANONICAL:
        p = prediction(examples.example(name))
        assert p.ms > 0 and p.units >= p.blocks >= 1 and p.bound in ("compute", "issue", "sm sync", "latency",
                                                                     "bandwidth")


def test_stages_hide_load_latency_as_on_the_gpu():
    # the H200 sweep of merge_gemm 4096^3 at 128x128x64: 2 stages 2.5x slower than 4, 3 stages 1.35x slower than 5
    t = {s: _gemm_ms(num_stages=s, bn=128) for s in (2, 3, 4, 5, 6)}
    assert 2.1 < t[2] / t[4] < 2.9
    assert 1.15 < t[3] / t[5] < 1.55
    assert t[2] > t[3] > t[4] >= t[5] >= t[6]
    assert prediction(examples.merge_gemm(num_stages=2, bn=128)).bound == "latency"


def test_more_stages_never_slow_a_stream_and_one_stage_is_latency_bound():
    t = [predict(examples.merge_copy(num_stages=s, tile_bytes=1024)) for s in (1, 2, 4, 8)]
    assert t[0] > t[1] > t[2] >= t[3]
    assert prediction(examples.merge_copy(num_stages=1, tile_bytes=1024)).bound == "latency"


def test_small_stages_queue_at_the_sm_whatever_their_count():
    """Measured on the H200 (benchmarks/predict.py --quick): at 256-B stages and 4-5 blocks per SM
    merge_copy runs 164-182 us at 2, 4 or 8 stages (not the 4x apart that latency alone gives),
    and sharing a barrier (Merge, FusedMerge) is faster than the ungrouped twin by the barrier
    actions it saves (92, 85, 77 ns per tile per SM)."""
    from pgstudio.explore.reshape import with_grouping

    def p(grouping, stages, tile_bytes=256):
        d = with_grouping(examples.merge_copy(num_stages=stages, tile_bytes=tile_bytes), grouping)
        return prediction(d, num_elements=1 << 24, blocks_per_sm=4)
    for g in ("ungrouped", "designed", "FusedMerge"):
        assert p(g, 8).bound == "sm sync" and p(g, 4).bound == "sm sync"
        assert p(g, 4).ms == pytest.approx(p(g, 8).ms, rel=0.01)  # more stages do not help
    assert p("ungrouped", 8).ms > p("designed", 8).ms > p("FusedMerge", 8).ms
    assert p("designed", 8, 8192).bound == "bandwidth"  # large stages: at memory speed, the unit idles
    w = workload(with_grouping(examples.merge_copy(num_stages=8, tile_bytes=256), "ungrouped"))
    # two bulk copies; each loader waits its empty barrier and expects its bytes, the store task
    # waits both full barriers and releases both empty ones; one thread store
    assert (w.block_copies, w.block_acts, w.block_thread_steps) == (2, 8, 1)
    assert workload(examples.fork_copy()).block_thread_steps == 2  # two consumers store


def test_a_unit_past_the_last_full_wave_costs_a_round():
    full = prediction(examples.merge_gemm(128 * 11, 256 * 12, 4096))  # 132 tiles: one round
    tail = prediction(examples.merge_gemm(128 * 11, 256 * 12 + 8, 4096))  # 143 tiles: a second, partial round
    assert (full.rounds, tail.rounds) == (1, 2)
    assert 1.7 < tail.ms / full.ms < 2.1


def test_streams_are_bound_by_hbm_and_follow_its_bandwidth():
    d = examples.merge_copy(num_elements=1 << 26)
    base = prediction(d, H200_DATASHEET)
    faster = prediction(d, H200_DATASHEET.replace(hbm_bytes_per_ns=2 * H200_DATASHEET.hbm_bytes_per_ns))
    assert base.bound == "bandwidth" and 1.6 < base.ms / faster.ms < 2.05
    moved = 3 * (1 << 26) * 4  # two loads and one store of fp32
    assert base.ms * 1e6 >= moved / H200_DATASHEET.hbm_sustained


def test_multicast_halves_the_shared_operand_where_l2_bandwidth_binds():
    slow_l2 = H200_DATASHEET.replace(l2_bytes_per_ns=2000.0)
    plain = predict(examples.merge_gemm(128, 8192, 8192, num_stages=8, bn=64), slow_l2)
    paired = predict(examples.merge_gemm(128, 8192, 8192, num_stages=8, bn=64, cluster=(1, 2)), slow_l2)
    assert paired < 0.9 * plain


def test_the_tensor_cores_bound_a_large_gemm():
    p = prediction(examples.merge_gemm(8192, 8192, 8192))
    flops = 2 * 8192 ** 3
    assert p.bound == "compute" and p.ms * 1e6 > flops / (989_400.0)


def test_the_workload_reads_the_design():
    w = workload(examples.merge_gemm())
    assert (w.kind, w.m, w.bm, w.bn, w.bk, w.stages) == ("gemm", 4096, 128, 256, 64, 3)
    assert w.load_bytes == (128 + 256) * 64 * 2 and w.consumer_flops == 2 * 128 * 256 * 64
    fork = workload(examples.fork_copy(tile_bytes=4096))
    assert fork.kind == "stream" and fork.load_bytes == 4096 and fork.store_bytes == 2 * 4096
    assert Workload.from_dict(w.as_dict()) == w
    with pytest.raises(ValueError, match="not known"):
        Workload.from_dict({**w.as_dict(), "colour": 1})


def test_soft_max_is_a_rounded_maximum():
    assert soft_max([3.0, 0.0], 4) == 3.0
    assert 3.0 < soft_max([3.0, 3.0], 4) < 3.6
    assert soft_max([1.0, 2.0], 200) == pytest.approx(2.0, rel=1e-2)


def test_rank_correlation():
    assert rank_correlation([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert rank_correlation([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert rank_correlation([1, 1, 2], [5, 5, 9]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="equally many"):
        rank_correlation([1], [1, 2])


def test_machine_constants_are_named_and_unknown_ones_refused():
    assert set(FITTABLE) <= set(H200_DATASHEET.constants())
    assert H200_DATASHEET.replace(issue_ns=5).issue_ns == 5 and H200_DATASHEET.issue_ns == 20
    with pytest.raises(ValueError, match="unknown machine constant"):
        H200_DATASHEET.replace(warp_drive=1)


def _shipped_runs():
    recs = [read_recording(p) for p in recordings_of(H200_FILE)]
    assert recs and all(r.device == "NVIDIA H200" for r in recs)
    return [r for x in recs for r in x.runs], [q for x in recs for q in x.ratios]


def test_the_shipped_h200_fit_is_what_its_recordings_give():
    assert H200_REPO_FIGURES in recordings_of(H200_FILE)
    runs, ratios = _shipped_runs()
    assert len(runs) >= 10 and ratios
    fit = fit_machine(runs, ratios, H200_DATASHEET)
    shipped = shipped_h200()
    for k in FITTABLE:
        assert getattr(shipped, k) == pytest.approx(getattr(fit.machine, k), rel=2e-3), k
    assert "H200" in shipped.label() and "fitted on" in shipped.label()
    assert default_machine() == shipped


def test_the_shipped_fit_predicts_the_recorded_h200_times():
    runs, _ = _shipped_runs()
    errs = sorted(abs(e) for e in errors(shipped_h200(), runs))
    assert errs[len(errs) // 2] < 0.10 and errs[-1] < 0.30
    before = sorted(abs(e) for e in errors(H200_DATASHEET, runs))
    assert errs[len(errs) // 2] <= before[len(before) // 2]


def test_calibrate_keeps_a_fit_per_device_beside_the_cache(tmp_path):
    w = workload(examples.merge_copy())
    truth = H200_DATASHEET.replace(hbm_efficiency=0.6)
    runs = tuple(Run("merge_copy", f"n={n}", w.replace(num_elements=n), predict_workload(w.replace(num_elements=n),
                                                                                       truth).ms)
                 for n in (1 << 22, 1 << 24, 1 << 26))
    path = Recording("Test GPU", "Test_GPU-8sm-cc90", "2026-12-02", "test", runs).write(tmp_path / "rec.json")
    fit = calibrate(path, store=tmp_path / "calibration")
    assert fit.after < fit.before / 10 and fit.median_error < 0.02  # the slower HBM is found
    got = default_machine("Test_GPU-8sm-cc90", tmp_path / "calibration")
    assert got.name == "Test GPU" and "3 measured kernels" in got.fitted_on
    assert default_machine("Other-1sm-cc90", tmp_path / "calibration") == shipped_h200()


def test_damaged_files_say_what_is_wrong(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable"):
        read_recording(bad)
    with pytest.raises(ValueError, match="not a readable"):
        load_machine(bad)
    bad.write_text(json.dumps({"schema": "pgstudio.fitted-machine", "constants": {"issue_ns": -1}}))
    with pytest.raises(ValueError, match="positive"):
        load_machine(bad)
    kind = "Broken-1sm-cc90"
    calibration_file(tmp_path, kind).write_text("{}")
    assert default_machine(kind, tmp_path) == shipped_h200()  # a damaged user fit never breaks a prediction
    save_machine(calibration_file(tmp_path, kind), H200_DATASHEET.replace(fitted_on="x"), kind, {})
    assert default_machine(kind, tmp_path).fitted_on == "x"


def test_the_shipped_recording_is_what_the_benchmark_writes_from_the_repository_figures():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "predict.py"
    spec = importlib.util.spec_from_file_location("bench_predict", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made, shipped = module.repo_figures(), read_recording(H200_REPO_FIGURES)
    assert [(r.label, r.ms, r.workload) for r in made.runs] == [(r.label, r.ms, r.workload) for r in shipped.runs]
    assert [(q.ratio, q.slow, q.fast) for q in made.ratios] == [(q.ratio, q.slow, q.fast) for q in shipped.ratios]


def _bench_predict():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "predict.py"
    spec = importlib.util.spec_from_file_location("bench_predict", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_sweeps_read_their_designs_as_the_model_does_now():
    """Every sweep run of the shipped recordings carries the workload its variant's design gives
    today (``predict.py --refresh`` keeps them so after a change of the rule)."""
    module = _bench_predict()
    for path in (H200_REPO_FIGURES.parent / "h200_sweep.json", H200_REPO_FIGURES.parent / "h200_stream_sweep.json"):
        rec = read_recording(path)
        assert [r.workload for r in module.refreshed(rec).runs] == [r.workload for r in rec.runs], path


def test_refresh_derives_a_stale_workload_again_and_keeps_runs_it_cannot_read():
    import dataclasses
    module = _bench_predict()
    rec = read_recording(H200_REPO_FIGURES.parent / "h200_sweep.json")
    sweep_run, figure_run = rec.runs[0], read_recording(H200_REPO_FIGURES).runs[0]
    stale = dataclasses.replace(sweep_run, workload=sweep_run.workload.replace(store_bytes=1))
    out = module.refreshed(Recording(rec.device, rec.device_kind, rec.date, rec.command, (stale, figure_run)))
    assert out.runs[0].workload == sweep_run.workload and out.runs[0].ms == sweep_run.ms
    assert out.runs[1] == figure_run  # "4096^3 128x256x64 s3, notebooks/..." is no sweep label: kept


def test_a_design_with_nothing_to_run_is_refused_in_words():
    from pgstudio import Design
    from pgstudio.errors import DesignError
    with pytest.raises(DesignError, match="no tasks: there is no kernel to predict"):
        predict(Design("empty"))
    with pytest.raises(DesignError, match="has no resource 'smem_b'"):
        predict(examples.merge_copy().without_resource("smem_b"))


def test_a_prediction_beside_a_measurement():
    p = prediction(examples.merge_gemm())
    assert p.beside(p.ms / 1.1) == f"predicted {p.ms:.4f} ms, measured {p.ms / 1.1:.4f} ms (model +10.0%)"
    assert p.beside(float("nan")).endswith("not measured")

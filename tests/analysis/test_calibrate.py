"""Calibration on synthetic data: "measured" timelines simulated with known constants; the fit
must find those constants again, and the report must show the period gap closing."""

import pytest

from pgstudio import examples
from pgstudio.analysis.calibrate import (FITTED, H200_FITTED, H200_FITTED_VALUES, H200_OBSERVED, calibration_report,
                                         compare, fit, fit_stats, mismatch, timeline_stats)
from pgstudio.analysis.cost import H200, CostModel
from pgstudio.analysis.simulate import simulate
from pgstudio.analysis.timeline import Timeline

TRUTH = H200.replace(dram_bytes_per_ns=20.0, bulk_latency_ns=1100.0, issue_ns=35.0, barrier_ns=18.0)


def measured(design, cost=TRUTH, iterations=40):
    tl = simulate(design, iterations, cost=cost)
    return Timeline(tl.design, tl.events, tl.tasks, "measured", tl.meta)


@pytest.fixture(scope="module")
def runs():
    return [(d, measured(d)) for d in (examples.merge_copy(), examples.fork_copy(), examples.fused_merge_copy())]


@pytest.fixture(scope="module")
def fitted(runs):
    return fit(runs)


def test_stats_of_a_timeline(runs):
    stats = timeline_stats(runs[0][1])
    assert stats["period"] == pytest.approx(runs[0][1].period())
    assert stats["load/load_a"] == pytest.approx(TRUTH.issue_ns)  # issuing a bulk copy
    assert stats["release/store"] == pytest.approx(TRUTH.barrier_ns)
    assert stats["fill"] > TRUTH.bulk_latency_ns  # the first data needs at least one copy latency
    # a copy lane's statistic is the load latency under load: its queue, transfer and latency
    tile = 2048 * 4  # merge_copy's fp32 tile
    assert set(k for k in stats if k.endswith(".tma")) == {"copy/load_a.tma", "copy/load_b.tma"}
    assert stats["copy/load_a.tma"] >= TRUTH.bulk_latency_ns + tile / TRUTH.dram_bytes_per_ns - 1e-6
    assert stats["copy/load_a.tma"] < 3 * (TRUTH.bulk_latency_ns + tile / TRUTH.dram_bytes_per_ns)


def test_a_longer_copy_latency_shows_in_the_copy_statistic_and_the_fit_follows_it():
    d = examples.merge_copy()
    slow = TRUTH.replace(bulk_latency_ns=2 * TRUTH.bulk_latency_ns)
    base, late = timeline_stats(measured(d)), timeline_stats(measured(d, slow))
    assert late["copy/load_a.tma"] - base["copy/load_a.tma"] == pytest.approx(TRUTH.bulk_latency_ns, rel=0.1)
    got = fit_stats([(d, late)], TRUTH, params=["bulk_latency_ns"]).cost.bulk_latency_ns
    assert got == pytest.approx(slow.bulk_latency_ns, rel=0.05)


def test_mismatch_is_zero_only_for_matching_statistics(runs):
    stats = timeline_stats(runs[0][1])
    assert mismatch(stats, stats) == 0
    assert mismatch({**stats, "period": stats["period"] * 2}, stats) > 0


def test_fit_recovers_the_constants(fitted):
    result = fitted
    assert result.after < result.before / 100
    got = result.cost
    for name in ("dram_bytes_per_ns", "bulk_latency_ns", "issue_ns", "barrier_ns"):
        assert getattr(got, name) == pytest.approx(getattr(TRUTH, name), rel=0.05), name
    assert set(result.values()) == set(FITTED)
    assert "dram_bytes_per_ns" in result.changes()


def test_the_report_shows_the_period_gap_before_and_after(runs, fitted):
    report = calibration_report(runs, fitted=fitted.cost)
    assert [r.design for r in report.rows] == ["merge_copy", "fork_copy", "fused_merge_copy"]
    for row in report.rows:
        assert abs(row.difference) > 0.2  # the datasheet model is far from these constants
        assert row.fitted == pytest.approx(row.measured, rel=0.03)
    text = report.table()
    lines = text.splitlines()
    assert len(lines) == 6 and lines[3].startswith("merge_copy") and lines[3].count("%") == 2


def test_compare_one_design():
    d = examples.merge_copy()
    c = compare(d, measured(d), H200)
    assert c.design == "merge_copy" and c.simulated == pytest.approx(simulate(d, 24).period())
    assert c.measured == pytest.approx(measured(d).period()) and c.fitted is None


def test_fit_refuses_nonsense():
    with pytest.raises(ValueError, match="at least one"):
        fit([])
    with pytest.raises(ValueError, match="clock_ghz"):
        fit([(examples.merge_copy(), measured(examples.merge_copy()))], params=["clock_ghz"])


def test_the_kept_h200_constants_are_what_the_kept_measurements_give():
    assert isinstance(H200_FITTED, CostModel) and set(H200_FITTED_VALUES) == set(FITTED)
    observed = [(examples.example(name), stats) for name, stats in H200_OBSERVED.items()]
    assert fit_stats(observed).values() == H200_FITTED_VALUES
    for k, v in H200_FITTED_VALUES.items():
        assert getattr(H200_FITTED, k) == v


def test_the_fitted_h200_model_narrows_the_worst_period_gap():
    def worst(cost):
        return max(abs(simulate(examples.example(n), 24, cost=cost).period() / s["period"] - 1)
                   for n, s in H200_OBSERVED.items())
    assert worst(H200_FITTED) < worst(H200) - 0.05

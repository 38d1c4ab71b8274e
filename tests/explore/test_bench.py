"""The tuned benchmark (explore.bench): the explorer chooses the tuning and hands it to the runtime,
which times what it is given.  Which designs are tuned, and for how many elements, needs no GPU:
the tuners are replaced by recorders here."""

from __future__ import annotations

import inspect

import pytest

from pgstudio import examples
from pgstudio.explore import bench
from pgstudio.runtime import bench as runtime_bench
from pgstudio.runtime.tuned import Tuned


@pytest.fixture
def tuners(monkeypatch):
    """Replace both tuners by recorders of what they were asked."""
    asked: list[tuple] = []

    def stream(design, n, executor=None):  # executor: where the search runs (None: this process)
        asked.append(("stream", design.name, n))
        return Tuned(design, "6 stages x 4096 B", "test")

    def gemm(design, seed=None, executor=None):
        asked.append(("gemm", design.name, seed))
        return Tuned(design, "128x256x64", "test")

    monkeypatch.setattr(bench, "tune_stream", stream)
    monkeypatch.setattr(bench, "tune_gemm_design", gemm)
    return asked


def test_a_streaming_design_with_no_options_is_tuned_for_its_own_element_count(tuners):
    design = examples.merge_copy(num_elements=1 << 20)
    tuned = bench.choose_tuning(design)
    assert tuned is not None and tuned.describe() == "tuned: 6 stages x 4096 B (test)"
    assert tuners == [("stream", "merge_copy", 1 << 20)]
    bench.choose_tuning(design, n=4096)
    assert tuners[-1] == ("stream", "merge_copy", 4096)


@pytest.mark.parametrize("fixed", [dict(tuning={"store": "cs"}), dict(blocks_per_sm=2), dict(validate=False),
                                   dict(tune=False)])
def test_settings_the_caller_fixed_are_run_as_given(tuners, fixed):
    assert bench.choose_tuning(examples.merge_copy(), **fixed) is None
    assert tuners == []


def test_tune_true_tunes_even_with_fixed_code_options(tuners):
    assert bench.choose_tuning(examples.merge_copy(), tuning={"store": "cs"}, tune=True) is not None
    assert [a[0] for a in tuners] == ["stream"]


def test_a_gemm_design_is_tuned_for_its_problem_unless_run_unvalidated(tuners):
    design = examples.merge_gemm(256, 256, 256)
    assert bench.choose_tuning(design, seed=7) is not None
    assert tuners == [("gemm", "merge_gemm", 7)]
    assert bench.choose_tuning(design, validate=False) is None
    assert bench.choose_tuning(design, tune=False) is None
    assert len(tuners) == 1


def test_the_runtime_benchmark_takes_a_tuning_and_never_chooses_one():
    params = inspect.signature(runtime_bench.benchmark).parameters
    assert "tuned" in params and "tune" not in params
    tuned_params = inspect.signature(bench.tuned_benchmark).parameters
    assert set(params) - {"tuned"} <= set(tuned_params) and "tune" in tuned_params  # every option passes through

"""``runtime.isolated.on_gpu``: a design's GPU function in a worker process.  The worker here is
a GPU worker bound to a device id without touching CUDA, so this runs on any machine; the GPU
tests (tests/runtime/test_gpu_executor.py) do the same with real kernels."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import executor_jobs as jobs  # noqa: E402

from pgstudio import examples, mistakes  # noqa: E402
from pgstudio.errors import GpuUnavailable, KernelFault, KernelHangError  # noqa: E402
from pgstudio.runtime.executor.embedded import EmbeddedExecutor  # noqa: E402
from pgstudio.runtime.isolated import on_gpu  # noqa: E402


@pytest.fixture(scope="module")
def ex():
    e = EmbeddedExecutor(cpu_workers=1, gpus=["0"], timeout_s=60)
    yield e
    e.close()


def test_the_function_runs_in_the_worker_and_its_progress_comes_here(ex):
    seen = []
    out = on_gpu(jobs.describe, examples.merge_copy(), {"steps": 4}, executor=ex, progress=False,
                 on_progress=lambda done, total, text: seen.append((done, total, text)))
    assert out["design"] == "merge_copy" and out["executor"] == "inline" and out["pid"] != os.getpid()
    assert [s[:2] for s in seen][-1] == (4, 4) and "round 3" in seen[-1][2] and "launch/s" in seen[-1][2]


def test_a_worker_killed_by_its_kernel_is_a_kernel_fault_with_the_likely_cause(ex):
    design = mistakes.undersized_consumer_group()
    with pytest.raises(KernelFault) as info:
        on_gpu(jobs.crash, design, executor=ex, what="benchmark", progress=False)
    text = str(info.value)
    assert "benchmark of design 'undersized_consumer_group' failed on GPU 0 worker" in text
    assert "the worker was replaced and this process is unaffected" in text
    assert info.value.cause.startswith("design.validate() reports [")
    # the next run in this process starts a fresh worker and works
    assert on_gpu(jobs.describe, examples.merge_copy(), executor=ex, progress=False)["design"] == "merge_copy"


def test_a_valid_design_that_crashes_points_at_the_generator(ex):
    with pytest.raises(KernelFault, match="code-generator bug"):
        on_gpu(jobs.crash, examples.merge_copy(), executor=ex, progress=False)


def test_pgstudio_errors_keep_their_class_and_record(ex):
    with pytest.raises(KernelHangError, match="hang_report of design 'merge_copy': kernel of merge_copy hung") as info:
        on_gpu(jobs.hang_report, examples.merge_copy(), executor=ex, progress=False)
    assert info.value.record == {"task": "store", "stage": 2}


def test_without_a_gpu_it_says_so_before_starting_anything():
    none = EmbeddedExecutor(cpu_workers=1, gpus=[])
    with pytest.raises(GpuUnavailable):
        on_gpu(jobs.describe, examples.merge_copy(), executor=none, progress=False)
    assert none.gpu_worker_pids() == []


def test_run_goes_through_the_gpu_worker_like_benchmark_and_trace(monkeypatch):
    """``run`` is a GPU entry point a notebook calls: by default it runs in a worker (a kernel that
    traps cannot take the notebook down); ``executor="inline"`` runs it here, for debugging."""
    import pgstudio.runtime.isolated as isolated
    from pgstudio.runtime import run
    calls = []

    def fake_on_gpu(fn, design, kwargs=None, **kw):
        calls.append((fn, design.name, kwargs, kw.get("what")))
        return "ran in a worker"

    monkeypatch.setattr(isolated, "on_gpu", fake_on_gpu)
    assert run(examples.merge_copy(), n=4096, timing=False) == "ran in a worker"
    fn, name, kwargs, what = calls[0]
    assert fn is run and name == "merge_copy" and what == "run"
    assert kwargs["n"] == 4096 and kwargs["timing"] is False and "executor" not in kwargs
    from pgstudio.runtime._cupy import gpu_available
    if not gpu_available():  # inline runs here: without a GPU, one clear error (the GPU tests run it for real)
        with pytest.raises(GpuUnavailable):
            run(examples.merge_copy(), n=4096, timing=False, executor="inline")
    assert len(calls) == 1

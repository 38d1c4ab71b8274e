"""The null runtime on a CPU: ``run`` and ``benchmark`` of both kernel kinds take every step of a
GPU run through the one launch contract, go through the executor's job plumbing, launch nothing,
and every result says so -- no check is ok, no time is a number, every table reads "no GPU: null
runtime".  On a machine with a GPU these run the same way: the null runtime never touches it."""

import math

import pytest

from pgstudio import examples
from pgstudio.errors import DesignError, GpuUnavailable, PgStudioError
from pgstudio.runtime import benchmark, run
from pgstudio.runtime.backend import CUDA, NULL, backend_for
from pgstudio.runtime.executor import get_executor
from pgstudio.runtime.verify import NOT_RUN, NULL_RUNTIME, Check


def test_a_null_run_takes_every_step_and_measures_nothing():
    from pgstudio.codegen import emit
    from pgstudio.runtime.stream_run import persistent_grid
    d = examples.merge_copy()
    src = emit(d)
    res = run(d, n=100_000, repeats=7, executor="null")
    assert not res.measured and not res.ok and res.shape == (100_000,) and res.unit == "GB/s"
    assert [c.tensor for c in res.checks] == ["gmem_d"] and not any(c.ran or c.ok for c in res.checks)
    assert len(res.times_ms) == 7 and all(math.isnan(t) for t in res.times_ms)
    assert math.isnan(res.median_ms) and math.isnan(res.gbps) and math.isnan(res.tflops)
    assert res.amount == 100_000 * 4 * 3  # two inputs read and one output written, fp32
    assert res.grid == persistent_grid(100_000, src.info["tile_elems"], 132, res.blocks_per_sm)  # the model's H200
    rows = dict(res.rows())
    assert rows["verified"] == NOT_RUN and rows["median time"].startswith("not measured")
    assert rows["launch"].startswith(f"not launched ({NULL_RUNTIME})") and rows["compile"].startswith("not loaded")
    from pgstudio.render.display import bundle
    assert NULL_RUNTIME in bundle(res)["text/html"]
    untimed = run(d, n=10, timing=False, executor="null")
    assert untimed.times_ms == () and dict(untimed.rows())["median time"] == "not timed"


def test_a_null_run_of_a_gemm_design():
    d = examples.merge_gemm()
    p = d.problem_dict
    res = run(d, executor="null", repeats=3)
    assert res.shape == (p["M"], p["N"], p["K"]) and res.unit == "TFLOP/s" and res.amount == 2.0 * p["M"] * p["N"] * p["K"]
    assert not res.ok and res.grid == 132 and res.blocks_per_sm == 1 and len(res.times_ms) == 3
    assert "throughput" in dict(res.rows()) and "not measured" in str(res)
    with pytest.raises(DesignError) as info:
        run(d, n=1000, executor="null")
    assert info.value.code == "run.gemm"


def test_the_null_runtime_refuses_what_a_gpu_run_refuses():
    from pgstudio.runtime.run import run_gemm
    with pytest.raises(PgStudioError, match="at least 1"):
        run(examples.merge_copy(), n=-5, executor="null")
    with pytest.raises(DesignError) as info:  # K = 68 half-precision elements: a TMA row stride of 136 bytes
        run_gemm(examples.merge_gemm(), 256, 256, 68, backend=NULL)
    assert info.value.code == "tma.stride"


def test_an_error_in_a_null_job_comes_back_as_the_same_error():
    """The executor's plumbing: the job's error travels back as data and is raised as pgstudio's own."""
    from stream_designs import wrong_count
    d = wrong_count("empty")  # an arrive count one too high: the validator refuses to generate it
    with pytest.raises(DesignError) as info:
        run(d, executor="null")
    assert info.value.code == "config.arrive_count" and f"run of design {d.name!r}" in str(info.value)


def test_the_null_benchmark_has_the_rows_of_a_gpu_one_and_no_number():
    t = benchmark(examples.merge_copy(), n=1 << 22, rounds=4, progress=False, executor="null")
    assert [r.name for r in t.rows] == ["merge_copy", "merge_copy_ungrouped", "cupy elementwise", "cp.add",
                                        "device copy"]
    assert not t.measured and all(math.isnan(r.median_ms) and r.runs == 4 for r in t.rows)
    assert t.peers == ("cupy elementwise", "cp.add") and t.best_peer is None and math.isnan(t.vs_best_library())
    text = t.table()
    assert f"nothing was verified or timed ({NULL_RUNTIME})" in text.splitlines()[0] and "not measured" in text
    assert all(ln.split()[-4:] == ["-", "-", "-", "-"] for ln in text.splitlines()[3:8])
    fork = benchmark(examples.fork_copy(dtype="bfloat16"), n=(1 << 20) + 3, rounds=2, progress=False, executor="null")
    assert [r.name for r in fork.rows] == ["fork_copy", "fork_copy_ungrouped", "cupy elementwise", "device copy"]
    from pgstudio.render.display import bundle
    html = bundle(t)["text/html"]
    assert NULL_RUNTIME in html and html.count("<tr>") == 6


def test_the_null_gemm_benchmark():
    from pgstudio.runtime.peers import gemm_peer_labels
    seen = []
    t = benchmark(examples.merge_gemm(), rounds=3, progress=False, executor="null",
                  on_progress=lambda done, total, text: seen.append((done, total)))
    assert [r.name for r in t.rows] == ["merge_gemm", "merge_gemm_ungrouped", *gemm_peer_labels()]
    assert t.unit == "TFLOP/s" and t.problem == "4096x4096x4096 float16" and not t.measured
    assert "TFLOP/s" in t.table() and t.peers == tuple(gemm_peer_labels())
    assert seen[-1] == (3 * len(t.rows), 3 * len(t.rows))  # every launch of every round, relayed from the job


def test_the_null_executor_is_the_plumbing_of_a_gpu_one():
    ex = get_executor("null")
    assert ex is get_executor("null") and ex.name == "null" and ex.runtime == "null" and ex.gpu_count() == 1
    assert not ex.in_process and ex.job_executor().in_process and "no GPU" in ex.describe()
    assert backend_for("null") is NULL and backend_for(ex.job_executor()) is NULL and backend_for("inline") is CUDA
    from pgstudio.runtime.executor import Job
    with ex.session() as s:
        s.submit(Job("one", len, ("abc",), gpu=True))
        (out,) = list(s)
    assert out.value == 3 and out.where.startswith("null runtime, inline")
    with pytest.raises(PgStudioError, match="null"):
        get_executor("nul")


def test_a_trace_needs_a_kernel_that_ran():
    from pgstudio.runtime.trace import trace
    with pytest.raises(GpuUnavailable, match="null runtime launches no kernel"):
        trace(examples.merge_copy(), executor="null")


def test_a_check_that_did_not_run_is_never_ok():
    c = Check.not_run("gmem_d", 10)
    assert not c.ok and not c.ran and str(c) == f"gmem_d: {NOT_RUN}"
    ran = Check("gmem_d", 10, 1e-7, 1e-7, 0, -1)
    wrong = Check("gmem_d", 10, 0.5, 2.0, 3, 4, 1.0, 3.0, measure="peak")
    assert ran.ok and "all elements within tolerance" in str(ran)
    assert not wrong.ok and "3 of 10 elements wrong; first at index 4" in str(wrong) and "max |ref|" in str(wrong)


def test_the_null_clock_runs_the_rounds_and_reads_nothing():
    from pgstudio.runtime.timing import NULL_CLOCK, batch_for, estimate_ms, time_interleaved
    calls = []
    variants = [(name, lambda name=name: calls.append(name)) for name in "abc"]
    times = time_interleaved(variants, 3, warmup=1, batch=2, clock=NULL_CLOCK)
    assert calls[:3] == ["a", "b", "c"]  # one warm-up each, then rounds rotating: abc, bca, cab, 2 launches each
    assert calls[3:] == ["a", "a", "b", "b", "c", "c", "b", "b", "c", "c", "a", "a", "c", "c", "a", "a", "b", "b"]
    assert {k: len(v) for k, v in times.items()} == {"a": 3, "b": 3, "c": 3}
    assert all(math.isnan(t) for v in times.values() for t in v)
    assert math.isnan(estimate_ms(lambda: None, clock=NULL_CLOCK)) and batch_for(float("nan")) == 1


def test_launch_shapes_without_a_gpu():
    from pgstudio.runtime.gemm_run import gemm_grid
    from pgstudio.runtime.stream_run import blocks_that_fit, persistent_grid
    assert persistent_grid(10**9, 2048, 132, 3) == 396 and persistent_grid(4097, 2048, 132, 3) == 3
    assert persistent_grid(10**9, 2048, 132, 3, fixed=1) == 1
    assert gemm_grid(4096, 4096, (128, 256, 64), None, 1, 132) == 132
    assert gemm_grid(200, 300, (128, 256, 64), None, 3, 132) == 2 * 2 * 3  # 4 tiles x 3 split-K parts
    assert gemm_grid(4096, 4096, (128, 128, 64), (2, 2), 1, 132) == 132 and gemm_grid(256, 256, (128, 128, 64), (2, 2), 1, 132) == 4
    assert blocks_that_fit(256, 32, 0, {}) == 8  # threads and registers allow 8
    assert blocks_that_fit(256, 128, 0, {}) == 2  # 128 registers a thread: 32 K per block
    assert blocks_that_fit(128, 32, 100_000, {"MaxSharedMemoryPerMultiprocessor": 233472}) == 2
    assert blocks_that_fit(1024, 255, 200_000, {}) == 1  # never fewer than one


def test_the_null_launcher_uses_the_model_machines_shape():
    from pgstudio.analysis.machine import Machine
    from pgstudio.codegen import emit
    from pgstudio.runtime.null import NullLauncher, NullWorkload
    d = examples.merge_copy()
    src = emit(d)
    la = NullLauncher(src, machine=Machine(sms=10))
    work = NullWorkload.stream(d, 10**8, "float32")
    assert la.grid(work) == 10 * la.blocks_per_sm and la.lk is None and la.registers == 0 and la.args(work) == ()
    assert NullLauncher(src, blocks_per_sm=2, grid=5).grid(work) == 5
    assert la.verify(work) == (Check.not_run("gmem_d", 10**8),) and math.isnan(la.time(work, 1, 2)[0])


def test_a_null_table_is_never_recorded_as_a_gpu_run(tmp_path):
    from pgstudio.runtime import recorded
    t = benchmark(examples.fork_copy(), rounds=1, progress=False, executor="null")
    with pytest.raises(PgStudioError, match="null runtime and measured nothing"):
        recorded.record("fork_copy", t, tmp_path, device="NVIDIA H200")
    assert not list(tmp_path.iterdir())

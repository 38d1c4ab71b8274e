"""Compile & Benchmark with the GPU boundary faked: progress, the no-GPU path, results and chart,
and a hang reported with the watchdog's record."""

from dataclasses import dataclass

import pytest

from pgstudio import KernelHangError, examples
from pgstudio.runtime import _cupy
from pgstudio.studio import Studio, _bench_pane


@dataclass
class FakeCubin:
    data: bytes
    seconds: float = 0.01


@dataclass
class Row:
    name: str
    what: str
    median_ms: float


@dataclass
class Table:
    rows: tuple

    def __str__(self) -> str:  # a type without a rich view shows as its text
        return "results table"


def fake_runtime(monkeypatch, *, gpu, bench=None):
    compiled = []

    def compile_cubin(src, arch):
        compiled.append(arch)
        return FakeCubin(b"x" * 1000)

    monkeypatch.setattr(_bench_pane, "compile_cubin", compile_cubin)
    monkeypatch.setattr(_cupy, "gpu_available", lambda: gpu)
    monkeypatch.setattr(_bench_pane, "benchmark",
                        bench or (lambda design, **kw: pytest.fail("benchmark called without a GPU")))
    return compiled


@pytest.fixture
def studio(tmp_path):
    return Studio(examples.merge_copy(), folder=tmp_path, debounce=0)


def test_button_is_not_called_run(studio):
    assert studio.bench.button.description == "Compile & Benchmark"


def test_without_a_gpu_it_compiles_both_targets_and_says_so(studio, monkeypatch):
    compiled = fake_runtime(monkeypatch, gpu=False)
    assert studio.compile_and_benchmark() is None
    log = studio.bench.log.value
    assert compiled == ["sm_90a", "sm_100a"]
    assert "compiled for <b>sm_90a</b> (1,000 B cubin" in log and "<b>sm_100a</b>" in log
    assert "no GPU here" in log and studio.bench.progress.value == studio.bench.progress.max
    eta = studio.bench.eta.value
    assert eta.count("4/4 [") == 1 and "step/s]" in eta and "verify and time on the GPU" in eta  # tqdm's meter
    assert not studio.bench.button.disabled


def test_results_become_a_table_and_bars(studio, monkeypatch):
    table = Table((Row("merge_copy", "pgstudio", 0.50), Row("merge_copy_ungrouped", "twin", 0.55),
                   Row("cupy elementwise", "CuPy", 0.80)))
    fake_runtime(monkeypatch, gpu=True, bench=lambda design, **kw: table)
    assert studio.compile_and_benchmark() is table
    html = studio.bench.results.value
    assert "results table" in html and html.count("µs</td>") == 3 and "500.0 µs" in html
    assert "verified" in html and "done" in studio.bench.stage.value
    studio.add_resource()  # results now describe an older design
    assert "changed since" in studio.bench.stage.value


def test_a_hang_shows_the_watchdog_message(studio, monkeypatch):
    def hang(design, **kw):
        raise KernelHangError("watchdog: task 'store' stopped in ab.smem_a.wait() on ab.full_0[1] parity 0",
                              {"task": "store", "barrier": "ab.full_0", "stage": 1, "phase": 0, "iteration": 5})

    fake_runtime(monkeypatch, gpu=True, bench=hang)
    assert studio.compile_and_benchmark() is None
    log = studio.bench.log.value
    assert "hung" in log and "ab.smem_a.wait()" in log and "<td>iteration</td><td>5</td>" in log


def test_a_kernel_that_kills_its_worker_is_a_message_and_the_pane_stays_usable(studio, monkeypatch):
    from pgstudio.errors import KernelFault

    def trap(design, on_progress=None, **kw):
        on_progress(3, 30, "3/30 [00:00<00:02, 12.00 launch/s] merge_copy")
        assert "3/30" in studio.bench.stage.value  # the relayed rounds show while it runs
        raise KernelFault("benchmark of design 'merge_copy' failed on GPU 0 worker (pid 7): CUDARuntimeError: "
                          "cudaErrorLaunchFailure", "design.validate() reports [pipeline.arrive_count] ...")

    fake_runtime(monkeypatch, gpu=True, bench=trap)
    assert studio.compile_and_benchmark() is None
    log = studio.bench.log.value
    assert "took its worker process with it" in log and "cudaErrorLaunchFailure" in log
    assert "likely cause: design.validate() reports [pipeline.arrive_count]" in log
    assert "this notebook is unaffected" in log and not studio.bench.button.disabled


def test_a_failing_gpu_call_is_a_message(studio, monkeypatch):
    fake_runtime(monkeypatch, gpu=True, bench=lambda design, **kw: (_ for _ in ()).throw(ImportError("libcurand")))
    assert studio.compile_and_benchmark() is None
    assert "benchmark failed: ImportError: libcurand" in studio.bench.log.value


def test_an_invalid_design_is_not_compiled(studio, monkeypatch):
    compiled = fake_runtime(monkeypatch, gpu=True)
    studio.add_resource()
    assert studio.compile_and_benchmark() is None
    assert "cannot compile" in studio.bench.log.value and compiled == []


def test_bar_chart_orders_nothing_and_scales_to_the_slowest():
    html = _bench_pane.bar_chart([("a", 10.0, "verified"), ("b", 20.0, "NOT verified")])
    assert "width:50.0%" in html and "width:100.0%" in html and "NOT verified" in html
    assert _bench_pane.result_rows(type("G", (), {"rows": [("design", 0.25, 100.0)]})()) == [("design", 250.0, "verified")]


def test_the_log_reads_as_text(tmp_path):
    """What the pane says, without its HTML: for a page read without a running kernel."""
    from pgstudio import examples
    from pgstudio.studio import Studio

    s = Studio(examples.merge_copy(), folder=tmp_path, debounce=0)
    s.bench._log("generated <code>pg_merge_copy</code>: 251 lines")
    s.bench._log("<span class='pg-bad'>sm_90a: failed</span>"
                 "<details><summary>compiler log</summary><pre>x</pre></details>")
    assert s.bench.log_text() == "generated pg_merge_copy: 251 lines\nsm_90a: failed"


def test_a_page_without_a_kernel_shows_what_the_studio_holds(tmp_path):
    from pgstudio import examples
    from pgstudio.studio import Studio

    bundle = Studio(examples.merge_gemm(), folder=tmp_path, debounce=0)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # a front end with widgets shows the studio
    for mime in ("text/plain", "text/html"):  # one without (GitHub, nbviewer) says what it holds
        assert "merge_gemm" in bundle[mime] and "11 barriers" in bundle[mime] and "JupyterLab" in bundle[mime]


def test_the_prediction_is_shown_without_a_gpu_and_beside_the_measured_time(studio, monkeypatch):
    from pgstudio.analysis.predict import predict
    want = f"predicted {predict(studio.design):.4f} ms"
    fake_runtime(monkeypatch, gpu=False)
    studio.compile_and_benchmark()
    assert want in studio.bench.log.value and "bound" in studio.bench.log.value
    assert want in studio.status.value  # the status line carries it as the design is edited
    table = Table((Row("merge_copy", "pgstudio, tuned", 0.50), Row("merge_copy as designed", "as given", 0.40)))
    fake_runtime(monkeypatch, gpu=True, bench=lambda design, **kw: table)
    studio.compile_and_benchmark()
    assert f"{want}, measured 0.4000 ms (model" in studio.bench.log.value  # beside the design as given


def test_an_invalid_design_has_no_prediction():
    from pgstudio.model.task import Task
    from pgstudio.studio._snapshot import Snapshot
    d = examples.merge_copy()
    t = d.task("store")
    clash = d.with_task(Task.unchecked("store", d.task("load_a").warp_idx, t.num_warps, t.src_resources,
                                       t.dst_resources, t.schedule))  # its warps overlap load_a's
    assert not Snapshot(clash).report.ok and Snapshot(clash).predicted_text() == ""
    assert Snapshot(d).predicted_text().startswith("predicted ")


def test_on_the_null_runtime_every_step_runs_and_the_pane_says_nothing_was_measured(studio, monkeypatch, tmp_path):
    """No GPU and no benchmark faked: the null runtime's benchmark (with its tuning search) runs for real."""
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(_bench_pane, "compile_cubin", lambda src, arch: FakeCubin(b"x" * 1000))
    monkeypatch.setattr(_cupy, "gpu_available", lambda: False)
    studio.bench.executor = "null"
    table = studio.compile_and_benchmark()
    assert table is not None and table.measured is False and [r.name for r in table.rows][-1] == "device copy"
    log = studio.bench.log_text()
    assert "no GPU: null runtime: every step of the benchmark ran and nothing was launched, verified or timed" in log
    assert "no GPU here" not in log and "predicted " in log  # the model's time, beside no measured one
    html = studio.bench.results.value
    assert "µs</td>" not in html and "nothing was verified or timed (no GPU: null runtime)" in html  # no bars: no times
    assert "nothing measured" in studio.bench.stage.value


def test_the_null_runtime_is_chosen_by_the_environment_too(studio, monkeypatch):
    table = Table((Row("merge_copy", "pgstudio", float("nan")),))
    calls = []
    fake_runtime(monkeypatch, gpu=False, bench=lambda design, **kw: calls.append(kw["executor"]) or table)
    monkeypatch.setenv("PGSTUDIO_EXECUTOR", "null")
    assert studio.compile_and_benchmark() is table and calls == [None]  # None: the default, null from the environment
    assert "no GPU here" not in studio.bench.log.value and "µs</td>" not in studio.bench.results.value

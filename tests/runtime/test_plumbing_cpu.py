"""The plumbing around a launch, on a CPU: errors that cross a job boundary keep their class and
their fields, a kernel's likely cause in words, NVRTC's refusals, and the instrumented launcher's
rules before it reaches the GPU."""

import pytest

from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.errors import CompileError, DesignError, GpuUnavailable, KernelFault, KernelHangError, PgStudioError
from pgstudio.runtime._cupy import gpu_available
from pgstudio.runtime.executor import Failure, Job, get_executor
from pgstudio.runtime.isolated import likely_cause


def _hang():
    raise KernelHangError("kernel k hung on ab.full_0", {"task": "store", "stage": 2})


def _nvrtc_refusal():
    raise CompileError("NVRTC rejected the kernel", "k.cu(12): error: expected a ';'")


def _misdesign():
    raise DesignError("stages do not fit", code="smem.capacity")


def _fault():
    raise KernelFault("the worker died", "a cause")


def _plain():
    raise ValueError("not pgstudio's")


@pytest.mark.parametrize("fn, cls, field, value", [
    (_hang, KernelHangError, "record", {"task": "store", "stage": 2}),
    (_nvrtc_refusal, CompileError, "log", "k.cu(12): error: expected a ';'"),
    (_misdesign, DesignError, "code", "smem.capacity"),
    (_fault, PgStudioError, None, None),  # a class whose constructor takes more: pgstudio's base class
    (_plain, PgStudioError, None, None),
])
def test_an_error_in_a_job_comes_back_with_its_class_and_fields(fn, cls, field, value):
    with pytest.raises(cls) as info:
        get_executor("null").call(Job("k", fn, label="the job"))
    assert str(info.value).startswith("the job: ") and (field is None or getattr(info.value, field) == value)
    if fn is _plain:
        assert "ValueError: not pgstudio's" in str(info.value)


def test_a_lost_worker_becomes_a_kernel_fault_with_its_cause():
    err = Failure("WorkerDied", "the worker died", {"cause": "a trap"}, crashed=True).exception("run of design 'x'")
    assert isinstance(err, KernelFault) and "run of design 'x': WorkerDied: the worker died" in str(err)


def test_the_likely_cause_of_a_failed_kernel_in_words():
    from stream_designs import wrong_count
    bad = likely_cause(wrong_count("empty"), Failure("KernelFault", "trap"))
    assert bad.startswith("design.validate() reports [config.arrive_count]")
    hung = likely_cause(examples.merge_copy(), Failure("KernelHangError", "hung", {"record": {"task": "store"}}))
    assert hung == "the watchdog recorded {'task': 'store'}"
    assert "code-generator bug" in likely_cause(examples.merge_copy(), Failure("KernelFault", "trap"))


@pytest.mark.skipif(gpu_available(), reason="the no-GPU path")
def test_a_gpu_job_on_the_inline_executor_without_a_gpu_says_why():
    with get_executor("inline").session() as s:
        s.submit(Job("t", len, ("x",), gpu=True))
        (out,) = list(s)
    assert out.error.kind == "GpuUnavailable" and "no GPU here" in out.error.message


@pytest.mark.nvrtc
def test_nvrtc_refusing_a_kernel_names_the_line_and_the_design_element(tmp_path, monkeypatch):
    import dataclasses

    from pgstudio.runtime.compile import compile_cubin
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path))
    src = emit(examples.merge_copy())
    line, elem = next((ln, e) for ln, e in src.line_map if ln > 20)
    lines = src.code.splitlines()
    lines[line - 1] = "this is not CUDA;"
    bad = dataclasses.replace(src, code="\n".join(lines))
    with pytest.raises(CompileError) as info:
        compile_cubin(bad, "sm_90a")
    assert f"line {line}: " in str(info.value) and f"(generated for {bad.element_at(line)})" in str(info.value)
    assert "error" in info.value.log and "merge_copy" in str(info.value)


def test_a_cubin_or_ptx_of_another_target_is_refused():
    from pgstudio.runtime.compile import check_target, check_target_cubin
    with pytest.raises(CompileError, match="PTX for sm_90, expected sm_90a"):
        check_target(".version 9.0\n.target sm_90\n", b"", "sm_90a")
    with pytest.raises(CompileError, match="no target"):
        check_target("", b"", "sm_90a")
    with pytest.raises(CompileError, match="does not name sm_100a"):
        check_target_cubin(b"ELF ... sm_90a ...", "sm_100a")


def test_forgetting_a_kernel_unloads_it_from_this_process():
    from pgstudio.runtime import compile as C
    src = emit(examples.merge_copy(num_stages=5))
    C._LOADED[f"{src.key}@0"] = object()  # what load() keeps per device
    try:
        assert C.is_loaded(src)
        C.forget(src)
        assert not C.is_loaded(src)
        C._LOADED[f"{src.key}@1"] = object()
        C.clear_memory_cache()
        assert not C.is_loaded(src)
    finally:
        C._LOADED.pop(f"{src.key}@0", None)
        C._LOADED.pop(f"{src.key}@1", None)


def test_the_instrumented_launcher_wants_an_instrumented_kernel():
    from pgstudio.runtime.trace import traced_launcher
    with pytest.raises(PgStudioError, match="not instrumented"):
        traced_launcher(emit(examples.merge_copy()))


@pytest.mark.skipif(gpu_available(), reason="the no-GPU path")
def test_an_inline_trace_without_a_gpu_stops_at_the_gpu_in_words():
    from pgstudio.runtime.trace import trace
    with pytest.raises(GpuUnavailable, match="no GPU here"):
        trace(examples.merge_copy(), n=4096, executor="inline")

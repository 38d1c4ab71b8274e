"""runtime.compile and its NVRTC child on a CPU: every way a compile can end that is not a cubin
reads as one clear error -- NVRTC missing or unusable (GpuUnavailable), NVRTC refusing the code
(CompileError naming the line), the child process failing or being interrupted (CompileError, and
no child left running) -- and loading needs a GPU.  The child's own protocol (a pickle each way)
is run here in this process, so what it answers is checked too."""

from __future__ import annotations

import dataclasses
import io
import pickle
import subprocess
import sys
import types

import pytest

from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.errors import CompileError, GpuUnavailable
from pgstudio.runtime import _nvrtc_child
from pgstudio.runtime import compile as C
from pgstudio.runtime._cupy import gpu_available

#: A kernel NVRTC compiles in a fraction of a second.
TINY = 'extern "C" __global__ void pg_tiny(float* x) { x[threadIdx.x] += 1.0f; }\n'


@pytest.fixture(scope="module")
def src():
    return emit(examples.merge_copy())


def _no_nvrtc(monkeypatch):
    """This process as it is without the NVRTC wheel: importing cuda.bindings.nvrtc fails."""
    import cuda.bindings
    monkeypatch.delattr(cuda.bindings, "nvrtc", raising=False)
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", None)


def test_without_the_nvrtc_wheel_compiling_says_how_to_install_it(src, monkeypatch):
    _no_nvrtc(monkeypatch)
    with pytest.raises(GpuUnavailable, match=r"compiling needs NVRTC: pip install 'pgstudio\[nvrtc\]'"):
        C.compile_cubin(src)
    with pytest.raises(_nvrtc_child.Unusable):
        _nvrtc_child.nvrtc_compile(TINY, "tiny.cu", ["-arch=sm_90a"])


def _child_io(monkeypatch, job: dict) -> io.BytesIO:
    """Feed ``job`` to the child's stdin and return the buffer its stdout goes to."""
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(pickle.dumps(job))))
    monkeypatch.setattr(sys, "stdout", types.SimpleNamespace(buffer=out))
    return out


@pytest.mark.nvrtc
def test_the_child_answers_a_compile_with_the_cubin_and_the_ptx(monkeypatch):
    out = _child_io(monkeypatch, {"code": TINY, "name": "tiny.cu", "options": ["-arch=sm_90a", "-std=c++17"]})
    _nvrtc_child.main()
    res = pickle.loads(out.getvalue())
    assert res["ok"] and res["cubin"][:4] == b"\x7fELF" and b"sm_90a" in res["cubin"]
    assert b".target sm_90a" in res["ptx"] and b"pg_tiny" in res["ptx"]


@pytest.mark.nvrtc
def test_the_child_answers_a_refusal_with_the_log_and_no_image(monkeypatch):
    out = _child_io(monkeypatch, {"code": TINY + "this is not CUDA;\n", "name": "tiny.cu", "options": ["-arch=sm_90a"]})
    _nvrtc_child.main()
    res = pickle.loads(out.getvalue())
    assert res["ok"] is False and res["cubin"] == b"" and res["ptx"] == b""
    assert "tiny.cu(2): error" in res["log"]


def test_the_child_answers_unusable_when_nvrtc_is_missing(monkeypatch):
    _no_nvrtc(monkeypatch)
    out = _child_io(monkeypatch, {"code": TINY, "name": "tiny.cu", "options": []})
    _nvrtc_child.main()
    res = pickle.loads(out.getvalue())
    assert set(res) == {"unusable"} and "nvrtc" in res["unusable"]


@pytest.mark.nvrtc
def test_nvrtc_that_cannot_create_a_program_is_unusable_not_a_crash(src, monkeypatch):
    from cuda.bindings import nvrtc
    monkeypatch.setattr(nvrtc, "nvrtcCreateProgram",
                        lambda *a: (nvrtc.nvrtcResult.NVRTC_ERROR_PROGRAM_CREATION_FAILURE, None))
    with pytest.raises(_nvrtc_child.Unusable, match="NVRTC create program failed: .*PROGRAM_CREATION_FAILURE"):
        _nvrtc_child.nvrtc_compile(TINY, "tiny.cu", ["-arch=sm_90a"])
    with pytest.raises(GpuUnavailable, match="NVRTC is not usable here: NVRTC create program failed"):
        C.compile_cubin(src, timeout_s=None)


@pytest.mark.nvrtc
def test_a_refusal_in_this_process_names_the_line_and_the_design(src):
    lines = src.code.splitlines()
    line = next(ln for ln, _ in src.line_map if ln > 20)
    lines[line - 1] = "this is not CUDA;"
    bad = dataclasses.replace(src, code="\n".join(lines))
    with pytest.raises(CompileError) as info:
        C.compile_cubin(bad, timeout_s=None)
    text = str(info.value)
    assert text.startswith("NVRTC rejected the kernel of design 'merge_copy' for sm_90a: ")
    assert f"line {line}: " in text and "error" in info.value.log


def _child_script(monkeypatch, tmp_path, body: str) -> None:
    """Make the compile's child process this script instead of the NVRTC one."""
    script = tmp_path / "child.py"
    script.write_text(body)
    monkeypatch.setattr(C._nvrtc_child, "__file__", str(script))


def test_a_child_that_fails_is_one_compile_error_with_its_last_words(src, monkeypatch, tmp_path):
    _child_script(monkeypatch, tmp_path, "import sys\nsys.stderr.write('loading...\\nSegmentation fault\\n')\nsys.exit(4)\n")
    with pytest.raises(CompileError) as info:
        C.compile_cubin(src, timeout_s=30)
    assert str(info.value) == ("the NVRTC process for design 'merge_copy' (sm_90a) failed with exit status 4: "
                               "Segmentation fault")


def test_a_child_that_says_nothing_is_a_compile_error_too(src, monkeypatch, tmp_path):
    _child_script(monkeypatch, tmp_path, "import sys\nsys.stdin.buffer.read()\n")
    with pytest.raises(CompileError, match="failed with exit status 0: no output"):
        C.compile_cubin(src, timeout_s=30)


def test_a_child_that_finds_nvrtc_unusable_is_gpu_unavailable(src, monkeypatch, tmp_path):
    _child_script(monkeypatch, tmp_path, "import pickle, sys\nsys.stdin.buffer.read()\n"
                                         "pickle.dump({'unusable': 'libnvrtc.so.13 not found'}, sys.stdout.buffer)\n")
    with pytest.raises(GpuUnavailable, match="NVRTC is not usable here: libnvrtc.so.13 not found"):
        C.compile_cubin(src, timeout_s=30)


def test_an_interrupted_compile_leaves_no_child_running(src, monkeypatch):
    started = []

    class Interrupted(subprocess.Popen):
        def communicate(self, input=None, timeout=None):
            if input is not None:  # the job is being handed over: Ctrl-C arrives
                raise KeyboardInterrupt
            return super().communicate(input, timeout)

    def popen(*args, **kw):
        started.append(Interrupted(*args, **kw))
        return started[-1]
    monkeypatch.setattr(C.subprocess, "Popen", popen)
    with pytest.raises(KeyboardInterrupt):
        C.compile_cubin(src, timeout_s=30)
    (child,) = started
    assert child.poll() is not None  # killed and reaped


@pytest.mark.skipif(gpu_available(), reason="the no-GPU path")
def test_loading_a_kernel_needs_a_gpu(src):
    with pytest.raises(GpuUnavailable, match="no GPU here"):
        C.load(src)
    assert not C.is_loaded(src)

"""NVRTC runs in a child process that its deadline kills: a compile past ``timeout_s`` ends in one
``CompileError`` line naming the limit and the fix, soon after the limit; a normal compile works
and is cached; the default comes from ``COMPILE_TIMEOUT_S`` or ``$PGSTUDIO_COMPILE_TIMEOUT``.  And
no canonical design needs more than a minute of NVRTC on one core (each takes one to two seconds)."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.errors import CompileError
from pgstudio.model.targets import ARCHES
from pgstudio.runtime import compile as C

pytestmark = pytest.mark.nvrtc

#: Seconds of NVRTC one canonical design may take on one core.
CANONICAL_LIMIT_S = 60


@pytest.fixture(scope="module")
def src():
    return emit(examples.merge_gemm())  # about a second of NVRTC: far past the tiny deadline below


def test_a_compile_past_its_deadline_is_stopped_with_one_line(src, monkeypatch):
    started = []
    real = subprocess.Popen

    def popen(*args, **kw):
        started.append(real(*args, **kw))
        return started[-1]
    monkeypatch.setattr(C.subprocess, "Popen", popen)
    t = time.perf_counter()
    with pytest.raises(C.CompileTimeout) as info:  # a CompileError
        C.compile_cubin(src, timeout_s=0.05)
    assert time.perf_counter() - t < 2
    text = str(info.value)
    assert len(text.splitlines()) == 1
    assert "compile deadline of 0.05 s" in text and "'merge_gemm'" in text and "sm_90a" in text
    assert "compile_cubin(timeout_s=...)" in text and "PGSTUDIO_COMPILE_TIMEOUT" in text
    (child,) = started
    assert child.poll() is not None  # killed and reaped, not left compiling


def test_the_command_line_says_the_deadline_in_one_line(tmp_path, monkeypatch, capsys):
    from pgstudio import cli
    monkeypatch.setenv(C.TIMEOUT_ENV, "0.05")
    path = tmp_path / "d.json"
    path.write_text(examples.merge_gemm().to_json())
    assert cli.main(["compile", str(path), "--arch", "sm_90a", "--quiet"]) == 2  # a clear error, not a bug (70)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "compile deadline of 0.05 s" in err[0]


def test_a_normal_compile_works_in_the_child_and_is_cached(src, tmp_path, monkeypatch):
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path))
    first = C.cubin_for(src)
    assert not first.cached and first.data[:4] == b"\x7fELF" and first.arch == "sm_90a"
    second = C.cubin_for(src, timeout_s=0.05)  # from the disk cache: nothing to compile, no deadline to meet
    assert second.cached and second.data == first.data
    assert C.compile_cubin(src, timeout_s=None).data[:4] == b"\x7fELF"  # in this process, no deadline


def test_the_default_deadline_comes_from_the_environment(src, monkeypatch):
    monkeypatch.delenv(C.TIMEOUT_ENV, raising=False)
    assert C.default_timeout() == C.COMPILE_TIMEOUT_S == 120
    monkeypatch.setenv(C.TIMEOUT_ENV, "none")
    assert C.default_timeout() is None
    monkeypatch.setenv(C.TIMEOUT_ENV, "0.05")
    with pytest.raises(CompileError, match="compile deadline of 0.05 s"):
        C.compile_cubin(src)
    for bad in ("0", "-3", "soon", "inf"):
        monkeypatch.setenv(C.TIMEOUT_ENV, bad)
        with pytest.raises(CompileError, match="PGSTUDIO_COMPILE_TIMEOUT"):
            C.compile_cubin(src)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "soon"])
def test_a_bad_deadline_is_refused(src, bad):
    with pytest.raises(CompileError, match="timeout_s"):
        C.compile_cubin(src, timeout_s=bad)


def test_nvrtc_refusing_a_kernel_in_the_child_still_names_the_line(src):
    import dataclasses
    bad = dataclasses.replace(src, code=src.code + "\nthis is not CUDA;\n")
    with pytest.raises(CompileError) as info:
        C.compile_cubin(bad)
    assert "NVRTC rejected the kernel of design 'merge_gemm'" in str(info.value) and "error" in info.value.log


def test_compiling_in_process_leaves_the_one_byte_objects_alone():
    """NVRTC writes its (empty, 1-byte) log into the buffer it is handed: never CPython's shared b" "."""
    C.compile_cubin(emit(examples.merge_copy()), timeout_s=None)
    assert bytes([32])[0] == 32 and " ".encode()[0] == 32


def test_no_canonical_design_needs_a_minute_of_nvrtc_on_one_core():
    """Every canonical design for both targets, the compile pinned to one core (the child inherits
    the affinity) and stopped at the limit; ``Cubin.seconds`` is the child's whole run."""
    old = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(old)})
    times = {}
    try:
        for name in examples.CANONICAL:
            for arch in ARCHES:
                cub = C.compile_cubin(emit(examples.example(name), arch=arch), timeout_s=CANONICAL_LIMIT_S)
                times[(name, arch)] = cub.seconds
    finally:
        os.sched_setaffinity(0, old)
    slow = {k: round(v, 1) for k, v in times.items() if v >= CANONICAL_LIMIT_S}
    assert not slow and len(times) == 2 * len(examples.CANONICAL), slow

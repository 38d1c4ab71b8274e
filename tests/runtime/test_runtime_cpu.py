"""Runtime pieces that need no GPU: element conversions, the reference, watchdog records in words,
the compile cache, the CLI's message without a GPU, and that ``import pgstudio`` stays light."""

import json
import subprocess
import sys

import pytest

from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.codegen.ptx import RECORD, RECORD_INTS
from pgstudio.errors import KernelHangError
from pgstudio.runtime import watchdog
from stream_designs import async_compute, wrong_count

np = pytest.importorskip("numpy")


def test_bf16_rounds_to_nearest_even_and_round_trips():
    from pgstudio.runtime.data import from_float32, to_float32
    f = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.5, 1 + 2 ** -8 + 2 ** -20, np.inf, np.nan], dtype=np.float32)
    b = from_float32(np, f, "bfloat16")
    assert b.dtype == np.uint16
    back = to_float32(np, b, "bfloat16")
    # ties go to the even mantissa: 1 + 2^-8 -> 1, 1 + 3*2^-8 -> 1 + 2^-6; just above a tie rounds up
    assert back[:5].tolist() == [1.0, 1.0, 1.015625, -2.5, 1.0078125]
    assert back[5] == np.inf and np.isnan(back[6])
    assert np.array_equal(from_float32(np, back, "bfloat16"), b)  # bf16 values are exact in float32
    h = from_float32(np, f[:4], "float16")
    assert h.dtype == np.float16 and to_float32(np, h, "float16").tolist() == [1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.5]


def test_poison_makes_every_element_nan():
    from pgstudio.runtime.data import poison, to_float32
    for dtype, st in (("float32", np.float32), ("float16", np.float16), ("bfloat16", np.uint16)):
        a = np.zeros(7, dtype=st)
        poison(np, a)
        assert np.isnan(to_float32(np, a, dtype)).all()


def test_reference_follows_the_designs_expressions():
    from pgstudio.runtime.reference import reference
    a = np.array([1.0, -2.0, 3.5], dtype=np.float32)
    b = np.array([0.5, 4.0, -1.0], dtype=np.float32)
    ref = reference(examples.merge_copy(), {"gmem_a": a, "gmem_b": b}, np, "float32")
    assert ref["gmem_d"].tolist() == (a + b).tolist()
    fork = reference(examples.fork_copy(), {"gmem_a": a}, np, "float32")
    assert fork["gmem_d0"].tolist() == a.tolist() and fork["gmem_d1"].tolist() == [1.0, 0.0, 3.5]
    chain = reference(async_compute(), {"gmem_a": a, "gmem_b": b}, np, "float32")["gmem_d"]
    s = np.maximum(a, 0) * b
    assert np.allclose(chain, 1 / (1 + np.exp(-s)) - 0.5, rtol=1e-6)


def test_reference_rounds_where_the_kernel_rounds():
    from pgstudio.runtime.data import from_float32
    from pgstudio.runtime.reference import reference
    a = from_float32(np, np.array([1.0, 3.0], dtype=np.float32), "bfloat16")
    b = from_float32(np, np.array([2 ** -8, 2 ** -7], dtype=np.float32), "bfloat16")
    ref = reference(examples.merge_copy(dtype="bfloat16"), {"gmem_a": a, "gmem_b": b}, np, "bfloat16")["gmem_d"]
    assert ref.tolist() == [1.0, 3.0]  # 1 + 2^-8 ties to even; 3 + 2^-7 is below half an ulp of 3


def _hung_record(src, site_of_step):
    site = next(s for s in src.info["sites"] if site_of_step(s))
    rec = [0] * RECORD_INTS
    rec[RECORD["aborted"]] = 1
    rec[RECORD["site"]] = site[0]
    rec[RECORD["stage"]] = 0
    rec[RECORD["parity"]] = 0
    rec[RECORD["iteration"]] = 4
    rec[RECORD["block"]] = 7
    rec[RECORD["waited_us"]] = 1_000_400
    rec[RECORD["complete"]] = 1
    return rec


def test_a_watchdog_record_reads_as_the_barrier_that_hung():
    src = emit(wrong_count("empty"), validate=False)
    rec = _hung_record(src, lambda s: s[1] == "load_b")
    with pytest.raises(KernelHangError) as info:
        watchdog.raise_if_hung(src, rec, 1000.0)
    msg, r = str(info.value), info.value.record
    assert r["task"] == "load_b" and r["barrier"] == "ab.shared_empty" and r["slot"] == 8
    assert r["arrive_count"] == 129 and r["iteration"] == 4 and r["block"] == 7
    assert "'ab.shared_empty' slot 8" in msg and "task 'load_b'" in msg and "129 arrivals" in msg
    assert "ab.smem_b.acquire()" in msg and f"generated line {r['line']}" in msg
    assert src.code.splitlines()[r["line"] - 1].lstrip().startswith("if (!pg_wait(")


def test_a_clean_record_raises_nothing():
    src = emit(examples.merge_copy())
    watchdog.raise_if_hung(src, [0] * RECORD_INTS)
    assert watchdog.decode(src, [0] * RECORD_INTS) == {}


@pytest.mark.nvrtc
def test_compiled_cubins_are_cached_by_key(tmp_path, monkeypatch):
    from pgstudio.runtime.compile import cubin_for
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path))
    src = emit(examples.merge_copy())
    first = cubin_for(src)
    second = cubin_for(src)
    assert not first.cached and second.cached and first.data == second.data
    assert [p.name for p in tmp_path.iterdir()] == [f"{src.entry}-{src.key}.cubin"]
    other = cubin_for(emit(examples.merge_copy(num_stages=3)))
    assert not other.cached and len(list(tmp_path.iterdir())) == 2


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pgstudio", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_emit_writes_the_cu_file(tmp_path):
    (tmp_path / "mc.json").write_text(examples.merge_copy().to_json())
    out = _cli("emit", "mc.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    code = (tmp_path / "mc.cu").read_text()
    assert code == emit(examples.merge_copy()).code
    bad = _cli("emit", "missing.json", cwd=tmp_path)
    assert bad.returncode == 2 and "no design file" in bad.stderr and "Traceback" not in bad.stderr


def test_bench_without_a_gpu_says_so_in_one_line(tmp_path):
    from pgstudio.runtime import gpu_available
    if gpu_available():
        pytest.skip("a GPU is present here")
    (tmp_path / "mc.json").write_text(examples.merge_copy().to_json())
    out = _cli("bench", "mc.json", cwd=tmp_path)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "no GPU here" in out.stderr and "pgstudio compile" in out.stderr
    assert "pip install" not in out.stderr  # installing CuPy would not bring a GPU
    trace = _cli("trace", "mc.json", cwd=tmp_path)
    assert trace.returncode == 2 and "pgstudio trace mc.json --simulate" in trace.stderr


def test_no_cupy_is_told_apart_from_no_gpu(monkeypatch):
    """Where a GPU is present but CuPy is not, the message says how to install CuPy; elsewhere it does not."""
    import builtins

    from pgstudio.errors import GpuUnavailable
    from pgstudio.runtime import _cupy

    real = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    for present, phrase, absent in ((True, "pip install 'pgstudio[gpu]'", "no GPU here"),
                                    (False, "no GPU here", "pip install")):
        monkeypatch.setattr(_cupy, "nvidia_device_present", lambda present=present: present)
        with pytest.raises(GpuUnavailable) as info:
            _cupy.cupy()
        assert phrase in str(info.value) and absent not in str(info.value)


def test_import_pgstudio_loads_no_gpu_library():
    code = ("import sys, pgstudio, pgstudio.codegen, pgstudio.runtime, pgstudio.cli; pgstudio.cli.build_parser();"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('cupy', 'cuda', 'numpy'))))")
    out = subprocess.run([sys.executable, "-c", "import json;" + code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


@pytest.mark.parametrize("name", ["merge_copy", "merge_gemm"])
def test_without_a_gpu_every_entry_point_says_so(name):
    """No GPU (or no CuPy): run / benchmark / the tuned benchmark give one GpuUnavailable, never a CuPy
    or loader error."""
    import pgstudio
    from pgstudio.errors import GpuUnavailable
    from pgstudio.runtime import benchmark, gpu_available, run
    from pgstudio.runtime.run import run_gemm

    if gpu_available():
        pytest.skip("a GPU is present")
    design = examples.example(name)
    calls = [lambda: benchmark(design, progress=False), lambda: pgstudio.benchmark(design, progress=False),
             lambda: run(design)]
    if name == "merge_gemm":
        calls.append(lambda: run_gemm(design, 128, 128, 64))
    for call in calls:
        with pytest.raises(GpuUnavailable):
            call()


def test_compiling_leaves_the_processes_one_byte_objects_alone():
    """NVRTC writes its (empty, 1-byte) log into the buffer it is handed: that buffer must never be
    CPython's shared b" " object, or every b" " of the process becomes NUL afterwards."""
    from pgstudio.runtime.compile import compile_cubin  # NVRTC is part of make test's install (extra nvrtc)
    compile_cubin(emit(examples.merge_copy()), "sm_90a")
    assert bytes([32])[0] == 32 and " ".encode()[0] == 32  # the shared one-byte objects still hold a space

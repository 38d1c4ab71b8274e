"""The launch contract's rules that need no GPU: a GEMM workload's reference and comparison on host
(NumPy) arrays, 16-bit storage both ways, the tensor-map rules a GEMM shape must keep, the
comparison kernel the streaming check launches (it compiles for sm_90a), and one table type for
both kinds of kernel."""

import math

import pytest

from pgstudio import examples
from pgstudio.codegen.gemm import emit_gemm
from pgstudio.errors import DesignError
from pgstudio.runtime.bench_table import BenchRow, BenchTable
from pgstudio.runtime.verify import PEAK, VerificationError

np = pytest.importorskip("numpy")


def _host_workload(design, m, n, k, seed=0, b_major=None):
    from pgstudio.runtime.gemm_run import GemmWorkload
    src = emit_gemm(design, b_major=b_major)
    return GemmWorkload.make(design, src, m, n, k, seed=seed, xp=np), src


def _write_reference(work):
    """What a correct kernel stores: every output's reference, rounded to its element type."""
    from pgstudio.runtime.storage import to_bits
    for name, ref in work.reference().items():
        work.arrays[name][...] = to_bits(ref.astype(np.float32), work.out_dtype(name))


def test_a_host_gemm_workload_checks_what_a_kernel_wrote():
    work, _ = _host_workload(examples.merge_gemm(), 96, 80, 64)
    assert work.shape == (96, 80, 64) and work.amount == 2 * 96 * 80 * 64 and work.unit == "TFLOP/s"
    assert work.arrays["gmem_a"].shape == (96, 64) and work.arrays["gmem_b"].shape == (64, 80)
    want = work.values["gmem_a"] @ work.values["gmem_b"]
    assert np.allclose(work.reference()["gmem_d"], want)
    work.poison()
    with pytest.raises(VerificationError, match=r"7680 NaN \(unwritten\)"):
        work.check("kernel k")
    _write_reference(work)
    (c,) = work.check("kernel k")
    assert c.ok and c.measure == PEAK and c.tensor == "gmem_d" and c.n == 96 * 80 and c.rel_error < 1e-3
    work.arrays["gmem_d"][7, 11] = np.float16(1e4).view(np.uint16)
    with pytest.raises(VerificationError) as info:
        work.check("kernel k")
    assert "kernel k at M=96 N=80 K=64 float16: output 'gmem_d' differs from cuBLAS" in str(info.value)
    assert "first bad element (7, 11)" in str(info.value)


def test_a_fused_epilogue_and_b_stored_n_by_k_are_in_the_reference():
    work, _ = _host_workload(examples.fork_gemm_act(dtype="bfloat16"), 64, 48, 32, seed=3)
    refs = work.reference()
    a, b = work.values["gmem_a"], work.values["gmem_b"]
    assert np.allclose(refs["gmem_d0"], a @ b) and np.array_equal(refs["gmem_d1"], np.maximum(a, 0))
    _write_reference(work)
    assert [c.tensor for c in work.check()] == ["gmem_d0", "gmem_d1"]
    kn, _ = _host_workload(examples.merge_gemm(), 64, 48, 32, b_major="k")
    assert kn.b_major == "k" and kn.arrays["gmem_b"].shape == (48, 32)
    assert np.allclose(kn.reference()["gmem_d"], kn.values["gmem_a"] @ kn.values["gmem_b"].T)


def test_a_host_workload_keeps_the_tensor_map_rules():
    work, src = _host_workload(examples.merge_gemm(), 64, 64, 64)
    assert work.maps_for(src) == {} and not work.on_gpu  # checked, not encoded: host arrays have no device address
    with pytest.raises(DesignError) as info:
        _host_workload(examples.merge_gemm(), 64, 64, 60)  # K = 60 half-precision elements: 120-byte rows
    assert info.value.code == "tma.stride" and "multiple of 8" in str(info.value)
    from pgstudio.runtime.tensormap import check_map
    with pytest.raises(DesignError, match="TMA maps here take"):
        check_map(64, 64, 64, "int8")
    with pytest.raises(DesignError, match="swizzle"):
        check_map(64, 64, 64, "float16", box_cols=32, swizzle=128)
    with pytest.raises(DesignError, match="1..256 rows"):
        check_map(64, 64, 300, "float16")
    with pytest.raises(DesignError, match="16-byte aligned"):
        check_map(64, 64, 64, "float16", ptr=8)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_sixteen_bit_storage_rounds_to_nearest_even_both_ways(dtype):
    from pgstudio.runtime import data
    from pgstudio.runtime.storage import to_bits, to_float32
    x = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.5, 1e-3, 65504.0], dtype=np.float32)
    bits = to_bits(x, dtype)
    assert bits.dtype == (np.float32 if dtype == "float32" else np.uint16)
    back = to_float32(bits, dtype)
    assert back.dtype == np.float32 and np.array_equal(to_bits(back, dtype), bits)  # exact once rounded
    assert np.array_equal(back, data.to_float32(np, data.from_float32(np, x, dtype), dtype))  # the streaming rule
    if dtype == "bfloat16":
        assert back[:4].tolist() == [1.0, 1.0, 1.015625, -2.5]  # ties to the even mantissa


@pytest.mark.nvrtc
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_the_comparison_kernel_compiles(dtype, tmp_path, monkeypatch):
    """Every streaming check runs this kernel on the GPU; it must be valid CUDA for every element type."""
    from pgstudio.runtime.compile import compile_cubin
    from pgstudio.runtime.verify import _compare_source
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp_path))
    src = _compare_source(dtype)
    assert src.entry == f"pg_compare_{dtype}" and [p.name for p in src.params] == ["out", "ref", "n"]
    assert len(compile_cubin(src, "sm_90a")) > 1000


def test_one_table_type_for_both_kinds():
    rows = (BenchRow("merge_copy", "pgstudio", 0.20, 3000.0, 5), BenchRow("cp.add", "CuPy", 0.25, 2400.0, 5, True),
            BenchRow("device copy", "copy", 0.15, 4000.0, 5))
    t = BenchTable("merge_copy", "1,048,576 float32 elements", "float32", rows, shape=(1 << 20,))
    assert t.speedup("merge_copy", "cp.add") == pytest.approx(1.25) and t.bandwidth_ratio("merge_copy", "device copy") == 0.75
    assert t.best_peer == ("cp.add", 0.25) and t.vs_best_library() == pytest.approx(1.25)
    lines = t.table().splitlines()
    assert lines[0] == "merge_copy: 1,048,576 float32 elements, medians of 5 interleaved runs"
    assert lines[1].split()[:5] == ["variant", "what", "median", "ms", "GB/s"]
    assert lines[3].split() == ["merge_copy", "pgstudio", "0.2000", "3,000", "1.000", "1.250"]
    assert lines[-1] == "best library: cp.add (0.2500 ms), fastest of cp.add"
    with pytest.raises(KeyError, match="variants: merge_copy, cp.add, device copy"):
        t.row("nope")
    null = BenchTable("merge_copy", "8 float32 elements", "float32",
                      tuple(BenchRow(r.name, r.what, math.nan, math.nan, 5, r.peer) for r in rows), measured=False)
    assert null.best_peer is None and "nothing was verified or timed" in null.header()
    assert null.footer().startswith("times: not measured")


class _Buffer:
    """A stand-in for a device array: only its address is read when parameters are packed."""

    def __init__(self, ptr: int) -> None:
        self.data = type("Memory", (), {"ptr": ptr})()


def test_a_gemm_kernels_parameters_are_packed_in_kernel_order():
    import ctypes
    from types import SimpleNamespace

    from gemm_designs import LIFTED

    from pgstudio.runtime.gemm_run import gemm_params, split_k_sizes
    src = emit_gemm(LIFTED["split_k2"](dtype="float16"))
    work = SimpleNamespace(m=1000, n=776, k=520, arrays={"gmem_d": _Buffer(0x1000)})
    maps = {"tm_gmem_a": ctypes.c_uint64(7), "tm_gmem_b": ctypes.c_uint64(8)}
    asked = []
    objs, ptrs = gemm_params(src, work, maps, _Buffer(0x2000), _Buffer(0x3000),
                             lambda: asked.append(1) or (_Buffer(0x4000), _Buffer(0x5000)), 250.0)
    values = [o if isinstance(o, ctypes.c_uint64) and o in maps.values() else o.value for o in objs]
    assert values[2:] == [0x1000, 1000, 776, 520, 0x2000, 0x3000, 250_000_000, 0x4000, 0x5000]
    assert objs[0] is maps["tm_gmem_a"] and len(ptrs) == len(src.params) == 11
    assert ptrs[3] == ctypes.addressof(objs[3]) and len(asked) == 2  # the workspace, asked for by its two parameters
    assert split_k_sizes(1000, 776, src.info["tile"], src.info["split_k"]) == (8 * 7 * 2 * 128 * 128, 8 * 7 * 2)
    three = {f"tm_gmem_{x}": ctypes.c_uint64(0) for x in "abd"}
    stream_k = emit_gemm(LIFTED["stream_k"](dtype="float16"))  # the same workspace parameters as split-K
    asked.clear()
    objs, _ = gemm_params(stream_k, work, three, _Buffer(0), _Buffer(0),
                          lambda: asked.append(1) or (_Buffer(0x4000), _Buffer(0x5000)), 1.0)
    assert [o.value for o in objs[-2:]] == [0x4000, 0x5000] and len(asked) == 2
    plain = emit_gemm(examples.merge_gemm())
    gemm_params(plain, work, three, _Buffer(0), _Buffer(0),
                lambda: pytest.fail("a kernel without split-K asks for no workspace"), 1.0)
    import dataclasses
    odd = dataclasses.replace(plain, params=plain.params[:1] + (dataclasses.replace(plain.params[1], kind="f64"),))
    with pytest.raises(DesignError) as info:
        gemm_params(odd, work, three, _Buffer(0), _Buffer(0), lambda: (), 1.0)
    assert info.value.code == "gemm.param" and "'f64'" in str(info.value)


def test_a_gemm_watchdog_record_reads_as_the_barrier_that_hung():
    from pgstudio.codegen.gemm.prelude import DIAG_WORDS
    from pgstudio.runtime.gemm_run import gemm_hang
    src = emit_gemm(examples.merge_gemm())
    assert gemm_hang(src, [0] * DIAG_WORDS) is None
    slot = next(s for s in src.info["slots"] if s[1] == "ab.full_0")
    task = src.info["tasks"].index("mma")
    rec = [1, 5, 130, slot[0], 2, 1, 17, 3, 1_000_400, task] + [0] * (DIAG_WORDS - 10)
    err = gemm_hang(src, rec)
    assert err.record["task"] == "mma" and err.record["barrier"] == "ab.full_0" and err.record["stage"] == 2
    assert str(err) == (f"kernel {src.entry} of design 'merge_gemm' hung: task 'mma' waited 1000 ms on barrier "
                        f"ab.full_0 (slot {slot[0]}, stage 2, parity 1) at output tile 17, k tile 3, block 5 thread 130")
    other = gemm_hang(src, [3] + [0] * (DIAG_WORDS - 1))
    assert str(other).endswith("stopped: the kernel was built for another architecture than the GPU runs")
    assert gemm_hang(src, [9] + [0] * 8 + [99] + [0] * (DIAG_WORDS - 10)).record["task"] is None


def test_a_streaming_kernels_arguments_are_in_kernel_order_and_aligned():
    from pgstudio.codegen import emit
    from pgstudio.errors import PgStudioError
    from pgstudio.runtime.stream_run import stream_params
    src = emit(examples.merge_copy())
    arrays = {"gmem_a": _Buffer(0x100), "gmem_b": _Buffer(0x200), "gmem_d": _Buffer(0x300)}
    record = object()
    args = stream_params(src, arrays, 12345, record, 1000.0)
    kinds = [p.kind for p in src.params]
    assert len(args) == len(kinds) and args[kinds.index("watchdog")] is record
    assert int(args[kinds.index("i64")]) == 12345 and int(args[kinds.index("u64")]) == 1_000_000_000
    assert [args[i] for i, k in enumerate(kinds) if k == "ptr"] == [arrays[p.resource] for p in src.params if p.kind == "ptr"]
    arrays["gmem_b"] = _Buffer(0x208)
    with pytest.raises(PgStudioError, match="'gmem_b' is not 16-byte aligned"):
        stream_params(src, arrays, 1, record, 1.0)
    import dataclasses
    odd = dataclasses.replace(src, params=(dataclasses.replace(src.params[0], kind="f64"),))
    with pytest.raises(PgStudioError, match="kind 'f64'"):
        stream_params(odd, arrays, 1, record, 1.0)


def test_the_elementwise_peer_computes_the_designs_own_expressions():
    from pgstudio.runtime.bench import elementwise_source, ufunc_of
    ins, outs, body, name, preamble = elementwise_source(examples.merge_copy(), "float32")
    assert (ins, outs, name) == ("float32 p_gmem_a, float32 p_gmem_b", "float32 p_gmem_d", "pg_peer_merge_copy")
    assert "p_gmem_d = " in body and "p_gmem_a" in body and "+" in body and "typedef unsigned short u16;" in preamble
    ins16, outs16, body16, _, _ = elementwise_source(examples.fork_copy(dtype="bfloat16"), "bfloat16")
    assert ins16 == "uint16 p_gmem_a" and outs16 == "uint16 p_gmem_d0, uint16 p_gmem_d1" and "p_gmem_d1 = " in body16
    assert ufunc_of(examples.merge_copy(), "float32") == ("add", "gmem_a", "gmem_b", "gmem_d")
    assert ufunc_of(examples.merge_copy(dtype="bfloat16"), "bfloat16") is None  # CuPy has no bfloat16 ufunc
    assert ufunc_of(examples.fork_copy(), "float32") is None  # two outputs


def test_the_fastest_peer_is_named():
    from pgstudio.runtime.peers import fastest
    times = {"torch.matmul": [0.5, 0.4, 0.6], "cublasGemmEx": [0.45, 0.45, 0.45], "pgstudio": [0.1]}
    assert fastest(times, ["torch.matmul", "cublasGemmEx"]) == ("cublasGemmEx", 0.45)
    with pytest.raises(LookupError, match="no peer was timed"):
        fastest(times, ["Triton"])


def test_without_a_gpu_the_gpu_runtime_says_so_at_every_entry(monkeypatch):
    from pgstudio.codegen import emit
    from pgstudio.errors import GpuUnavailable
    from pgstudio.runtime import _cupy
    from pgstudio.runtime.backend import CUDA
    monkeypatch.setattr(_cupy, "_gpu_count", lambda: (0, "cudaErrorNoDevice"))
    assert not _cupy.gpu_available() and _cupy.gpu_count() == 0
    with pytest.raises(GpuUnavailable, match="sees no device \\(cudaErrorNoDevice\\)"):
        _cupy.require_gpu()
    with pytest.raises(GpuUnavailable):
        CUDA.require()
    with pytest.raises(GpuUnavailable):
        CUDA.launcher(emit_gemm(examples.merge_gemm()))
    if not _cupy.nvidia_device_present():  # no CuPy either: each CuPy-side entry stops at the import, in words
        for call in (lambda: CUDA.launcher(emit(examples.merge_copy())),
                     lambda: CUDA.stream_workload(examples.merge_copy(), 8, "float32"),
                     lambda: CUDA.gemm_workload(examples.merge_gemm(), emit_gemm(examples.merge_gemm()), 64, 64, 64)):
            with pytest.raises(GpuUnavailable):
                call()
    assert not CUDA.is_loaded(emit(examples.merge_copy(num_stages=7)))


def test_fresh_inputs_and_empty_outputs_on_the_host():
    from pgstudio.runtime import data
    a, b = data.random_input(np, 1000, "bfloat16", 3), data.random_input(np, 1000, "bfloat16", 3)
    assert a.dtype == np.uint16 and np.array_equal(a, b)  # a seed draws the same data
    f = data.to_float32(np, a, "bfloat16")
    assert (f < 0).any() and (f > 0).any() and data.random_input(np, 5, "float32", 1).dtype == np.float32
    assert data.empty(np, 7, "float16").dtype == np.float16 and data.empty(np, 7, "bfloat16").shape == (7,)
    fresh = data.random_input(np, 1000, "float32", None), data.random_input(np, 1000, "float32", None)
    assert not np.array_equal(*fresh)  # without a seed every draw is new data
    class Device:  # an array module that is not NumPy: seeded draws repeat, unseeded share one generator
        __name__, float32 = "cupy", np.float32

        class random:  # CuPy's RandomState draws float32 itself
            RandomState = staticmethod(np.random.default_rng)
    assert data.rng(Device, None) is data.rng(Device, None) and data.rng(Device, 5) is not data.rng(Device, 5)
    assert np.array_equal(data.random_float32(Device, 8, 5), data.random_float32(Device, 8, 5))


def test_a_measured_run_reads_as_its_numbers():
    from pgstudio.runtime.launch import RunResult
    from pgstudio.runtime.verify import Check
    ok = Check("gmem_d", 1 << 20, 2e-7, 1e-6, 0, -1)
    res = RunResult("merge_copy", "pg_merge_copy", "1,048,576 float32 elements", "float32", 0.004, (0.0039, 0.004, 0.0045),
                    12 * 2**20, "GB/s", (ok,), 132, 256, 65632, 40, 3, 0.25, False, 1.5, shape=(1 << 20,))
    rows = dict(res.rows())
    assert res.ok and res.measured and res.rate == pytest.approx(12 * 2**20 / 4e-6 / 1e9) and math.isnan(res.tflops)
    assert rows["median time"] == "0.0040 ms" and rows["spread"] == "0.0039 .. 0.0045 ms over 3 runs"
    assert rows["bandwidth"] == f"{res.gbps:,.0f} GB/s (0.01 GiB moved)" and rows["compile"] == "250 ms NVRTC"
    assert rows["verified"] == "yes: rel error 2.0e-07 over 1 output(s)"
    assert rows["launch"] == "grid 132 x block 256, 65632 B smem, 40 regs, 3 blocks/SM"
    bad = RunResult("merge_gemm", "pg_gemm", "64x64x64 float16", "float16", 0.01, (0.01,), 2.0 * 64**3, "TFLOP/s",
                    (Check("gmem_d", 4096, 0.5, 3.0, 10, 2, measure="peak"),), 1, 384, 1024, 168, 1, 0.0, True, 0.1)
    assert not bad.ok and dict(bad.rows())["verified"].startswith("NO: rel error 5.0e-01")
    assert dict(bad.rows())["throughput"] == "0.1 TFLOP/s (5.24e-07 TFLOP)" and dict(bad.rows())["compile"] == "cached"
    work, _ = _host_workload(examples.merge_gemm(), 64, 64, 64)
    assert work.rate(1.0) == pytest.approx(2 * 64**3 / 1e-3 / 1e12) and work.problem == "64x64x64 float16"


def test_the_gemm_operands_are_found_behind_the_accumulator():
    from pgstudio.runtime.gemm_run import gemm_sources, is_gemm
    assert gemm_sources(examples.merge_gemm()) == ("gmem_a", "gmem_b")
    assert gemm_sources(examples.fork_gemm_act()) == ("gmem_a", "gmem_b") and not is_gemm(examples.fork_copy())


def test_the_in_process_executor_says_what_it_is():
    from pgstudio.runtime.executor.inline import InlineExecutor
    ex = InlineExecutor()
    assert ex.in_process and ex.cpu_count() == 1 and ex.describe() == "inline (this process)"
    assert ex.job_executor() == "inline" and ex.runtime == "cuda"


def test_progress_that_cannot_be_relayed_never_fails_the_work(capsys):
    from pgstudio.runtime import progress

    class Broken:
        def put(self, step):
            raise OSError("the pipe is gone")

    seen = []
    with progress.relaying(Broken()):
        bar = progress.Progress(3, "job", "step", on_update=lambda d, t, text: seen.append((d, t)))
        bar.update(1, "first")
        bar.set_total(5)
        bar.update(1)
    assert seen == [(1, 3), (2, 5)] and progress.current_relay() is None
    drawn = progress.Progress(2, "drawn", "step")  # no relay: tqdm draws on stderr
    drawn.update(1, "x")
    drawn.set_total(4)
    drawn.close()
    assert "drawn" in capsys.readouterr().err


def test_nvrtc_words_when_there_is_no_log_line_to_point_at():
    from pgstudio.codegen import emit
    from pgstudio.runtime.compile import _explain
    src = emit(examples.merge_copy())
    assert _explain(src, "") == "no log" and _explain(src, "warning: x\nfatal: out of memory\n") == "fatal: out of memory"


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_a_host_streaming_workload_checks_what_a_kernel_wrote(dtype):
    from pgstudio.runtime import data
    from pgstudio.runtime.stream_run import StreamWorkload
    work = StreamWorkload.make(examples.merge_copy(dtype=dtype), 1000, dtype, seed=5, xp=np)
    assert work.shape == (1000,) and work.amount == 1000 * {"float32": 4}.get(dtype, 2) * 3
    again = StreamWorkload.make(examples.merge_copy(dtype=dtype), 1000, dtype, seed=5, xp=np)
    assert np.array_equal(work.inputs["gmem_a"], again.inputs["gmem_a"])  # a seed draws the same inputs
    work.poison()
    with pytest.raises(VerificationError, match="1000 of 1000 elements wrong; first at index 0"):
        work.check("pg_merge_copy")
    want = work.reference()["gmem_d"]
    work.outputs["gmem_d"][...] = data.from_float32(np, want, dtype)
    (c,) = work.check("pg_merge_copy")
    assert c.ok and c.n == 1000 and c.rel_error == 0.0 and c.max_abs == 0.0
    work.outputs["gmem_d"][417] = data.from_float32(np, np.array([want[417] + 1.0], np.float32), dtype)[0]
    with pytest.raises(VerificationError) as info:
        work.check("pg_merge_copy")
    assert "1 of 1000 elements wrong; first at index 417" in str(info.value) and f"n=1000, {dtype}" in str(info.value)


def test_the_comparison_rule_on_the_host():
    from pgstudio.runtime.verify import ATOL, RTOL, compare_on_host
    ref = np.array([1.0, -2.0, np.inf, np.nan, 0.0, 100.0], dtype=np.float32)
    same = compare_on_host(ref.copy(), ref, "float32", "d")
    assert same.ok and same.rel_error == 0.0 and same.n == 6
    near = ref.copy()
    near[5] = 100.0 + 0.5 * (ATOL["float32"] + RTOL["float32"] * 100.0)  # inside the tolerance
    assert compare_on_host(near, ref, "float32").ok
    off = ref.copy()
    off[1], off[2], off[3] = -2.5, -np.inf, 1.0  # out of tolerance, the wrong infinity, a value where NaN belongs
    c = compare_on_host(off, ref, "float32", "d")
    assert (c.bad, c.first_bad, c.out_at_first, c.ref_at_first) == (3, 1, -2.5, -2.0) and c.max_abs == 0.5
    assert c.rel_error == pytest.approx(0.5 / math.sqrt(1 + 4 + 100**2))
    assert compare_on_host(np.zeros(2, np.float32), np.zeros(2, np.float32), "float32").rel_error == 0.0
    assert compare_on_host(np.ones(2, np.float32), np.zeros(2, np.float32), "float32").rel_error == math.inf


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_the_comparison_kernel_keeps_the_host_rule(dtype):
    """The GPU's one-pass comparison and its NumPy statement agree, planted errors included."""
    import cupy as cp

    from pgstudio.runtime import data
    from pgstudio.runtime.verify import compare, compare_on_host
    rng = np.random.default_rng(1)
    ref = rng.standard_normal(100_003).astype(np.float32)
    out = data.from_float32(np, ref, dtype)
    ref = data.to_float32(np, out, dtype).astype(np.float32)  # exactly representable, so only planted errors count
    out[[5, 70_000]] = data.from_float32(np, np.array([3.0, np.nan], np.float32), dtype)
    ref[9] = np.inf
    host = compare_on_host(out, ref, dtype, "d")
    gpu = compare(cp.asarray(out), cp.asarray(ref), dtype, "d")
    assert (gpu.bad, gpu.first_bad) == (host.bad, host.first_bad) == (3, 5)
    assert gpu.rel_error == pytest.approx(host.rel_error, rel=1e-6) and gpu.max_abs == pytest.approx(host.max_abs)

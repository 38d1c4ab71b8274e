"""Library peers: every one verified against the float32 reference before it is timed, the fastest
named; the elementwise step of 16-bit data computes what PyTorch / CuPy do, tail included."""

import math
import sys
from pathlib import Path

import pytest

from pgstudio.runtime import peers as P
from pgstudio.runtime.bench_table import BenchRow, BenchTable

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


def test_the_table_names_the_fastest_peer_and_divides_by_it():
    rows = (BenchRow("merge_gemm", "pgstudio", 0.50, 275.0, 10), BenchRow("torch.matmul", "PyTorch", 0.45, 305.0, 10, True),
            BenchRow("cublasGemmEx", "cuBLAS", 0.48, 286.0, 10, True))
    t = BenchTable("merge_gemm", "4096x4096x4096 bfloat16", "bfloat16", rows, unit="TFLOP/s", shape=(4096, 4096, 4096))
    assert t.best_peer == ("torch.matmul", 0.45) and t.peers == ("torch.matmul", "cublasGemmEx")
    assert t.vs_best_library() == pytest.approx(0.9)
    text = t.table()
    assert "best library: torch.matmul" in text and "x best library" in text and "TFLOP/s" in text
    assert "0.900" in text.splitlines()[3]  # the design's row: 0.45 / 0.50
    alone = BenchTable("d", "1x1x1 float16", "float16", (BenchRow("d", "pgstudio", 1.0, 1.0, 3),), unit="TFLOP/s")
    assert alone.best_peer is None and math.isnan(alone.vs_best_library()) and "no library peer ran" in alone.table()


def test_the_suite_table_takes_the_fastest_library_peer(tmp_path):
    import json

    import gemm_suite
    rec = {"item": "128x8192x8192/bfloat16", "status": "ok", "shape": [128, 8192, 8192], "dtype": "bfloat16",
           "tiles": "128x64x64 s8", "peers": ["torch.matmul", "cublasGemmEx"], "timing": "t",
           "rows": {"pgstudio": {"ms": 0.040, "tflops": 430.0}, "torch.matmul": {"ms": 0.036, "tflops": 470.0},
                    "cublasGemmEx": {"ms": 0.044, "tflops": 390.0}}}
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    text, figs = gemm_suite.table(path)
    assert figs["min_library"] == pytest.approx(0.9) and figs["ok"] == 1
    assert "torch.matmul" in text and "MISS" in text  # 0.9 is under both targets


def test_elementwise16_refuses_what_it_does_not_compute():
    with pytest.raises(ValueError, match="add or relu"):
        P.elementwise16("mul", "float16", None, None)
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        P.elementwise16("add", "float32", None, None)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("n", [8 * 1000, 8 * 1000 + 5, 3])
def test_elementwise16_matches_the_float32_reference(dtype, n):
    from pgstudio.runtime._cupy import require_gpu
    require_gpu()
    import cupy as cp

    from pgstudio.runtime.storage import to_bits, to_float32
    x = cp.random.standard_normal(n, dtype=cp.float32)
    y = cp.random.standard_normal(n, dtype=cp.float32)
    xb, yb = to_bits(x, dtype), to_bits(y, dtype)
    out = cp.full(n, 0x7FFF, dtype=cp.uint16)
    P.elementwise16("add", dtype, xb, out, yb)()
    want = to_float32(xb, dtype) + to_float32(yb, dtype)
    tol = 1e-2 if dtype == "bfloat16" else 1e-3
    assert float(cp.abs(to_float32(out, dtype) - want).max()) <= tol * float(cp.abs(want).max())
    out.fill(0x7FFF)
    P.elementwise16("relu", dtype, xb, out)()
    assert bool((to_float32(out, dtype) == cp.maximum(to_float32(xb, dtype), 0)).all())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_peer_verifies_and_a_wrong_one_is_caught(dtype):
    from pgstudio.runtime._cupy import require_gpu
    require_gpu()
    import cupy as cp

    from pgstudio.runtime.gemm_run import TOLERANCE
    from pgstudio.runtime.storage import to_bits, to_float32
    from pgstudio.runtime.verify import VerificationError
    m, n, k = 256, 192, 320
    with cp.cuda.Stream(non_blocking=True):
        a32, b32, r32 = (cp.random.standard_normal(s, dtype=cp.float32) for s in ((m, k), (k, n), (m, n)))
        a, b, r = to_bits(a32, dtype), to_bits(b32, dtype), to_bits(r32, dtype)
        want = to_float32(a, dtype) @ to_float32(b, dtype)
        out, scratch = cp.empty((m, n), cp.uint16), cp.empty((m, n), cp.uint16)
        labels = []
        for peer in P.gemm_peers(a, b, out, m, n, k, dtype):
            P.verify_peer(peer, {"D": out}, {"D": want}, dtype, TOLERANCE[dtype])
            labels.append(peer.label)
        assert "cublasGemmEx" in labels and ("torch.matmul" in labels) == P.torch_available()
        res = want + to_float32(r, dtype)
        for peer in P.residual_peers(a, b, r, out, scratch, m, n, k, dtype):
            P.verify_peer(peer, {"D": out}, {"D": res}, dtype, TOLERANCE[dtype])
        d1 = cp.empty((m, k), cp.uint16)
        for peer in P.activation_peers(a, b, out, d1, m, n, k, dtype):
            P.verify_peer(peer, {"D0": out, "D1": d1}, {"D0": want, "D1": cp.maximum(to_float32(a, dtype), 0)}, dtype,
                          TOLERANCE[dtype])
        wrong = P.Peer("half a GEMM", lambda: out[: m // 2].fill(0))
        with pytest.raises(VerificationError, match="half a GEMM"):
            P.verify_peer(wrong, {"D": out}, {"D": want}, dtype, TOLERANCE[dtype])


@pytest.mark.gpu
def test_benchmark_gemm_times_every_peer_and_names_the_best():
    from pgstudio.runtime._cupy import require_gpu
    require_gpu()
    from pgstudio.examples import merge_gemm
    from pgstudio.runtime.gemm_bench import benchmark_gemm
    t = benchmark_gemm(merge_gemm(1024, 1024, 1024), rounds=3, twin=False)
    assert "cublasGemmEx" in t.peers and t.best_peer is not None and t.measured and t.unit == "TFLOP/s"
    assert t.best_peer[0] in {r.name for r in t.rows} and t.vs_best_library() > 0

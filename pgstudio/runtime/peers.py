"""The library paths a user would write instead of a pgstudio kernel: each verified, the fastest named.

A benchmark is only as honest as its peer.  For a GEMM that is the fastest call a user would
make: ``torch.matmul`` (cuBLASLt with its heuristics) when PyTorch is installed, and
``cublasGemmEx`` through CuPy always (what CuPy's ``matmul`` reaches for float16, and the only
bfloat16 GEMM CuPy exposes).  For a fused design it is the PyTorch composition (``matmul`` then
``add`` / ``relu`` into preallocated outputs, and ``addmm`` -- cuBLAS with beta = 1 -- for
``D = A @ B + R``); without PyTorch, ``cublasGemmEx`` then an elementwise kernel.  The elementwise
step of 16-bit data is ``ELEMENTWISE16``, a kernel that moves 16 bytes per thread and runs at
memory speed -- not CuPy's float16 ufunc path, which here runs at about a third of it and would
flatter any fused kernel.

Every peer is checked against the float32 reference on poisoned outputs before it is timed
(``verify_peer``); benchmarks time all of them interleaved with the design and report each, then
``fastest`` names the one the design is compared with.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ._cupy import cupy
from .storage import to_float32
from .verify import VerificationError

_POISON = 0x7FFF  # NaN in float16 and bfloat16
#: CUDA data type and compute type enumerators (cudaDataType_t / cublasComputeType_t).
_CUDA_R = {"float16": 2, "bfloat16": 14, "float32": 0}
_COMPUTE_32F = 68


@dataclass(frozen=True)
class Peer:
    """One library path: ``call()`` writes the outputs it was built with; ``kind`` says what it is
    ("gemm", "composition", "addmm", "elementwise")."""

    label: str
    call: Callable[[], Any]
    kind: str = "gemm"


# -- GEMM --------------------------------------------------------------------------------------------
def torch_available() -> bool:
    try:
        import torch
    except ImportError:  # not installed: no PyTorch peer (a torch that breaks on import is an error to see)
        return False
    return bool(torch.cuda.is_available())


def on_cupy_stream(call: Callable[[], Any]) -> Callable[[], Any]:
    """``call`` (PyTorch work, or Triton's, which launches on PyTorch's stream) launched on CuPy's
    current stream, so the same events time it.  The
    legacy default stream (handle 0) is refused: PyTorch would read it as its own null stream and
    its launches would escape the events."""
    cp = cupy()
    import torch
    made: dict[int, Any] = {}

    def launch():
        ptr = cp.cuda.get_current_stream().ptr
        if ptr == 0:
            raise RuntimeError("PyTorch peers need a created CuPy stream (use 'with cupy.cuda.Stream():')")
        if ptr not in made:
            made[ptr] = torch.cuda.ExternalStream(ptr)
        with torch.cuda.stream(made[ptr]):
            call()
    return launch


def torch_view(bits, dtype: str):
    """A PyTorch tensor of ``dtype`` over CuPy storage (uint16 bits of a 16-bit type, or float32)."""
    import torch
    if dtype == "float32":
        return torch.from_dlpack(bits)
    tdt = {"float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    return torch.from_dlpack(bits.view("int16")).view(tdt)


def gemm_ex(a, b, out, m: int, n: int, k: int, dtype: str, b_major: str = "mn", beta: float = 0.0) -> Callable[[], None]:
    """``out = A @ B (+ beta * out)`` by ``cublasGemmEx`` on CuPy's current stream (row-major data
    seen column-major: D^T = B^T A^T)."""
    cp = cupy()
    import numpy as np
    from cupy_backends.cuda.libs import cublas
    handle = cp.cuda.device.get_cublas_handle()
    alpha, beta_ = np.ones(1, np.float32), np.full(1, beta, np.float32)
    transb = 0 if b_major == "mn" else 1
    ldb = n if b_major == "mn" else k
    r = _CUDA_R[dtype]

    def call():
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
        cublas.gemmEx(handle, transb, 0, n, m, k, alpha.ctypes.data, b.data.ptr, r, ldb, a.data.ptr, r, k,
                      beta_.ctypes.data, out.data.ptr, r, n, _COMPUTE_32F, -1)
    return call


#: What each GEMM peer is, for a benchmark's table.
GEMM_PEERS = {"torch.matmul": "PyTorch (cuBLASLt, its heuristics)", "cublasGemmEx": "cuBLAS through CuPy"}


def gemm_peer_labels() -> list[str]:
    """The peers ``gemm_peers`` builds here, by label, without building them (the null runtime's rows)."""
    return [label for label in GEMM_PEERS if label != "torch.matmul" or torch_available()]


def gemm_peers(a, b, out, m: int, n: int, k: int, dtype: str, b_major: str = "mn") -> list[Peer]:
    """``out = A @ B`` by every library path present: torch.matmul, then cublasGemmEx."""
    peers = []
    if torch_available():
        ta, tb, td = torch_view(a, dtype), torch_view(b, dtype), torch_view(out, dtype)
        bm = tb if b_major == "mn" else tb.t()
        import torch
        peers.append(Peer("torch.matmul", on_cupy_stream(lambda: torch.matmul(ta, bm, out=td))))
    peers.append(Peer("cublasGemmEx", gemm_ex(a, b, out, m, n, k, dtype, b_major)))
    return peers


# -- elementwise at memory speed ---------------------------------------------------------------------
ELEMENTWISE16 = r"""
typedef unsigned short u16; typedef unsigned int u32;
__device__ __forceinline__ float ld16(u16 h, int bf) {
  if (bf) return __uint_as_float(((u32)h) << 16);
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ u16 st16(float f, int bf) {
  if (bf) { u32 u = __float_as_uint(f); u += 0x7FFFu + ((u >> 16) & 1u); return (u16)(u >> 16); }
  u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ u32 op2(u32 x, u32 y, int bf, int relu) {
  const float a0 = ld16((u16)(x & 0xFFFFu), bf), a1 = ld16((u16)(x >> 16), bf);
  float r0, r1;
  if (relu) { r0 = fmaxf(a0, 0.f); r1 = fmaxf(a1, 0.f); }
  else { r0 = a0 + ld16((u16)(y & 0xFFFFu), bf); r1 = a1 + ld16((u16)(y >> 16), bf); }
  return (u32)st16(r0, bf) | ((u32)st16(r1, bf) << 16);
}
// 8 elements (16 bytes) per thread and step, grid-stride; n8 = elements / 8 (the tail is done by pg_ew16_tail)
extern "C" __global__ void pg_ew16(const uint4* __restrict__ x, const uint4* __restrict__ y, uint4* __restrict__ o,
                                   long long n8, int bf, int relu) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n8; i += (long long)gridDim.x * blockDim.x) {
    const uint4 a = x[i], b = relu ? a : y[i];
    o[i] = make_uint4(op2(a.x, b.x, bf, relu), op2(a.y, b.y, bf, relu), op2(a.z, b.z, bf, relu), op2(a.w, b.w, bf, relu));
  }
}
extern "C" __global__ void pg_ew16_tail(const u16* x, const u16* y, u16* o, long long first, long long n, int bf, int relu) {
  const long long i = first + blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) { const float a = ld16(x[i], bf); o[i] = st16(relu ? fmaxf(a, 0.f) : a + ld16(y[i], bf), bf); }
}
"""
_MODULE: list[Any] = []


def elementwise16(op: str, dtype: str, x, out, y=None) -> Callable[[], None]:
    """``out = x + y`` (op "add") or ``out = relu(x)`` (op "relu") over 16-bit storage (uint16 bits
    of ``dtype``), 16 bytes per thread: the elementwise step a composition is charged for."""
    if op not in ("add", "relu") or dtype not in ("float16", "bfloat16"):
        raise ValueError(f"elementwise16: op {op!r} / dtype {dtype!r}; expected add or relu of float16 or bfloat16")
    cp = cupy()
    if not _MODULE:
        _MODULE.append(cp.RawModule(code=ELEMENTWISE16, options=("-std=c++17",)))
    mod = _MODULE[0]
    main, tail = mod.get_function("pg_ew16"), mod.get_function("pg_ew16_tail")
    n = int(x.size)
    n8 = n // 8
    bf, relu = int(dtype == "bfloat16"), int(op == "relu")
    yy = x if y is None else y
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    grid = max(1, min(-(-n8 // 256), sms * 8))
    args = (x, yy, out, cp.int64(n8), cp.int32(bf), cp.int32(relu))
    targs = (x, yy, out, cp.int64(n8 * 8), cp.int64(n), cp.int32(bf), cp.int32(relu))

    def call():
        if n8:
            main((grid,), (256,), args)
        if n % 8:
            tail((1,), (8,), targs)
    return call


# -- compositions ------------------------------------------------------------------------------------
def residual_peers(a, b, r, out, scratch, m: int, n: int, k: int, dtype: str, b_major: str = "mn") -> list[Peer]:
    """``out = A @ B + R``: the PyTorch composition (matmul, add) and addmm when PyTorch is here;
    cublasGemmEx then the memory-speed add, and a device copy of R then cublasGemmEx with beta = 1."""
    cp = cupy()
    peers = []
    if torch_available():
        import torch
        ta, tb, tr, td, ts = (torch_view(x, dtype) for x in (a, b, r, out, scratch))
        bm = tb if b_major == "mn" else tb.t()

        def composed():
            torch.matmul(ta, bm, out=ts)
            torch.add(ts, tr, out=td)
        peers.append(Peer("torch.matmul + torch.add", on_cupy_stream(composed), "composition"))
        peers.append(Peer("torch.addmm", on_cupy_stream(lambda: torch.addmm(tr, ta, bm, out=td)), "addmm"))
    gemm, add = gemm_ex(a, b, scratch, m, n, k, dtype, b_major), elementwise16("add", dtype, scratch, out, r)

    def composed_cublas():
        gemm()
        add()
    peers.append(Peer("cublasGemmEx + add", composed_cublas, "composition"))
    beta1 = gemm_ex(a, b, out, m, n, k, dtype, b_major, beta=1.0)

    def copy_then_gemm():
        cp.copyto(out, r)
        beta1()
    peers.append(Peer("copy R + cublasGemmEx (beta 1)", copy_then_gemm, "addmm"))
    return peers


def activation_peers(a, b, d0, d1, m: int, n: int, k: int, dtype: str, b_major: str = "mn") -> list[Peer]:
    """``d0 = A @ B`` and ``d1 = relu(A)``: torch.matmul + torch.clamp(min=0), and cublasGemmEx + the
    memory-speed ReLU."""
    peers = []
    if torch_available():
        import torch
        ta, tb, t0, t1 = (torch_view(x, dtype) for x in (a, b, d0, d1))
        bm = tb if b_major == "mn" else tb.t()

        def composed():
            torch.matmul(ta, bm, out=t0)
            torch.clamp(ta, min=0, out=t1)  # relu into a preallocated output (torch.relu takes no out=)
        peers.append(Peer("torch.matmul + torch.clamp", on_cupy_stream(composed), "composition"))
    gemm, relu = gemm_ex(a, b, d0, m, n, k, dtype, b_major), elementwise16("relu", dtype, a, d1)

    def composed_cublas():
        gemm()
        relu()
    peers.append(Peer("cublasGemmEx + relu", composed_cublas, "composition"))
    return peers


# -- checking and choosing ---------------------------------------------------------------------------
def verify_peer(peer: Peer, outs: Mapping[str, Any], want: Mapping[str, Any], dtype: str, tol: float) -> dict[str, float]:
    """Poison ``outs``, run ``peer``, compare each with the float32 ``want``: {output: error}.
    Raises ``VerificationError`` naming the peer when one disagrees (a peer is never timed unchecked)."""
    cp = cupy()
    for arr in outs.values():
        arr.fill(_POISON if arr.dtype == cp.uint16 else cp.nan)
    peer.call()
    cp.cuda.get_current_stream().synchronize()
    errs = {}
    for name, arr in outs.items():
        got, ref = to_float32(arr, dtype), want[name]
        scale = float(cp.abs(ref).max()) or 1.0
        err, nans = float(cp.abs(got - ref).max()) / scale, int(cp.isnan(got).sum())
        if nans or not err <= tol:
            raise VerificationError(f"peer {peer.label!r}: output {name} disagrees with the float32 reference "
                                    f"(max relative error {err:.3g}, {nans} NaN; tolerance {tol})")
        errs[name] = err
    return errs


def fastest(times: Mapping[str, list[float]], labels) -> tuple[str, float]:
    """(label, median ms) of the fastest of ``labels`` in ``times``."""
    meds = {x: statistics.median(times[x]) for x in labels if x in times}
    if not meds:
        raise LookupError("no peer was timed")
    best = min(meds, key=meds.get)
    return best, meds[best]


__all__ = ["ELEMENTWISE16", "GEMM_PEERS", "Peer", "activation_peers", "elementwise16", "fastest", "gemm_ex",
           "gemm_peer_labels", "gemm_peers", "on_cupy_stream", "residual_peers", "torch_available", "torch_view",
           "verify_peer"]

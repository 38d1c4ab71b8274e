"""Compare a kernel's output with its reference on the GPU, in one pass.

One small compiled kernel (cached like generated kernels) reads the output and the float32
reference and accumulates: the squared error and squared reference (for ||out - ref|| / ||ref||),
the largest absolute difference, how many elements are out of tolerance or disagree about NaN
(a poisoned, unwritten element is NaN), and the first such index.  One pass and no temporary
arrays, so verifying 1 GiB operands costs about one extra read of them.  ``compare_on_host`` is
the same rule over NumPy arrays (a host workload's check; the GPU tests hold the kernel to it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..codegen.dtypes import dtype as dtype_of
from ..codegen.ptx import PRELUDE
from ..codegen.source import KernelParam, KernelSource
from ..errors import PgStudioError

#: Elementwise tolerance |out - ref| <= ATOL + RTOL * |ref|, per element type (about 2 ulps).
RTOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
ATOL = {"float32": 1e-6, "float16": 1e-4, "bfloat16": 1e-3}


class VerificationError(PgStudioError, AssertionError):
    """A kernel's output differs from the reference (it is never timed)."""


#: How every result of the null runtime (``runtime.null``) names where it came from.
NULL_RUNTIME = "no GPU: null runtime"
#: What a check of the null runtime says: nothing ran, so nothing was compared.
NOT_RUN = f"not run ({NULL_RUNTIME})"
#: How ``Check.rel_error`` is measured: over the norm (streaming kernels), or the largest error
#: over the largest reference magnitude (GEMM kernels, whose K-long sums round differently).
NORM, PEAK = "norm", "peak"


@dataclass(frozen=True)
class Check:
    """How one output compares with its reference (``ran=False``: it was not compared at all,
    which the null runtime says of every output; such a check is never ``ok``)."""

    tensor: str
    n: int
    rel_error: float  # ||out - ref|| / ||ref|| over elements where both are finite (NORM), or PEAK's
    max_abs: float
    bad: int  # elements out of tolerance or disagreeing about NaN (unwritten ones are NaN)
    first_bad: int  # -1 when none
    out_at_first: float = math.nan
    ref_at_first: float = math.nan
    ran: bool = True
    measure: str = NORM

    @classmethod
    def not_run(cls, tensor: str, n: int) -> "Check":
        """The check of an output nothing computed (the null runtime)."""
        return cls(tensor, n, math.nan, math.nan, 0, -1, ran=False)

    @property
    def ok(self) -> bool:
        return self.ran and self.bad == 0

    def __str__(self) -> str:
        if not self.ran:
            return f"{self.tensor}: {NOT_RUN}"
        what = "rel error" if self.measure == NORM else "max error / max |ref|"
        head = f"{self.tensor}: {what} {self.rel_error:.2e}, max |diff| {self.max_abs:.2e}"
        if self.ok:
            return head + ", all elements within tolerance"
        return (f"{head}, {self.bad} of {self.n} elements wrong; first at index {self.first_bad}: "
                f"kernel {self.out_at_first!r}, reference {self.ref_at_first!r}")


def _compare_source(dtype: str) -> KernelSource:
    dt = dtype_of(dtype)
    code = PRELUDE.split("// -- mbarrier")[0] + dt.scalar + rf"""
extern "C" __global__ void pg_compare_{dtype}(const {dt.c_type}* __restrict__ out, const float* __restrict__ ref,
    const long long n, const float rtol, const float atol, double* __restrict__ acc,
    unsigned long long* __restrict__ counts) {{
  // acc[0] += sum (o-r)^2, acc[1] += sum r^2; counts[0] = max |o-r| bits, counts[1] += bad, counts[2] = min bad index
  double d2 = 0.0, r2 = 0.0, dmax = 0.0;
  unsigned long long bad = 0, first = 0xffffffffffffffffull;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{
    const float o = {dt.to_float("out[i]")};
    const float r = ref[i];
    const bool on = isnan(o), rn = isnan(r);
    bool wrong = on != rn;
    if (!on && !rn) {{
      if (isinf(r) || isinf(o)) wrong = wrong || (o != r);
      else {{
        const double d = (double)o - (double)r;
        d2 += d * d; r2 += (double)r * (double)r; dmax = fmax(dmax, fabs(d));
        wrong = wrong || fabs(d) > (double)atol + (double)rtol * fabs((double)r);
      }}
    }}
    if (wrong) {{ ++bad; if ((unsigned long long)i < first) first = (unsigned long long)i; }}
  }}
  for (int s = 16; s > 0; s >>= 1) {{
    d2 += __shfl_down_sync(0xffffffffu, d2, s);
    r2 += __shfl_down_sync(0xffffffffu, r2, s);
    dmax = fmax(dmax, __shfl_down_sync(0xffffffffu, dmax, s));
    bad += __shfl_down_sync(0xffffffffu, bad, s);
    const unsigned long long f2 = __shfl_down_sync(0xffffffffu, first, s);
    first = f2 < first ? f2 : first;
  }}
  if ((threadIdx.x & 31) == 0) {{
    atomicAdd(&acc[0], d2); atomicAdd(&acc[1], r2);
    atomicMax(&counts[0], (unsigned long long)__double_as_longlong(dmax));
    if (bad) {{ atomicAdd(&counts[1], bad); atomicMin(&counts[2], first); }}
  }}
}}
"""
    params = (KernelParam("out", "ptr", dtype), KernelParam("ref", "ptr", "float32"), KernelParam("n", "i64"))
    return KernelSource(f"compare_{dtype}", code, f"pg_compare_{dtype}", 0, (256, 1, 1), None, params)


def compare_on_host(out: Any, ref: Any, dtype: str, tensor: str = "out") -> Check:
    """The comparison kernel's rule (module docstring) over NumPy arrays: what a host workload is
    checked by, and what the GPU test holds the kernel to."""
    import numpy as np

    from .data import to_float32
    o = to_float32(np, out, dtype).astype(np.float64)
    r = np.asarray(ref, dtype=np.float32).astype(np.float64)
    o_nan, r_nan = np.isnan(o), np.isnan(r)
    both = ~o_nan & ~r_nan
    infinite = both & (np.isinf(o) | np.isinf(r))
    finite = both & ~infinite
    d = np.zeros_like(o)
    d[finite] = o[finite] - r[finite]
    limit = float(np.float32(ATOL[dtype])) + float(np.float32(RTOL[dtype])) * np.abs(np.where(finite, r, 0.0))
    wrong = (o_nan != r_nan) | (infinite & (o != r)) | (finite & (np.abs(d) > limit))
    d2, r2 = float((d * d).sum()), float((np.where(finite, r, 0.0) ** 2).sum())
    rel = math.sqrt(d2 / r2) if r2 > 0 else (0.0 if d2 == 0 else math.inf)
    bad = int(wrong.sum())
    first = int(np.argmax(wrong)) if bad else -1
    at = (float(o[first]), float(r[first])) if bad else (math.nan, math.nan)
    return Check(tensor, int(o.size), rel, float(np.abs(d).max()) if d.size else 0.0, bad, first, *at)


def compare(out: Any, ref: Any, dtype: str, tensor: str = "out") -> Check:
    """Compare stored ``out`` with the float32 ``ref`` (CuPy arrays of equal length; NumPy ones are
    compared on the host by the same rule, ``compare_on_host``)."""
    if type(out).__module__.split(".")[0] == "numpy":
        return compare_on_host(out, ref, dtype, tensor)
    import numpy as np

    from ._cupy import cupy, sm_count
    from .compile import load
    cp = cupy()
    n = int(out.size)
    lk = load(_compare_source(dtype))
    acc = cp.zeros(2, dtype=cp.float64)
    counts = cp.array([0, 0, np.iinfo(np.uint64).max], dtype=cp.uint64)
    sms = sm_count()
    blocks = max(1, min(sms * 8, -(-n // 256)))
    lk.kernel((blocks,), (256,), (out, ref, np.int64(n), np.float32(RTOL[dtype]), np.float32(ATOL[dtype]), acc, counts))
    a, c = acc.get(), counts.get()
    rel = math.sqrt(a[0] / a[1]) if a[1] > 0 else (0.0 if a[0] == 0 else math.inf)
    max_abs = float(np.array([c[0]], dtype=np.uint64).view(np.float64)[0])
    bad, first = int(c[1]), (int(c[2]) if int(c[1]) else -1)
    o_at = r_at = math.nan
    if bad:
        from .data import to_float32
        o_at = float(to_float32(cp, out[first:first + 1], dtype).get()[0])
        r_at = float(ref[first:first + 1].get()[0])
    return Check(tensor, n, rel, max_abs, bad, first, o_at, r_at)


__all__ = ["ATOL", "Check", "NORM", "NOT_RUN", "NULL_RUNTIME", "PEAK", "RTOL", "VerificationError", "compare",
           "compare_on_host"]

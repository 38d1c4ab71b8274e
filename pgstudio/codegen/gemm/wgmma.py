"""sm_90a warpgroup MMA (wgmma) helpers, as CUDA C++ text.

How a GEMM design's ``umma`` kind runs on Hopper (sm_90a), which has no tensor memory:

* the MMA task is one or more warpgroups (4 warps starting at a warp index divisible by 4),
  which tile the BM x BN block along M first, then along N; each warpgroup issues
  ``wgmma.mma_async`` m64nNk16 (fp16 / bf16) or m64nNk8 (tf32) instructions with both operands
  read from shared memory through swizzled-panel descriptors (128-, 64- or 32-byte swizzle), and
  keeps its part of the accumulator in fp32 registers (``acc[R][N/2]`` per thread, fragment
  layout below);
* an umma *consumer release* ("the MMA has read the stage") is one elected arrive per MMA
  warpgroup, issued after that warpgroup's ``wgmma.wait_group`` has retired the wgmma group that
  read the stage (the stage's empty barrier counts one arrival per warpgroup);
* an umma *producer commit* ("the results are in place") is one elected arrive issued after the
  accumulator registers have been written to a shared-memory staging buffer (one per
  accumulator stage), which the epilogue task drains.

Accumulator fragment of thread t (warp w = t/32 of its warpgroup, lane l) for register i::

    row(i) = 16*w + l/4 + 8*((i >> 1) & 1)        col(i) = 8*(i >> 2) + 2*(l % 4) + (i & 1)
"""

from __future__ import annotations

from ...analysis.buildable.gemm_limits import MAX_BN as MAX_N

__all__ = ["SWIZZLE_MODE", "GUARD", "helpers", "mma_function"]

#: wgmma operand type names by pgstudio dtype (float32 operands run as tf32).
AB_TYPE = {"float16": "f16", "bfloat16": "bf16", "float32": "tf32"}
#: K of one wgmma by operand type: 32 bytes of each row.
WGMMA_K = {"float16": 16, "bfloat16": 16, "float32": 8}
#: Descriptor layout type (bits 62-63) by swizzle width in bytes.
SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}

GUARD = "defined(__CUDA_ARCH_FEAT_SM90_ALL)"


def helpers() -> str:
    """Descriptor, fence / commit / wait and setmaxnreg helpers (sm_90a only)."""
    return r"""
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// sm_90 shared-memory matrix descriptor: start, leading / stride byte offsets, swizzle mode
// (1: 128-byte, 2: 64-byte, 3: 32-byte).
__device__ __forceinline__ u64 gmma_desc(u32 addr, u32 lbo, u32 sbo, u32 mode) {
  return (u64)((addr & 0x3FFFFu) >> 4) | ((u64)((lbo & 0x3FFFFu) >> 4) << 16)
       | ((u64)((sbo & 0x3FFFFu) >> 4) << 32) | ((u64)mode << 62);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}
#endif
"""


def mma_function(n: int, dtype: str, trans_b: int) -> tuple[str, str]:
    """(name, CUDA text) of one m64nNkK fp32-accumulate wgmma with smem operands (K = 16 for
    fp16 / bf16, 8 for tf32).

    ``trans_b`` 1 reads B N-major (B stored K x N), 0 K-major (B stored N x K); tf32 reads K-major
    only (wgmma transposes 16-bit types only)."""
    if dtype not in AB_TYPE:
        raise ValueError(f"wgmma takes float16, bfloat16 or float32 (tf32) inputs, got {dtype!r}")
    if n % 8 or not 8 <= n <= MAX_N:
        raise ValueError(f"wgmma m64nNk{WGMMA_K[dtype]} needs N a multiple of 8 in 8..{MAX_N}, got {n}")
    ab, k = AB_TYPE[dtype], WGMMA_K[dtype]
    if ab == "tf32" and trans_b:
        raise ValueError("wgmma reads tf32 B K-major only (trans_b=0)")
    nr = n // 2
    name = f"wgmma_m64n{n}k{k}_{ab}_tb{trans_b}"
    regs = ", ".join(f"%{i}" for i in range(nr))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(nr))
    tail = "1, 1" if ab == "tf32" else f"1, 1, 0, {trans_b}"
    text = (f"#if {GUARD}\n"
            f"__device__ __forceinline__ void {name}(float (&d)[{nr}], u64 da, u64 db, u32 scale_d) {{\n"
            f'  asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nr + 2}, 0;\\n"\n'
            f'    "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ab}.{ab} {{{regs}}}, %{nr}, %{nr + 1}, p, {tail};\\n}}\\n"\n'
            f"    : {outs}\n"
            f'    : "l"(da), "l"(db), "r"(scale_d) : "memory");\n'
            f"}}\n#endif\n")
    return name, text

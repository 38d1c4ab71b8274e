"""sm_100a (Blackwell) tensor-core helpers, as CUDA C++ text: tcgen05 MMA into tensor memory.

On sm_100a the ``umma`` kind maps onto the hardware directly: the accumulator lives in tensor
memory (allocated by one warp of the MMA task with ``tcgen05.alloc``, freed with
``tcgen05.dealloc`` before exit); one elected thread issues ``tcgen05.mma``; an umma release or
commit is ``tcgen05.commit ... mbarrier::arrive::one`` on the barrier, which arrives once every
MMA issued before it has completed (commit-to-mbarrier).  The epilogue reads the accumulator
with ``tcgen05.ld`` (warp w of a warpgroup reads TMEM lanes 32*(w%4) .. +31).

pgstudio compiles this path only (no Blackwell GPU to run it on); it is guarded by
``__CUDA_ARCH_FEAT_SM100_ALL``.
"""

from __future__ import annotations

from ...analysis.buildable.gemm_limits import TMEM_COLUMNS

__all__ = ["GUARD", "KIND", "SWIZZLE_MODE", "helpers", "instr_desc", "tmem_columns"]

GUARD = "defined(__CUDA_ARCH_FEAT_SM100_ALL)"
#: UMMA instruction-descriptor operand formats (kind::f16: f16 0, bf16 1; kind::tf32: tf32 2).
AB_FORMAT = {"float16": 0, "bfloat16": 1, "float32": 2}
#: The tcgen05.mma kind by operand type.
KIND = {"float16": "f16", "bfloat16": "f16", "float32": "tf32"}
#: Shared-memory descriptor layout type (bits 61-63) by swizzle width in bytes.
SWIZZLE_MODE = {128: 2, 64: 4, 32: 6}


def helpers() -> str:
    return r"""
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
// sm_100 UMMA shared-memory descriptor: sm_90 fields + fixed 0b001 at bits 46-48 + the layout
// type at bits 61-63 (2: 128-byte swizzle, 4: 64-byte, 6: 32-byte).
__device__ __forceinline__ u64 umma_desc(u32 addr, u32 lbo, u32 sbo, u32 mode) {
  return (u64)((addr & 0x3FFFFu) >> 4) | ((u64)((lbo & 0x3FFFFu) >> 4) << 16)
       | ((u64)((sbo & 0x3FFFFu) >> 4) << 32) | ((u64)1 << 46) | ((u64)mode << 61);
}
__device__ __forceinline__ void tmem_alloc(u32 slot, u32 ncols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" :: "r"(slot), "r"(ncols) : "memory");
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void tmem_dealloc(u32 taddr, u32 ncols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" :: "r"(taddr), "r"(ncols) : "memory");
}
__device__ __forceinline__ void tc_fence_before() { asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"); }
__device__ __forceinline__ void tc_fence_after() { asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"); }
__device__ __forceinline__ void umma_f16(u32 tmem_d, u64 da, u64 db, u32 idesc, u32 accumulate) {
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
               "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n\t}"
               :: "r"(tmem_d), "l"(da), "l"(db), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void umma_tf32(u32 tmem_d, u64 da, u64 db, u32 idesc, u32 accumulate) {
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
               "tcgen05.mma.cta_group::1.kind::tf32 [%0], %1, %2, %3, p;\n\t}"
               :: "r"(tmem_d), "l"(da), "l"(db), "r"(idesc), "r"(accumulate) : "memory");
}
// Arrives once on bar when every tcgen05 op issued before by this thread has completed.
__device__ __forceinline__ void umma_commit(u32 bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void tmem_ld8(u32 taddr, float (&v)[8]) {
  u32 r[8];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
               : "r"(taddr));
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  #pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = __uint_as_float(r[e]);
}
#endif
"""


def instr_desc(m: int, n: int, dtype: str, trans_b: int) -> int:
    """The 32-bit kind::f16 / kind::tf32 instruction descriptor: f32 D, A/B format, B major-ness,
    N>>3, M>>4."""
    if m not in (64, 128):
        raise ValueError(f"tcgen05.mma cta_group::1 takes M 64 or 128, got {m}")
    if n % 16 or not 16 <= n <= 256:
        raise ValueError(f"tcgen05.mma takes N a multiple of 16 in 16..256, got {n}")
    fmt = AB_FORMAT[dtype]
    return (1 << 4) | (fmt << 7) | (fmt << 10) | (trans_b << 16) | ((n >> 3) << 17) | ((m >> 4) << 24)


def tmem_columns(n: int, stages: int) -> int:
    """Columns to allocate for ``stages`` fp32 accumulators of N columns: a power of 2 >= 32."""
    need = n * stages
    if need > TMEM_COLUMNS:
        raise ValueError(f"{stages} accumulator stage(s) of {n} fp32 columns need {need} tensor-memory columns, "
                         f"more than the {TMEM_COLUMNS} a CTA has")
    cols = 32
    while cols < need:
        cols *= 2
    return cols

"""The CUDA C++ prelude of generated GEMM kernels: mbarrier, TMA, cp.async, watchdog, fp16 / bf16
packing; the tile scheduler (``scheduler.py``) adds the persistent tile order.  Pure inline PTX and builtins, so NVRTC needs no headers.

Watchdog record (``int diag[16]``, zeroed by the host before each launch)::

    [0] status: 1 a wait timed out, 2 shared memory not 1024-byte aligned, 3 built for another arch
    [1] block  [2] thread  [3] barrier slot  [4] stage  [5] parity  [6] tile  [7] k tile
    [8] microseconds waited  [9] task index
"""

from __future__ import annotations

from ..ptx import MBARRIER, TYPES
from .scheduler import GROUP_M, TILE_ORDER

__all__ = ["DIAG_WORDS", "STATUS", "SETMAXNREG", "setmaxnreg", "prelude"]

DIAG_WORDS = 16
STATUS = {1: "a barrier wait timed out", 2: "dynamic shared memory is not 1024-byte aligned",
          3: "the kernel was built for another architecture than the GPU runs"}

PRELUDE = TYPES + MBARRIER + r"""
struct __align__(64) TmaDesc { u64 opaque[16]; };   // byte image of a CUtensorMap

__device__ __forceinline__ void tma_load_2d(u32 dst, const TmaDesc* map, int c0, int c1, u32 bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];" :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
// TMA store of one box from shared memory (a bulk async-group); commit, then wait until the
// engine has read the shared memory (.read) or finished writing global memory.
__device__ __forceinline__ void tma_store_2d(const TmaDesc* map, u32 src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               :: "l"(map), "r"(src), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void cp_async_16(u32 dst, const void* src, u32 src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void named_bar_sync(u32 id, u32 nthreads) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(nthreads) : "memory");
}
__device__ __forceinline__ void st_shared_v4(u32 addr, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" :: "r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
__device__ __forceinline__ uint4 ld_shared_v4(u32 addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
  return v;
}

__device__ __forceinline__ void st_shared_u32(u32 addr, u32 v) {
  asm volatile("st.shared.u32 [%0], %1;" :: "r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void st_shared_f2(u32 addr, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" :: "r"(addr), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ u32 ld_shared_u32(u32 addr) {
  u32 v; asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory"); return v;
}

// -- 16-bit float packing (no cuda_fp16.h under NVRTC) --
__device__ __forceinline__ u32 pack_float16x2(float lo, float hi) {
  u32 r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
__device__ __forceinline__ u32 pack_bfloat16x2(float lo, float hi) {
  u32 r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
__device__ __forceinline__ void unpack_float16x2(u32 x, float& lo, float& hi) {
  asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;\n\t}"
      : "=f"(lo), "=f"(hi) : "r"(x));
}
__device__ __forceinline__ void unpack_bfloat16x2(u32 x, float& lo, float& hi) {
  lo = __uint_as_float(x << 16); hi = __uint_as_float(x & 0xFFFF0000u);
}

// -- watchdog: every barrier wait is bounded; the first waiter to time out writes diag --
__device__ __noinline__ void wd_report(int* abort_flag, int* diag, int status, int slot, int stage, u32 parity,
                                       int tile, int kt, u64 waited_ns, int task) {
  if (atomicCAS(abort_flag, 0, 1) == 0) {
    diag[1] = blockIdx.x; diag[2] = threadIdx.x; diag[3] = slot; diag[4] = stage; diag[5] = (int)parity;
    diag[6] = tile; diag[7] = kt; diag[8] = (int)(waited_ns / 1000); diag[9] = task;
    __threadfence();
    diag[0] = status;
  }
}
__device__ __forceinline__ bool wd_wait_slow(u32 bar, u32 parity, int* abort_flag, int* diag, u64 budget_ns,
                                          int slot, int stage, int tile, int kt, int task) {
  const u64 t0 = pg_globaltimer();
  for (u32 spin = 1;; ++spin) {
    if (pg_mbar_try_wait(bar, parity)) return true;
    if ((spin & 15) == 0) {
      if (*(volatile int*)abort_flag) return false;
      const u64 dt = pg_globaltimer() - t0;
      if (dt > budget_ns) { wd_report(abort_flag, diag, 1, slot, stage, parity, tile, kt, dt, task); return false; }
    }
  }
}
// false: timed out, or another thread aborted the launch; the caller leaves its loops.
__device__ __forceinline__ bool wd_wait(u32 bar, u32 parity, int* abort_flag, int* diag, u64 budget_ns,
                                        int slot, int stage, int tile, int kt, int task) {
  if (pg_mbar_try_wait(bar, parity)) return true;
  return wd_wait_slow(bar, parity, abort_flag, diag, budget_ns, slot, stage, tile, kt, task);
}
"""


#: A warpgroup's setmaxnreg (sm_90a, sm_100a): hand registers back to the block's pool, or take
#: more from it (``analysis.buildable.registers``: the layout a design asks for, its budget checked).
SETMAXNREG = r"""
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(__CUDA_ARCH_FEAT_SM100_ALL)
template <int N> __device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(N)); }
template <int N> __device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(N)); }
#endif
"""


def setmaxnreg(value: int, launch: int) -> str:
    """The line that gives a warpgroup ``value`` registers per thread after launching with ``launch``."""
    verb, why = ("inc", "take from the pool") if value > launch else ("dec", "give back to the pool")
    return f"setmaxnreg_{verb}<{value}>();  // {launch} -> {value} registers per thread ({why})"


def prelude() -> str:
    """The prelude, then the persistent tile order of the tile scheduler."""
    return f"#define PG_GROUP_M {GROUP_M}\n" + PRELUDE + TILE_ORDER

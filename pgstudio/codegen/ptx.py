"""CUDA text for the synchronisation primitives every generated kernel uses.

mbarrier init / fence / arrive / arrive.expect_tx / try_wait, the 1-D bulk copy that completes
transaction bytes on a barrier, cp.async with a no-increment barrier arrive (AsyncLoad), and the
watchdog: a bounded wait on ``%globaltimer`` that, on expiry, raises an abort flag in global
memory that every other waiting thread polls, so all roles leave their loops and the kernel ends
with a usable CUDA context (no ``__trap()``).  Every wait that gives up offers itself to a small
record (wait site, stage, parity, iteration, block, thread, how long); the one that began
earliest is kept, because in a deadlock the first thread to block is the one whose barrier is
wrong and the others block because of it.

Pure inline PTX with our own typedefs: NVRTC needs no include path, and the same text compiles
for sm_90a and sm_100a.  Spellings follow the PTX ISA (see the project's Hopper fact sheet).
"""

from __future__ import annotations

#: Ints in the watchdog record (a global int32 array zeroed before each launch).
RECORD_INTS = 16
#: Field -> index in the record.  ``aborted`` is also the abort flag every role polls.
RECORD = {"aborted": 0, "site": 1, "stage": 2, "parity": 3, "iteration": 4, "block": 5, "thread": 6,
          "waited_us": 7, "complete": 8, "lock": 9, "start_ns_lo": 10, "start_ns_hi": 11}

#: Types every generated kernel shares (NVRTC has no headers to give them).
TYPES = r"""
typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;

__device__ __forceinline__ u32 pg_smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }

"""

#: The mbarrier primitives, in PTX ISA spelling; the streaming and GEMM kernels both use these.
MBARRIER = r"""
// -- mbarrier -----------------------------------------------------------------------------------
__device__ __forceinline__ void pg_mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void pg_mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void pg_mbar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void pg_mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ bool pg_mbar_try_wait(u32 bar, u32 parity) {
  u32 ok;
  asm volatile("{\n\t.reg .pred P;\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\n\t"
               "selp.u32 %0, 1, 0, P;\n\t}"
               : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
  return ok != 0;
}
// The barrier receives this thread's arrival once all its earlier cp.async have landed
// (.noinc: the async arrival IS the thread's arrival; the init count counts producer threads).
__device__ __forceinline__ void pg_cp_async_arrive_noinc(u32 bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(bar) : "memory");
}
__device__ __forceinline__ u64 pg_globaltimer() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
"""

PRELUDE = TYPES + MBARRIER + r"""
// -- copies -------------------------------------------------------------------------------------
// 1-D bulk copy global -> shared; the copy engine completes `bytes` on the barrier (16-byte units).
__device__ __forceinline__ void pg_bulk_g2s(u32 dst, const void* src, u32 bytes, u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
// The same with an L2 cache policy (e.g. evict_first for data read once).
__device__ __forceinline__ void pg_bulk_g2s_hint(u32 dst, const void* src, u32 bytes, u32 bar, u64 policy) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
               :: "r"(dst), "l"(src), "r"(bytes), "r"(bar), "l"(policy) : "memory");
}
__device__ __forceinline__ u64 pg_policy_evict_first() {
  u64 p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
// 16 bytes global -> shared through cp.async (AsyncLoad producers).
__device__ __forceinline__ void pg_cp_async16(u32 dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void pg_st_global_cs(void* p, uint4 v) {
  asm volatile("st.global.cs.v4.b32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// -- watchdog -----------------------------------------------------------------------------------
// Offer this wait to the record: the wait that began EARLIEST among all that gave up is kept (in a
// deadlock the first thread to block is the one whose barrier is wrong; later ones block because of
// it).  A tiny lock orders the writers; it is taken only while the kernel is aborting.
__device__ __noinline__ void pg_wd_offer(int* rec, u64 t0, int site, int stage, u32 parity, long long iter,
                                         u64 waited) {
  volatile u64* best = reinterpret_cast<volatile u64*>(rec + 10);
  if (*(volatile int*)(rec + 8) && t0 >= *best) return;
  while (atomicCAS(rec + 9, 0, 1) != 0) { }
  __threadfence();
  if (!*(volatile int*)(rec + 8) || t0 < *best) {
    rec[1] = site; rec[2] = stage; rec[3] = (int)parity; rec[4] = (int)iter;
    rec[5] = (int)blockIdx.x; rec[6] = (int)threadIdx.x; rec[7] = (int)(waited / 1000ull);
    *best = t0;
    __threadfence();
    *(volatile int*)(rec + 8) = 1;
  }
  __threadfence();
  atomicExch(rec + 9, 0);
}
// A wait that gives up after `budget_ns` (raising the abort flag) or once the flag is up.
__device__ __noinline__ bool pg_wait_slow(int* rec, u64 budget_ns, u32 bar, u32 parity, int site, int stage,
                                          long long iter) {
  const u64 t0 = pg_globaltimer();
  while (true) {
    if (pg_mbar_try_wait(bar, parity)) return true;
    const bool aborted = *(volatile int*)rec != 0;
    const u64 dt = pg_globaltimer() - t0;
    if (aborted || dt > budget_ns) {
      if (!aborted) atomicExch(rec, 1);
      pg_wd_offer(rec, t0, site, stage, parity, iter, dt);
      return false;
    }
  }
}
// false: timed out or aborted elsewhere; the caller leaves its loop (and arrives no more).
__device__ __forceinline__ bool pg_wait(int* rec, u64 budget_ns, u32 bar, u32 parity, int site, int stage,
                                        long long iter) {
  if (pg_mbar_try_wait(bar, parity)) return true;
  return pg_wait_slow(rec, budget_ns, bar, parity, site, stage, iter);
}
// An aborting copy issuer lets copies it already issued land before its block may exit.
__device__ __noinline__ void pg_drain(u64 ns) {
  const u64 t0 = pg_globaltimer();
  while (pg_globaltimer() - t0 < ns) { }
}
"""

#: Nanoseconds an aborting bulk-copy issuer waits for its copies in flight to land.
DRAIN_NS = 50_000


def record_field(name: str) -> int:
    """Index of ``name`` in the watchdog record."""
    return RECORD[name]


__all__ = ["DRAIN_NS", "MBARRIER", "PRELUDE", "TYPES", "RECORD", "RECORD_INTS", "record_field"]

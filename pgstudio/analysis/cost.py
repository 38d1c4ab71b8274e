"""The simulator's cost model: how long each step of a schedule takes, in nanoseconds.

One block runs on one SM, and every SM of the GPU runs one such block (a persistent kernel), so
the block gets its share of the GPU-wide resources.  Defaults are H200 (SXM) figures:

================================  ======================================================
bulk copy (tma load)              ``bulk_latency_ns`` + bytes / ``dram_bytes_per_ns``; the
                                  bytes share one memory pipe per block with the stores to
                                  global memory (bandwidth is shared, latency overlaps)
thread copies and elementwise     bytes / min(threads x ``thread_bytes_per_ns``, the memory
work (read, store, async load)    they touch: ``smem_bytes_per_ns`` or the memory pipe)
MMA                               2*M*N*K flops / ``mma_flops_per_ns[dtype]``
barrier operation                 ``barrier_ns`` (arrive, a wait that passes, a probe)
issuing a bulk copy               ``issue_ns``
================================  ======================================================

H200: HBM3e 4.8 TB/s over 132 SMs -> 36.4 B/ns per block; dense FP16/BF16 tensor cores
989 TFLOP/s -> 7.5 TFLOP/s per SM (TF32 half of it); shared memory 128 B per clock at 1.98 GHz.
A copy's latency of ~600 ns is a global-memory round trip under load.  All numbers are
overridable: ``CostModel(dram_bytes_per_ns=50.0)`` or ``H200.replace(barrier_ns=5)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

#: Streaming multiprocessors of an H200 SXM.
H200_SMS = 132


@dataclass(frozen=True)
class CostModel:
    """Step costs; see the module docstring for what each field means and where it comes from."""

    clock_ghz: float = 1.98
    dram_bytes_per_ns: float = 4800.0 / H200_SMS
    bulk_latency_ns: float = 600.0
    issue_ns: float = 20.0
    smem_bytes_per_ns: float = 128 * 1.98
    thread_bytes_per_ns: float = 1.98  # a thread moves ~1 byte per clock
    mma_flops_per_ns: dict = field(default_factory=lambda: {
        "float16": 989_400.0 / H200_SMS, "bfloat16": 989_400.0 / H200_SMS, "float32": 494_700.0 / H200_SMS})
    barrier_ns: float = 10.0

    def replace(self, **changes) -> "CostModel":
        return dataclasses.replace(self, **changes)

    # -- per step ----------------------------------------------------------------------------
    def copy_transfer(self, nbytes: int) -> float:
        """Time a bulk copy occupies the memory pipe."""
        return nbytes / self.dram_bytes_per_ns

    def thread_rate(self, threads: int, memory_bytes_per_ns: float) -> float:
        return min(max(threads, 1) * self.thread_bytes_per_ns, memory_bytes_per_ns)

    def smem_work(self, nbytes: int, threads: int) -> float:
        """Threads reading or writing ``nbytes`` of shared memory (a read, an elementwise op)."""
        return nbytes / self.thread_rate(threads, self.smem_bytes_per_ns) if nbytes else 0.0

    def gmem_threads(self, nbytes: int, threads: int) -> float:
        """Threads moving ``nbytes`` to or from global memory, not counting the pipe they share."""
        return nbytes / (max(threads, 1) * self.thread_bytes_per_ns) if nbytes else 0.0

    def mma(self, flops: int, dtype: str) -> float:
        rate = self.mma_flops_per_ns.get(dtype) or self.mma_flops_per_ns["float16"]
        return flops / rate if flops else self.barrier_ns

    def describe(self) -> tuple[tuple[str, object], ...]:
        """The figures as (name, value) pairs (hashable), for a timeline's metadata."""
        out = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out.append((f.name, tuple(sorted(value.items())) if isinstance(value, dict) else value))
        return tuple(out)


#: The default model.
H200 = CostModel()

__all__ = ["CostModel", "H200", "H200_SMS"]

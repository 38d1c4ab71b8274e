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
    mma_overhead_ns: float = 0.0  # an MMA step's cost beyond its flops (the consumer's loop per k tile)
    mma_release_lag: int = 0  # N > 0: an MMA task gives a stage back N k steps late (sm_90a wgmma)

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
        return flops / rate + self.mma_overhead_ns if flops else self.barrier_ns

    def describe(self) -> tuple[tuple[str, object], ...]:
        """The figures as (name, value) pairs (hashable), for a timeline's metadata."""
        out = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out.append((f.name, tuple(sorted(value.items())) if isinstance(value, dict) else value))
        return tuple(out)


#: The default model.
H200 = CostModel()


def calibrated_cost(design, machine=None) -> CostModel:
    """The step costs of one block of ``design`` on ``machine`` (default: the calibrated one,
    ``fitted.default_machine``), from the kernel-time model (``predict.py``): the load latency
    under load, the block's share of the bandwidth every active block draws on (L2 and HBM),
    the SM's tensor rate plus the per-k-tile cost, and MMA releases as many k steps late as the
    sm_90a kernel gives them (``gemm_limits.wgmma_in_flight``).  A
    simulation with it has the period ``predict`` explains."""
    from .buildable.gemm_limits import wgmma_in_flight
    from .predict import prediction
    from .workload import GEMM, workload

    w = workload(design)
    p = prediction(design, machine)
    m = machine
    if m is None:
        from .fitted import default_machine
        m = default_machine()
    per_block = (w.load_bytes + (w.store_bytes if w.kind == "stream" else 0)) / p.bandwidth_ns if p.bandwidth_ns else 1e9
    rate = m.tensor_rate(w.dtype)
    # the simulator queues a copy's bytes on the block's pipe before its latency: keep the round trip
    latency = max(p.latency_ns - w.load_bytes / per_block, 0.25 * p.latency_ns)
    return CostModel(clock_ghz=H200.clock_ghz, dram_bytes_per_ns=per_block, bulk_latency_ns=latency,
                     issue_ns=m.issue_ns, smem_bytes_per_ns=m.smem_bytes_per_ns,
                     thread_bytes_per_ns=m.thread_bytes_per_ns,
                     # the simulator looks the rate up by the accumulator's type (float32): give it the operands'
                     mma_flops_per_ns={"float16": rate, "bfloat16": rate, "float32": rate},
                     barrier_ns=m.barrier_ns, mma_overhead_ns=m.k_tile_overhead_ns,
                     mma_release_lag=wgmma_in_flight(w.stages) if w.kind == GEMM else 1)


def design_cost(design) -> tuple[CostModel, str]:
    """(the step costs to simulate ``design`` with, what they are): the calibrated model
    (``calibrated_cost``: the fitted device constants and this design's share of the device) where
    the kernel-time model can read the design's problem, so the timeline a user edits against
    says what the GPU does; else the datasheet ``H200`` model (a design with no problem size)."""
    from .fitted import default_machine
    try:
        return calibrated_cost(design), f"calibrated model: {default_machine().label()}"
    except (ArithmeticError, KeyError, ValueError):
        return H200, "datasheet H200 model (the design's problem gives the calibrated model nothing to size)"


__all__ = ["CostModel", "H200", "H200_SMS", "calibrated_cost", "design_cost"]

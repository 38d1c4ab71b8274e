"""How long a design's whole kernel takes on a device: a model a teacher can explain.

A persistent kernel runs its work (tiles, or GEMM output tiles x K parts) in *rounds*: every
block takes one unit, the last round only the units that are left (the tail).  Inside a unit a
block runs a pipeline whose steady *period* (time per k tile, or per tile) is the slowest of:

================  ===========================================================================
``compute``       the consumer's own work per iteration: a GEMM's MMA flops at the SM's tensor
                  rate plus ``k_tile_overhead_ns``; a streaming consumer's bytes through its
                  threads, and its barrier actions
``issue``         the producer issuing its copies (``issue_ns`` each) and barrier actions
``sm sync``       the SM's asynchronous unit, shared by the blocks on it: every copy
                  (``sm_copy_ns``), barrier action (``sm_barrier_ns``) and thread load /
                  store of a stage (``sm_thread_step_ns``) of every task of every block there
                  passes through it (what limits small stages at several blocks per SM,
                  however many stages they have)
``memory``        Little's law for the S stages in flight: a stage is busy for one load latency
                  ``L`` plus the time the consumer keeps it, so S stages serve at most
                  ``S / (L + hold)`` iterations per ns -- ``L / (S - lag)`` for a GEMM,
                  whose consumer gives a stage back ``lag`` k steps late, ``(L + compute) / S`` for a
                  streaming one; and the bandwidth every active block shares (L2 for a GEMM's
                  operands, HBM for the bytes that miss L2 and for streams).  The two combine as
                  a smooth maximum (``knee``): near the corner, queueing costs a little of both.
================  ===========================================================================

A GEMM unit adds the accumulator's write-out to the staging buffer; its epilogue (the TMA store,
a residual load) overlaps the next unit's mainloop and is exposed only when it is longer, and
after the last unit.  Clusters share one operand tile by multicast (each block loads half of it);
split-K units add their fp32 partials' round trip.  The whole kernel adds ``launch_ns`` and one
load latency of fill, and can never beat its HBM bytes at the sustained bandwidth.

``predict(design)`` is that time in milliseconds for the design's own problem with the default
(calibrated) machine; ``prediction(design)`` says which limit set it.

    >>> from pgstudio import examples
    >>> ms = predict(examples.merge_gemm())
    >>> 0.1 < ms < 0.3
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import DesignError
from ..model.design import Design
from ..model.targets import DTYPE_BYTES
from .buildable.gemm_limits import stream_k_units, wgmma_in_flight
from .guard import on_errors
from .machine import Machine
from .workload import GEMM, Workload, workload

#: Output tiles of one group of M-tile rows the GEMM kernel walks before moving along N (its
#: persistent tile order, which keeps A and B panels in L2 while a group is worked on).
GROUP_M = 8
#: Registers per thread a streaming kernel is assumed to use when nothing was measured.
STREAM_REGISTERS = 32
#: Bytes per SM the runtime reserves beside a block's dynamic shared memory.
SMEM_RESERVED = 1024
#: The smallest ``stages - release_lag`` the model divides by (one stage barely pipelines).
MIN_SLACK = 0.1


@dataclass(frozen=True)
class Prediction:
    """A predicted kernel time and its parts (nanoseconds unless named otherwise)."""

    design: str
    ms: float
    period_ns: float  # steady period of a full round (per k tile or per tile)
    bound: str  # which limit sets the period: compute | issue | latency | bandwidth
    rounds: int  # rounds of units over the persistent grid (the last one may be partial)
    blocks: int  # blocks of the grid
    units: int  # work units (tiles, or output tiles x K parts)
    iterations: int  # pipeline iterations per unit (k tiles, or 1 tile)
    machine: str = ""
    latency_ns: float = 0.0  # one load's latency under load (L2 hits and HBM misses weighed)
    bandwidth_ns: float = 0.0  # per iteration of a full round: the shared bandwidth's limit

    def summary(self) -> str:
        return (f"predicted {self.ms * 1000:.1f} us for {self.design}: {self.units} units on {self.blocks} blocks "
                f"({self.rounds} round(s)), {self.period_ns:.0f} ns per iteration, {self.bound}-bound "
                f"[{self.machine}]")

    def beside(self, measured_ms: float) -> str:
        """'predicted 0.1920 ms, measured 0.1885 ms (model +1.9%)': what a pane shows after a benchmark."""
        if not measured_ms > 0:
            return f"predicted {self.ms:.4f} ms, not measured"
        return f"predicted {self.ms:.4f} ms, measured {measured_ms:.4f} ms (model {100 * (self.ms / measured_ms - 1):+.1f}%)"

    def __str__(self) -> str:
        return self.summary()


def soft_max(values: list[float], knee: float) -> float:
    """A maximum that rounds its corner: (sum v^knee)^(1/knee); a large ``knee`` is the plain max."""
    top = max(values)
    if top <= 0 or math.isinf(top):
        return top
    return top * sum((v / top) ** knee for v in values) ** (1.0 / knee)


def blocks_per_sm(w: Workload, m: Machine) -> int:
    """Resident blocks per SM: the measured figure, else what threads, registers (GEMM kernels
    are sized for one block per SM) and shared memory allow."""
    if w.blocks_per_sm:
        return w.blocks_per_sm
    if w.kind == GEMM:
        return 1
    by_threads = m.threads_per_sm // max(w.threads, 32)
    by_regs = m.registers_per_sm // max(w.threads * STREAM_REGISTERS, 1)
    by_smem = m.smem_per_sm // (w.smem_bytes + SMEM_RESERVED)
    return max(1, min(32, by_threads, by_regs, by_smem))


def _limits(compute: float, issue: float, sync: float, latency: float, bandwidth: float,
            knee: float) -> tuple[float, str]:
    memory = soft_max([latency, bandwidth], knee)
    period = max(compute, issue, sync, memory)
    if period == memory:
        return period, "latency" if latency >= bandwidth else "bandwidth"
    return period, max((compute, "compute"), (issue, "issue"), (sync, "sm sync"))[1]


def _sm_sync(w: Workload, m: Machine, on_sm: int) -> float:
    """ns per iteration the SM's asynchronous unit needs for the ``on_sm`` blocks it serves."""
    return on_sm * (w.block_copies * m.sm_copy_ns + w.block_acts * m.sm_barrier_ns
                    + w.block_thread_steps * m.sm_thread_step_ns)


def _rounds(units: int, blocks: int) -> list[tuple[int, int]]:
    """(rounds, active blocks) groups: the full rounds, then the tail."""
    full, tail = divmod(units, blocks)
    return [(full, blocks)] * (full > 0) + [(1, tail)] * (tail > 0)


def _stream_hbm_bytes(w: Workload, m: Machine) -> float:
    """HBM bytes of one streamed tile, stores weighted by their cost: each global input once
    (a second copy of the same tile hits L2), each output once."""
    return (w.unique_load_bytes or w.load_bytes) + m.hbm_write_cost * w.store_bytes


def _stream(w: Workload, m: Machine) -> Prediction:
    tiles = max(1, -(-w.num_elements // max(w.tile_elems, 1)))
    per_sm = blocks_per_sm(w, m)
    blocks = min(tiles, m.sms * per_sm)
    compute = w.consumer_acts * m.barrier_ns + w.consumer_bytes / (max(w.consumer_threads, 1) * m.thread_bytes_per_ns)
    issue = w.copies * m.issue_ns + w.producer_acts * m.barrier_ns
    latency = (m.load_latency_hbm_ns + compute) / max(w.stages, 1)
    total, period0, bound0, bw0 = m.launch_ns + m.load_latency_hbm_ns, 0.0, "", 0.0
    for count, active in _rounds(tiles, blocks):
        on_sm = -(-active // m.sms)
        sm_shared = on_sm * w.consumer_bytes / m.smem_bytes_per_ns  # blocks of one SM share its shared memory
        bandwidth = active * _stream_hbm_bytes(w, m) / m.hbm_sustained
        period, bound = _limits(max(compute, sm_shared), issue, _sm_sync(w, m, on_sm), latency, bandwidth, m.knee)
        total += count * period
        if not bound0:
            period0, bound0, bw0 = period, bound, bandwidth
    floor = m.launch_ns + tiles * _stream_hbm_bytes(w, m) / m.hbm_sustained
    return Prediction(w.design, max(total, floor) * 1e-6, period0, bound0, -(-tiles // blocks), blocks, tiles, 1,
                      m.label(), m.load_latency_hbm_ns, bw0)


def _gemm_hbm_bytes(w: Workload, m: Machine) -> float:
    """Bytes a GEMM moves through HBM: A once (a group's A panels stay in L2), B once if it fits
    in L2 else once per group of ``GROUP_M`` tile rows, the outputs, a residual, split-K partials."""
    esz = DTYPE_BYTES.get(w.dtype, 2)
    a, b = w.m * w.k * esz, w.n * w.k * esz
    tiles_m, tiles_n = -(-w.m // w.bm), -(-w.n // w.bn)
    b_reads = 1 if b <= m.l2_bytes / 2 else -(-tiles_m // GROUP_M)
    k_tiles_all = -(-w.k // w.bk)
    side = tiles_m * k_tiles_all * w.store_bytes * m.hbm_write_cost  # per-k-tile outputs: once per A tile
    tile_io = tiles_m * tiles_n * (w.tile_load_bytes + w.tile_store_bytes * m.hbm_write_cost)
    partials = tiles_m * tiles_n * (w.split_k - 1) * w.bm * w.bn * 4 * 2 if w.split_k > 1 else 0
    return a + b * b_reads + side + tile_io + partials


def _gemm(w: Workload, m: Machine) -> Prediction:
    tiles = -(-w.m // w.bm) * -(-w.n // w.bn)
    units = tiles * max(w.split_k, 1)
    k_tiles_all = -(-w.k // w.bk)
    k_tiles = -(-k_tiles_all // max(w.split_k, 1))
    csize = w.cluster_m * w.cluster_n
    blocks = min(units, (m.sms * blocks_per_sm(w, m)) // csize * csize)
    dp, workers = units, 0
    if w.stream_k:  # the full waves run whole tiles (the rounds below), the rest is shared (_stream_k_tail)
        blocks = m.sms * blocks_per_sm(w, m)
        dp, workers = stream_k_units(tiles, k_tiles_all, blocks)
    l2_per_k = w.load_bytes - w.shared_bytes / 2 if csize > 1 else w.load_bytes  # multicast: half each
    hbm = _gemm_hbm_bytes(w, m)
    l2_total = units * k_tiles * l2_per_k + units * w.tile_load_bytes
    hit = 1.0 - min(1.0, hbm / max(l2_total, 1.0))
    latency_ns = m.load_latency_l2_ns + (1.0 - hit) * (m.load_latency_hbm_ns - m.load_latency_l2_ns)
    compute = (w.consumer_flops / m.tensor_rate(w.dtype) + m.k_tile_overhead_ns + w.consumer_acts * m.barrier_ns)
    issue = w.copies * m.issue_ns + w.producer_acts * m.barrier_ns
    latency = latency_ns / max(w.stages - wgmma_in_flight(w.stages) * m.release_lag, MIN_SLACK)
    hbm_per_k = hbm / max(units * k_tiles, 1)
    writeout = w.staging_bytes / m.smem_bytes_per_ns + _turn_waits(w, m)
    total, period0, bound0, bw0 = m.launch_ns + latency_ns, 0.0, "", 0.0
    epilogue = 0.0
    for count, active in _rounds(dp, blocks):
        bandwidth = max(active * l2_per_k / m.l2_bytes_per_ns, active * hbm_per_k / m.hbm_sustained)
        period, bound = _limits(compute, issue, _sm_sync(w, m, -(-active // m.sms)), latency, bandwidth, m.knee)
        epilogue = max((w.tile_store_bytes + w.tile_load_bytes) * active / m.hbm_sustained + m.load_latency_hbm_ns,
                       _drain(w, m))
        mainloop = k_tiles * period + writeout
        total += count * max(mainloop, epilogue)
        if not bound0:
            period0, bound0, bw0 = period, bound, bandwidth
    if workers:  # the shared tiles' mainloop hides the last whole tile's epilogue, and ends with its own
        total += _stream_k_tail(w, m, tiles - dp, workers, k_tiles_all, (compute, issue, latency),
                                l2_per_k, hbm_per_k, writeout)
    else:
        total += epilogue  # the last unit's epilogue is not hidden behind another mainloop
    floor = m.launch_ns + hbm / m.hbm_sustained
    return Prediction(w.design, max(total, floor) * 1e-6, period0, bound0, -(-units // blocks), blocks, units,
                      k_tiles, m.label(), latency_ns, bw0)


def _drain(w: Workload, m: Machine) -> float:
    """ns the epilogue's ``drain_threads`` take to drain one tile by hand where it reads a
    residual beside the accumulator (``tile_load_bytes``): the staged accumulator and the residual
    read, the sum stored, each thread's share at ``thread_bytes_per_ns``; 0 where the TMA engine
    stores the staging as it is (or where a recorded workload does not know its drain's threads)."""
    if not w.tile_load_bytes or not w.drain_threads:
        return 0.0
    moved = w.staging_bytes + w.tile_load_bytes + w.tile_store_bytes
    return moved / (w.drain_threads * m.thread_bytes_per_ns)


def _turn_waits(w: Workload, m: Machine) -> float:
    """What an MMA task waits between the turns of a tile through its staging buffers
    (``Workload.staging_turns`` through ``staging_stages``): it writes as many turns as there are
    stages without waiting, then each further turn waits for the epilogue to give back the stage
    of an earlier one -- two barrier hand-overs, a copy issued, and the turn drained: read out by
    the TMA engine at the shared-memory rate or, with a residual in column slices
    (``tile_load_bytes``, ``smem_layout.turn_slices``), by the epilogue's threads (``_drain``).
    Through one stage the next slice can only be loaded once the stage is free, so each wait
    also holds the slice's trip from global memory."""
    turns = max(w.staging_turns, 1)
    if turns == 1:
        return 0.0
    stages = max(w.staging_stages, 1)
    per = 2 * m.barrier_ns + m.issue_ns
    if w.tile_load_bytes:
        per += _drain(w, m) / turns
        if stages == 1:
            per += m.load_latency_hbm_ns
    else:
        per += w.staging_bytes / turns / m.smem_bytes_per_ns
    return max(turns - stages, 0) * per


def _stream_k_tail(w: Workload, m: Machine, shared: int, workers: int, k_tiles_all: int,
                   limits: tuple[float, float, float], l2_per_k: float, hbm_per_k: float, writeout: float) -> float:
    """Stream-K: the ``shared`` tiles past the full waves, their k tiles spread evenly over the
    ``workers`` (``gemm_limits.stream_k_units``); each worker's share runs at the period of that
    many active blocks (``limits``: the compute, issue and latency limits of a k tile), then the
    tile's partial sums make one round trip through L2 (written by every worker but the
    finishing one, read by it) before the finisher's epilogue."""
    compute, issue, latency = limits
    share = -(-shared * k_tiles_all // workers)
    bandwidth = max(workers * l2_per_k / m.l2_bytes_per_ns, workers * hbm_per_k / m.hbm_sustained)
    period, _ = _limits(compute, issue, _sm_sync(w, m, -(-workers // m.sms)), latency, bandwidth, m.knee)
    partials = 2 * w.bm * w.bn * 4 * workers / m.l2_bytes_per_ns + m.load_latency_l2_ns
    epilogue = w.tile_store_bytes * shared / m.hbm_sustained + m.load_latency_hbm_ns
    return share * period + writeout + partials + epilogue


def predict_workload(w: Workload, machine: Machine | None = None) -> Prediction:
    """The model of the module docstring for one ``Workload``."""
    m = machine or _default()
    return _gemm(w, m) if w.kind == GEMM else _stream(w, m)


def _default() -> Machine:
    from .fitted import default_machine
    return default_machine()


def prediction(design: Design, machine: Machine | None = None, *, num_elements: int | None = None,
               blocks_per_sm: int = 0) -> Prediction:
    """The predicted kernel time of ``design`` for its problem, with its parts."""
    if not design.tasks or not design.pipelined:
        raise DesignError(f"design {design.name!r} has no {'tasks' if not design.tasks else 'pipelined resources'}: "
                          "there is no kernel to predict", code="predict.empty",
                          hint="add a pipelined resource and the tasks that fill and drain it")
    with on_errors(design, "the kernel-time model"):
        return predict_workload(workload(design, num_elements=num_elements, blocks_per_sm=blocks_per_sm), machine)


def predict(design: Design, machine: Machine | None = None, *, num_elements: int | None = None) -> float:
    """The predicted whole-kernel time of ``design`` in milliseconds (``prediction`` for the parts);
    ``machine`` defaults to the calibrated constants shipped for the H200 (``fitted.default_machine``)."""
    return prediction(design, machine, num_elements=num_elements).ms


__all__ = ["GROUP_M", "Prediction", "blocks_per_sm", "predict", "predict_workload", "prediction", "soft_max"]

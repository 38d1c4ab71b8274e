"""What a design's kernel does, in plain numbers: the input of the kernel-time model.

``workload(design)`` reads a design once -- its problem, its pipelines, and the work of every
task per iteration from the unrolled program the simulator runs (``program.py``: bytes each step
moves, flops of an MMA, barrier actions, bulk copies) -- into a ``Workload`` of numbers only.
The model (``predict.py``) and the fit (``calibrate.fit_machine``) read a ``Workload``, never a
design, so a recording of measured runs keeps workloads as JSON and a fit needs nothing else.

Per-iteration figures come from two unrolls that differ by one iteration: for a GEMM, one output
tile with one and with two k tiles (what changes is the work of one k tile, the rest is once per
tile); for a streaming design, one and two tiles.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from ..model.design import Design
from ..model.resource import Memory
from ..model.targets import DTYPE_BYTES
from .accumulators import accumulators, drain_tasks
from .buildable.steps import is_mma_design
from .layout import smem_layout
from .program import unroll

GEMM, STREAM = "gemm", "stream"


@dataclass(frozen=True)
class Work:
    """One task's work over one iteration (a k tile, or a tile)."""

    threads: int = 0
    acts: int = 0  # barrier actions (waits, arrivals)
    copies: int = 0  # bulk copies issued
    copy_bytes: int = 0  # bytes those copies land
    thread_bytes: int = 0  # bytes the task's threads read from shared memory or store
    store_bytes: int = 0  # bytes stored to global memory
    flops: int = 0
    thread_steps: int = 0  # loads / stores its threads perform (not bulk copies)


@dataclass(frozen=True)
class Workload:
    """A kernel's work in numbers (module docstring).  GEMM fields are zero for streaming designs
    and the other way round; ``blocks_per_sm`` 0 means "estimate from threads and shared memory"."""

    kind: str
    design: str
    dtype: str
    stages: int
    threads: int
    smem_bytes: int
    blocks_per_sm: int = 0
    # streaming: per tile of ``tile_elems``
    num_elements: int = 0
    tile_elems: int = 0
    # GEMM problem
    m: int = 0
    n: int = 0
    k: int = 0
    bm: int = 0
    bn: int = 0
    bk: int = 0
    split_k: int = 1
    stream_k: bool = False  # STREAM_K: the last partial wave's tiles shared among all blocks by k tiles
    cluster_m: int = 1
    cluster_n: int = 1
    shared_bytes: int = 0  # per k tile: bytes of the operand a cluster shares (multicast)
    # per iteration (k tile of a GEMM, tile of a streaming design)
    load_bytes: int = 0  # bytes the loaders' bulk / thread copies bring in
    unique_load_bytes: int = 0  # streaming: bytes of distinct global inputs per tile (the rest hits L2)
    copies: int = 0  # bulk copies issued (the busiest loader)
    producer_acts: int = 0  # barrier actions of the busiest loader
    consumer_flops: int = 0  # MMA flops (GEMM)
    consumer_acts: int = 0  # barrier actions of the slowest consumer
    consumer_threads: int = 0
    consumer_bytes: int = 0  # bytes the slowest consumer's threads move
    block_copies: int = 0  # bulk copies every task of a block issues together
    block_acts: int = 0  # barrier actions of every task of a block together
    block_thread_steps: int = 0  # thread loads / stores of every task of a block together
    store_bytes: int = 0  # bytes stored to global memory (a GEMM: outputs written per k tile)
    # GEMM, once per output tile
    tile_load_bytes: int = 0  # e.g. a residual tile
    tile_store_bytes: int = 0  # the epilogue's output bytes
    staging_bytes: int = 0  # the accumulator as written to the staging buffer
    staging_turns: int = 1  # turns a tile takes through the staging buffer (``smem_layout.Staging.turns``)
    staging_stages: int = 1  # the staging's buffers (the accumulator's stages)
    drain_threads: int = 0  # threads of the tasks that drain the accumulator

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Workload":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"workload fields {', '.join(unknown)} are not known; known: {', '.join(sorted(names))}")
        return cls(**dict(d))

    def replace(self, **changes: Any) -> "Workload":
        return dataclasses.replace(self, **changes)


def _work(program) -> dict[str, Work]:
    out = {}
    for name, runs in zip(program.tasks, program.runs):
        w = {"threads": 0, "acts": 0, "copies": 0, "copy_bytes": 0, "thread_bytes": 0, "store_bytes": 0, "flops": 0,
             "thread_steps": 0}
        for r in runs:
            w["threads"] = max(w["threads"], r.threads)
            w["acts"] += sum(a.verb.value != "complete_tx" for a in r.acts)
            if r.is_copy:
                w["copies"] += 1
                w["copy_bytes"] += r.copy_bytes
            elif r.step.op == "mma":
                w["flops"] += r.flops
            elif r.step.op in ("read", "store", "load"):
                w["thread_bytes"] += r.work_bytes
                w["thread_steps"] += r.step.op in ("store", "load")
                if r.step.op == "store":
                    w["store_bytes"] += r.work_bytes
                if r.step.op == "load":
                    w["copy_bytes"] += r.work_bytes
        out[name] = Work(**w)
    return out


def _minus(a: Work, b: Work) -> Work:
    return Work(**{f.name: max(0, getattr(a, f.name) - getattr(b, f.name)) if f.name != "threads" else a.threads
                   for f in dataclasses.fields(Work)})


def _per_iteration(design: Design, gemm: bool, turns: int = 1) -> tuple[dict[str, Work], dict[str, Work]]:
    """(work of one more iteration, work of the first) per task; ``turns``: the staging's turns
    (``Staging.turns``), which a tile's drain and its residual's slices run in."""
    one = _work(unroll(design, iterations=1, inner=1, turns=turns))
    two = _work(unroll(design, iterations=1, inner=2, turns=turns) if gemm else unroll(design, iterations=2, inner=1))
    step = {t: _minus(two[t], one[t]) for t in one}
    return step, {t: _minus(one[t], step[t]) for t in one}


def _stages(design: Design, gemm: bool) -> int:
    staged = [r for r in design.resources if r.memory is Memory.SMEM and r.pipeline_config is not None]
    if gemm:  # the operands' ring: the pipelines an MMA reads
        acc = [r for r in design.resources if r.compute.op == "mma"]
        ops = {x for a in acc for x in design.deps(a.name)}
        staged = [r for r in staged if r.name in ops] or staged
    return max((r.pipeline_config.num_stages for r in staged), default=1)


def workload(design: Design, *, num_elements: int | None = None, blocks_per_sm: int = 0) -> Workload:
    """The ``Workload`` of ``design`` for its own problem (``num_elements`` overrides a streaming
    design's element count; ``blocks_per_sm`` a measured occupancy)."""
    gemm = is_mma_design(design)
    p = design.problem_dict
    layout = smem_layout(design, arch="sm_90a")
    step, first = _per_iteration(design, gemm, layout.staging[0].turns if gemm and layout.staging else 1)
    loaders = [w for w in step.values() if w.copies or (w.copy_bytes and not w.flops)]
    consumers = [w for w in step.values() if w not in loaders and (w.flops or w.thread_bytes or w.acts)]
    busiest = max(loaders, key=lambda w: (w.copies, w.acts), default=Work())
    slowest = max(consumers, key=lambda w: (w.flops, w.thread_bytes / max(w.threads, 1), w.acts), default=Work())
    dtype = str(p.get("dtype") or (design.resources[0].dtype if design.resources else "float32"))
    common = dict(kind=GEMM if gemm else STREAM, design=design.name, dtype=dtype, stages=_stages(design, gemm),
                  threads=design.num_warps * 32, smem_bytes=layout.total_bytes,
                  blocks_per_sm=int(blocks_per_sm), load_bytes=sum(w.copy_bytes for w in loaders),
                  copies=busiest.copies, producer_acts=busiest.acts, consumer_flops=slowest.flops,
                  consumer_acts=slowest.acts, consumer_threads=slowest.threads,
                  consumer_bytes=slowest.thread_bytes, store_bytes=sum(w.store_bytes for w in step.values()),
                  block_copies=sum(w.copies for w in step.values()), block_acts=sum(w.acts for w in step.values()),
                  block_thread_steps=sum(w.thread_steps for w in step.values()))
    if not gemm:
        n = int(num_elements if num_elements is not None else p.get("num_elements", 0))
        tile_elems = int(p.get("tile_elems", 1))
        inputs = {x for r in design.resources if r.memory is Memory.SMEM for x in design.deps(r.name)
                  if design.has_resource(x) and design.resource(x).memory is Memory.GMEM}
        unique = sum(tile_elems * DTYPE_BYTES.get(design.resource(x).dtype, 4) for x in inputs)
        return Workload(**common, num_elements=n, tile_elems=tile_elems,
                        unique_load_bytes=min(unique, common["load_bytes"]) or common["load_bytes"])
    cm, cn = int(p.get("CLUSTER_M", 1)), int(p.get("CLUSTER_N", 1))
    shared = 0
    if cm * cn > 1:  # (1, 2) shares A (BM rows), (2, 1) shares B (BN rows)
        rows = int(p["BM"]) if cn > 1 else int(p["BN"])
        shared = rows * int(p["BK"]) * DTYPE_BYTES.get(dtype, 2)
    acc_bytes = [r.pipeline_config.num_bytes for r in design.resources
                 if r.memory is Memory.TMEM and r.pipeline_config is not None]
    staging = sum(acc_bytes) * DTYPE_BYTES.get(dtype, 2) // 4  # the fp32 accumulator in the output type
    tile_loads = sum(w.copy_bytes for w in first.values() if w.copies)
    return Workload(**common, m=int(p["M"]), n=int(p["N"]), k=int(p["K"]), bm=int(p["BM"]), bn=int(p["BN"]),
                    bk=int(p["BK"]), split_k=int(p.get("SPLIT_K", 1)),
                    stream_k=bool(p.get("STREAM_K", 0)), cluster_m=cm, cluster_n=cn, shared_bytes=shared,
                    tile_load_bytes=tile_loads, tile_store_bytes=sum(w.store_bytes for w in first.values()),
                    staging_bytes=staging, staging_turns=layout.staging[0].turns if layout.staging else 1,
                    staging_stages=layout.staging[0].stages if layout.staging else 1,
                    drain_threads=sum(t.num_threads for a in accumulators(design) for t in drain_tasks(design, a)))


__all__ = ["GEMM", "STREAM", "Work", "Workload", "workload"]

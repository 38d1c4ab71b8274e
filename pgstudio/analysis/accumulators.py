"""The GEMM accumulator of a design and the two operand tiles its MMA reads.

The shared-memory layout stages the accumulator (``smem_layout.py``), the barrier layout gives it
its sm_100a ``mma_done`` barriers and finds the operand a cluster of blocks shares
(``barrier_layout.py``, ``cluster.py``), and the GEMM generator builds from the same answers: they
are worked out here once, from the design alone (no target, no validation: a design the
generator refuses still has a layout to show).
"""

from __future__ import annotations

from typing import Any

from ..model.design import Design
from ..model.resource import Memory, Resource
from ..model.task import Task
from ..model.targets import DTYPE_BYTES


def accumulators(design: Design) -> tuple[Resource, ...]:
    """Pipelined tensor-memory resources computing ``mma``: what a GEMM kernel stages."""
    return tuple(r for r in design.resources
                 if r.memory is Memory.TMEM and r.compute.op == "mma" and r.pipeline_config is not None)


def _positive(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def accumulator_shape(design: Design, acc: Resource) -> tuple[int, int] | None:
    """(rows, cols) of one accumulator stage: the problem's BM x BN, else the resource's 2-D tile."""
    p = design.problem_dict
    if _positive(p.get("BM")) and _positive(p.get("BN")):
        return p["BM"], p["BN"]
    if len(acc.tile) == 2 and all(_positive(x) for x in acc.tile):
        return acc.tile[0], acc.tile[1]
    return None


def staged_accumulators(design: Design) -> tuple[tuple[Resource, tuple[int, int]], ...]:
    """(accumulator, (rows, cols)) of every accumulator with a known shape: the ones a kernel
    stages in shared memory and, on sm_100a, gives a tensor-memory slot and ``mma_done`` barriers."""
    return tuple((a, shape) for a in accumulators(design) if (shape := accumulator_shape(design, a)) is not None)


def operands(design: Design, acc: Resource) -> tuple[str, str] | None:
    """(A, B): the two staged shared-memory tiles ``acc`` is computed from, in dependency order;
    None when its dependencies are anything else (the generator says why: ``codegen.mma_operands``)."""
    deps = list(design.deps(acc.name))
    staged = [x for x in deps if design.has_resource(x) and design.resource(x).memory is Memory.SMEM
              and design.resource(x).pipeline_config is not None]
    return (deps[0], deps[1]) if len(deps) == 2 and staged == deps else None


def drain_tasks(design: Design, acc: Resource) -> tuple[Task, ...]:
    """The tasks that drain ``acc``: every task reading it (its epilogue)."""
    return tuple(t for t in design.tasks if acc.name in t.src_resources)


def residuals(design: Design, acc: Resource) -> tuple[str, ...]:
    """The staged shared-memory tiles that the tasks draining ``acc`` read beside it (other than
    its operands): a residual such as ``merge_gemm_resadd``'s R, in design order."""
    read = {x for t in drain_tasks(design, acc) for x in t.src_resources} - {acc.name} - set(design.deps(acc.name))
    return tuple(r.name for r in design.resources
                 if r.name in read and r.memory is Memory.SMEM and r.pipeline_config is not None)


def operand_dtype(design: Design, acc: Resource) -> str:
    """The element type of ``acc``'s first operand (float32 when it has none a kernel knows)."""
    deps = [d for d in design.deps(acc.name) if design.has_resource(d)]
    dt = design.resource(deps[0]).dtype if deps else "float32"
    return dt if dt in DTYPE_BYTES else "float32"


def copied_out(design: Design, acc: Resource, dtype: str) -> bool:
    """True when every global tensor computed from ``acc`` is ``acc`` itself in ``dtype`` (a plain
    ``store`` of it and nothing else): staging in that type loses nothing, and the TMA engine can
    store the staging buffer as it is."""
    outs = [r for r in design.resources if r.memory is Memory.GMEM and acc.name in design.deps(r.name)]
    return bool(outs) and all(
        r.compute.op == "store" and list(design.deps(r.name)) == [acc.name] and r.dtype == dtype
        and (r.compute.expr or acc.name).strip() == acc.name for r in outs)


def stored_in_place(design: Design, acc: Resource, dtype: str) -> str | None:
    """The global tensor a kernel may compute in ``acc``'s staging buffer and store from there
    with the TMA engine, or None.

    That is the one global tensor computed from ``acc`` (not ``acc`` itself: ``copied_out``), in
    ``dtype`` (the staging's type), by the one task that reads ``acc``, from ``acc`` and staged
    shared-memory tiles only (a residual such as ``merge_gemm_resadd``'s R).  The task then owns
    the staging buffer until it releases it: each thread overwrites its chunks of the accumulator
    with the output's, and the engine stores the buffer, as it stores an accumulator that is
    copied out as it is (``copied_out``).  The storing threads then neither compute global
    addresses nor guard the problem's edge (the engine clips it), which is most of a drain's
    instructions.  The GEMM plan takes it where the tile goes through its staging in turns
    (``buildable.gemm_plan``: measured)."""
    outs = [r for r in design.resources if r.memory is Memory.GMEM and acc.name in design.deps(r.name)]
    if len(outs) != 1 or len(drain_tasks(design, acc)) != 1 or copied_out(design, acc, dtype):
        return None
    out = outs[0]
    staged = all(x == acc.name or (design.has_resource(x) and design.resource(x).memory is Memory.SMEM
                                   and design.resource(x).pipeline_config is not None) for x in design.deps(out.name))
    return out.name if out.compute.op == "store" and out.dtype == dtype and staged else None


__all__ = ["accumulator_shape", "accumulators", "copied_out", "drain_tasks", "operand_dtype", "operands", "residuals",
           "staged_accumulators", "stored_in_place"]

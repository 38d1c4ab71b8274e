"""Which designs the streaming code generator covers, and what it needs to know about one.

A *streaming* design moves 1-D tiles of one element type through shared-memory pipelines:
tma producers (bulk copies) or async producers (thread copies / cp.async, or an elementwise
expression) fill stages from global tensors; async consumers compute an elementwise expression
and store it to global memory.  Every task runs one ``domain_loop(0, num_tiles, 1)``; the kernel
walks tiles grid-stride, so ``num_tiles`` follows from the element count given at launch.

``plan_stream(design)`` checks those conditions and raises ``CompileError`` naming what is out
of reach (MMA designs go to the GEMM generator instead).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.layout import BarrierLayout, SmemLayout, barrier_layout, smem_layout
from ..analysis.resolve import TaskPlan, resolve
from ..errors import CompileError
from ..model.design import Design
from ..model.kinds import AsyncProducerOp, OpKind, Side
from ..model.resource import Memory
from ..model.schedule import Loop
from ..model.task import Task
from .dtypes import DType, dtype
from .ops import Expr, compute_expr

#: The loop symbol every streaming task iterates over.
TILES = "num_tiles"


@dataclass(frozen=True)
class TaskCode:
    """A task with its resolved plan and how many threads run it."""

    task: Task
    plan: TaskPlan
    elected: bool  # True: one elected thread runs the whole role (a pure bulk-copy producer)


@dataclass(frozen=True)
class StreamPlan:
    design: Design
    dtype: DType
    tile_elems: int
    layout: BarrierLayout
    smem: SmemLayout
    tasks: tuple[TaskCode, ...]
    tensors: tuple[tuple[str, bool], ...]  # (gmem tensor, is_output) in design order
    exprs: dict[str, Expr]  # what each computed resource holds

    @property
    def tile_bytes(self) -> int:
        return self.tile_elems * self.dtype.size

    @property
    def threads(self) -> int:
        return self.design.num_warps * 32

    def consumer_cursor(self, task: TaskCode, resource: str) -> str:
        """The cursor through which ``task`` reads ``resource``'s current stage (from its plan)."""
        try:
            return task.plan.cursor_of(resource, Side.CONSUMER).name
        except KeyError:
            raise CompileError(f"task {task.task.name!r} reads {resource!r} without waiting on it; "
                               f"add {resource}.wait() (and release) to its schedule") from None


def is_mma_design(design: Design) -> bool:
    """A design with tensor memory, an MMA step or an umma side: the GEMM generator's job."""
    if any(r.memory is Memory.TMEM or r.compute.op == "mma" for r in design.resources):
        return True
    if any(r.pipeline_config is not None and OpKind.UMMA in (r.pipeline_config.producer_kind,
                                                            r.pipeline_config.consumer_kind)
           for r in design.resources):
        return True
    return any(s.op == "mma" for t in design.tasks if t.schedule for s in t.schedule.steps())


def _unsupported(design: Design, why: str, fix: str = "") -> CompileError:
    tail = f"; {fix}" if fix else ""
    return CompileError(f"cannot generate a kernel for design {design.name!r}: {why}{tail}")


def _check_loops(design: Design) -> None:
    for t in design.tasks:
        if t.schedule is None:
            raise _unsupported(design, f"task {t.name!r} has no schedule", "give it a @schedule")
        nodes = t.schedule.nodes
        if len(nodes) != 1 or not isinstance(nodes[0], Loop):
            raise _unsupported(design, f"task {t.name!r}: a streaming task runs exactly one domain_loop",
                               f"wrap its steps in `with domain_loop(0, {TILES!r}, 1):`")
        loop = nodes[0]
        if (loop.start, loop.stop, loop.step) != (0, TILES, 1):
            raise _unsupported(design, f"task {t.name!r} loops over {loop}, expected domain_loop(0, {TILES}, 1)")
        if any(isinstance(n, Loop) for n in loop.body):
            raise _unsupported(design, f"task {t.name!r} nests loops, which streaming kernels do not")


def _check_warps(design: Design) -> None:
    owner: dict[int, str] = {}
    for t in design.tasks:
        for w in t.warps:
            if w in owner:
                raise _unsupported(design, f"warp {w} belongs to tasks {owner[w]!r} and {t.name!r}",
                                   "give every task its own warp range")
            owner[w] = t.name
    if design.num_warps * 32 > 1024:
        raise _unsupported(design, f"the tasks need {design.num_warps} warps, a block holds at most 32")


def _tile_and_dtype(design: Design) -> tuple[DType, int]:
    names = {r.dtype for r in design.resources}
    if len(names) != 1:
        raise _unsupported(design, f"resources mix element types ({', '.join(sorted(names))})",
                           "use one dtype for every resource")
    dt = dtype(names.pop())
    piped = [r for r in design.resources if r.pipeline_config is not None]
    if not piped:
        raise _unsupported(design, "no resource is pipelined, so there is nothing to stage")
    sizes = {r.pipeline_config.num_bytes for r in piped}
    if len(sizes) != 1:
        raise _unsupported(design, f"stages differ in size ({', '.join(map(str, sorted(sizes)))} bytes)",
                           "give every pipelined resource the same num_bytes (one tile)")
    nbytes = sizes.pop()
    if nbytes <= 0 or nbytes % 16:
        raise _unsupported(design, f"a stage of {nbytes} bytes is not a positive multiple of 16")
    tile = nbytes // dt.size
    want = design.problem_dict.get("tile_elems")
    if want is not None and want != tile:
        raise _unsupported(design, f"problem says tile_elems={want} but stages hold {tile} {dt.name} elements")
    for r in piped:
        cfg = r.pipeline_config
        if r.memory is not Memory.SMEM:
            raise _unsupported(design, f"resource {r.name!r} lives in {r.memory}, streaming stages live in smem")
        if cfg.consumer_kind is not OpKind.ASYNC or cfg.producer_kind not in (OpKind.TMA, OpKind.ASYNC):
            raise _unsupported(design, f"resource {r.name!r} is {cfg.pipeline_type}; streaming kernels support "
                               "TmaAsync and AsyncAsync")
    return dt, tile


def _check_sources(design: Design, exprs: dict[str, Expr]) -> None:
    for name, ex in exprs.items():
        r = design.resource(name)
        cfg = r.pipeline_config
        if cfg is None:
            continue
        for dep in ex.operands:
            if design.resource(dep).memory is not Memory.GMEM and cfg.producer_kind is OpKind.TMA:
                raise _unsupported(design, f"tma resource {name!r} copies from {dep!r}, which is not a global tensor")
        if cfg.producer_kind is OpKind.TMA or (cfg.async_producer_op is AsyncProducerOp.AsyncLoad):
            plain = len(ex.operands) == 1 and ex.text.strip() == ex.operands[0]
            if not plain or design.resource(ex.operands[0]).memory is not Memory.GMEM \
                    or design.resource(ex.operands[0]).compute.op != "input":
                how = "a bulk copy" if cfg.producer_kind is OpKind.TMA else "cp.async (AsyncLoad)"
                raise _unsupported(design, f"resource {name!r} is filled by {how}, which can only copy one "
                                   f"input tensor, but it computes {ex.text!r}",
                                   "compute it in the consumer, or use an AsyncThread producer")


def plan_stream(design: Design) -> StreamPlan:
    """Check that ``design`` is a streaming design and collect what the generator needs."""
    if not design.tasks:
        raise _unsupported(design, "it has no tasks")
    _check_loops(design)
    _check_warps(design)
    dt, tile = _tile_and_dtype(design)
    exprs = {r.name: e for r in design.resources if (e := compute_expr(design, r.name)) is not None}
    _check_sources(design, exprs)
    layout = barrier_layout(design)
    for s in layout.sets:
        if s.init_count < 1:
            raise _unsupported(design, f"barrier set {s.name!r} would be initialised with count {s.init_count}; "
                               "nobody arrives on it")
    plans = resolve(design, layout)
    tasks = []
    stored = set()
    for t in design.tasks:
        plan = plans[t.name]
        steps = [s for s in plan.steps()]
        thread_work = any(s.step.op in ("store", "load") and s.kind is not OpKind.TMA for s in steps)
        consumes = any(s.side == "consumer" for s in steps)
        tasks.append(TaskCode(t, plan, elected=not thread_work and not consumes))
        stored.update(s.step.target for s in steps if s.step.op == "store" and s.kind is None)
    tensors = []
    for r in design.resources:
        if r.memory is not Memory.GMEM:
            continue
        out = r.compute.op != "input"
        if out and r.name not in stored:
            raise _unsupported(design, f"global tensor {r.name!r} computes {r.compute} but no task stores it",
                               f"add {r.name}.store(...) to the schedule of the task that reads its operands")
        tensors.append((r.name, out))
    return StreamPlan(design, dt, tile, layout, smem_layout(design), tuple(tasks), tuple(tensors), exprs)


__all__ = ["StreamPlan", "TaskCode", "is_mma_design", "plan_stream"]

"""Which designs the streaming code generator covers, and the plan it renders.

A *streaming* design moves 1-D tiles of one element type through shared-memory pipelines:
tma producers (bulk copies) or async producers (thread copies / cp.async, or an elementwise
expression) fill stages from global tensors; async consumers compute an elementwise expression
and store it to global memory.  Every task runs one ``domain_loop(0, num_tiles, 1)``; the kernel
walks tiles grid-stride, so ``num_tiles`` follows from the element count given at launch.

``plan_stream(design)`` returns the plan, or every ``codegen.*`` diagnostic that names what is
out of reach and how to change it (MMA designs belong to ``gemm_plan`` instead).  It never
raises for a design: the rule table reports the same problems from the same function.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from ...model.design import Design
from ...model.diagnostic import Diagnostic, error
from ...model.kinds import AsyncProducerOp, OpKind, Side
from ...model.resource import Memory
from ...model.schedule import Loop
from ...model.targets import DTYPE_BYTES
from ...model.task import Task
from ..expr import Expr, compute_exprs
from ..layout import BarrierLayout, SmemLayout, barrier_layout, smem_layout
from ..resolve import TaskPlan, resolve
from . import fixes
from .planned import Planned
from .registers import KEY_PREFIX, drop, requested
from .steps import check_async_ops, check_step_targets, check_tasks_scheduled, is_mma_design

#: The loop symbol every streaming task iterates over.
TILES = "num_tiles"
#: Bulk copies and 16-byte vector accesses: a stage is a whole number of 16-byte vectors.
STAGE_ALIGN = 16


@dataclass(frozen=True)
class TaskCode:
    """A task with its resolved plan and how many threads run it."""

    task: Task
    plan: TaskPlan
    elected: bool  # True: one elected thread runs the whole role (a pure bulk-copy producer)


@dataclass(frozen=True)
class StreamPlan:
    design: Design
    dtype: str
    tile_elems: int
    layout: BarrierLayout
    tasks: tuple[TaskCode, ...]
    tensors: tuple[tuple[str, bool], ...]  # (gmem tensor, is_output) in design order
    exprs: dict[str, Expr]  # what each computed resource holds

    @cached_property
    def smem(self) -> SmemLayout:
        """Data buffers and barriers (made when the generator asks: the rules check capacity)."""
        return smem_layout(self.design, barriers=self.layout)

    @property
    def tile_bytes(self) -> int:
        return self.tile_elems * DTYPE_BYTES[self.dtype]

    @property
    def threads(self) -> int:
        return self.design.num_warps * 32

    def consumer_cursor(self, task: TaskCode, resource: str) -> str:
        """The cursor through which ``task`` reads ``resource``'s current stage (from its plan;
        the plan checked that there is one: ``codegen.read_without_wait``)."""
        return task.plan.cursor_of(resource, Side.CONSUMER).name


def _check_loops(design: Design) -> list[Diagnostic]:
    out = []
    for t in design.tasks:
        if t.schedule is None:
            continue  # codegen.schedule
        nodes = t.schedule.nodes
        fix = f"wrap the steps of {t.name!r} in one `with domain_loop(0, {TILES!r}, 1):`"
        if len(nodes) != 1 or not isinstance(nodes[0], Loop):
            out.append(error("codegen.stream_loop", f"task {t.name!r}: a streaming task runs exactly one domain_loop, "
                             f"its schedule has {len(nodes)} top-level node(s)", (t.name,), fix))
            continue
        loop = nodes[0]
        if (loop.start, loop.stop, loop.step) != (0, TILES, 1):
            out.append(error("codegen.stream_loop", f"task {t.name!r} loops over domain_loop({loop.start}, {loop.stop}, "
                             f"{loop.step}), expected domain_loop(0, {TILES}, 1): the kernel walks tiles grid-stride",
                             (t.name,), fix))
        if any(isinstance(n, Loop) for n in loop.body):
            out.append(error("codegen.stream_loop", f"task {t.name!r} nests a domain_loop inside its tile loop; "
                             "streaming kernels run one loop", (t.name,), "move the inner steps into the tile loop"))
    return out


def _stage_bytes(resources: list, nbytes: int):
    """Every one of ``resources`` at ``nbytes`` per stage (``model.edits.set_stage_bytes``)."""
    names = tuple(r.name for r in resources)
    return fixes.fix(f"set the stages of {', '.join(names)} to {nbytes} B", "set_stage_bytes", names, nbytes)


def _tile(design: Design) -> tuple[str | None, int | None, list[Diagnostic]]:
    """The one element type and the one stage size (elements) of a streaming design."""
    out = []
    names = sorted({r.dtype for r in design.resources})
    dt = names[0] if len(names) == 1 and names[0] in DTYPE_BYTES else None
    if len(names) > 1:
        most = Counter(r.dtype for r in design.resources).most_common(1)[0][0]
        out.append(error("codegen.dtype_mix", f"resources mix element types ({', '.join(map(repr, names))}); a "
                         "streaming kernel moves one element type", tuple(r.name for r in design.resources),
                         f"give every resource dtype {names[0]!r} (or another single type)",
                         [fixes.dtype([r.name for r in design.resources if r.dtype != most], most)]))
    piped = [r for r in design.resources if r.pipeline_config is not None]
    if not piped:
        out.append(error("codegen.no_pipeline", f"design {design.name!r} has no pipelined resource, so there is no "
                         "stage to stream through", (design.name,), "stage a copy of an input in a MemoryResource "
                         "with a create_*_pipeline_cfg(...) config"))
        return dt, None, out
    sizes = sorted({r.pipeline_config.num_bytes for r in piped})
    if len(sizes) > 1:
        per = ", ".join(f"{r.name!r}={r.pipeline_config.num_bytes}" for r in piped)
        most = Counter(r.pipeline_config.num_bytes for r in piped).most_common(1)[0][0]
        out.append(error("codegen.tile_uniform", f"stages differ in size ({per} bytes); a streaming kernel moves one "
                         "tile through every pipeline", tuple(r.name for r in piped),
                         f"give every pipelined resource the same num_bytes, e.g. {sizes[-1]}",
                         [_stage_bytes([r for r in piped if r.pipeline_config.num_bytes != most], most)]))
        return dt, None, out
    nbytes = sizes[0]
    if nbytes <= 0 or nbytes % STAGE_ALIGN:
        rounded = max(STAGE_ALIGN, -(-nbytes // STAGE_ALIGN) * STAGE_ALIGN)
        out.append(error("codegen.tile_bytes", f"a stage of {nbytes} bytes is not a positive multiple of "
                         f"{STAGE_ALIGN}; stages move as 16-byte vectors and bulk copies", tuple(r.name for r in piped),
                         f"use num_bytes={rounded}", [_stage_bytes(piped, rounded)]))
        return dt, None, out
    if dt is None:
        return None, None, out
    tile = nbytes // DTYPE_BYTES[dt]
    p = design.problem_dict
    want = p.get("tile_elems")
    if want is not None and want != tile:
        out.append(error("codegen.tile_elems", f"problem says tile_elems={want!r} but stages of {nbytes} B hold {tile} "
                         f"{dt} elements", (design.name,), f"set tile_elems={tile} in the problem, or drop it",
                         [fixes.problem({"tile_elems": tile}, f"what a stage of {nbytes} B holds")]))
    n = p.get("num_elements")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n <= 0):
        out.append(error("codegen.problem_shape", f"problem value num_elements is {n!r}, expected a positive integer "
                         "(the element count a run streams)", (design.name,), "set num_elements=16777216, or drop it"))
    return dt, tile, out


def _check_sources(design: Design, exprs: dict[str, Expr]) -> list[Diagnostic]:
    """What fills each stage: a bulk copy or cp.async copies one input tensor; threads compute."""
    out = []
    for r in design.pipelined:
        cfg = r.pipeline_config
        copy_only = cfg.producer_kind is OpKind.TMA or cfg.async_producer_op is AsyncProducerOp.AsyncLoad
        ex = exprs.get(r.name)
        if ex is None:
            out.append(error("codegen.stage_input", f"staged resource {r.name!r} computes {r.compute.op!r}: nothing says "
                             "what its producer writes into a stage", (r.name,),
                             f"give {r.name!r} Compute('copy') of one input tensor (or an elementwise expression)"))
            continue
        if not copy_only:
            continue
        how = "a bulk copy (tma)" if cfg.producer_kind is OpKind.TMA else "cp.async (AsyncLoad)"
        src = ex.operands[0] if len(ex.operands) == 1 else None
        plain = src is not None and ex.text.strip() == src
        if not plain or not design.has_resource(src) or design.resource(src).memory is not Memory.GMEM \
                or design.resource(src).compute.op != "input":
            out.append(error("codegen.copy_source", f"resource {r.name!r} is filled by {how}, which copies one input "
                             f"tensor, but it computes {ex.text!r}", (r.name,),
                             "compute the expression in the consumer, or use an AsyncThread producer"))
    return out


def _check_reads(design: Design, tasks: list[TaskCode], exprs: dict[str, Expr]) -> list[Diagnostic]:
    """Thread work reads each shared-memory operand through the stage its task waited on."""
    out = []
    for tc in tasks:
        for s in tc.plan.steps():
            if s.step.op not in ("load", "store") or s.kind is OpKind.TMA or s.step.target not in exprs:
                continue
            for o in exprs[s.step.target].operands:
                if not design.has_resource(o) or design.resource(o).memory is Memory.GMEM:
                    continue
                try:
                    tc.plan.cursor_of(o, Side.CONSUMER)
                except KeyError:
                    out.append(error("codegen.read_without_wait", f"task {tc.task.name!r}: {s.step} reads {o!r} without "
                                     f"waiting on it, so no stage of {o!r} is known to hold data", (tc.task.name, o),
                                     f"add {o}.wait() before and {o}.release() after the step (through its group if "
                                     "it has one)"))
    return out


def _check_barriers(layout: BarrierLayout) -> list[Diagnostic]:
    return [error("codegen.barrier_count", f"barrier set {s.name!r} would be initialised with arrive count "
                  f"{s.init_count}; nobody arrives on it, so its waits never return", (s.owner,),
                  "give the side that signals it a cooperative group of at least one thread")
            for s in layout.sets if s.init_count < 1]


def _check_registers(design: Design) -> list[Diagnostic]:
    """The streaming kernel runs every warp with the launch bound's registers: no setmaxnreg layout."""
    keys = [KEY_PREFIX + t for t in requested(design)]
    if not keys:
        return []
    return [error("codegen.setmaxnreg", f"problem key{'s' if len(keys) > 1 else ''} {', '.join(keys)} ask"
                  f"{'' if len(keys) > 1 else 's'} for a setmaxnreg layout, which the streaming generator does not "
                  f"build: its warps run with the registers of the launch bound (setmaxnreg layouts are built for "
                  f"GEMM designs)", (design.name,), f"drop {' and '.join(keys)}", [drop(*keys)])]


def plan_stream(design: Design) -> Planned[StreamPlan]:
    """The streaming plan of ``design``, or the diagnostics that say why there is none."""
    if not design.tasks:
        return Planned(None, (error("codegen.no_tasks", f"design {design.name!r} has no tasks; a kernel runs one role "
                                    "branch per task", (design.name,), "add a task: a warp range with a @schedule"),))
    problems = check_tasks_scheduled(design) + _check_loops(design) + check_step_targets(design)
    dt, tile, more = _tile(design)
    problems += more
    exprs, more = compute_exprs(design)
    problems += more + _check_sources(design, exprs) + check_async_ops(design)
    layout = barrier_layout(design)
    problems += _check_barriers(layout) + _check_registers(design)
    if problems or dt is None or tile is None:
        return Planned(None, tuple(problems))
    plans = resolve(design, layout)
    tasks, stored = [], set()
    for t in design.tasks:
        plan = plans[t.name]
        steps = list(plan.steps())
        thread_work = any(s.step.op in ("store", "load") and s.kind is not OpKind.TMA for s in steps)
        consumes = any(s.side == "consumer" for s in steps)
        tasks.append(TaskCode(t, plan, elected=not thread_work and not consumes))
        stored.update(s.step.target for s in steps if s.step.op == "store" and s.kind is None)
    problems += _check_reads(design, tasks, exprs)
    tensors = []
    for r in design.resources:
        if r.memory is not Memory.GMEM:
            continue
        out = r.compute.op != "input"
        if out and r.name not in stored:
            problems.append(error("codegen.unstored_output", f"global tensor {r.name!r} computes {r.compute.op!r} but no "
                                  "task stores it, so the kernel would never write it", (r.name,),
                                  f"add {r.name}.store(...) to the schedule of the task that reads its operands"))
        tensors.append((r.name, out))
    if problems:
        return Planned(None, tuple(problems))
    return Planned(StreamPlan(design, dt, tile, layout, tuple(tasks), tuple(tensors), exprs))


__all__ = ["STAGE_ALIGN", "StreamPlan", "TILES", "TaskCode", "is_mma_design", "plan_stream"]

"""Derive each task's schedule from the design itself: graph, groups and tasks.

The studio lets a user build a design without writing Python, so somebody must write the
schedules.  They follow from the design: a task waits on what it consumes and acquires what it
produces, does the work the graph says (a copy, an MMA, a store), then commits and releases::

    producer side of a resource:  try_acquire / acquire  ..work..  commit
    consumer side of a resource:  try_wait / wait  ..read..        release

with the group convention of the schedule rules: members are reached as ``group.member``, and the ops the
protocol table puts on the group object (``PipelineGroupMode.group_ops``: Merge ``release``, Fork
``commit``, FusedMerge ``try_wait``, ``wait`` and ``release``) are emitted once, on the group.

One iteration of a task, in order: waits, acquires, reads, work, commits, releases.  A task that
accumulates an MMA over ``num_k_tiles`` (it produces a resource whose compute is ``mma`` and the
problem names ``num_k_tiles``) acquires its accumulator per output tile and consumes its operands
in an inner k loop; tasks that feed or share those operands run the same nested loop.

A derived schedule is named ``DERIVED`` so tools can tell it from one written with ``@schedule``
(which keeps its function's name) and re-derive it after every edit.  Standard library only.
"""

from __future__ import annotations

from typing import Iterable

from .design import Design
from .group import PipelineGroup
from .kinds import Op
from .protocol import PipelineGroupMode, is_group_op
from .resource import Memory
from .schedule import CapturedSchedule, Loop, Step
from .task import Task

__all__ = [
    "DERIVED",
    "DEFAULT_ITERATIONS",
    "is_derived",
    "derive_design",
    "adopt_derived",
    "derive_schedule",
]

#: Name of every derived schedule.
DERIVED = "derived"
#: Problem symbol of the outer (output tile) loop, and of the inner accumulation loop.
TILES, K_TILES = "num_tiles", "num_k_tiles"
#: Outer loop count when the problem names no ``num_tiles``.
DEFAULT_ITERATIONS = 8


def is_derived(schedule: CapturedSchedule | None) -> bool:
    """True when a task has no schedule yet or its schedule was derived (not written by hand)."""
    return schedule is None or schedule.name == DERIVED


def derive_design(design: Design, *, replace_attached: bool = False) -> Design:
    """``design`` with every derived (or missing) schedule derived afresh from the current graph,
    groups and tasks.  Schedules attached with ``@schedule`` stay, unless ``replace_attached``."""
    k_streamed = _k_streamed(design)
    tasks = []
    changed = False
    for t in design.tasks:
        if replace_attached or is_derived(t.schedule):
            sched = _derive(design, t, k_streamed)
            if sched != t.schedule:
                t = Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources, sched)
                changed = True
        tasks.append(t)
    return design.replace(tasks=tasks) if changed else design


def adopt_derived(design: Design) -> Design:
    """``design`` with every schedule attached by hand that is step for step what derivation
    gives (argument names aside) replaced by the derived one, so it follows later edits: the
    canonical designs' hand-written schedules follow that convention too, and a mode switch re-derives them
    instead of leaving a Merge schedule on a FusedMerge group."""
    k_streamed = _k_streamed(design)
    tasks, changed = [], False
    for t in design.tasks:
        if not is_derived(t.schedule):
            sched = _derive(design, t, k_streamed)
            if _same_steps(sched.nodes, t.schedule.nodes):
                t = Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources, sched)
                changed = True
        tasks.append(t)
    return design.replace(tasks=tasks) if changed else design


def _same_steps(a: tuple, b: tuple) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, Loop) or isinstance(y, Loop):
            if not (isinstance(x, Loop) and isinstance(y, Loop) and (x.start, x.stop, x.step) == (y.start, y.stop, y.step)
                    and _same_steps(x.body, y.body)):
                return False
        elif (x.op, x.target, x.via, x.group, [v for _, v in x.args]) != (y.op, y.target, y.via, y.group,
                                                                            [v for _, v in y.args]):
            return False
    return True


def derive_schedule(design: Design, task: str | Task) -> CapturedSchedule:
    """The derived schedule of one task of ``design`` (by name or object)."""
    t = design.task(task) if isinstance(task, str) else task
    return _derive(design, t, _k_streamed(design))


# -- which resources stream per k tile --------------------------------------------------------

def _pipelined(design: Design, name: str) -> bool:
    return design.has_resource(name) and design.resource(name).pipeline_config is not None


def _accumulates(design: Design, t: Task) -> bool:
    return K_TILES in design.problem_dict and any(
        design.has_resource(d) and design.resource(d).compute.op == "mma" and _pipelined(design, d)
        for d in t.dst_resources)


def _k_streamed(design: Design) -> frozenset[str]:
    """Pipelined resources that move once per k tile: an accumulating task's operands, and
    everything a non-accumulating task moves together with one of them."""
    streamed = {s for t in design.tasks if _accumulates(design, t) for s in t.src_resources
                if _pipelined(design, s)}
    grew = True
    while grew:
        grew = False
        for t in design.tasks:
            if _accumulates(design, t):
                continue
            mine = {r for r in (*t.src_resources, *t.dst_resources) if _pipelined(design, r)}
            if mine & streamed and not mine <= streamed:
                streamed |= mine
                grew = True
    return frozenset(streamed)


# -- one task -----------------------------------------------------------------------------------

def _derive(design: Design, t: Task, k_streamed: frozenset[str]) -> CapturedSchedule:
    problem = design.problem_dict
    outer = TILES if TILES in problem else DEFAULT_ITERATIONS
    consumed = [s for s in dict.fromkeys(t.src_resources) if _pipelined(design, s) and s not in t.dst_resources]
    produced = [d for d in dict.fromkeys(t.dst_resources) if design.has_resource(d) and d not in t.src_resources]
    emit = _Emitter(design, t)
    if _accumulates(design, t):
        acc = [d for d in produced if _pipelined(design, d)]
        inner = (*emit.waits(consumed), *emit.reads(consumed), *emit.work(produced), *emit.releases(consumed))
        body = (*emit.acquires(acc), Loop(0, K_TILES, 1, inner), *emit.commits(acc))
    else:
        body = emit.iteration(consumed, produced)
        if any(r in k_streamed for r in (*consumed, *produced)):
            body = (Loop(0, K_TILES, 1, body),)
    return CapturedSchedule(DERIVED, (Loop(0, outer, 1, body),))


class _Emitter:
    """Writes the steps of one task, reaching grouped resources as ``group.member``."""

    def __init__(self, design: Design, task: Task) -> None:
        self.d = design
        self.t = task

    def iteration(self, consumed: list[str], produced: list[str]) -> tuple[Step, ...]:
        syncs = [p for p in produced if _pipelined(self.d, p)]
        return (*self.waits(consumed), *self.acquires(syncs), *self.reads(consumed), *self.work(produced),
                *self.commits(syncs), *self.releases(consumed))

    def _group(self, name: str) -> PipelineGroup | None:
        return self.d.group_of(name)

    def _step(self, op: str, name: str, args: tuple = ()) -> Step:
        g = self._group(name)
        if g is None:
            return Step(op, name, "bare", None, args)
        return Step(op, name, "member", g.name, args)

    def _collapsed(self, name: str, op: Op) -> PipelineGroup | None:
        """The group whose object takes ``op`` for ``name`` (per the protocol table), or None."""
        g = self._group(name)
        return g if g is not None and is_group_op(g.mode, op) else None

    def _steps(self, ops: tuple[Op, ...], names: Iterable[str]) -> list[Step]:
        """``ops`` on each of ``names``; once on the group object where the table collapses them."""
        out: list[Step] = []
        done: set[str] = set()
        for n in names:
            g = self._collapsed(n, ops[-1])
            if g is None:
                out += [self._step(op.value, n) for op in ops]
            elif g.name not in done:
                done.add(g.name)
                out += [Step(op.value, g.name, "group", g.name) for op in ops]
        return out

    def waits(self, consumed: list[str]) -> list[Step]:
        return self._steps((Op.TRY_WAIT, Op.WAIT), consumed)

    def acquires(self, produced: list[str]) -> list[Step]:
        return self._steps((Op.TRY_ACQUIRE, Op.ACQUIRE), produced)

    def reads(self, consumed: list[str]) -> list[Step]:
        return [self._step(Op.READ.value, n) for n in consumed]

    def commits(self, produced: list[str]) -> list[Step]:
        return self._steps((Op.COMMIT,), produced)

    def releases(self, consumed: list[str]) -> list[Step]:
        return self._steps((Op.RELEASE,), consumed)

    def work(self, produced: list[str]) -> list[Step]:
        out = []
        for n in produced:
            r = self.d.resource(n)
            g = self._group(n)
            # A Fork whose members view one buffer: one copy lands once, on the buffer's owner.
            if (g is not None and g.mode is PipelineGroupMode.Fork and r.aliases in g.member_names
                    and r.aliases in produced):
                continue
            inputs = [dep for dep in self.d.deps(n) if dep in self.t.src_resources]
            out.append(self._step(self._work_op(n, inputs), n, self._args(n, inputs)))
        return out

    def _work_op(self, name: str, inputs: list[str]) -> str:
        r = self.d.resource(name)
        if r.memory is Memory.GMEM:
            return "store"
        if r.compute.op == "mma":
            return "mma"
        from_gmem = inputs and all(self.d.resource(i).memory is Memory.GMEM for i in inputs if self.d.has_resource(i))
        return "load" if from_gmem else "store"

    def _args(self, name: str, inputs: list[str]) -> tuple[tuple[str, str], ...]:
        if self._work_op(name, inputs) == "store":
            if len(inputs) == 1:
                return (("val", inputs[0]),)
            return tuple((f"val_{i}", i) for i in inputs)
        return tuple((f"arg{k}", i) for k, i in enumerate(inputs))

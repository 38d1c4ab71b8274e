"""The step resolver: every schedule step of a task -> concrete barrier actions on concrete sets.

The protocol table (``model/protocol.py``) says what a step does to a member's ``full`` or
``empty`` barrier; the layout (``layout.py``) says which barrier set that role reaches (a private
set or a group's shared one).  This module joins the two, once, for every consumer of the
protocol that needs concrete targets (the simulator, the checker and both code generators), so nobody
writes a second protocol: a consumer reads cursor names, barrier sets, verbs, who and bytes from
the plan and derives none of them.

It also names the *cursors* (semantics.md section 5): each side of each barrier set keeps an
``(index, phase)`` pair.  Producers start at phase 1, consumers at phase 0; a wait uses the
cursor's phase as its parity; a commit (producer) or release (consumer) advances the cursor
(index + 1, phase flipped when the index wraps to 0).  On the collapsed side of a group one
cursor serves every member: the consumer of a Merge or FusedMerge, the producer of a Fork.
Every other step keeps one cursor per resource and side.

A resolved action for a tma producer carries the bytes it expects or completes; ``who`` says
whether one elected thread, every thread of the task, or the copy engine performs it.  An action
the table performs once per group stage (a Fork tma producer arming its shared full barrier) is
kept on the last member step of its op before the group object's step only.  ``TaskPlan``
also says through which cursor the task reaches each resource on each side
(``cursor_of``), so work that reads or writes a stage finds its index without re-deriving it.

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Union

from ..model.design import Design
from ..model.group import PipelineGroup
from ..model.kinds import Bytes, OpKind, Role, Side, Verb, Who
from ..model.protocol import ADVANCES, START_PHASE, Action, group_actions, member_actions
from ..model.schedule import Loop, Step
from ..model.task import Task
from .layout import BarrierLayout, barrier_layout
from .memo import memo_of


@dataclass(frozen=True)
class Cursor:
    """One side's (index, phase) walk over the stages of a resource or a group."""

    name: str  # "producer:smem_a", "consumer:ab"
    side: Side
    owner: str  # resource or group whose stages it walks
    stages: int

    @property
    def start_phase(self) -> int:
        return START_PHASE[self.side]


@dataclass(frozen=True)
class BarrierAction:
    """A protocol action bound to a barrier set; the slot is ``set.first + cursor index``.

    ``verb``, ``role``, ``who`` and ``after_mma``: the table's action (``model.protocol.Action``).
    ``bytes``: transaction bytes of a tma producer (the full stage, the member's own or the
    group's merged; a shorter tail tile scales them), 0 otherwise.
    """

    verb: Verb
    set: str  # BarrierSet.name
    role: Role
    who: Who
    bytes: int
    cursor: str
    after_mma: bool = False

    def __str__(self) -> str:
        extra = f", {self.bytes} B" if self.bytes else ""
        return f"{self.verb}({self.set}[{self.cursor}], {self.who}{extra})"


@dataclass(frozen=True)
class ResolvedStep:
    """A schedule step with its side's kind, its cursor and its barrier actions."""

    step: Step
    side: Side
    kind: OpKind | None  # the kind of the step's side (None for a store to global memory)
    cursor: str | None  # the cursor whose index picks the stage this step touches
    actions: tuple[BarrierAction, ...] = ()
    advances: tuple[str, ...] = ()  # cursors advanced once the step is done


@dataclass(frozen=True)
class ResolvedLoop:
    loop: Loop
    body: tuple["ResolvedNode", ...]


ResolvedNode = Union[ResolvedStep, ResolvedLoop]


@dataclass(frozen=True)
class TaskPlan:
    """A task's schedule, resolved: its cursors and its nodes (loops kept as loops)."""

    task: str
    cursors: tuple[Cursor, ...]
    nodes: tuple[ResolvedNode, ...]
    #: (resource, side, cursor): the cursor whose index is the stage of ``resource`` this task
    #: touches on ``side`` (a group member on the collapsed side shares the group's cursor).
    stage_cursors: tuple[tuple[str, Side, str], ...] = ()

    def steps(self) -> Iterator[ResolvedStep]:
        yield from _walk(self.nodes)

    def cursor(self, name: str) -> Cursor:
        for c in self.cursors:
            if c.name == name:
                return c
        raise KeyError(name)

    def cursor_of(self, resource: str, side: Side | str) -> Cursor:
        """The cursor through which this task reaches ``resource``'s stages on ``side``
        (KeyError when its schedule never synchronises on that side of ``resource``)."""
        for r, s, c in self.stage_cursors:
            if r == resource and s == side:
                return self.cursor(c)
        raise KeyError(f"{side} cursor of {resource!r}")


def _walk(nodes) -> Iterator[ResolvedStep]:
    for n in nodes:
        if isinstance(n, ResolvedLoop):
            yield from _walk(n.body)
        else:
            yield n


class _Resolver:
    def __init__(self, design: Design, layout: BarrierLayout) -> None:
        self.design = design
        self.layout = layout
        self.cursors: dict[str, Cursor] = {}
        self.stage_cursors: dict[tuple[str, Side], str] = {}

    # -- cursors ------------------------------------------------------------------------------
    def _group(self, resource: str) -> PipelineGroup | None:
        return self.design.group_of(resource)

    def cursor_for(self, step: Step, side: Side) -> Cursor | None:
        if step.via == "group":
            g = self.design.group(step.target)
            owner, stages = g.name, g.merged_config.num_stages
        else:
            r = self.design.resource(step.target)
            if r.pipeline_config is None:
                return None
            g = self._group(r.name)
            collapsed = g is not None and g.mode.collapsed_side == side
            owner = g.name if collapsed else r.name
            stages = r.pipeline_config.num_stages
        name = f"{side}:{owner}"
        members = g.member_names if step.via == "group" else (step.target,)
        for m in members:
            self.stage_cursors.setdefault((m, side), name)
        return self.cursors.setdefault(name, Cursor(name, side, owner, stages))

    # -- actions ------------------------------------------------------------------------------
    def _bind(self, actions: tuple[Action, ...], resource: str, group: PipelineGroup | None,
              cursor: Cursor) -> tuple[BarrierAction, ...]:
        out = []
        for a in actions:
            bset = self.layout.set_for(resource, a.role)
            nbytes = 0
            if a.bytes is Bytes.OWN:
                nbytes = self.design.resource(resource).pipeline_config.num_bytes
            elif a.bytes is Bytes.MERGED and group is not None:
                nbytes = group.merged_config.num_bytes
            out.append(BarrierAction(a.verb, bset.name, a.role, a.who, nbytes, cursor.name, a.after_mma))
        return tuple(out)

    def step(self, step: Step, later: tuple) -> ResolvedStep:
        side = step.side
        if step.via == "group":
            g = self.design.group(step.target)
            kind = g.merged_config.collapsed_kind
            cur = self.cursor_for(step, side)
            acts = self._bind(group_actions(g.mode, step.op, kind), g.members[0].name, g, cur)
            return ResolvedStep(step, side, kind, cur.name, acts, self._advance(step, cur))
        r = self.design.resource(step.target)
        cfg = r.pipeline_config
        if cfg is None:  # a store to (or load into) a global tensor: work, no barrier
            return ResolvedStep(step, side, None, None)
        kind = cfg.pipeline_type.kind(side)
        g = self._group(r.name)
        mode = g.mode if g is not None and step.via == "member" else None
        cur = self.cursor_for(step, side)
        acts = tuple(a for a in member_actions(mode, step.op, kind)
                     if not a.once or self._last_member_step(step, g, later))
        return ResolvedStep(step, side, kind, cur.name, self._bind(acts, r.name, g, cur), self._advance(step, cur))

    @staticmethod
    def _advance(step: Step, cur: Cursor) -> tuple[str, ...]:
        return (cur.name,) if step.op == ADVANCES[cur.side] else ()

    @staticmethod
    def _last_member_step(step: Step, g: PipelineGroup | None, later: tuple) -> bool:
        """True when no other member of ``g`` takes ``step.op`` before the group object's step
        (where a once-per-group action belongs: the last member acquire before a Fork's commit)."""
        if g is None:
            return True
        for n in later:
            if not isinstance(n, Step):
                continue
            if n.via == "group" and n.target == g.name:
                return True
            if n.op == step.op and n.target in g.member_names:
                return False
        return True

    def nodes(self, nodes) -> tuple[ResolvedNode, ...]:
        nodes = tuple(nodes)
        out: list[ResolvedNode] = []
        for i, n in enumerate(nodes):
            if isinstance(n, Loop):
                out.append(ResolvedLoop(n, self.nodes(n.body)))
            else:
                out.append(self.step(n, nodes[i + 1:]))
        return tuple(out)


def resolve_task(design: Design, task: Task | str, layout: BarrierLayout | None = None) -> TaskPlan:
    """The resolved plan of one task (``layout`` defaults to ``barrier_layout(design)``)."""
    t = design.task(task) if isinstance(task, str) else task
    res = _Resolver(design, layout or barrier_layout(design))
    nodes = res.nodes(t.schedule.nodes) if t.schedule is not None else ()
    return TaskPlan(t.name, tuple(res.cursors.values()), nodes,
                    tuple((r, s, c) for (r, s), c in res.stage_cursors.items()))


def resolve(design: Design, layout: BarrierLayout | None = None) -> dict[str, TaskPlan]:
    """Every task's resolved plan, by task name, in task order."""
    layout = layout or barrier_layout(design)
    memo = memo_of(design)  # once per design and layout, however many rules ask (``memo.py``)
    hit = memo.get("resolve")
    if hit is None or hit[0] is not layout:
        hit = memo["resolve"] = (layout, {t.name: resolve_task(design, t, layout) for t in design.tasks})
    return dict(hit[1])


__all__ = ["BarrierAction", "Cursor", "ResolvedLoop", "ResolvedNode", "ResolvedStep", "TaskPlan", "resolve",
           "resolve_task"]

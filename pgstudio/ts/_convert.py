"""A TS schedule as pgstudio's ``CapturedSchedule``.

The mapping, both ways the same (``_export.py`` writes its inverse):

=====================================================  ===========================================
TS schedule                                            pgstudio schedule
=====================================================  ===========================================
``with domain_loop(a, b, c): body``                    ``Loop(a, b, c, body)``
``head; with domain_loop(...): body; tail``            ``Loop(0, 1, 1, [head, Loop(...), tail])``
                                                       (one tile per CTA: brackets close in it;
                                                       every task of such a design gets it)
``with work_tile_loop(wq): head; domain_loop; tail``   ``Loop(0, num_work_tiles, 1, [...])``
``... with domain_loop(0, 1, 1): body`` alone in it    ``Loop(0, num_work_tiles, 1, body)`` (TS needs
                                                       a domain loop; this one only holds the steps)
``... with domain_loop(0, 1): body`` alone in it       ``Loop(0, num_work_tiles, 1, [Loop(0, 1, 1,
                                                       body)])``: written with two bounds, a loop of
                                                       one iteration stays a loop
consumer work / producer work                          ``read`` / ``load``, ``store`` or ``mma``
``v = gmem.read(); smem.load(v)``, gmem unpipelined    ``smem.load(gmem)`` (a global-memory read)
a work queue's bookkeeping, auxiliary work             nothing
=====================================================  ===========================================

``num_work_tiles`` is the script's module-level ``num_work_tiles`` (a problem name or an int),
else ``num_tiles`` when the problem names it, else ``DEFAULT_WORK_TILES``.
"""

from __future__ import annotations

from typing import Any

from ..errors import ScheduleError
from ..model.schedule import CapturedSchedule, Loop, Step
from ._group import PipelineGroup
from ._resource import WorkQueue, memory_of
from ._schedule import Schedule, Token, TsLoop, TsStep, TsWorkTileLoop
from ._work import producer_op

#: Work tiles of a persistent loop when the script does not say: enough for the checker to see
#: a barrier phase carry over from one tile to the next.
DEFAULT_WORK_TILES = 2


def _arg(value: Any) -> str:
    return value.resource if isinstance(value, Token) else repr(value)


def _step(s: TsStep) -> Step | None:
    t = s.target
    if isinstance(t, WorkQueue) or s.auxiliary:
        return None
    if isinstance(t, PipelineGroup):
        return Step(s.op, t.name, "group", t.name)
    group = s.group.name if s.group is not None else None
    if s.op != "work":
        return Step(s.op, t.name, s.via, group)
    if s.side == "consumer":
        if t.pipeline_config is None and s.routed:
            return None  # a global-memory read: the producer work that takes its value records it
        op = "read"
    else:
        cfg = t.pipeline_config
        op = producer_op(s.label, memory_of(t), cfg.pipeline_type.producer_kind if cfg is not None else None)
    return Step(op, t.name, s.via, group, tuple((k, _arg(v)) for k, v in s.args))


def _nodes(body: list, bound=lambda v: v) -> list:
    out: list = []
    for node in body:
        if isinstance(node, TsLoop):
            out.append(Loop(bound(node.start), bound(node.end), bound(node.step), tuple(_nodes(node.body, bound))))
        elif isinstance(node, TsStep):
            step = _step(node)
            if step is not None:
                out.append(step)
    return out


def _has_loop(nodes: list) -> bool:
    return any(isinstance(n, Loop) for n in nodes)


def needs_one_tile(schedule: Schedule) -> bool:
    """A TS schedule without a work-tile loop but with steps before or after its domain loop: one
    tile per CTA, which pgstudio spells as an outer ``Loop(0, 1, 1)`` (so its brackets close)."""
    if any(isinstance(n, TsWorkTileLoop) for n in schedule.body):
        return False
    return any(isinstance(n, Step) for n in _nodes(schedule.body))


def captured(schedule: Schedule, work_tiles: Any = DEFAULT_WORK_TILES,
             problem: dict[str, Any] | None = None, one_tile: bool = False) -> CapturedSchedule:
    """The model schedule of a TS schedule (module docstring).  A loop bound keeps its name only
    where ``problem`` gives the name the value the loop ran with.  ``one_tile``: the design's
    TS tasks run one tile per CTA and some have head or tail steps, so every task gets the outer
    ``Loop(0, 1, 1)`` (pgstudio's tasks that share a pipeline loop alike)."""
    problem = problem or {}

    def bound(value: Any) -> Any:
        if isinstance(value, str) and problem.get(value) != schedule.symbols.get(value):
            return schedule.symbols[value]
        return value

    body = schedule.body
    tile_loops = [n for n in body if isinstance(n, TsWorkTileLoop)]
    if tile_loops:
        at = body.index(tile_loops[0])
        inner = _nodes(tile_loops[0].body, bound)
        if not _has_loop(inner):
            raise ScheduleError(f"schedule {schedule.name!r} has no domain_loop() in its work_tile_loop(); TS "
                                f"needs one",
                                code="schedule.loop", hint="wrap the per-tile steps in `with domain_loop(0, 1, 1):`")
        nodes = [*_nodes(body[:at], bound), Loop(0, work_tiles, 1, tuple(_unwrap(inner, tile_loops[0].body))),
                 *_nodes(body[at + 1:], bound)]
    else:
        nodes = _nodes(body, bound)
        if not _has_loop(nodes):
            raise ScheduleError(f"schedule {schedule.name!r} has no domain_loop(); TS needs a domain for every task",
                                code="schedule.loop", hint="wrap the steps in `with domain_loop(0, 1, 1):`")
        if one_tile:
            nodes = [Loop(0, 1, 1, tuple(_unwrap(nodes, body)))]
    return CapturedSchedule(schedule.name, tuple(nodes))


def _unwrap(nodes: list, ts_body: list) -> list:
    """The body of an outer loop: a lone ``domain_loop(0, 1, 1)`` in it adds nothing, unless the
    script wrote it ``domain_loop(0, 1)`` (module docstring; a schedule has one domain loop)."""
    kept = any(isinstance(n, TsLoop) and n.kept for n in ts_body)
    if len(nodes) == 1 and isinstance(nodes[0], Loop) and (nodes[0].start, nodes[0].stop, nodes[0].step) == (0, 1, 1) \
            and not kept:
        return list(nodes[0].body)
    return nodes


__all__ = ["DEFAULT_WORK_TILES", "captured", "needs_one_tile"]

"""Edits of groups and tasks, and the schedules tasks carry."""

from __future__ import annotations

from typing import Any, Iterable

from ..design import Design
from ..group import PipelineGroup
from ..protocol import PipelineGroupMode
from ..schedule import CapturedSchedule
from ..task import Task
from .common import EditError, _rename_in_schedule, check_new_name, unique_name
from .resources import _int

__all__ = [
    "add_group",
    "set_group",
    "remove_group",
    "add_task",
    "set_task",
    "merge_tasks",
    "remove_task",
    "attach_schedule",
    "use_derived_schedule",
]

# -- groups --------------------------------------------------------------------------------------

def add_group(d: Design, name: str | None = None, members: Iterable[str] = (),
              mode: PipelineGroupMode | str = PipelineGroupMode.Merge) -> Design:
    name = check_new_name(d, name, "group") if name else unique_name(d, "group")
    return d.with_group(PipelineGroup.unchecked(name, [d.resource(m) for m in members], PipelineGroupMode(mode)))


def set_group(d: Design, name: str, *, members: Iterable[str] | None = None, mode: PipelineGroupMode | str | None = None,
              new_name: str | None = None) -> Design:
    g = d.group(name)
    mems = [d.resource(m) for m in members] if members is not None else [d.resource(m.name) if d.has_resource(m.name) else m
                                                                          for m in g.members]
    mode = PipelineGroupMode(mode) if mode is not None else g.mode
    new = check_new_name(d, new_name, "group", name) if new_name is not None else name
    group = PipelineGroup.unchecked(new, mems, mode, g.pipeline_config)
    groups = [group if x.name == name else x for x in d.groups]
    tasks = d.tasks
    if new != name:
        tasks = [Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources,
                                _rename_in_schedule(t.schedule, name, new)) for t in d.tasks]
    return d.replace(groups=groups, tasks=tasks)


def remove_group(d: Design, name: str) -> Design:
    d.group(name)
    return d.without_group(name)


# -- tasks ---------------------------------------------------------------------------------------

def add_task(d: Design, name: str | None = None, num_warps: int = 1) -> Design:
    """A task on the first free warps, with no resources yet (its schedule is derived)."""
    name = check_new_name(d, name, "task") if name else unique_name(d, "task")
    first = max((t.warp_idx + t.num_warps for t in d.tasks), default=0)
    return d.with_task(Task.unchecked(name, first, num_warps))


def set_task(d: Design, name: str, *, new_name: str | None = None, warp_idx: Any = None, num_warps: Any = None,
             src: Iterable[str] | None = None, dst: Iterable[str] | None = None) -> Design:
    t = d.task(name)
    new = check_new_name(d, new_name, "task", name) if new_name is not None else name
    w = _int(warp_idx, f"task {name!r}: warp_idx", 0) if warp_idx is not None else t.warp_idx
    n = _int(num_warps, f"task {name!r}: num_warps", 1) if num_warps is not None else t.num_warps
    task = Task.unchecked(new, w, n, list(src) if src is not None else t.src_resources,
                          list(dst) if dst is not None else t.dst_resources, t.schedule)
    return d.replace(tasks=[task if x.name == name else x for x in d.tasks])


def merge_tasks(d: Design, into: str, others: Iterable[str]) -> Design:
    """Task ``into`` takes over the resources of ``others`` (which go): one task then drives what
    they drove, on ``into``'s warps, with a derived schedule covering all of it."""
    t = d.task(into)
    gone = [d.task(n) for n in others if n != into]
    src = list(dict.fromkeys([*t.src_resources, *(r for g in gone for r in g.src_resources)]))
    dst = list(dict.fromkeys([*t.dst_resources, *(r for g in gone for r in g.dst_resources)]))
    for g in gone:
        d = d.without_task(g.name)
    return d.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, src, dst, None))


def remove_task(d: Design, name: str) -> Design:
    d.task(name)
    return d.without_task(name)


def attach_schedule(d: Design, task: str, schedule: Any) -> Design:
    """Attach a schedule written in Python: a ``@schedule`` function (its parameters are bound
    by name to the design's resources and groups), a bound one, or a ``CapturedSchedule``."""
    from ...errors import ScheduleError
    from ..capture import BoundSchedule, Schedule

    t = d.task(task)
    if isinstance(schedule, Schedule):
        pool: dict[str, Any] = {r.name: r for r in d.resources}
        pool.update({g.name: g for g in d.groups})
        for g in d.groups:  # a grouped resource is passed as group.member
            for m in g.member_names:
                if m in pool and g.member_names:
                    pool[m] = g.member(m)
        missing = [p for p in schedule.parameters() if p not in pool]
        if missing:
            raise EditError(f"schedule {schedule.name!r}: parameter(s) {', '.join(map(repr, missing))} name no "
                            f"resource or group of design {d.name!r} (have {', '.join(sorted(pool))})",
                            code="schedule.binding", hint="name the parameters after resources / groups, "
                            "or pass a bound schedule: my_schedule(studio.design.resource('smem_a'), ...)")
        schedule = schedule(*[pool[p] for p in schedule.parameters()])
    if isinstance(schedule, BoundSchedule):
        try:
            schedule = schedule.capture().schedule
        except ScheduleError as exc:
            raise EditError(str(exc), code=exc.code) from None
    if not isinstance(schedule, CapturedSchedule):
        raise EditError(f"cannot attach {type(schedule).__name__} as a schedule", code="task.schedule",
                        hint="pass a @schedule function, a bound one, or a CapturedSchedule")
    return d.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources, schedule))


def use_derived_schedule(d: Design, task: str) -> Design:
    """Drop an attached schedule: the task's schedule is derived again."""
    t = d.task(task)
    return d.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources, None))



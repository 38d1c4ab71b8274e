"""The schedule rules of semantics.md section 6 that one task's captured schedule can break.

``Task(...)`` raises the first error as ``ScheduleError``; ``Design.validate()`` reports them all
(with the design's groups).  Rules that need the dependency graph live in ``analysis.rules``.
"""

from __future__ import annotations

from typing import Callable, Iterator, Mapping, Sequence

from .diagnostic import Diagnostic, error
from .kinds import Side
from .protocol import is_group_op
from .schedule import CapturedSchedule, Step, TRY_OPS

__all__ = ["check_schedule"]


def check_schedule(task: str, captured: CapturedSchedule, src: Sequence[str], dst: Sequence[str],
                   groups: Mapping[str, object], group_of: Callable[[str], object | None],
                   pipelined: Callable[[str], bool | None]) -> Iterator[Diagnostic]:
    """All capture-time rules for one task, in program order.

    ``pipelined(name)`` is True / False for a resource the caller knows, None for one it does not
    (a task given only names): rules that need to know are skipped for it."""
    steps = list(captured.steps())
    yield from _check_ops(task, steps, src, dst, groups, group_of, pipelined)
    yield from _check_try_order(task, steps)
    for segment in captured.segments():
        yield from _check_brackets(task, list(segment), groups, pipelined)


def _check_ops(task, steps, src, dst, groups, group_of, pipelined) -> Iterator[Diagnostic]:
    for step in steps:
        where = (task, step.target)
        if step.via == "group":
            grp = groups.get(step.target)
            if grp is None:
                continue
            mode = grp.mode
            if not is_group_op(mode, step.op):
                allowed = ", ".join(f"group.{op}()" for op in mode.group_ops)
                yield error("schedule.group_op",
                            f"task {task!r}: {step.target}.{step.op}() is not the collapsed stage of "
                            f"{mode} group {step.target!r}; the group object only takes {allowed}",
                            where, f"call {step.op}() on each member as {step.target}.<member>.{step.op}()")
                continue
            roles = dst if mode.collapsed_side is Side.PRODUCER else src
            missing = [m for m in grp.member_names if m not in roles]
            if missing:
                role = "dst_resources" if mode.collapsed_side is Side.PRODUCER else "src_resources"
                yield error("schedule.role",
                            f"task {task!r}: {step.target}.{step.op}() acts for members {', '.join(map(repr, missing))} "
                            f"that are not in its {role}",
                            where, f"add them to the task's {role}")
            continue
        grp = group_of(step.target)
        if step.via == "bare" and grp is not None:
            yield error("schedule.bare_member",
                        f"task {task!r}: {step.target!r} is a member of group {grp.name!r} but {step} uses it bare",
                        where, f"use {grp.name}.{step.target}.{step.op}() inside the schedule")
            continue
        if step.via == "member":
            if grp is not None and is_group_op(grp.mode, step.op):
                yield error("schedule.collapsed_member",
                            f"task {task!r}: {step} is on the collapsed {grp.mode.collapsed_side} side of "
                            f"{grp.mode} group {grp.name!r}; the collapsed stage is emitted once, on the group object",
                            where, f"call {grp.name}.{step.op}() instead")
                continue
        if step.side == "producer" and step.target not in dst:
            yield error("schedule.role",
                        f"task {task!r}: {step} is producer work on {step.target!r}, which is not in its dst_resources "
                        f"({', '.join(dst) or 'none'})",
                        where, f"add {step.target!r} to dst_resources, or move this step to the task that produces it")
        elif step.side == "consumer" and step.target not in src:
            yield error("schedule.role",
                        f"task {task!r}: {step} is consumer work on {step.target!r}, which is not in its src_resources "
                        f"({', '.join(src) or 'none'})",
                        where, f"add {step.target!r} to src_resources, or move this step to the task that consumes it")
        elif not step.is_work and pipelined(step.target) is False:
            yield error("schedule.unpipelined",
                        f"task {task!r}: {step} synchronises on {step.target!r}, which has no pipeline_config",
                        where, "give the resource a pipeline config, or drop the barrier step")


def _check_try_order(task: str, steps: list[Step]) -> Iterator[Diagnostic]:
    for i, step in enumerate(steps):
        if step.op in TRY_OPS:
            nxt = steps[i + 1] if i + 1 < len(steps) else None
            want = TRY_OPS[step.op]
            if nxt is None or (nxt.op, nxt.target, nxt.via) != (want, step.target, step.via):
                got = str(nxt) if nxt else "the end of the schedule"
                yield error("schedule.try_order",
                            f"task {task!r}: {step} must be directly followed by its blocking "
                            f"{want}() on the same target, got {got}",
                            (task, step.target), f"put {step.target}.{want}() right after {step.op}()")


def _check_brackets(task: str, body: list[Step], groups, pipelined) -> Iterator[Diagnostic]:
    """acquire .. producer work .. commit and wait .. consumer work .. release, per iteration."""
    acquired: dict[str, str] = {}  # resource -> "open" | "closed"
    waited: dict[str, str] = {}

    def members(step: Step) -> tuple[str, ...]:
        grp = groups.get(step.target)
        return tuple(grp.member_names) if grp is not None else ()

    for step in body:
        where = (task, step.target)
        targets = members(step) if step.via == "group" else (step.target,)
        if step.op == "acquire":
            for r in targets:
                if acquired.get(r) == "open":
                    yield error("schedule.bracket", f"task {task!r}: {step} acquires {r!r} again before committing it",
                                where, f"commit {r!r} before the next acquire")
                acquired[r] = "open"
        elif step.op == "commit":
            for r in targets:
                if acquired.get(r) != "open":
                    yield error("schedule.bracket", f"task {task!r}: {step} commits {r!r}, which was not acquired in this iteration",
                                where, f"acquire {r!r} before writing and committing it")
                acquired[r] = "closed"
        elif step.op == "wait":
            for r in targets:
                if waited.get(r) == "open":
                    yield error("schedule.bracket", f"task {task!r}: {step} waits on {r!r} again before releasing it",
                                where, f"release {r!r} before the next wait")
                waited[r] = "open"
        elif step.op == "release":
            for r in targets:
                if waited.get(r) != "open":
                    yield error("schedule.bracket", f"task {task!r}: {step} releases {r!r}, which was not waited on in this iteration",
                                where, f"wait on {r!r} before reading and releasing it")
                waited[r] = "closed"
        elif step.is_work and pipelined(step.target):
            state = acquired if step.side == "producer" else waited
            if state.get(step.target) != "open":
                bracket = "acquire()..commit()" if step.side == "producer" else "wait()..release()"
                yield error("schedule.bracket",
                            f"task {task!r}: {step} is {step.side} work outside its {bracket} bracket on {step.target!r}",
                            where, f"move it between {step.target}'s {bracket.replace('..', ' and ')}")
        if step.is_work:
            for _, value in step.args:
                if value in waited and waited[value] != "open" and pipelined(value):
                    yield error("schedule.bracket",
                                f"task {task!r}: {step} uses a value of {value!r} after releasing it",
                                where, f"do the work before {value}'s release")
    for r, state in acquired.items():
        if state == "open":
            yield error("schedule.bracket", f"task {task!r}: {r!r} is acquired but never committed in the loop body",
                        (task, r), f"commit {r!r} (or its group) once it is written")
    for r, state in waited.items():
        if state == "open":
            yield error("schedule.bracket", f"task {task!r}: {r!r} is waited on but never released in the loop body",
                        (task, r), f"release {r!r} (or its group) once it is read")

"""Task: a warp range that runs one captured schedule (a role of the warp-specialised kernel)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import DesignError, ScheduleError
from .capture import BoundSchedule, Schedule
from .diagnostic import raise_first
from .limits import MAX_RESOURCES, MAX_WARPS, check_count, check_whole
from .names import check_name, check_word
from .schedule import CapturedSchedule
from .schedule_rules import check_schedule

__all__ = ["WARP", "Task", "WarpOverlap", "warp_overlaps"]

#: Threads per warp.
WARP = 32


def _resource(r: Any) -> Any:
    """A ``group.member`` reference stands for its resource in a task's resource lists."""
    from .group import MemberRef
    return r.resource if isinstance(r, MemberRef) else r


def _name(r: Any) -> str:
    return r if isinstance(r, str) else r.name


@dataclass(frozen=True)
class Task:
    """``Task(name=..., warp_idx=..., num_warps=..., src_resources=[...], dst_resources=[...],
    schedule=my_schedule(args...))``.

    ``src_resources`` are consumed, ``dst_resources`` produced.  Resources are kept by name (a
    task is plain data); pass resource objects or names.  The schedule is captured here and the
    schedule rules raise ``ScheduleError`` on the first problem; ``Task.unchecked`` skips them
    so a design can hold a wrong schedule and ``Design.validate()`` can report it.  A
    ``CapturedSchedule`` passed as is (from a file, the studio, ``ungrouped``) is kept without
    the capture-time check: it has no live groups to check against; ``Design.validate()`` checks it.
    """

    name: str
    warp_idx: int
    num_warps: int
    src_resources: tuple[str, ...] = ()
    dst_resources: tuple[str, ...] = ()
    schedule: CapturedSchedule | None = None

    def __init__(self, name: str, warp_idx: int, num_warps: int, src_resources: Sequence[Any] = (),
                 dst_resources: Sequence[Any] = (), schedule: Any = None, *, _check: bool = True) -> None:
        check_name(name, "task")
        # a block holds MAX_WARPS warps: a range beyond it is no task (the span of all tasks is a rule)
        for label, value, low, high in (("warp_idx", warp_idx, 0, MAX_WARPS - 1), ("num_warps", num_warps, 1, MAX_WARPS)):
            check_whole(value, f"task {name!r}: {label}", low, high, "task.warps",
                        f"give {label} as a whole number from {low} to {high} (a block has {MAX_WARPS} warps)")
        for label, items in (("src_resources", src_resources), ("dst_resources", dst_resources)):
            if isinstance(items, (str, bytes)) or not all(isinstance(r, str) or isinstance(getattr(r, "name", None), str)
                                                         for r in items):
                raise DesignError(f"task {name!r}: {label} is {items!r}, expected a list of resources or resource names",
                                  code="task.resource", hint=f"pass {label}=[smem_a, ...]")
            check_count(len(items), f"task {name!r}: {label}", MAX_RESOURCES)
            for r in items:
                check_word(_name(_resource(r)), f"task {name!r}: {label} entry", "task.resource")
        src_resources = [_resource(r) for r in src_resources]
        dst_resources = [_resource(r) for r in dst_resources]
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "warp_idx", warp_idx)
        object.__setattr__(self, "num_warps", num_warps)
        object.__setattr__(self, "src_resources", tuple(_name(r) for r in src_resources))
        object.__setattr__(self, "dst_resources", tuple(_name(r) for r in dst_resources))
        captured, groups, resources = self._capture(schedule, src_resources, dst_resources)
        object.__setattr__(self, "schedule", captured)
        # A schedule captured elsewhere (a file, the studio, ungrouped()) has no live groups to
        # check against here; Design.validate() checks it with the design's groups.
        if _check and captured is not None and not isinstance(schedule, CapturedSchedule):
            from .group import owner_of

            objects = {_name(r): r for r in (*src_resources, *dst_resources) if not isinstance(r, str)}
            objects.update(resources)

            def group_of(res: str):
                for g in groups.values():
                    if res in g.member_names:
                        return g
                obj = objects.get(res)
                return owner_of(obj) if obj is not None else None

            def pipelined(res: str) -> bool | None:
                obj = objects.get(res)
                return None if obj is None else getattr(obj, "pipeline_config", None) is not None

            raise_first(check_schedule(name, captured, self.src_resources, self.dst_resources,
                                       groups, group_of, pipelined), ScheduleError)

    @classmethod
    def unchecked(cls, name: str, warp_idx: int, num_warps: int, src_resources: Sequence[Any] = (),
                  dst_resources: Sequence[Any] = (), schedule: Any = None) -> "Task":
        """A task whose schedule is captured but not checked (for files, the studio, planted mistakes)."""
        return cls(name, warp_idx, num_warps, src_resources, dst_resources, schedule, _check=False)

    @staticmethod
    def _capture(schedule: Any, src: Sequence[Any], dst: Sequence[Any]):
        if schedule is None or isinstance(schedule, CapturedSchedule):
            return schedule, {}, {}
        if isinstance(schedule, Schedule):  # unbound: bind parameters by resource / group name
            schedule = _bind_by_name(schedule, [*src, *dst])
        if not isinstance(schedule, BoundSchedule):
            raise DesignError(f"task schedule must be a @schedule function, got {type(schedule).__name__}",
                              code="task.schedule", hint="decorate the function with @schedule and pass my_schedule(args...)")
        cap = schedule.capture()
        return cap.schedule, cap.groups, cap.resources

    @property
    def num_threads(self) -> int:
        return self.num_warps * WARP

    @property
    def warps(self) -> range:
        return range(self.warp_idx, self.warp_idx + self.num_warps)

    def __str__(self) -> str:
        return f"{self.name} (warps {self.warp_idx}..{self.warp_idx + self.num_warps - 1})"


@dataclass(frozen=True)
class WarpOverlap:
    """Task ``task`` uses warp ``warp``, which the earlier task ``owner`` already holds."""

    owner: str
    task: str
    warp: int


def warp_overlaps(tasks: Sequence[Task]) -> list[WarpOverlap]:
    """Each task (in order) whose warp range meets a warp an earlier task holds, at the lowest
    such warp and its first holder.  Computed from the ranges, never warp by warp, so a task of
    10^8 warps costs what a task of one costs."""
    starts: list[int] = []  # claimed, disjoint [start, end) ranges, sorted; owners alongside
    ends: list[int] = []
    owners: list[str] = []
    out: list[WarpOverlap] = []
    for t in tasks:
        lo, hi = t.warp_idx, t.warp_idx + t.num_warps
        i = max(bisect.bisect_right(starts, lo) - 1, 0)
        while i < len(starts) and ends[i] <= lo:
            i += 1
        if i < len(starts) and starts[i] < hi:
            out.append(WarpOverlap(owners[i], t.name, max(lo, starts[i])))
        # claim the parts of [lo, hi) nobody holds yet (earlier holders keep theirs)
        cursor, gaps = lo, []
        while i < len(starts) and starts[i] < hi:
            if starts[i] > cursor:
                gaps.append((cursor, starts[i]))
            cursor = max(cursor, ends[i])
            i += 1
        if cursor < hi:
            gaps.append((cursor, hi))
        for a, b in gaps:
            j = bisect.bisect_left(starts, a)
            starts.insert(j, a)
            ends.insert(j, b)
            owners.insert(j, t.name)
    return out


def _bind_by_name(sched: Schedule, resources: Sequence[Any]) -> BoundSchedule:
    from .group import owner_of

    pool: dict[str, Any] = {}
    for r in resources:
        if isinstance(r, str):
            continue
        pool[r.name] = r
        grp = owner_of(r)
        if grp is not None:
            pool[grp.name] = grp
    missing = [p for p in sched.parameters() if p not in pool]
    if missing:
        raise ScheduleError(
            f"schedule {sched.name!r}: parameter(s) {', '.join(map(repr, missing))} name no resource or group of the task "
            f"(have {', '.join(sorted(pool)) or 'none'})",
            code="schedule.binding", hint=f"pass the arguments explicitly: schedule={sched.name}(...)")
    return sched(*[pool[p] for p in sched.parameters()])

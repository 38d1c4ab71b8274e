"""``@schedule`` and ``domain_loop``: run a schedule function once against recording proxies.

Calling a resource's or group's acquire / commit / wait / release / read / load / store / mma
inside an active capture appends a ``Step``; ``with domain_loop(...)`` opens a ``Loop``.  The
result is a ``CapturedSchedule`` of plain names.  Capture happens when a ``Task`` is created,
which is where TS raises schedule errors.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..errors import ScheduleError
from .schedule import CapturedSchedule, Loop, Step

__all__ = ["Value", "record", "domain_loop", "Capture", "Schedule", "BoundSchedule", "schedule"]


@dataclass(frozen=True)
class Value:
    """What ``read()`` returns inside a schedule: a handle naming the resource it came from."""

    resource: str

    def __repr__(self) -> str:
        return f"Value({self.resource})"


@dataclass
class _Recorder:
    name: str
    stack: list[list] = field(default_factory=lambda: [[]])
    groups: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)


_ACTIVE: ContextVar[_Recorder | None] = ContextVar("pgstudio_capture", default=None)


def _describe(value: Any) -> str:
    if isinstance(value, Value):
        return value.resource
    name = getattr(value, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(value, (int, float, str, bool)):
        return repr(value)
    return type(value).__name__


def record(op: str, obj: Any, *, via: str, args: dict[str, Any], group: Any = None) -> Any:
    """Append one step to the active capture (called by resources, members and groups)."""
    rec = _ACTIVE.get()
    if rec is None:
        raise ScheduleError(
            f"{obj.name}.{op}() was called outside a schedule capture",
            code="schedule.outside",
            hint="call it inside a function decorated with @schedule that a Task runs")
    if via == "group":
        rec.groups[obj.name] = obj
        step = Step(op, obj.name, "group", obj.name)
    else:
        rec.resources[obj.name] = obj
        if group is not None:
            rec.groups[group.name] = group
        step = Step(op, obj.name, via, group.name if group is not None else None,
                    tuple((k, _describe(v)) for k, v in args.items()))
    rec.stack[-1].append(step)
    return Value(obj.name) if op == "read" else None


@contextlib.contextmanager
def domain_loop(start: int | str, stop: int | str | None = None, step: int | str = 1) -> Iterator[None]:
    """The task's loop over its domain (k tiles, output tiles ...). ``domain_loop(n)`` is
    ``domain_loop(0, n, 1)``. Bounds may name problem-shape symbols."""
    if stop is None:
        start, stop = 0, start
    rec = _ACTIVE.get()
    if rec is None:
        raise ScheduleError("domain_loop() was used outside a schedule capture", code="schedule.outside",
                            hint="use it inside a function decorated with @schedule")
    rec.stack.append([])
    try:
        yield None
    finally:
        body = rec.stack.pop()
        rec.stack[-1].append(Loop(start, stop, step, tuple(body)))


@dataclass(frozen=True)
class Capture:
    """A captured schedule plus the live groups it touched (for the rules' group lookup)."""

    schedule: CapturedSchedule
    groups: dict[str, Any]
    resources: dict[str, Any]


class Schedule:
    """A function decorated with ``@schedule``. Call it with its arguments (resources, groups)
    to bind them; the task captures the bound schedule when it is created."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.name = fn.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> "BoundSchedule":
        return BoundSchedule(self, args, kwargs)

    def parameters(self) -> list[str]:
        return list(inspect.signature(self.fn).parameters)

    def __repr__(self) -> str:
        return f"<schedule {self.name}>"


@dataclass(frozen=True)
class BoundSchedule:
    """A schedule with its arguments, ready to capture."""

    schedule: Schedule
    args: tuple
    kwargs: dict

    @property
    def name(self) -> str:
        return self.schedule.name

    def capture(self) -> Capture:
        rec = _Recorder(self.schedule.name)
        for value in (*self.args, *self.kwargs.values()):
            if hasattr(value, "mode") and hasattr(value, "members"):
                rec.groups[value.name] = value
        token = _ACTIVE.set(rec)
        try:
            self.schedule.fn(*self.args, **self.kwargs)
        except ScheduleError:
            raise
        except Exception as exc:  # user code: say where it failed, in our words
            raise ScheduleError(
                f"schedule {self.schedule.name!r} raised {type(exc).__name__}: {exc}",
                code="schedule.user_error",
                hint="fix the schedule function; it runs once, at task creation, against recording proxies") from exc
        finally:
            _ACTIVE.reset(token)
        if len(rec.stack) != 1:
            raise ScheduleError(f"schedule {self.schedule.name!r} left a domain_loop open", code="schedule.loop")
        return Capture(CapturedSchedule(self.schedule.name, tuple(rec.stack[0])), rec.groups, rec.resources)


def schedule(fn: Callable[..., Any]) -> Schedule:
    """Decorator: mark ``fn`` as a task schedule (captured, never run on the GPU)."""
    return Schedule(fn)

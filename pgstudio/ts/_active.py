"""The schedule being captured right now (one per thread / context), shared by the loop and
guard constructs that only make sense inside a ``@schedule`` function."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from ..errors import ScheduleError

ACTIVE: ContextVar[Any] = ContextVar("pgstudio_ts_capture", default=None)


def active() -> Any:
    """The builder of the schedule being captured, or None."""
    return ACTIVE.get()


def builder(what: str) -> Any:
    """The active builder, or ``ScheduleError`` saying ``what`` was used outside a schedule."""
    b = ACTIVE.get()
    if b is None:
        raise ScheduleError(f"{what} was used outside a schedule capture", code="schedule.outside",
                            hint="use it inside a function decorated with @schedule")
    return b


__all__ = ["ACTIVE", "active", "builder"]

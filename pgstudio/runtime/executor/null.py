"""``executor="null"``: the null runtime's executor -- jobs in this process, GPU jobs on a null
device that allocates, launches and times nothing (``runtime.null``).

It counts one GPU, so a sweep submits its timing jobs, ``benchmark`` and ``run`` send themselves as
a job (``runtime.isolated.on_gpu``: the design through JSON, the outcome back, an error as plain
data) and everything the GPU executors do for a job happens -- except the kernel.  Its jobs hand
the functions they run an executor of their own (``job_executor``): in this process, null
runtime, so the function runs here on ``runtime.backend.NULL`` and never on a GPU, even where
there is one.
"""

from __future__ import annotations

from typing import Any, Iterator

from .. import progress
from ._job import Outcome
from .base import ProgressCallback
from .inline import InlineExecutor, InlineSession


class NullExecutor(InlineExecutor):
    """Runs jobs in the calling process on the null runtime (see the module docstring)."""

    name = "null"
    runtime = "null"

    def __init__(self, *, here: bool = False) -> None:
        self.in_process = here

    def job_executor(self) -> "NullExecutor":
        return NullExecutor(here=True)

    def session(self, on_progress: ProgressCallback | None = None) -> "NullSession":
        return NullSession(self, on_progress)

    def gpu_count(self) -> int:
        """One null device: GPU jobs run (on the null runtime)."""
        return 1

    def describe(self) -> str:
        return "null runtime (this process; no GPU: nothing is launched or timed)"


class _Relay:
    """Where a job's progress goes: to the session's ``on_progress``, like a worker's queue; the
    caller's own bars, made as it arrives, go where the caller's went (``outer``)."""

    def __init__(self, on_progress: ProgressCallback | None, outer: Any) -> None:
        self.on_progress, self.outer = on_progress, outer

    def put(self, step: tuple) -> None:
        if self.on_progress is not None:
            with progress.relaying(self.outer):
                self.on_progress(*step)


class NullSession(InlineSession):
    """An inline session whose jobs relay their progress as a worker's do (the caller draws it)
    and whose outcomes say where they ran: on the null runtime."""

    def __iter__(self) -> Iterator[Outcome]:
        jobs = super().__iter__()
        relay = _Relay(self.on_progress, progress.current_relay())
        while True:
            with progress.relaying(relay):
                out = next(jobs, None)
            if out is None:
                return
            out.where = f"null runtime, {out.where}"
            yield out


__all__ = ["NullExecutor", "NullSession"]

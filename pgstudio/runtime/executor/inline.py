"""``executor="inline"``: every job in this process, one after another -- for debugging.

Breakpoints, profilers and printouts work as in plain Python, and nothing is pickled; but a
kernel that traps leaves this process's CUDA context unusable (restart the kernel), which is
what the worker-process executors exist to prevent.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterator

from .. import progress
from ._job import Job, Outcome, no_gpu, run_job, unwrap, worker_name
from .base import Executor, ProgressCallback, Session


class InlineSession(Session):
    def __init__(self, executor: "InlineExecutor", on_progress: ProgressCallback | None) -> None:
        self.executor = executor
        self.queue: deque[tuple[Job, Any]] = deque()
        self.on_progress = on_progress

    def submit(self, job: Job, payload: Any = None) -> None:
        self.queue.append((job, payload))

    def __iter__(self) -> Iterator[Outcome]:
        while self.queue:
            job, payload = self.queue.popleft()
            if job.gpu and self.executor.gpu_count() == 0:
                yield Outcome(job, error=no_gpu())
                continue
            progress.running(job.key)
            raw, handle = run_job(job.fn, job.args, job.kwargs, payload, keep_payload=True)
            value, error, seconds, _ = unwrap(raw)
            yield Outcome(job, value, error, 1, f"inline {worker_name()}", seconds, handle)

    def close(self) -> None:
        self.queue.clear()


class InlineExecutor(Executor):
    """Runs jobs in the calling process (see the module docstring)."""

    name = "inline"
    in_process = True

    def session(self, on_progress: ProgressCallback | None = None) -> InlineSession:
        return InlineSession(self, on_progress)

    def gpu_count(self) -> int:
        from .._cupy import gpu_count
        return gpu_count()

    def cpu_count(self) -> int:
        return 1

    def describe(self) -> str:
        return "inline (this process)"


__all__ = ["InlineExecutor", "InlineSession"]

"""The contract every executor keeps: sessions that take jobs and stream outcomes back.

::

    with executor.session() as s:
        for job in jobs:
            s.submit(job)
        for outcome in s:            # as jobs finish, in any order; submit more while iterating
            ...

A session yields exactly one ``Outcome`` per submitted job: its value, or its ``Failure`` (a
job's own error, a broken GPU context, a dead worker after its retries, a timeout).  Nothing a
job does raises in the caller; ``Outcome.result()`` raises when the caller wants an exception.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from ._job import Job, Outcome

#: ``on_progress(job_key, desc, unit, done, total, label)``: steps a running job reports (its
#: ``runtime.progress.Progress`` bars, relayed from the worker).
ProgressCallback = Callable[[str, str, str, int, int, str], None]


class Session:
    """One batch of jobs on an executor (see the module docstring)."""

    def submit(self, job: Job, payload: Any = None) -> None:  # pragma: no cover - interface
        """Queue ``job``; ``payload`` is an earlier outcome's ``handle`` passed on to it."""
        raise NotImplementedError

    def __iter__(self) -> Iterator[Outcome]:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """Stop what is still running (an interrupted sweep); finished outcomes stay delivered."""

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Executor:
    """Where jobs run.  ``name`` is what ``get_executor`` takes ("inline", "embedded", "ray", "null")."""

    name = "executor"
    #: Which runtime its GPU jobs use (``runtime.backend``): "cuda", or "null" (``executor.null``).
    runtime = "cuda"
    #: True when a function given this executor runs right here, in the calling process (inline);
    #: False when it sends itself as a job (``runtime.isolated.on_gpu``).
    in_process = False

    def job_executor(self) -> Any:
        """What a job of this executor passes on as ``executor=`` to the function it runs: the
        process it landed in (``"inline"``)."""
        return "inline"

    def session(self, on_progress: ProgressCallback | None = None) -> Session:  # pragma: no cover
        raise NotImplementedError

    def gpu_count(self) -> int:  # pragma: no cover - interface
        """GPUs this executor can time on (0: compile only)."""
        raise NotImplementedError

    def cpu_count(self) -> int:  # pragma: no cover - interface
        """Jobs that compile at the same time."""
        raise NotImplementedError

    def describe(self) -> str:
        return self.name

    def call(self, job: Job, on_progress: ProgressCallback | None = None) -> Any:
        """Run one job and return its value, or raise its error (naming ``job.label``)."""
        with self.session(on_progress) as s:
            s.submit(job)
            for out in s:
                return out.result()
        raise RuntimeError(f"executor {self.name} returned nothing for {job.name}")  # pragma: no cover

    def close(self) -> None:
        """Stop the workers (they start again on the next job)."""


__all__ = ["Executor", "ProgressCallback", "Session"]

"""What an executor runs and what comes back: ``Job``, ``Outcome``, ``Failure``.

A job is a top-level function (pickled by reference, so every worker imports it from pgstudio)
with plain arguments.  It runs inside ``run_job`` wherever the executor puts it; ``run_job``
never lets an exception escape: the error travels back as a ``Failure`` (plain data, so it
crosses process and machine boundaries intact), and the caller decides whether to raise it
(``Failure.exception()``) or to put it in a table row.

A job may hand a large by-product to a later job without sending it through the caller (a
cubin from a compile job to the timing job): it returns ``WithPayload(value, payload)``; the
value comes back in the ``Outcome``, the payload stays with the executor (Ray's object store,
or nothing for local workers, whose shared disk cache already holds the cubin) and reaches
the later job as its ``payload`` keyword.
"""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class Job:
    """One unit of work.  ``key`` is unique within a session (a sweep's variant key);
    ``gpu`` jobs run on a GPU worker (one per device), others on a CPU worker; ``label``
    names the work in messages ("merge_copy, variant designed 4x8192B")."""

    key: str
    fn: Callable[..., Any]
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    gpu: bool = False
    label: str = ""
    timeout_s: float | None = None

    @property
    def name(self) -> str:
        return self.label or self.key


@dataclass(frozen=True)
class WithPayload:
    """A job's result with a by-product for a later job (see the module docstring)."""

    value: Any
    payload: Any


@dataclass(frozen=True)
class Failure:
    """An exception as plain data.

    ``kind`` is the exception's class name, ``fields`` the extra attributes pgstudio's errors
    carry (a watchdog ``record``, a compiler ``log``, a diagnostic ``code``); ``poisoned``: the
    worker's CUDA context is unusable afterwards (a trap, an illegal address), so the executor
    replaces the worker; ``crashed``: the worker process died or was stopped (a timeout).
    """

    kind: str
    message: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    poisoned: bool = False
    crashed: bool = False
    trace: str = ""

    @classmethod
    def of(cls, exc: BaseException, poisoned: bool = False) -> "Failure":
        fields = {k: getattr(exc, k) for k in ("record", "log", "code", "hint", "cause") if hasattr(exc, k)}
        return cls(type(exc).__name__, str(exc), fields, poisoned,
                   trace="".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:])

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"

    def exception(self, context: str = "") -> BaseException:
        """The error to raise in the caller: pgstudio's own class where it is one of them
        (a watchdog record, a compiler log, a diagnostic code kept), else ``PgStudioError``."""
        from ... import errors
        pre = f"{context}: " if context else ""
        f = dict(self.fields)
        if self.crashed or self.poisoned:
            return errors.KernelFault(pre + str(self), f.get("cause", ""))
        cls = getattr(errors, self.kind, None)
        if not (isinstance(cls, type) and issubclass(cls, errors.PgStudioError)):
            return errors.PgStudioError(pre + str(self))
        msg = pre + self.message
        if cls is errors.KernelHangError:
            return cls(msg, f.get("record"))
        if cls is errors.CompileError:
            return cls(msg, f.get("log", ""))
        if issubclass(cls, errors.DesignError):
            return cls(msg, code=f.get("code", ""))  # the hint is part of the message already
        try:
            return cls(msg)
        except TypeError:  # a subclass with other constructor arguments
            return errors.PgStudioError(pre + str(self))


@dataclass
class Outcome:
    """What came back for one job: its ``value`` or its ``error``."""

    job: Job
    value: Any = None
    error: Failure | None = None
    attempts: int = 1
    where: str = ""
    seconds: float = 0.0
    handle: Any = None  # the executor's reference to the job's payload (see WithPayload)

    @property
    def ok(self) -> bool:
        return self.error is None

    def result(self) -> Any:
        """The value, or the error raised as pgstudio's exception naming the job."""
        if self.error is not None:
            raise self.error.exception(self.job.name)
        return self.value


#: Set in a worker whose CUDA context a job left unusable; the next job there refuses to run.
_POISONED: list[str] = []


def _context_broken() -> bool:
    """After a failure: is this process's CUDA context unusable (a sticky error)?  Only asked
    where CuPy was imported, so CPU workers never touch CUDA."""
    import sys
    if "cupy" not in sys.modules:
        return False
    from .._cupy import context_usable
    return not context_usable()


def run_job(fn: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any], payload: Any = None,
            keep_payload: bool = False, worker: bool = False) -> tuple[Any, Any]:
    """Run one job: ``(value, payload)`` or ``(Failure, None)``; never raises.

    In a worker process (``worker=True``) a job that leaves the CUDA context broken marks the
    process, and the next job there exits it at once (exit code 3): a reused worker is replaced
    and that job retried elsewhere instead of failing on a dead context.  The calling process
    (the inline executor) is never exited.
    """
    if worker and _POISONED:
        os._exit(3)
    t0 = time.perf_counter()
    try:
        out = fn(*args, **dict(kwargs), **({"payload": payload} if payload is not None else {}))
    except BaseException as exc:  # noqa: BLE001 - the boundary: every error becomes data
        poisoned = _context_broken()
        if poisoned and worker:
            _POISONED.append(type(exc).__name__)
        return Failure.of(exc, poisoned), None
    seconds = time.perf_counter() - t0
    if isinstance(out, WithPayload):
        return _Done(out.value, seconds, worker_name()), (out.payload if keep_payload else None)
    return _Done(out, seconds, worker_name()), None


@dataclass(frozen=True)
class _Done:
    """A job's value, how long it ran and where."""

    value: Any
    seconds: float
    where: str


def unwrap(raw: Any) -> tuple[Any, Failure | None, float, str]:
    """(value, error, seconds, where) from what ``run_job`` returned."""
    if isinstance(raw, Failure):
        return None, raw, 0.0, ""
    if isinstance(raw, _Done):
        return raw.value, None, raw.seconds, raw.where
    return raw, None, 0.0, ""


def no_gpu() -> Failure:
    """The failure of a GPU job on an executor without a GPU: why there is none, in words."""
    from ...errors import GpuUnavailable
    from .._cupy import require_gpu
    try:
        require_gpu()
    except GpuUnavailable as exc:
        return Failure.of(exc)
    return Failure("GpuUnavailable", "no GPU is visible to this executor")


def worker_name() -> str:
    """Where a job ran, for messages: host and process id."""
    import socket
    return f"{socket.gethostname()}:{os.getpid()}"


__all__ = ["Failure", "Job", "Outcome", "WithPayload", "no_gpu", "run_job", "unwrap", "worker_name"]

"""The schedule calls, written once: resources, ``group.member`` references and groups all
record the same steps; each class only says how it records (``_record``).

Inside a ``@schedule`` capture a call appends a ``Step``; outside one it raises
``ScheduleError`` (see ``capture.record``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["work_args", "SyncSteps", "WorkSteps"]


def work_args(values: tuple, kw: dict) -> dict[str, Any]:
    """Positional and keyword work inputs as one ordered mapping (arg0, arg1, ..., then names)."""
    out = {f"arg{i}": v for i, v in enumerate(values)}
    out.update(kw)
    return out


class SyncSteps:
    """Barrier operations: acquire / commit (producer side), wait / release (consumer side)."""

    def _record(self, op: str, args: dict[str, Any] | None = None) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def try_acquire(self) -> None:
        """Producer: probe the empty barrier without blocking (must directly precede acquire)."""
        self._record("try_acquire")

    def acquire(self) -> None:
        """Producer: wait until the stage is empty (for tma, also arm expect_tx on full)."""
        self._record("acquire")

    def commit(self) -> None:
        """Producer: signal the full barrier that the stage is written."""
        self._record("commit")

    def try_wait(self) -> None:
        """Consumer: probe the full barrier without blocking (must directly precede wait)."""
        self._record("try_wait")

    def wait(self) -> None:
        """Consumer: wait until the stage is full."""
        self._record("wait")

    def release(self) -> None:
        """Consumer: signal the empty barrier that the stage may be overwritten."""
        self._record("release")


class WorkSteps(SyncSteps):
    """Barrier operations plus work: ``read`` is consumer work; load / store / mma producer work."""

    def read(self) -> Any:
        """Consumer work: read the current stage; returns a value handle for producer work."""
        return self._record("read")

    def load(self, *values: Any, **kw: Any) -> None:
        """Producer work: fill the stage from its dependency (a copy)."""
        self._record("load", work_args(values, kw))

    def store(self, *values: Any, **kw: Any) -> None:
        """Producer work: write values computed from what was read."""
        self._record("store", work_args(values, kw))

    def mma(self, *values: Any, **kw: Any) -> None:
        """Producer work: tensor-core MMA into this resource."""
        self._record("mma", work_args(values, kw))

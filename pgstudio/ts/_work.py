"""Work methods and task-local variables, as TS declares them on a resource class.

``@producer_work`` marks a method that writes into its resource, ``@consumer_work`` one that reads
out of it (``returns=`` names the ``TaskLocalVariable`` the read value lands in, so a schedule can
route it to a producer).  pgstudio never runs the bodies: a ``@schedule`` records which work was
called, and the model keeps it as ``read`` (consumer work) or ``load`` / ``store`` / ``mma``
(producer work, see ``producer_op``).  Work marked ``WorkAttr.AUXILIARY`` carries no data; TS's
verifier ignores it for ordering and so does pgstudio, which drops it.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from enum import IntFlag
from typing import Any, Callable

from ..model.kinds import OpKind
from ._unmodelled import TSAttributes, unmodelled_attribute

#: The attribute a work decorator leaves on the function.
WORK_ATTR = "__pgstudio_ts_work__"
#: Producer work names that are already pgstudio's ops (an exported script's own names).
_OP_NAME = re.compile(r"^(load|store|mma)(_\d+)?$")


class WorkAttr(IntFlag):
    """Verifier-visible attributes of a work callback: ``AUXILIARY`` work carries no data."""

    NONE = 0
    AUXILIARY = 1

    def is_auxiliary(self) -> bool:
        """Whether the work is auxiliary (carries no data)."""
        return bool(self & WorkAttr.AUXILIARY)

    @classmethod
    def is_valid_combination(cls, value: "WorkAttr") -> bool:
        raise unmodelled_attribute("WorkAttr", "is_valid_combination")

    @classmethod
    def validate(cls, value: "WorkAttr", field_name: str) -> None:
        raise unmodelled_attribute("WorkAttr", "validate")


@dataclass(frozen=True)
class WorkSpec:
    """What a work decorator declared: the side, the outputs and the attributes."""

    side: str  # "producer" | "consumer"
    returns: tuple[Any, ...]
    attrs: WorkAttr

    @property
    def auxiliary(self) -> bool:
        return bool(self.attrs & WorkAttr.AUXILIARY)


def _decorator(side: str, method: Callable | None, returns: Any, work_attrs: WorkAttr):
    outs = () if returns is None else tuple(returns) if isinstance(returns, (tuple, list)) else (returns,)

    def mark(fn: Callable) -> Callable:
        setattr(fn, WORK_ATTR, WorkSpec(side, outs, WorkAttr(work_attrs)))
        return fn

    return mark(method) if method is not None else mark


def producer_work(method: Callable | None = None, *, work_attrs: WorkAttr = WorkAttr.NONE):
    """Register a method that writes data into its resource (``@producer_work`` or
    ``@producer_work(work_attrs=...)``)."""
    return _decorator("producer", method, None, work_attrs)


def consumer_work(method: Callable | None = None, *, work_attrs: WorkAttr = WorkAttr.NONE, returns: Any = None):
    """Register a method that reads data out of its resource; ``returns=`` names the task-local
    variable(s) it produces, one token per variable in a schedule."""
    return _decorator("consumer", method, returns, work_attrs)


def work_spec(obj: Any) -> WorkSpec | None:
    """The spec a work decorator left on ``obj`` (a function), or None."""
    return getattr(obj, WORK_ATTR, None)


def named_work(cls: type) -> dict[str, WorkSpec]:
    """Every named work method of a resource class (inherited ones too), by name."""
    out: dict[str, WorkSpec] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            spec = work_spec(value)
            if spec is not None:
                out[name] = spec
    return out


def producer_op(label: str | None, memory: str, kind: OpKind | None) -> str:
    """The model op a producer work call becomes: its own name when it is one of pgstudio's
    (``load``, ``store``, ``mma``, or ``store_2`` ...), else what the resource's producer does: a
    TMA copy loads, an MMA is an mma, threads and global-memory writes store."""
    if label and _OP_NAME.match(label):
        return _OP_NAME.match(label).group(1)
    if memory == "gmem" or kind is None:
        return "store"
    return {OpKind.TMA: "load", OpKind.UMMA: "mma"}.get(kind, "store")


@dataclass
class TaskLocalVariable(TSAttributes):
    """A value a consumer work call produces and a producer work call receives (TS's register
    state).  pgstudio keeps only which resource a value came from."""

    dtype: Any = None
    default: Any = None
    default_factory: Callable[[], Any] | None = None
    docs: str | None = None
    runtime_slot_name: str | None = None

    @staticmethod
    def uninitialized() -> Any:
        """A dataclass field for a task-local variable, assigned in ``__post_init__`` (as in TS)."""
        return dataclasses.field(default=None, metadata={"pgstudio.ts": "task_local"})


@dataclass(frozen=True)
class StageInfo:
    """What TS passes to every work method at run time.  pgstudio never calls work methods, so this
    is here for the annotations of TS scripts."""

    loop_offset: Any = 0
    loop_start: Any = 0
    loop_end: Any = 0
    loop_step: Any = 1
    stage_idx: Any = None
    label: Any = None
    barrier: Any = None
    work_tile: Any = None
    num_active_stages: int = 0
    context: Any = None
    task_cache: Any = None


__all__ = ["StageInfo", "TaskLocalVariable", "WorkAttr", "WorkSpec", "consumer_work", "named_work", "producer_op",
           "producer_work", "work_spec"]

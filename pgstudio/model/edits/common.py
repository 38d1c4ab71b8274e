"""What every edit shares: the editor's defaults, ``EditError`` and the rules for new names."""

from __future__ import annotations

from typing import Any, Sequence

from ...errors import DesignError
from ..design import Design
from ..names import name_problem
from ..resource import Memory
from ..schedule import CapturedSchedule, Loop, Step

__all__ = [
    "NOT_PIPELINED",
    "DEFAULT_COMPUTE",
    "ASYNC_DEFAULT_THREADS",
    "EditError",
    "unique_name",
    "check_new_name",
]

#: Pipeline types offered by the editor; "none" means not pipelined.
NOT_PIPELINED = "none"
#: Default compute op per memory (what a fresh resource of that memory holds).
DEFAULT_COMPUTE = {Memory.GMEM: "input", Memory.SMEM: "copy", Memory.TMEM: "mma"}
#: A fresh pipelined resource: one tma copy of 2048 float32 per stage, 4 stages.
NEW_STAGES, NEW_TILE = 4, (2048,)
ASYNC_DEFAULT_THREADS = 128


class EditError(DesignError):
    """An edit the studio cannot express; the message is shown to the user."""


# -- names -------------------------------------------------------------------------------------

def _names_in_use(d: Design) -> set[str]:
    return {x.name for x in (*d.resources, *d.groups, *d.tasks)}


def unique_name(d: Design, base: str) -> str:
    """``base_1``, ``base_2`` ... : the first that no resource, group or task has."""
    used = _names_in_use(d)
    i = 1
    while f"{base}_{i}" in used:
        i += 1
    return f"{base}_{i}"


def check_new_name(d: Design, new: str, what: str, old: str | None = None) -> str:
    new = (new or "").strip()
    problem = name_problem(new)
    if problem:
        raise EditError(f"{what} {problem}", code="name.identifier", hint="use a name like 'smem_a'")
    if new != old and new in _names_in_use(d):
        raise EditError(f"{what} name {new!r} is already used in design {d.name!r}; names must be unique",
                        code="design.duplicate_name", hint="pick another name")
    return new


def _rename_steps(nodes: Sequence[Any], old: str, new: str) -> tuple:
    out = []
    for n in nodes:
        if isinstance(n, Loop):
            out.append(Loop(n.start, n.stop, n.step, _rename_steps(n.body, old, new)))
        else:
            def sub(x):
                return (new if x == old else x)
            out.append(Step(n.op, sub(n.target), n.via, sub(n.group) if n.group else n.group,
                            tuple((k, sub(v)) for k, v in n.args)))
    return tuple(out)


def _rename_in_schedule(s: CapturedSchedule | None, old: str, new: str) -> CapturedSchedule | None:
    return None if s is None else CapturedSchedule(s.name, _rename_steps(s.nodes, old, new))



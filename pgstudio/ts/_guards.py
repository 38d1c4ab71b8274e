"""TS's conditional blocks: iteration predicates and data-dependent conditions.

TS can run part of a loop body on some iterations only (``d.first_iter()``, ``d.last_iter()``,
``d.every(n)``, ``when_true(Every(n))``) or when a runtime value says so (``when_true(token)`` /
``when_false(token)``).  A pgstudio schedule runs the same steps on every iteration, and its
analyses (layout counts, simulator, checker, code generators) all read it that way, so these
blocks cannot be modelled yet: inside a ``@schedule`` each raises ``DesignError`` naming the
construct (after TS's own grammar checks, which raise ``ScheduleError`` as TS does).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Hashable, Iterator

from ..errors import DesignError, ScheduleError
from ._active import builder


class BlockGuard:
    """Marker base of the guards a conditional block takes."""


class IterationPredicate(BlockGuard):
    """A guard decided from the zero-based iteration count of the enclosing domain loop."""

    def fires(self, iter_idx: int, num_iters: int) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True)
class Every(IterationPredicate):
    """Fires on iteration counts ``start, start + period, start + 2 * period, ...``."""

    period: int
    start: int = 0

    def fires(self, iter_idx: int, num_iters: int) -> bool:
        return iter_idx >= self.start and (iter_idx - self.start) % self.period == 0


@dataclass(frozen=True)
class OpaqueCondition(BlockGuard):
    """A guard read from a runtime value (a consumer work output) under ``key``."""

    key: Hashable
    negated: bool = False
    resource: object | None = None
    method_label: str | None = None
    result_name: str | None = None


def unsupported(construct: str) -> DesignError:
    """The error for a conditional block pgstudio cannot model (module docstring)."""
    return DesignError(f"ts: {construct} cannot be modelled yet: a pgstudio schedule runs the same steps on every "
                       f"iteration of its loop, and its layout, simulator, checker and code generators read it so",
                       code="ts.unsupported",
                       hint="move the guarded steps out of the loop (before or after it), or keep this design in TS")


@contextlib.contextmanager
def when_true(cond: Any, *, key: Hashable | None = None) -> Iterator[None]:
    """Open a block that runs when ``cond`` holds (TS).  Not modelled: raises (module docstring)."""
    _check(cond, "when_true")
    raise unsupported(f"when_true({_describe(cond)})")
    yield  # pragma: no cover


@contextlib.contextmanager
def when_false(cond: Any, *, key: Hashable | None = None) -> Iterator[None]:
    """Open a block that runs when ``cond`` is false (TS).  Not modelled: raises (module docstring)."""
    _check(cond, "when_false")
    if isinstance(cond, IterationPredicate):
        raise ScheduleError("when_false() accepts opaque runtime conditions only: an iteration predicate cannot be "
                            "negated (its complement may not be contiguous in the loop)", code="schedule.guard",
                            hint="use when_true() with the predicate you mean")
    raise unsupported(f"when_false({_describe(cond)})")
    yield  # pragma: no cover


def _check(cond: Any, what: str) -> None:
    current = builder(f"{what}()")
    if isinstance(cond, IterationPredicate) and not current.in_domain_loop:
        raise ScheduleError(f"{what}({_describe(cond)}): iteration predicates are only valid inside domain_loop()",
                            code="schedule.guard", hint="open the block inside `with domain_loop(...)`")


def _describe(cond: Any) -> str:
    if isinstance(cond, Every):
        return f"Every({cond.period}, start={cond.start})"
    if isinstance(cond, (IterationPredicate, OpaqueCondition)):
        return type(cond).__name__ + "(...)"
    return "a runtime value"


__all__ = ["BlockGuard", "Every", "IterationPredicate", "OpaqueCondition", "unsupported", "when_false", "when_true"]

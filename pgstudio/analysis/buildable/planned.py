"""A plan with the problems that kept it from being made.

The planners of ``analysis.buildable`` never raise for a design they cannot build: they collect
``codegen.*`` diagnostics, so ``validate()`` shows every reason at once and the generators raise
one ``DesignError`` listing them (``Planned.require``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Iterable, TypeVar

from ...errors import DesignError
from ...model.diagnostic import Diagnostic

__all__ = ["design_error", "Planned"]

P = TypeVar("P")


def design_error(design: str, problems: Iterable[Diagnostic], what: str = "is not valid") -> DesignError:
    """ONE ``DesignError`` listing every error (code, message, fix); its ``code`` is the first's."""
    errors = [d for d in problems if d.is_error]
    lines = "\n".join(f"  [{d.code}] {d.message}" + (f" (fix: {d.hint})" if d.hint else "") for d in errors)
    return DesignError(f"design {design!r} {what}: {len(errors)} error(s)\n{lines}",
                       code=errors[0].code if errors else "", diagnostics=tuple(errors))


@dataclass(frozen=True)
class Planned(Generic[P]):
    """``plan`` when the generator can build the design, else None and the ``problems``."""

    plan: P | None
    problems: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        return self.plan is not None and not self.problems

    def require(self, design: str, arch: str) -> P:
        """The plan, or one ``DesignError`` listing every problem."""
        if not self.ok:
            raise design_error(design, self.problems, f"cannot be generated for {arch}")
        return self.plan  # type: ignore[return-value]

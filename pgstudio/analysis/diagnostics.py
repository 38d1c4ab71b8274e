"""Diagnostics as data, and the Report that ``Design.validate()`` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import DesignError, ScheduleError
from ..model.diagnostic import Diagnostic, Severity, error, warning

__all__ = ["Diagnostic", "Severity", "Report", "error", "warning"]


@dataclass(frozen=True)
class Report:
    """Every diagnostic of one design, in rule-table order (errors first within a rule)."""

    design: str
    diagnostics: tuple[Diagnostic, ...] = ()
    verdict: Any = None  # the exhaustive checker's verdict, when it ran
    subject: Any = field(default=None, compare=False, repr=False)  # the Design, when known (for its picture)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.WARNING)

    @property
    def ok(self) -> bool:
        return not self.errors

    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]

    def about(self, element: str) -> tuple[Diagnostic, ...]:
        """Diagnostics that name ``element`` (a resource, group or task) in ``where``."""
        return tuple(d for d in self.diagnostics if element in d.where)

    def raise_if_errors(self) -> None:
        """Raise the first error (``ScheduleError`` for schedule rules)."""
        for d in self.errors:
            exc = ScheduleError if d.code.startswith("schedule.") else DesignError
            raise exc(d.message, code=d.code, hint=d.hint)

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        head = f"design {self.design!r}: {len(self.errors)} error(s), {len(self.warnings)} warning(s)"
        lines = [head] + [f"  {d}" for d in self.diagnostics]
        if self.verdict is not None:
            lines.append(f"  checker: {self.verdict.summary() if hasattr(self.verdict, 'summary') else self.verdict}")
        return "\n".join(lines)

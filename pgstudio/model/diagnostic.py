"""A finding about a design, as data.

Rules produce diagnostics instead of raising, so the studio can show every problem at once; the
Python API raises the first error where the seed says it raises (``raise_first``).  The type
lives in ``model`` because construction-time rules (groups, schedules) live here too and the
model must not import ``analysis``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Diagnostic:
    """One finding: a stable ``code``, a ``message`` quoting names and values, the design
    elements it is about (``where``: resource / group / task names) and a ``hint`` saying how to
    fix it."""

    code: str
    severity: Severity
    message: str
    where: tuple[str, ...] = ()
    hint: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def __str__(self) -> str:
        text = f"{self.severity} [{self.code}] {self.message}"
        return f"{text} (fix: {self.hint})" if self.hint else text


def error(code: str, message: str, where: Iterable[str] = (), hint: str = "") -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, tuple(where), hint)


def warning(code: str, message: str, where: Iterable[str] = (), hint: str = "") -> Diagnostic:
    return Diagnostic(code, Severity.WARNING, message, tuple(where), hint)


def raise_first(diagnostics: Iterable[Diagnostic], exc_type: type) -> None:
    """Raise the first error among ``diagnostics`` as ``exc_type`` (a DesignError subclass)."""
    for diag in diagnostics:
        if diag.is_error:
            raise exc_type(diag.message, code=diag.code, hint=diag.hint)

"""A finding about a design, as data.

Rules produce diagnostics instead of raising, so the studio can show every problem at once; the
Python API raises the first error where TS raises it: group construction, schedule capture,
task creation (``raise_first``).  The type
lives in ``model`` because construction-time rules (groups, schedules) live here too and the
model must not import ``analysis``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable

__all__ = ["Severity", "Fix", "Diagnostic", "error", "warning", "with_fixes", "fix", "raise_first"]


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Fix:
    """A mechanical fix, as data: the pure edit ``model.edits.<edit>(design, *args, **kwargs)``
    that removes the finding.  Data rather than a callable, so a rule can name it without
    importing the studio, a report stays comparable and serialisable, and the studio shows it as
    a button, the CLI as text.  ``label`` says what it does in the units of the editor's form
    ("set consumer_group to 1 Warp (32 threads)")."""

    label: str
    edit: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True)
class Diagnostic:
    """One finding: a stable ``code``, a ``message`` quoting names and values, the design
    elements it is about (``where``: resource / group / task names), a ``hint`` saying how to
    fix it and, when the fix is mechanical, the ``fixes`` that do it.  ``caused_by`` is the
    ``key`` of the finding this one follows from (fixing that one removes it), or empty for a
    root cause (``analysis.causes``)."""

    code: str
    severity: Severity
    message: str
    where: tuple[str, ...] = ()
    hint: str = ""
    fixes: tuple[Fix, ...] = ()
    caused_by: tuple = ()

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        """``(code, where)``: what the finding is about, whatever its numbers say."""
        return (self.code, self.where)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def __str__(self) -> str:
        text = f"{self.severity} [{self.code}] {self.message}"
        text = f"{text} (fix: {self.hint})" if self.hint else text
        return f"{text} (follows from [{self.caused_by[0]}])" if self.caused_by else text


def error(code: str, message: str, where: Iterable[str] = (), hint: str = "", fixes: Iterable[Fix] = ()) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, tuple(where), hint, tuple(fixes))


def warning(code: str, message: str, where: Iterable[str] = (), hint: str = "", fixes: Iterable[Fix] = ()) -> Diagnostic:
    return Diagnostic(code, Severity.WARNING, message, tuple(where), hint, tuple(fixes))


def with_fixes(diag: Diagnostic, fixes: Iterable[Fix]) -> Diagnostic:
    """``diag`` with ``fixes`` added after its own."""
    extra = tuple(fixes)
    if not extra:
        return diag
    return Diagnostic(diag.code, diag.severity, diag.message, diag.where, diag.hint, diag.fixes + extra, diag.caused_by)


def fix(label: str, edit: str, *args: Any, **kwargs: Any) -> Fix:
    """``Fix(label, edit, args, kwargs)`` written like the call it stands for."""
    return Fix(label, edit, args, tuple(kwargs.items()))


def raise_first(diagnostics: Iterable[Diagnostic], exc_type: type) -> None:
    """Raise the first error among ``diagnostics`` as ``exc_type`` (a DesignError subclass)."""
    for diag in diagnostics:
        if diag.is_error:
            raise exc_type(diag.message, code=diag.code, hint=diag.hint)

"""``validate(design)``: run the rule table, optionally the exhaustive checker -> Report."""

from __future__ import annotations

from ..errors import DesignError
from ..model.design import Design
from ..model.diagnostic import Diagnostic, error
from .check import check
from .diagnostics import Report
from .rules import RULES


def diagnostics(design: Design) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for spec in RULES:
        try:
            out.extend(spec.check(design))
        except DesignError as exc:  # a rule tripped over a broken design: report, never crash
            out.append(error(exc.code or spec.code, str(exc), (), exc.hint))
    seen = set()
    unique = []
    for d in out:
        if d not in seen:
            seen.add(d)
            unique.append(d)
    return unique


def validate(design: Design, *, checker: bool = False, iterations: int = 4) -> Report:
    diags = diagnostics(design)
    verdict = None
    if checker and not any(d.is_error for d in diags):
        verdict = check(design, iterations=iterations)
        diags.extend(verdict.diagnostics())
    return Report(design.name, tuple(diags), verdict, subject=design)

"""``validate(design)``: run the rule table, optionally the exhaustive checker -> Report;
``require_valid(design, arch)``: what the code generators check before they build."""

from __future__ import annotations

from ..errors import DesignError
from ..model.design import Design
from ..model.diagnostic import Diagnostic, error
from .build.planned import design_error
from .check import check
from .diagnostics import Report
from .rules import RULES


def diagnostics(design: Design) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for spec in RULES:
        if spec.needs_consistent and any(d.is_error for d in out):
            continue
        try:
            out.extend(spec.check(design))
        except DesignError as exc:  # a rule tripped over a broken design: report, never crash
            out.append(error(exc.code or spec.code, exc.message, (), exc.hint))
    seen = set()
    unique = []
    for d in out:
        if d not in seen:
            seen.add(d)
            unique.append(d)
    return unique


def validate(design: Design, *, checker: bool = False, iterations: int = 4) -> Report:
    """Every rule of the table at once (the ``codegen`` rules for each of ``design.targets``);
    ``checker=True`` adds the exhaustive checker's verdict when there is no error."""
    diags = diagnostics(design)
    verdict = None
    if checker and not any(d.is_error for d in diags):
        verdict = check(design, iterations=iterations)
        diags.extend(verdict.diagnostics())
    return Report(design.name, tuple(diags), verdict, subject=design)


def require_valid(design: Design, arch: str) -> None:
    """Raise ONE ``DesignError`` listing every error of ``design`` built for ``arch`` (the design
    rules and the generator's rules for that arch), or return: then the generator builds it."""
    report = validate(design.with_targets(arch))
    if not report.ok:
        raise design_error(design.name, report.errors, f"cannot be built for {arch}")

"""``validate(design)``: run the rule table, optionally the exhaustive checker -> Report;
``require_valid(design, arch)``: what the code generators check before they build.

Every rule runs in one pass -- the ``codegen.*`` rules too, on a design that earlier rules find
errors in -- so a user sees every problem at once, ordered by cause (``causes.order_by_cause``):
the root first with its fix, what follows from it under it."""

from __future__ import annotations

from ..errors import DesignError
from ..model.design import Design
from ..model.diagnostic import Diagnostic, error
from .buildable.planned import design_error
from .causes import order_by_cause
from .check import check
from .diagnostics import Report
from .rules import RULES

__all__ = ["diagnostics", "validate", "require_valid"]


def diagnostics(design: Design) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for spec in RULES:
        broken = spec.needs_consistent and any(d.is_error for d in out)
        try:
            out.extend(spec.check(design))
        except DesignError as exc:  # a rule tripped over a broken design: report, never crash
            if not broken:
                out.append(error(exc.code or spec.code, exc.message, (), exc.hint))
        except Exception:  # noqa: BLE001 -- a rule that reads a consistent design, on one the
            if not broken:  # earlier rules found errors in: those errors say what is wrong
                raise
    seen = set()
    unique = []
    for d in out:
        if d not in seen:
            seen.add(d)
            unique.append(d)
    return order_by_cause(design, unique)


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

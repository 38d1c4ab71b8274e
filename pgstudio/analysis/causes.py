"""Diagnostics ordered by cause: the root first, with the findings that follow from it under it.

The rules run in one pass over a design that may be wrong in several places at once, and some
findings are only echoes of another.  A derived schedule follows the design by construction
(semantics 6): when the design is wrong -- a Fork whose loaders are two tasks -- the schedule
derived from it is wrong too, and the schedule rules say so about steps the user never wrote.
Likewise the code generators read a consistent design: what they say about an element that a
structural rule already reports follows from that report.  So:

* a ``schedule.*`` finding about a task whose schedule is derived follows from the structural
  error that shares the most elements with it (its task, its group);
* a ``codegen.*`` finding follows from the structural or schedule error that shares the most
  elements with it;
* everything else is a root cause.

``order_by_cause`` keeps the rule table's order for the roots and puts each consequence right
under its root, marked with the root's ``key`` (``Diagnostic.caused_by``).  Only errors are causes.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from ..model.derive import is_derived
from ..model.design import Design
from ..model.diagnostic import Diagnostic

__all__ = ["order_by_cause", "consequences"]

#: The stages of the rule table, by code prefix: a finding can follow only from an earlier stage.
SCHEDULE, CODEGEN = "schedule.", "codegen."


def _stage(diag: Diagnostic) -> int:
    if diag.code.startswith(CODEGEN):
        return 2
    if diag.code.startswith(SCHEDULE):
        return 1
    return 0


def _root_of(diag: Diagnostic, candidates: list[Diagnostic], derived: set[str]) -> Diagnostic | None:
    stage = _stage(diag)
    if stage == 0 or (stage == 1 and not any(w in derived for w in diag.where)):
        return None  # a structural finding, or a schedule someone wrote: its own cause
    shared = set(diag.where)
    best, most = None, 0
    for c in candidates:  # in table order: the first of equally close roots wins
        if c.is_error and _stage(c) < stage and c.caused_by == ():
            n = len(shared & set(c.where))
            if n > most:
                best, most = c, n
    return best


def order_by_cause(design: Design, diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """``diags`` (in rule-table order) with each consequence under its root, marked ``caused_by``."""
    diags = list(diags)
    derived = {t.name for t in design.tasks if is_derived(t.schedule)}
    roots: list[Diagnostic] = []
    under: dict[tuple, list[Diagnostic]] = {}
    for d in diags:  # roots of a stage are settled before a later stage looks for them
        if _stage(d) == 0:
            roots.append(d)
    for stage in (1, 2):
        for d in diags:
            if _stage(d) != stage:
                continue
            root = _root_of(d, roots, derived)
            if root is None:
                roots.append(d)
            else:
                under.setdefault(root.key, []).append(dataclasses.replace(d, caused_by=root.key))
    order = {id(d): i for i, d in enumerate(diags)}
    out: list[Diagnostic] = []
    for r in sorted(roots, key=lambda d: order[id(d)]):
        out.append(r)
        out.extend(under.pop(r.key, ()))
    return out


def consequences(diags: Iterable[Diagnostic], root: Diagnostic) -> list[Diagnostic]:
    """The findings of ``diags`` that follow from ``root``."""
    return [d for d in diags if d.caused_by == root.key]

"""Fixes that converge: the one-click fixes a user is offered are tried on the design first.

A rule knows one finding, not the design's history, so its fix can trade one error for another
(a warp overlap "fixed" by moving the other task onto a misaligned warpgroup) and a chain of such
fixes wanders off into a different design.  ``offered(design, report, last_valid)`` therefore

* adds, for each root error, the fixes that put a field the user changed since the last valid
  design back to its value there ("move task mma back to warp 4": ``revert_fixes``);
* tries every fix on the design: a fix that does not remove its finding, or raises, is not
  offered; one that leaves a new error is not offered when another fix of the same finding and
  kind leaves none (the new error was avoidable; a way back to the last valid value never hides
  a fix that keeps the user's edit);
* orders what is left: no new error first, then the fixes that restore the user's last valid
  values (they change nothing the user did not touch), then fewer errors left, then the rule's
  own order; two fixes giving the same design are offered once.

The first fix of the first error is then the nearest way back to a valid design.  Trying a fix
is one edit and one ``validate`` (milliseconds); each distinct fix is tried once.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from ..errors import DesignError
from ..model import edits as E
from ..model.design import Design
from ..model.diagnostic import Diagnostic, Fix, fix
from .diagnostics import Report
from .validate import validate

__all__ = ["revert_fixes", "changed_fields", "Trial", "offered"]

#: The resource fields a revert compares, as ``set_resource`` takes them, and how to read each.
_RESOURCE_FIELDS = {
    "memory": lambda r: r.memory.value,
    "pipeline_type": lambda r: r.pipeline_config.pipeline_type.value if r.pipeline_config else E.NOT_PIPELINED,
    "num_stages": lambda r: r.pipeline_config.num_stages if r.pipeline_config else None,
    "num_bytes": lambda r: r.pipeline_config.num_bytes if r.pipeline_config else None,
    "tile": lambda r: tuple(r.tile),
    "dtype": lambda r: r.dtype,
    "compute": lambda r: r.compute.op,
    "expr": lambda r: r.compute.expr,
    "producer_agent": lambda r: r.pipeline_config.producer_group.agent.value if r.pipeline_config else None,
    "producer_size": lambda r: r.pipeline_config.producer_group.size if r.pipeline_config else None,
    "consumer_agent": lambda r: r.pipeline_config.consumer_group.agent.value if r.pipeline_config else None,
    "consumer_size": lambda r: r.pipeline_config.consumer_group.size if r.pipeline_config else None,
    "async_producer_op": lambda r: r.pipeline_config.async_producer_op.value if r.pipeline_config else None,
    "aliases": lambda r: r.aliases or "",
}


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        return "x".join(map(str, value)) if all(isinstance(v, int) for v in value) else ", ".join(map(str, value))
    return str(value)


def revert_fixes(design: Design, last_valid: Design | None) -> list[Fix]:
    """One fix per field that differs between ``design`` and ``last_valid`` on an element both
    have (a task's warps or resources, a group's mode or members, a resource field, a problem
    value), setting it back; its label says the field and the value it gets back."""
    return [fx for _, fx in _reverts(design, last_valid) if fx is not None] if last_valid is not None else []


def changed_fields(design: Design, other: Design) -> set[tuple[str, str]]:
    """``(element, field)`` for each field that differs between the two designs on an element both
    have (as ``revert_fixes`` compares them; ``("problem", key)`` for a problem value)."""
    return {where for where, _ in _reverts(design, other)}


def _reverts(design: Design, last_valid: Design) -> list[tuple[tuple[str, str], Fix | None]]:
    out: list[tuple[tuple[str, str], Fix | None]] = []
    old_tasks = {t.name: t for t in last_valid.tasks}
    for t in design.tasks:
        o = old_tasks.get(t.name)
        if o is None:
            continue
        if o.warp_idx != t.warp_idx:
            out.append(((t.name, "warp_idx"), fix(f"move task {t.name} back to warp {o.warp_idx}", "set_task", t.name,
                                                  warp_idx=o.warp_idx)))
        if o.num_warps != t.num_warps:
            plural = "s" if o.num_warps != 1 else ""
            out.append(((t.name, "num_warps"), fix(f"give task {t.name} back its {o.num_warps} warp{plural}", "set_task",
                                                   t.name, num_warps=o.num_warps)))
        if (o.src_resources, o.dst_resources) != (t.src_resources, t.dst_resources):
            said = f"src {_shown(o.src_resources) or 'none'}, dst {_shown(o.dst_resources) or 'none'}"
            out.append(((t.name, "resources"), fix(f"set task {t.name}'s resources back to {said}", "set_task", t.name,
                                                   src=tuple(o.src_resources), dst=tuple(o.dst_resources))))
    old_groups = {g.name: g for g in last_valid.groups}
    for g in design.groups:
        o = old_groups.get(g.name)
        if o is None:
            continue
        if o.mode is not g.mode:
            out.append(((g.name, "mode"), fix(f"set group {g.name}'s mode back to {o.mode}", "set_group", g.name,
                                              mode=o.mode.value)))
        if o.member_names != g.member_names:
            out.append(((g.name, "members"), fix(f"set group {g.name}'s members back to {_shown(o.member_names)}",
                                                 "set_group", g.name, members=tuple(o.member_names))))
    for r in design.resources:
        if not last_valid.has_resource(r.name):
            continue
        o = last_valid.resource(r.name)
        for field, read in _RESOURCE_FIELDS.items():
            then, now = read(o), read(r)
            if then != now:  # a field the old resource did not have is put back by another (pipeline_type)
                out.append(((r.name, field), None if then is None else fix(
                    f"set {r.name}'s {field} back to {_shown(then) or 'none'}", "set_resource", r.name, **{field: then})))
    old_problem = last_valid.problem_dict
    for key, value in design.problem_dict.items():
        if key in old_problem and old_problem[key] != value:
            out.append((("problem", key), fix(f"set {key} back to {old_problem[key]}", "update_problem",
                                              **{key: old_problem[key]})))
    return out


@dataclasses.dataclass(frozen=True)
class Trial:
    """A fix tried on the design: the design it gives and its errors' keys (None: the edit raised)."""

    design: Design | None
    errors: frozenset = frozenset()


def _try(design: Design, fx: Fix, cache: dict[Fix, Trial]) -> Trial:
    if fx not in cache:
        try:
            fixed = E.apply_fix(design, fx)
            cache[fx] = Trial(fixed, frozenset(d.key for d in validate(fixed).errors))
        except (DesignError, ValueError, KeyError, TypeError, LookupError):
            cache[fx] = Trial(None)
    return cache[fx]


def _ranked(diag: Diagnostic, candidates: Iterable[tuple[Fix, bool]], now: frozenset,
            design: Design, cache: dict[Fix, Trial]) -> tuple[Fix, ...]:
    """The candidates that remove ``diag``, best first (see the module docstring)."""
    tried = []
    for i, (fx, restores) in enumerate(candidates):
        t = _try(design, fx, cache)
        if t.design is None or diag.key in t.errors:
            continue
        new = t.errors - now
        tried.append(((bool(new), not restores, len(t.errors), i), fx, t.design))
    # A new error that another fix of the same kind avoids: not offered.  The kinds are kept
    # apart so that a way back to the last valid value never hides a fix that keeps the edit.
    for forward in (True, False):
        if any(key[1] is forward and not key[0] for key, _, _ in tried):
            tried = [x for x in tried if x[0][1] is not forward or not x[0][0]]
    out, seen = [], []
    for _, fx, result in sorted(tried, key=lambda x: x[0]):
        if not any(result == s for s in seen):
            seen.append(result)
            out.append(fx)
    return tuple(out)


def offered(design: Design, report: Report | None = None, last_valid: Design | None = None) -> Report:
    """``report`` (``validate(design)`` when None) with every error's fixes tried and ranked, and
    the fixes back to ``last_valid``'s values added to each root error (module docstring)."""
    report = validate(design) if report is None else report
    if report.ok:
        return report
    reverts = revert_fixes(design, last_valid)
    now = frozenset(d.key for d in report.errors)
    cache: dict[Fix, Trial] = {}
    diags = []
    for d in report.diagnostics:
        if d.is_error:
            own = [(fx, False) for fx in d.fixes if fx not in reverts]
            back = [(fx, True) for fx in reverts] if not d.caused_by else []
            d = dataclasses.replace(d, fixes=_ranked(d, [*back, *own], now, design, cache))
        diags.append(d)
    return dataclasses.replace(report, diagnostics=tuple(diags))

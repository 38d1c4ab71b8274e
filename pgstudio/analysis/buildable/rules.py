"""The ``codegen.*`` rules: what the code generators can build, checked for each target.

``plan_for(design, arch)`` is the one planner of a design (GEMM for MMA designs, streaming for
the rest); its problems are the design's ``codegen.*`` diagnostics, and the generators render
from its plan.  A problem every target shares is reported once; one that only some targets have
names them (``sm_100a: BM is 64 ...``).
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable, Iterator

from ...model.design import Design
from ...model.diagnostic import Diagnostic
from ...model.targets import ARCHES
from .gemm_plan import plan_gemm
from .planned import Planned
from .source_size import check_source_size
from .steps import is_mma_design
from .stream_plan import plan_stream


def plan_for(design: Design, arch: str, **gemm_options) -> Planned:
    """The generator's plan of ``design`` for ``arch`` (GEMM options apply to MMA designs)."""
    return plan_gemm(design, arch, **gemm_options) if is_mma_design(design) else plan_stream(design)


def known_targets(design: Design) -> tuple[str, ...]:
    """The design's targets that pgstudio builds for, each once (``rule_targets`` reports the rest)."""
    return tuple(a for a in dict.fromkeys(design.targets) if a in ARCHES)


def per_target(design: Design, check: Callable[[str], Iterable[Diagnostic]]) -> Iterator[Diagnostic]:
    """``check(arch)`` for every target; a diagnostic some targets do not share names them."""
    targets = known_targets(design)
    found: dict[Diagnostic, list[str]] = {}
    for arch in targets:
        for diag in check(arch):
            found.setdefault(diag, []).append(arch)
    for diag, archs in found.items():
        if len(archs) < len(targets):
            diag = dataclasses.replace(diag, message=f"{' and '.join(archs)}: {diag.message}")
        yield diag


def rule_codegen(design: Design) -> Iterator[Diagnostic]:
    """What the generator cannot build for the design's targets (runs on a design the earlier
    rules accept: the generator reads a consistent design).  A streaming plan is the same for
    every target, so it is made once.  A design it can build must also be small enough to
    compile (``codegen.source_size``, the same for every target)."""
    if is_mma_design(design):
        problems = list(per_target(design, lambda arch: plan_gemm(design, arch).problems))
    elif known_targets(design):
        problems = list(plan_stream(design).problems)
    else:
        return
    yield from problems
    if not any(d.is_error for d in problems):  # what it would build: small enough for NVRTC (source_size.py)
        yield from check_source_size(design)


__all__ = ["known_targets", "per_target", "plan_for", "rule_codegen"]

"""How much CUDA the generators write for a design, estimated before they write it.

Loops stay loops: a domain_loop is one C loop whatever its trip count, the barrier rings are
initialised in a C loop (streaming) or one line per slot (GEMM, at most the stages shared memory
holds), and the GEMM's k steps, panels and MMA repeats are C loops or a handful of lines each,
bounded by the tile limits (``gemm_limits``).  What the source does grow with is what the design
writes out: every schedule step is code in its task's branch (a group step once per member), every
task a branch, every resource its declarations, and a computed value's expression is written where
it is computed (a store's tail recomputes its whole chain from the inputs).  A task that repeats
its loop body a thousand times is a valid protocol and a megabyte of CUDA.

NVRTC's time follows the text: about 13 to 15 KB of pgstudio's CUDA per second on one core for
sm_90a (sm_100a is faster): the widest chain that fits shared memory (31 groups of 7, 581 KB) takes
38 s.  ``codegen.source_size`` refuses a design whose estimate passes ``MAX_SOURCE_BYTES``, so a
design that validates compiles in about a minute, inside the compile deadline
(``runtime.compile``).  The estimate is an upper bound of what the generators write: 1.08 to 1.4
times it on the streaming designs, 1.1 to 1.25 on the GEMM ones (``tests/analysis/buildable``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model.design import Design
from ...model.diagnostic import Diagnostic, error
from ...model.resource import Memory
from .steps import is_mma_design

#: The estimate a design's kernel may reach (bytes of CUDA): about 75 s of NVRTC on one core.
MAX_SOURCE_BYTES = 1 << 20


@dataclass(frozen=True)
class Cost:
    """Bytes of CUDA per element, fitted to the generator's output (padded to stay above it)."""

    base: int  # the prelude: PTX helpers, the watchdog, the kernel's set-up
    step: int  # one schedule step of one member
    task: int  # a role branch
    resource: int  # a tensor parameter, a stage buffer, its constants
    expr_char: int  # one character of an expression where it is computed


STREAM = Cost(base=6000, step=260, task=2000, resource=250, expr_char=4)
GEMM = Cost(base=6000, step=440, task=1200, resource=800, expr_char=3)


@dataclass(frozen=True)
class SourceSize:
    """The estimate and the design values it comes from."""

    bytes: int
    steps: int  # schedule steps of every task
    actions: int  # the same with a group step counted once per member
    tasks: int
    resources: int
    expr_chars: int  # characters of expressions, counted where each is computed
    biggest: str  # the task with the most step actions
    biggest_actions: int


def _steps(nodes):
    stack = list(reversed(nodes))
    while stack:
        n = stack.pop()
        body = getattr(n, "body", None)
        if body is not None:
            stack.extend(reversed(body))
        else:
            yield n


def source_size(design: Design) -> SourceSize:
    """Estimate the bytes of CUDA the generator writes for ``design`` (see the module docstring)."""
    cost = GEMM if is_mma_design(design) else STREAM
    exprs = {r.name: len(r.compute.expr) if r.compute else 0 for r in design.resources}
    gmem = {r.name for r in design.resources if r.memory is Memory.GMEM}
    members = {g.name: g.member_names for g in design.groups}
    chain = sum(exprs.values())  # a store's tail: at most every expression of the design
    steps = actions = expr_chars = 0
    per_task: dict[str, int] = {}
    for t in design.tasks:
        if t.schedule is None:
            continue
        mine = 0
        for s in _steps(t.schedule.nodes):
            targets = members.get(s.target, ()) if s.via == "group" else (s.target,)
            steps += 1
            mine += max(len(targets), 1)
            if s.is_work:
                expr_chars += sum(exprs.get(m, 0) + (chain if m in gmem else 0) for m in targets)
        per_task[t.name] = mine
        actions += mine
    biggest = max(per_task, key=per_task.get, default="")
    n = (cost.base + cost.step * actions + cost.task * len(design.tasks) + cost.resource * len(design.resources)
         + cost.expr_char * expr_chars)
    return SourceSize(n, steps, actions, len(design.tasks), len(design.resources), expr_chars, biggest,
                      per_task.get(biggest, 0))


def check_source_size(design: Design) -> list[Diagnostic]:
    """``codegen.source_size``: the kernel's CUDA stays within ``MAX_SOURCE_BYTES`` (estimated)."""
    size = source_size(design)
    if size.bytes <= MAX_SOURCE_BYTES:
        return []
    where = (size.biggest,) if size.biggest else (design.name,)
    return [error("codegen.source_size",
                  f"the kernel of design {design.name!r} would be about {size.bytes >> 10:,} KB of CUDA, more than "
                  f"the {MAX_SOURCE_BYTES >> 10:,} KB NVRTC compiles in about a minute: {size.steps:,} schedule steps "
                  f"({size.actions:,} with each group step once per member; task {size.biggest!r} has "
                  f"{size.biggest_actions:,}), {size.tasks} tasks, {size.resources} resources, {size.expr_chars:,} "
                  f"characters of expressions where they are computed (loop trip counts cost nothing: loops stay loops)",
                  where,
                  f"write each pass once in its domain_loop instead of repeating it (the loop runs it every tile; the "
                  f"ring's stages already overlap tiles), shorten the schedule of task {size.biggest!r}, or split "
                  f"the design into smaller kernels")]


__all__ = ["GEMM", "MAX_SOURCE_BYTES", "STREAM", "Cost", "SourceSize", "check_source_size", "source_size"]

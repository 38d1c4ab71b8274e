"""What a click on a picture points at, as plain data: an event of the timeline or a barrier slot
-> the schedule step, the design element to mark in the dependency graph and the generated source
line (``KernelSource.line_map``).  No widgets here, so tests read it directly."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from ..analysis.timeline import role_of, task_of


@dataclass(frozen=True)
class Link:
    """Where a clicked mark lives in the design: ``element`` to mark in the graph, the task and
    the 0-based line of its schedule text (-1: none), the 1-based source line (0: none)."""

    title: str
    detail: str
    element: str | None = None
    task: str | None = None
    schedule_line: int = -1
    source_line: int = 0


def _schedule_lines(design: Any, task: str | None) -> list[str]:
    t = next((x for x in design.tasks if x.name == task), None)
    return t.schedule.text().splitlines() if t is not None and t.schedule is not None else []


def _names(design: Any, target: str) -> set[str]:
    """``target`` and the group it belongs to: a step on ``ab.smem_a`` or on ``ab``."""
    g = design.group_of(target) if design.has_resource(target) else None
    return {target} | ({g.name} if g is not None else set())


def _step_matches(text: str, op: str, names: set[str]) -> bool:
    if f".{op}(" not in text and f" {op}(" not in text:
        return False
    head = text.split(f".{op}(")[0] if f".{op}(" in text else text
    return any(n in head.replace(".", " ").split() for n in names)


def event_link(design: Any, event: Any, source: Any = None) -> Link:
    """The schedule step and source line of a timeline event (a step, a block, an arrival)."""
    from ..render.interactive import event_text

    names = _names(design, event.target) if event.target else set()
    task = task_of(event.task)  # "load_a.tma": the copy engine lane of task load_a
    op = {"blocked": "wait", "arrive": "commit", "phase_flip": "wait", "copy": "load"}.get(event.op, event.op)
    if event.op == "blocked" and event.barrier and role_of(event.barrier) == "empty":
        op = "acquire"
    sched_line = next((i for i, line in enumerate(_schedule_lines(design, task))
                       if _step_matches(line.strip(), op, names)), -1)
    src_line = 0
    if source is not None:
        src_line = next((ln for ln, elem in source.line_map
                         if elem.startswith(f"{task}: ") and _step_matches(elem.split(": ", 1)[1], op, names)), 0)
        src_line = src_line or _coarse_line(source, task, op, names)
    return Link(f"{event.task}: {event.op}", event_text(event), event.target or task, task, sched_line, src_line)


#: Words of the generated code that carry each step (for generators that map lines to elements only).
OP_WORDS = {"wait": ("wait",), "try_wait": ("wait",), "acquire": ("wait",), "try_acquire": ("wait",),
            "release": ("arrive",), "commit": ("arrive", "commit"), "load": ("cp", "tma", "load"),
            "store": ("st", "store"), "mma": ("mma",), "read": ("ld", "read")}


def _coarse_line(source: Any, task: str, op: str, names: set[str]) -> int:
    """A generator whose ``line_map`` names elements only ("task:mma", "resource:smem_a"): the
    line of the task's region about the step's resource or group, preferring one whose code says
    the step's word (wait, arrive, mma, ...)."""
    lines = source.code.splitlines()
    region, inside = [], False
    for ln, elem in source.line_map:
        if elem.startswith("task:"):
            inside = elem == f"task:{task}"
        elif inside and elem.split(":", 1)[-1] in names:
            region.append(ln)
    words = OP_WORDS.get(op, (op,))
    for ln in region:
        if any(w in lines[ln - 1] for w in words):
            return ln
    return region[0] if region else 0


def slot_link(design: Any, layout: Any, index: int, source: Any = None) -> Link:
    """The barrier set of a slot, its owner (a resource or group) and where the kernel declares it."""
    from ..render.interactive import slot_text

    s = layout.all_slots[index]
    src_line = 0
    if source is not None:
        src_line = next((ln for ln, elem in source.line_map if elem == f"barrier {s.set}"), 0)
    return Link(f"{s.set} stage {s.stage}", slot_text(layout, s), s.owner, None, -1, src_line)


def schedule_html(design: Any, link: Link) -> str:
    """The clicked task's schedule with the step marked."""
    lines = _schedule_lines(design, link.task)
    if not lines:
        return ""
    body = "\n".join(f"<mark class='pg-mark'>{escape(x)}</mark>" if i == link.schedule_line else escape(x)
                     for i, x in enumerate(lines))
    return f"<div class='pg-section'>schedule of task {escape(link.task)}</div><pre class='pg-pre'>{body}</pre>"


def source_html(source: Any, line: int, context: int = 4) -> str:
    """Generated source around ``line`` (1-based), that line marked."""
    if source is None or line <= 0:
        return ""
    lines = source.code.splitlines()
    lo, hi = max(line - 1 - context, 0), min(line + context, len(lines))
    body = "\n".join((f"<mark class='pg-mark'>{i + 1:>5}  {escape(lines[i])}</mark>" if i == line - 1
                      else f"{i + 1:>5}  {escape(lines[i])}") for i in range(lo, hi))
    return f"<div class='pg-section'>generated CUDA, line {line}</div><pre class='pg-pre'>{body}</pre>"

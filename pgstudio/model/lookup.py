"""Name -> element indexes of a design, built once per design value.

Designs are immutable, so the first lookup builds every index and later ones are dictionary
reads: the rules, the layouts, the pictures and the generators ask "which group holds this
resource", "who produces it" for every step of every task, and with a scan per question the
analysis of a design grew with the square of its size.  Each index keeps the first match in
the design's order, as the scans did (a design may hold duplicates that ``validate`` reports).
"""

from __future__ import annotations

from typing import Any


class DesignIndex:
    """The indexes of one design (see the module docstring)."""

    def __init__(self, design: Any) -> None:
        self.resources: dict[str, Any] = {}
        for r in design.resources:
            self.resources.setdefault(r.name, r)
        self.groups: dict[str, Any] = {}
        self.group_of: dict[str, Any] = {}
        for g in design.groups:
            self.groups.setdefault(g.name, g)
            for m in g.member_names:
                self.group_of.setdefault(m, g)
        self.tasks: dict[str, Any] = {}
        self.producers: dict[str, list] = {}
        self.consumers: dict[str, list] = {}
        for t in design.tasks:
            self.tasks.setdefault(t.name, t)
            for r in dict.fromkeys(t.dst_resources):
                self.producers.setdefault(r, []).append(t)
            for r in dict.fromkeys(t.src_resources):
                self.consumers.setdefault(r, []).append(t)
        self.deps: dict[str, tuple[str, ...]] = dict(design.graph)
        self.dependents: dict[str, list[str]] = {}
        for k, deps in design.graph:
            for d in dict.fromkeys(deps):
                self.dependents.setdefault(d, []).append(k)
        self.pipelined = tuple(r for r in design.resources if r.pipeline_config is not None)


def index_of(design: Any) -> DesignIndex:
    """The design's index, built on first use and kept on the (frozen) design object."""
    idx = design.__dict__.get("_index")
    if idx is None:
        idx = DesignIndex(design)
        object.__setattr__(design, "_index", idx)
    return idx


__all__ = ["DesignIndex", "index_of"]

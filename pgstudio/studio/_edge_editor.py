"""Dependency edges: ``resource`` is computed from ``dep`` (TS's ``TaskManager(resource_dependency_graph=...)``)."""

from __future__ import annotations

from typing import Any, Callable

import ipywidgets as W

from ..model import edits as E
from ._ui import Sync, button, row, section, set_options



class EdgeEditor:
    title = "Edges"

    def __init__(self, *, add: Callable[[str, str], Any], remove: Callable[[str, str], Any]) -> None:
        """``add(dep, resource)`` / ``remove(dep, resource)``: the edits of the dependency graph."""
        self._add_edge, self._remove_edge = add, remove
        self.sync = Sync()
        self.list = W.Select(options=[], rows=9, layout=W.Layout(width="100%"))
        self.dep = W.Dropdown(options=[], layout=W.Layout(width="160px"))
        self.res = W.Dropdown(options=[], layout=W.Layout(width="160px"))
        self.add = button("Add edge", self._add, icon="plus", tip="the second resource is computed from the first",
                          width="110px")
        self.remove = button("Remove edge", self._remove, icon="trash")
        for widget, cls in ((self.list, "pg-edge-list"), (self.dep, "pg-edge-dep"), (self.res, "pg-edge-res")):
            widget.add_class(cls)
        self.widget = W.VBox([
            section("Dependency edges"),
            W.HTML("<div class='pg-note'>An edge <b>a → b</b> says b is computed from a; one task must consume a "
                   "and produce b.</div>"),
            self.list, W.HBox([self.remove]),
            row("new edge", self.dep, W.HTML("&nbsp;→&nbsp;"), self.res, self.add),
        ])

    def _add(self) -> None:
        if self.dep.value and self.res.value:
            self._add_edge(self.dep.value, self.res.value)

    def _remove(self) -> None:
        if self.list.value:
            dep, res = self.list.value
            self._remove_edge(dep, res)

    def refresh(self, design: Any) -> None:
        pairs = E.edges(design)
        names = [r.name for r in design.resources]
        with self.sync():
            keep = self.list.value if self.list.value in pairs else (pairs[0] if pairs else None)
            set_options(self.list, [(f"{dep}  →  {res}", (dep, res)) for dep, res in pairs], keep)
            set_options(self.dep, names, self.dep.value if self.dep.value in names else (names[0] if names else None))
            res_default = names[1] if len(names) > 1 else (names[0] if names else None)
            set_options(self.res, names, self.res.value if self.res.value in names else res_default)
        self.remove.disabled = not pairs
        self.add.disabled = len(names) < 2

"""The design as a whole: its name, the problem shape, a fresh start from an example, and
re-deriving every schedule."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as W

from . import _edits as E
from ._ui import Sync, button, row, section

if TYPE_CHECKING:
    from .app import Studio

BLANK = "(empty design)"


class DesignEditor:
    title = "Design"

    def __init__(self, studio: "Studio") -> None:
        from .. import examples

        self.studio = studio
        self.sync = Sync()
        self.name = W.Text(continuous_update=False, layout=W.Layout(width="220px"))
        self.problem = W.Text(continuous_update=False, placeholder="num_tiles=64, num_k_tiles=8",
                              layout=W.Layout(width="100%", max_width="420px"))
        self.example = W.Dropdown(options=[BLANK, *examples.CANONICAL], layout=W.Layout(width="200px"))
        self.open = button("Open", self._open, icon="folder-open", tip="replace the design (undo brings it back)")
        self.ungroup = button("Ungroup", self._ungroup, tip="remove every group: per-resource barriers")
        self.derive = button("Derive every schedule", self._derive, icon="magic",
                             tip="replace attached @schedule functions by derived schedules")
        s = self.sync
        s.on(self.name, lambda v: self.studio.rename_design(v))
        s.on(self.problem, lambda v: self.studio.set_problem(v))
        self.widget = W.VBox([
            section("Design"),
            row("name", self.name),
            row("problem", self.problem, tip="symbols the schedules' domain loops use, e.g. num_tiles"),
            section("Start from"),
            row("example", self.example, self.open),
            section("Schedules"),
            W.HTML("<div class='pg-note'>Schedules are derived from the graph, groups and tasks after every edit, "
                   "unless a task has one attached from Python (<code>studio.attach_schedule(task, fn)</code>).</div>"),
            W.HBox([self.derive, self.ungroup]),
        ])

    def _open(self) -> None:
        self.studio.open_example(None if self.example.value == BLANK else self.example.value)

    def _derive(self) -> None:
        self.studio.derive_all()

    def _ungroup(self) -> None:
        self.studio.ungroup()

    def refresh(self, design: Any) -> None:
        with self.sync():
            self.name.value = design.name
            self.problem.value = E.problem_text(design)

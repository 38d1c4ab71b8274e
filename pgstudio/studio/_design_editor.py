"""The design as a whole: its name, the problem shape, a fresh start from an example, and
re-deriving every schedule."""

from __future__ import annotations

from typing import Any, Callable

import ipywidgets as W

from . import _edits as E
from ._ui import Sync, button, row, section


BLANK = "(empty design)"


class DesignEditor:
    title = "Design"

    def __init__(self, *, rename: Callable[[str], Any], set_problem: Callable[[str], Any],
                 open_example: Callable[[str | None], Any], derive_all: Callable[[], Any],
                 ungroup: Callable[[], Any]) -> None:
        """The design-wide edits, as callbacks: rename, problem shape, open an example, re-derive, ungroup."""
        from .. import examples

        self._rename, self._set_problem, self._open_example = rename, set_problem, open_example
        self._derive_all, self._ungroup = derive_all, ungroup
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
        s.on(self.name, self._rename)
        s.on(self.problem, self._set_problem)
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
        self._open_example(None if self.example.value == BLANK else self.example.value)

    def _derive(self) -> None:
        self._derive_all()

    def _ungroup(self) -> None:
        self._ungroup()

    def refresh(self, design: Any) -> None:
        with self.sync():
            self.name.value = design.name
            self.problem.value = E.problem_text(design)

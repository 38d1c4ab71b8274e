"""The design as a whole: a new design from a template, its name, every problem symbol a
generator reads (M / N / K / BM / BN / BK, dtype, element counts; the tile counts follow), the
targets it is built for, and re-deriving every schedule."""

from __future__ import annotations

from typing import Any, Callable

import ipywidgets as W

from ..model import edits as E
from ..model.targets import ARCHES
from ._ui import Sync, button, row, section

#: Problem symbols computed from others (``edits.derived_problem``): shown, not typed.
DERIVED = ("num_tiles", "num_k_tiles")
#: What each well-known symbol means (the field's tooltip).
MEANING = {
    "M": "rows of A and D", "N": "columns of B and D", "K": "the reduction length", "BM": "tile rows",
    "BN": "tile columns", "BK": "k-tile depth", "dtype": "element type of A, B, D",
    "num_tiles": "output tiles (follows from M, N, BM, BN or the element counts)",
    "num_k_tiles": "k tiles per output tile (follows from K, BK)",
    "num_elements": "elements per tensor", "tile_elems": "elements per tile",
}


class DesignEditor:
    title = "Design"

    def __init__(self, *, rename: Callable[[str], Any], set_problem_value: Callable[[str, str], Any],
                 open_template: Callable[[str], Any], derive_all: Callable[[], Any],
                 ungroup: Callable[[], Any]) -> None:
        """The design-wide edits, as callbacks: rename, one problem symbol, a new design from a
        template, re-derive every schedule, ungroup."""
        from .. import examples

        self._rename, self._set_value, self._open_template = rename, set_problem_value, open_template
        self._derive_all, self._ungroup = derive_all, ungroup
        self.sync = Sync()
        # the menu takes what the row leaves beside its label and button (a narrow pane shrinks it)
        self.template = W.Dropdown(options=list(examples.TEMPLATES),
                                   layout=W.Layout(width="auto", flex="1 1 280px", min_width="120px", max_width="280px"))
        self.template.add_class("pg-template")
        self.new = button("New design", self._new, icon="file", tip="replace the design (undo brings it back)")
        self.name = W.Text(continuous_update=False, layout=W.Layout(width="220px"))
        self.fields: dict[str, W.Text] = {}
        self._keys: tuple[str, ...] | None = None
        self.problem_box = W.VBox([])
        self.new_key = W.Text(placeholder="symbol", continuous_update=False, layout=W.Layout(width="100px"))
        self.new_value = W.Text(placeholder="value", continuous_update=False, layout=W.Layout(width="100px"))
        self.add_key = button("Add", self._add_symbol, icon="plus", tip="add a problem symbol")
        self.derive = button("Derive every schedule", self._derive_all, icon="magic",
                             tip="replace attached @schedule functions by derived schedules")
        self.ungroup_button = button("Ungroup", self._ungroup, tip="remove every group: per-resource barriers")
        self.sync.on(self.name, self._rename)
        self.widget = W.VBox([
            section("New design"),
            # the menu has the row to itself so that a template's whole name shows in a narrow pane
            row("template", self.template, tip="streaming Merge / Fork / FusedMerge, GEMM designs, or an empty design"),
            row("", self.new),
            section("Design"),
            row("name", self.name),
            W.HTML("<div class='pg-note'>Problem shape: what the schedules' loops and the code generators read; "
                   "num_tiles and num_k_tiles follow from the others.</div>"),
            self.problem_box,
            row("new symbol", self.new_key, self.new_value, self.add_key),
            row("targets", W.HTML(f"<span class='pg-note'>{', '.join(ARCHES)}: checked for {ARCHES[0]}, "
                                  f"compiled for both</span>")),
            section("Schedules"),
            W.HTML("<div class='pg-note'>Schedules are derived from the graph, groups and tasks after every edit, "
                   "unless a task has one attached from Python (<code>studio.attach_schedule(task, fn)</code>).</div>"),
            W.HBox([self.derive, self.ungroup_button]),
        ])

    def _new(self) -> None:
        self._open_template(self.template.value)

    def _add_symbol(self) -> None:
        if self.new_key.value.strip() and self._set_value(self.new_key.value.strip(), self.new_value.value):
            with self.sync():
                self.new_key.value = self.new_value.value = ""

    def _field(self, key: str) -> W.Text:
        if key not in self.fields:
            box = W.Text(continuous_update=False, layout=W.Layout(width="140px"))
            box.add_class(f"pg-problem-{key}")
            self.sync.on(box, lambda v, key=key: self._set_value(key, v))
            self.fields[key] = box
        return self.fields[key]

    def refresh(self, design: Any) -> None:
        problem = design.problem_dict
        with self.sync():
            self.name.value = design.name
            for key, value in problem.items():
                box = self._field(key)
                box.value = str(value)
                box.disabled = key in DERIVED and _follows(problem, key)
        keys = tuple(problem)
        if keys != self._keys:  # rebuild the rows only when the symbols change, not on every edit
            self._keys = keys
            rows = [row(k, self.fields[k], W.HTML(f"<span class='pg-note'>{MEANING.get(k, '')}</span>"),
                        tip=MEANING.get(k, "a problem symbol")) for k in keys]
            self.problem_box.children = rows or [W.HTML(
                "<div class='pg-note'>No problem symbols yet: add one below (e.g. num_tiles = 64).</div>")]

    @property
    def problem_text(self) -> str:
        """The problem as one line (tests read it)."""
        return ", ".join(f"{k}={self.fields[k].value}" for k in self._keys)


def _follows(problem: dict, key: str) -> bool:
    """Whether ``key`` is computed from other symbols in this problem (then it is not typed)."""
    recomputed = dict(E.derived_problem([(k, v) for k, v in problem.items() if k != key]))
    return key in recomputed

"""The picture panes: dependency graph, barrier layout (interactive, with the grouped vs
ungrouped picture), simulated timeline (interactive), checker verdict, generated CUDA source --
plus the Compile & Benchmark pane.

Only the pane on screen is drawn after an edit; the others are marked stale and drawn when
their tab is opened (``lazy=False`` draws them all at once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as W

if TYPE_CHECKING:
    from ._snapshot import Snapshot

PANES = (("graph", "Graph"), ("barriers", "Barriers"), ("timeline", "Timeline"), ("checker", "Checker"),
         ("source", "CUDA"))


class ViewPanes:
    def __init__(self, bench: W.Widget, lazy: bool = True, interactive: dict | None = None) -> None:
        """``interactive``: key -> a pane object with ``widget`` and ``update(snapshot)`` that
        replaces the HTML pane of that key (the Plotly timeline and barrier panes)."""
        self.lazy = lazy
        self.interactive = dict(interactive or {})
        self.html = {key: W.HTML(layout=W.Layout(width="100%")) for key, _ in PANES}
        self.snapshot: Snapshot | None = None
        self.highlight: str | None = None
        self.stale = {key for key, _ in PANES}
        children = [self.interactive[key].widget if key in self.interactive else self.html[key] for key, _ in PANES]
        self.tab = W.Tab(children=[*children, bench], titles=[title for _, title in PANES] + ["Compile & Benchmark"])
        self.tab.observe(lambda _c: self.draw_visible(), names="selected_index")
        for key, widget in self.html.items():
            widget.add_class(f"pg-pane-{key}")
        self.widget = self.tab

    @property
    def visible(self) -> str | None:
        i = self.tab.selected_index
        return PANES[i][0] if i is not None and i < len(PANES) else None

    def show(self, key: str) -> None:
        self.tab.selected_index = [k for k, _ in PANES].index(key)

    def update(self, snapshot: "Snapshot", everything: bool | None = None) -> None:
        self.snapshot = snapshot
        self.stale = {key for key, _ in PANES}
        if everything or (everything is None and not self.lazy):
            snapshot.prefetch_graph(self.highlight)  # Graphviz lays it out while the others draw
            for key in [k for k, _ in PANES if k != "graph"] + ["graph"]:
                self.draw(key)
        else:
            self.draw_visible()

    def set_highlight(self, element: str | None) -> None:
        self.highlight = element
        self.stale.add("graph")
        self.draw_visible()

    def draw_visible(self) -> None:
        key = self.visible
        if key is not None and key in self.stale:
            self.draw(key)
        elif key in self.interactive:  # drawn already: the window may have changed while it was hidden
            self.interactive[key].fit()

    def draw(self, key: str) -> None:
        s = self.snapshot
        if s is None:
            return
        self.stale.discard(key)
        if key in self.interactive:
            self.interactive[key].update(s)
            return
        if key == "graph":
            html = s.graph_html(self.highlight)
        else:
            html = getattr(s, f"{key}_html")()
        if self.html[key].value != html:
            self.html[key].value = html

"""Diagnostics: every problem of the design with its code, message and fix; "show" highlights
the element it is about in the dependency graph."""

from __future__ import annotations

from html import escape
from typing import Any, Callable

import ipywidgets as W


#: Rows shown at most (a broken design can have many; the count says how many more).
MAX_ROWS = 40
MARK = {"error": "✖", "warning": "▲", "info": "ℹ"}


def diagnostic_html(d: Any) -> str:
    sev = str(d.severity)
    where = f" <span class='pg-where'>({escape(', '.join(d.where))})</span>" if d.where else ""
    fix = f"<br><span class='pg-fix'>fix: {escape(d.hint)}</span>" if d.hint else ""
    return (f"<div class='pg-diag pg-{sev}'>{MARK.get(sev, '')} <code>{escape(d.code)}</code> "
            f"{escape(d.message)}{where}{fix}</div>")


class _Row:
    def __init__(self, pane: "DiagnosticsPane") -> None:
        self.diag: Any = None
        self.text = W.HTML(layout=W.Layout(width="100%"))
        self.show = W.Button(description="show", icon="crosshairs", tooltip="highlight it in the dependency graph",
                             layout=W.Layout(width="78px", min_width="78px"))
        self.show.on_click(lambda _b: pane.locate(self.diag))
        self.widget = W.HBox([self.show, self.text], layout=W.Layout(align_items="center"))

    def set(self, diag: Any) -> None:
        self.diag = diag
        self.text.value = diagnostic_html(diag)
        self.show.disabled = not diag.where
        self.widget.layout.display = None


class DiagnosticsPane:
    def __init__(self, *, highlight: Callable[[str], Any]) -> None:
        """``highlight(name)``: mark a design element in the pictures (the "show" button)."""
        self._highlight = highlight
        self.head = W.HTML()
        self.rows: list[_Row] = []
        self.box = W.VBox([])
        self.more = W.HTML()
        self.widget = W.VBox([self.head, self.box, self.more], layout=W.Layout(max_height="320px", overflow="auto"))
        self.widget.add_class("pg-diagnostics")

    def locate(self, diag: Any) -> None:
        if diag is not None and diag.where:
            self._highlight(diag.where[0])

    def update(self, snapshot: Any) -> None:
        diags = list(snapshot.diagnostics)
        if not diags:
            self.head.value = "<div class='pg-section'>Diagnostics: <span class='pg-ok'>✔ no problems found</span></div>"
        else:
            errors = sum(1 for d in diags if d.is_error)
            self.head.value = (f"<div class='pg-section'>Diagnostics: <span class='{'pg-bad' if errors else 'pg-warn'}'>"
                               f"{escape(snapshot.status())}</span></div>")
        shown = diags[:MAX_ROWS]
        while len(self.rows) < len(shown):
            self.rows.append(_Row(self))
        for r, d in zip(self.rows, shown):
            r.set(d)
        for r in self.rows[len(shown):]:
            r.widget.layout.display = "none"
            r.diag = None
        children = tuple(r.widget for r in self.rows)
        if self.box.children != children:
            self.box.children = children
        self.more.value = f"<div class='pg-note'>... and {len(diags) - MAX_ROWS} more</div>" if len(diags) > MAX_ROWS else ""

    @property
    def texts(self) -> list[str]:
        """What the visible rows say (tests read this; no browser needed)."""
        return [r.text.value for r in self.rows if r.diag is not None]

"""Diagnostics: every problem of the design with its code, message and fix; "show" highlights
the element it is about in the dependency graph, and a diagnostic whose fix is mechanical carries
it as data (``Diagnostic.fixes``), shown here as one button per fix.

Rows come ordered by cause (``analysis.causes``): a root cause first, with its fix, and the
findings that follow from it indented under it, each saying which one it follows from -- fix the
root and they go with it.

The pane is a collapsible box of bounded height, so a broken design with many findings never
pushes the editors out of view."""

from __future__ import annotations

from html import escape
from typing import Any, Callable

import ipywidgets as W


#: Rows shown at most (a broken design can have many; the count says how many more).
MAX_ROWS = 40
#: Fix buttons shown per row at most.
MAX_FIXES = 3
MARK = {"error": "✖", "warning": "▲", "info": "ℹ"}


#: How far a consequence is indented under its root.
INDENT = "28px"


def diagnostic_html(d: Any, follows: int = 0) -> str:
    """One row; ``follows``: how many findings below follow from this one."""
    sev = str(d.severity)
    where = f" <span class='pg-where'>({escape(', '.join(d.where))})</span>" if d.where else ""
    fix = f"<br><span class='pg-fix'>fix: {escape(d.hint)}</span>" if d.hint else ""
    if d.caused_by:
        return (f"<div class='pg-diag pg-{sev} pg-consequence' style='opacity: 0.85'>"
                f"<span class='pg-note'>↳ follows from <code>{escape(d.caused_by[0])}</code> above:</span> "
                f"<code>{escape(d.code)}</code> {escape(d.message)}{where}</div>")
    cause = (f" <span class='pg-note'>(root cause of the {follows} below)</span>" if follows > 1 else
             " <span class='pg-note'>(root cause of the one below)</span>" if follows else "")
    return (f"<div class='pg-diag pg-{sev}'>{MARK.get(sev, '')} <code>{escape(d.code)}</code> "
            f"{escape(d.message)}{where}{cause}{fix}</div>")


class _Row:
    def __init__(self, pane: "DiagnosticsPane") -> None:
        self.diag: Any = None
        self.text = W.HTML(layout=W.Layout(width="100%"))
        self.show = W.Button(description="show", icon="crosshairs", tooltip="highlight it in the dependency graph",
                             layout=W.Layout(width="78px", min_width="78px"))
        self.show.on_click(lambda _b: pane.locate(self.diag))
        self.fix_buttons = [W.Button(icon="wrench", button_style="success", layout=W.Layout(width="auto"))
                            for _ in range(MAX_FIXES)]
        for i, b in enumerate(self.fix_buttons):
            b.add_class("pg-fix-button")
            b.on_click(lambda _b, i=i: pane.apply(self.diag.fixes[i]) if self.diag and i < len(self.diag.fixes) else None)
        self.fixes = W.HBox(self.fix_buttons, layout=W.Layout(flex_flow="row wrap"))
        self.widget = W.HBox([self.show, W.VBox([self.text, self.fixes], layout=W.Layout(width="100%"))],
                             layout=W.Layout(align_items="flex-start"))

    def set(self, diag: Any, follows: int = 0) -> None:
        self.diag = diag
        self.text.value = diagnostic_html(diag, follows)
        self.show.disabled = not diag.where
        for i, b in enumerate(self.fix_buttons):
            if i < len(diag.fixes):
                b.description = diag.fixes[i].label
                b.tooltip = f"one click: {diag.fixes[i].label} (undo brings it back)"
                b.layout.display = None
            else:
                b.layout.display = "none"
        self.fixes.layout.display = None if diag.fixes else "none"
        self.widget.layout.margin = f"0 0 0 {INDENT}" if diag.caused_by else "0"
        self.widget.layout.display = None


class DiagnosticsPane:
    def __init__(self, *, highlight: Callable[[str], Any], apply_fix: Callable[[Any], Any]) -> None:
        """``highlight(name)``: mark a design element in the pictures (the "show" button);
        ``apply_fix(fix)``: apply a diagnostic's ``Fix`` (its button)."""
        self._highlight = highlight
        self._apply_fix = apply_fix
        self.head = W.HTML()
        self.toggle = W.ToggleButton(value=True, description="hide", icon="chevron-up", tooltip="show / hide the list",
                                     layout=W.Layout(width="80px", min_width="80px"))
        self.toggle.observe(self._toggled, names="value")
        self.rows: list[_Row] = []
        self.box = W.VBox([])
        self.more = W.HTML()
        self.body = W.VBox([self.box, self.more], layout=W.Layout(max_height="220px", overflow="auto"))
        self.widget = W.VBox([W.HBox([self.toggle, self.head], layout=W.Layout(align_items="center")), self.body])
        self.widget.add_class("pg-diagnostics")

    def _toggled(self, change: dict) -> None:
        shown = bool(change["new"])
        self.body.layout.display = None if shown else "none"
        self.toggle.description, self.toggle.icon = ("hide", "chevron-up") if shown else ("show", "chevron-down")

    def locate(self, diag: Any) -> None:
        if diag is not None and diag.where:
            self._highlight(diag.where[0])

    def apply(self, fix: Any) -> None:
        self._apply_fix(fix)

    def update(self, snapshot: Any) -> None:
        diags = list(snapshot.diagnostics)
        if not diags:
            self.head.value = "<div class='pg-section'>Diagnostics: <span class='pg-ok'>✔ no problems found</span></div>"
        else:
            errors = sum(1 for d in diags if d.is_error)
            fixable = sum(1 for d in diags if d.fixes)
            roots = sum(1 for d in diags if d.is_error and not d.caused_by)
            notes = ([f"{roots} root cause{'s' if roots != 1 else ''}"] if roots < errors else []) + \
                ([f"{fixable} with a one-click fix"] if fixable else [])
            extra = f" <span class='pg-note'>({', '.join(notes)})</span>" if notes else ""
            self.head.value = (f"<div class='pg-section'>Diagnostics: <span class='{'pg-bad' if errors else 'pg-warn'}'>"
                               f"{escape(snapshot.status())}</span>{extra}</div>")
        shown = diags[:MAX_ROWS]
        while len(self.rows) < len(shown):
            self.rows.append(_Row(self))
        follows: dict = {}
        for d in diags:
            if d.caused_by:
                follows[d.caused_by] = follows.get(d.caused_by, 0) + 1
        for r, d in zip(self.rows, shown):
            r.set(d, 0 if d.caused_by else follows.get(d.key, 0))
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

    @property
    def fix_labels(self) -> list[str]:
        """The fix buttons on screen, in order (tests read this)."""
        return [fx.label for r in self.rows if r.diag is not None for fx in r.diag.fixes[:MAX_FIXES]]

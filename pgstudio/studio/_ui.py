"""Small widget helpers shared by the editors and panes: labelled rows, the studio's CSS, and a
guard that keeps programmatic updates from being taken for user edits."""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import ipywidgets as W

LABEL_WIDTH = "120px"

CSS = """
<style>
.pg-studio { font-size: 13px; }
.pg-studio .pg-title { font-size: 16px; font-weight: 600; color: #2C3E50; }
.pg-studio .pg-ok { color: #1E8449; font-weight: 600; }
.pg-studio .pg-bad { color: #C0392B; font-weight: 600; }
.pg-studio .pg-warn { color: #B9770E; font-weight: 600; }
.pg-studio .pg-msg { color: #34495E; font-style: italic; }
.pg-studio .pg-msg-bad { color: #C0392B; }
.pg-studio .pg-na { color: #7F8C8D; background: #F8F9F9; border: 1px dashed #BDC3C7; padding: 6px 10px;
                    margin: 4px 0; border-radius: 4px; }
.pg-studio .pg-counts { font-weight: 600; color: #2C3E50; margin: 4px 0; }
.pg-studio .pg-note { color: #7F8C8D; font-size: 12px; }
.pg-studio .widget-html > .widget-html-content { min-width: 0; }  /* a wide picture scrolls in its frame */
.pg-studio .pg-fig { overflow: auto; max-height: 640px; max-width: 100%; }
.pg-studio .pg-fig svg, .pg-studio .pg-fig img { max-width: 100%; height: auto; }
.pg-studio .pg-fig svg text { font-family: Helvetica, Arial, "Liberation Sans", "DejaVu Sans Condensed", sans-serif; }
.pg-studio .lm-TabBar-tab { flex: 0 0 auto !important; min-width: 50px; max-width: none !important; }
.pg-studio .lm-TabBar-tabLabel { overflow: visible; text-overflow: clip; }
.pg-studio .widget-toggle-button, .pg-studio .jupyter-button { overflow: visible; text-overflow: clip; }
.pg-studio .pg-group-mode .widget-toggle-button { width: auto !important; padding: 0 12px; }
.pg-studio .pg-main { display: flex; flex-flow: row wrap; gap: 12px; align-items: flex-start; }
.pg-studio .lm-TabBar-content { flex-wrap: wrap; }  /* tabs of a narrow pane take a second row */
.pg-studio .pg-sweep-results table { width: 100%; font-size: 12px; }
.pg-studio .pg-sweep-results th, .pg-studio .pg-sweep-results td { padding: 3px 4px; overflow-wrap: anywhere; }
.pg-studio .pg-fix-button { height: auto; min-height: 26px; white-space: normal; text-align: left; }
.pg-studio mark.pg-mark { background: #FCF3CF; font-weight: 600; }
.pg-studio .pg-pre { font-size: 12px; line-height: 1.35; background: #F8F9F9; padding: 6px 8px;
                     border-radius: 4px; max-height: 520px; overflow: auto; white-space: pre; }
.pg-studio .pg-code { max-height: 600px; }
.pg-studio .pg-section { font-weight: 600; color: #2C3E50; margin: 6px 0 2px 0; }
.pg-studio .pg-diag { border-left: 4px solid #C0392B; padding: 2px 8px; margin: 1px 0; line-height: 1.35; }
.pg-studio .pg-diag.pg-warning { border-left-color: #B9770E; }
.pg-studio .pg-diag.pg-info { border-left-color: #2E86C1; }
.pg-studio .pg-diag code { font-weight: 600; }
.pg-studio .pg-fix { color: #1E8449; }
.pg-studio .pg-where { color: #7F8C8D; }
.pg-studio .pg-banner { background: #FEF9E7; border: 1px solid #F1C40F; border-radius: 4px; padding: 4px 8px; }
.pg-studio .pg-bars td { padding: 2px 6px; }
.pg-studio table.pg-table { border-collapse: collapse; }
.pg-studio table.pg-table th, .pg-studio table.pg-table td { border-bottom: 1px solid #E5E8E8; padding: 3px 8px;
                                                             text-align: left; }
</style>
"""


def row(label: str, *widgets: W.Widget, tip: str = "") -> W.HBox:
    """``label`` on the left, the widgets after it."""
    lab = W.HTML(f"<span title='{tip}'>{label}</span>",
                 layout=W.Layout(width=LABEL_WIDTH, min_width=LABEL_WIDTH, flex=f"0 0 {LABEL_WIDTH}"))  # never squeezed
    return W.HBox([lab, *widgets], layout=W.Layout(align_items="center"))


def button(text: str, on_click: Callable[[], None], *, tip: str = "", style: str = "", icon: str = "",
           width: str = "auto") -> W.Button:
    b = W.Button(description=text, tooltip=tip or text, button_style=style, icon=icon,
                 layout=W.Layout(width=width, min_width=width if width != "auto" else None))
    b.on_click(lambda _b: on_click())
    return b


def section(text: str) -> W.HTML:
    return W.HTML(f"<div class='pg-section'>{text}</div>")


class Sync:
    """``with sync:`` around programmatic widget updates; ``sync.on(widget, fn)`` runs ``fn(value)``
    only for changes the user made."""

    def __init__(self) -> None:
        self.active = False

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        old, self.active = self.active, True
        try:
            yield
        finally:
            self.active = old

    def on(self, widget: W.Widget, fn: Callable[[Any], None], name: str = "value") -> None:
        def handler(change: dict) -> None:
            if not self.active:
                fn(change["new"])
        widget.observe(handler, names=name)


def set_options(select: Any, options: list, value: Any = None) -> None:
    """Replace a selection widget's options and value without a flicker through None."""
    if list(select.options) != list(options):
        select.options = options
    if value is not None and select.value != value:
        select.value = value


def option_values(select: Any) -> list:
    """The values of a selection widget's options (given as values or as (label, value) pairs)."""
    return [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in select.options]

"""The Sweep tab: try stage counts x bytes per stage x groupings of the current design.

A thin view over ``pgstudio.runtime.sweep.sweep``: the fields are parsed into lists, the sweep
runs on the studio's current design, its progress drives the bar, and the result shows as its
own rich display (the table naming the best variant, and the heatmap).  Invalid variants are
listed with their diagnostics even without a GPU; valid ones then say why they were not run.
"""

from __future__ import annotations

from html import escape
from typing import Any, Callable

import ipywidgets as W

from ..runtime.sweep import sweep
from ._snapshot import rich_html

TITLE = "Sweep"
GROUPINGS = ("designed", "ungrouped", "Merge", "FusedMerge", "Fork")
DEFAULT_ON = ("designed", "ungrouped", "Merge", "FusedMerge")


def parse_ints(text: str, what: str) -> list[int]:
    """"2 4, 8" -> [2, 4, 8]; a clear ValueError naming the field otherwise."""
    out = []
    for part in text.replace(",", " ").split():
        try:
            value = int(part)
        except ValueError:
            raise ValueError(f"{what}: {part!r} is not a whole number; give numbers separated by spaces") from None
        if value < 1:
            raise ValueError(f"{what}: {value} is not positive")
        out.append(value)
    if not out:
        raise ValueError(f"{what}: give at least one number")
    return out


class SweepPane:
    def __init__(self, current: Callable[[], Any]) -> None:
        """``current()``: the design whose variants are swept."""
        self.current = current
        self.stages = W.Text(value="2 4 6 8", description="stages", layout=W.Layout(width="260px"))
        self.tiles = W.Text(value="1024 2048 4096 8192", description="stage bytes", layout=W.Layout(width="320px"))
        self.groupings = {g: W.Checkbox(value=g in DEFAULT_ON, description=g, indent=False,
                                        layout=W.Layout(width="120px")) for g in GROUPINGS}
        self.button = W.Button(description="Run sweep", icon="th", button_style="primary",
                               tooltip="compile, verify and time every variant (GPU); invalid ones are listed",
                               layout=W.Layout(width="160px"))
        self.button.on_click(lambda _b: self.run())
        self.progress = W.IntProgress(min=0, max=1, value=0, layout=W.Layout(width="260px"))
        self.note = W.HTML("<span class='pg-note'>each valid variant is verified before it is timed</span>")
        self.results = W.HTML()
        self.widget = W.VBox([W.HBox([self.stages, self.tiles]), W.HBox(list(self.groupings.values())),
                              W.HBox([self.button, self.progress, self.note], layout=W.Layout(align_items="center")),
                              self.results])
        self.last: Any = None

    def _progress(self, done: int, total: int, label: str) -> None:
        self.progress.max = max(total, 1)
        self.progress.value = done
        self.note.value = f"<span class='pg-note'>built {escape(label)} ({done}/{total})</span>"

    def run(self) -> Any:
        """Sweep the current design; returns the table (or None when the fields are wrong)."""
        self.results.value = ""
        self.last = None
        try:
            stages = parse_ints(self.stages.value, "stages")
            tiles = parse_ints(self.tiles.value, "stage bytes")
            chosen = [g for g, box in self.groupings.items() if box.value]
            if not chosen:
                raise ValueError("pick at least one grouping")
        except ValueError as exc:
            self.results.value = f"<span class='pg-bad'>{escape(str(exc))}</span>"
            return None
        self.button.disabled = True
        self.progress.value = 0
        try:
            table = sweep(self.current(), stages, tiles, chosen, progress=False, on_progress=self._progress)
        except Exception as exc:  # the GPU boundary: a message, never a traceback
            self.results.value = f"<span class='pg-bad'>sweep failed: {escape(type(exc).__name__)}: {escape(str(exc))}</span>"
            return None
        finally:
            self.button.disabled = False
        self.last = table
        best = table.best
        self.note.value = (f"<span class='pg-ok'>best: {escape(best.label)}</span>" if best else
                           f"<span class='pg-note'>nothing timed: {escape(table.note)}</span>")
        self.results.value = rich_html(table)
        return table


def attach(current: Callable[[], Any], tab: Any) -> SweepPane:
    """Add the Sweep tab after the other view tabs of ``tab`` (the hook ``Studio`` calls)."""
    pane = SweepPane(current)
    titles = list(tab.titles)
    tab.children = (*tab.children, pane.widget)
    tab.titles = (*titles, TITLE)
    return pane


__all__ = ["SweepPane", "attach", "parse_ints"]

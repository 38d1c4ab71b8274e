"""The Sweep tab: try stage counts x tiles x groupings of the current design, or load past results.

A thin view over ``pgstudio.explore.sweep.sweep``: the fields are parsed into lists (empty
fields mean the design's own defaults, which "Defaults" writes into them: for a GEMM design the
tiles are BMxBNxBK shapes and the stages stop where shared memory does), the sweep runs on the
studio's current design in the chosen executor, its progress drives the bar with tqdm's rate
and ETA, and the result shows as a real HTML table with the heatmap (``render.display``).
Invalid variants are listed with their diagnostics; without a GPU every valid variant is
compiled and the tab says nothing was timed.  With a results file the sweep is appended to it
as it goes and resumed next time; "Load" shows a results file without running anything.
"""

from __future__ import annotations

from html import escape
from typing import Any, Callable

import ipywidgets as W

from ..runtime.executor import NAMES
from ..explore.sweep import GROUPINGS, load_sweep, sweep
from ..explore.sweep_space import parse_tile, space_for
from ._snapshot import rich_html

TITLE = "Sweep"


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


def parse_tiles(text: str) -> list[tuple[int, ...]]:
    """"4096 8192" -> [(4096,), (8192,)]; "128x256x64" -> [(128, 256, 64)]; a ValueError otherwise."""
    out = []
    for part in text.replace(",", " ").split():
        try:
            out.append(parse_tile(part))
        except Exception as exc:  # noqa: BLE001 - PgStudioError from the runtime: one message
            raise ValueError(f"tiles: {exc}") from None
    if not out:
        raise ValueError("tiles: give at least one tile")
    return out


class SweepPane:
    def __init__(self, current: Callable[[], Any]) -> None:
        """``current()``: the design whose variants are swept."""
        self.current = current
        hint = "the design's defaults"
        self.stages = W.Text(value="", placeholder=hint, description="stages", layout=W.Layout(width="260px"))
        self.tiles = W.Text(value="", placeholder=hint, description="tiles",
                            tooltip="bytes per stage (streaming) or BMxBNxBK (GEMM)", layout=W.Layout(width="340px"))
        self.defaults = W.Button(description="Defaults", icon="magic", layout=W.Layout(width="110px"),
                                 tooltip="fill the fields with this design's default sweep")
        self.defaults.on_click(lambda _b: self.fill_defaults())
        self.groupings = {g: W.Checkbox(value=g in ("designed", "ungrouped"), description=g, indent=False,
                                        layout=W.Layout(width="120px")) for g in GROUPINGS}
        self.executor = W.Dropdown(options=NAMES, value="embedded", description="run in",
                                   tooltip="embedded: worker processes (a crashing kernel costs a worker); "
                                   "inline: this process (debugging); ray: a Ray cluster",
                                   layout=W.Layout(width="200px"))
        self.compile_only = W.Checkbox(value=False, description="compile only", indent=False,
                                       layout=W.Layout(width="120px"))
        self.results_file = W.Text(value="", placeholder="results file (.jsonl): append and resume",
                                   layout=W.Layout(width="340px"))
        self.load_button = W.Button(description="Load", icon="folder-open", layout=W.Layout(width="90px"),
                                    tooltip="show the results file as a table, running nothing")
        self.load_button.on_click(lambda _b: self.load())
        self.button = W.Button(description="Run sweep", icon="th", button_style="primary",
                               tooltip="compile every variant; on a GPU verify and time them; invalid ones are listed",
                               layout=W.Layout(width="160px"))
        self.button.on_click(lambda _b: self.run())
        self.progress = W.IntProgress(min=0, max=1, value=0, layout=W.Layout(width="260px"))
        self.note = W.HTML("<span class='pg-note'>each valid variant is compiled, then verified before it is "
                           "timed</span>")
        self.results = W.HTML()
        def line(*children: Any) -> W.HBox:  # wraps in a narrow pane rather than cutting off its end
            return W.HBox(list(children), layout=W.Layout(align_items="center", flex_flow="row wrap"))

        self.widget = W.VBox([line(self.stages, self.tiles, self.defaults), line(*self.groupings.values()),
                              line(self.executor, self.compile_only, self.results_file, self.load_button),
                              line(self.button, self.progress, self.note), self.results])
        for widget, cls in ((self.widget, "pg-sweep"), (self.stages, "pg-sweep-stages"), (self.tiles, "pg-sweep-tiles"),
                            (self.defaults, "pg-sweep-defaults"), (self.executor, "pg-sweep-executor"),
                            (self.results, "pg-sweep-results")):
            widget.add_class(cls)
        self.last: Any = None

    def fill_defaults(self) -> None:
        """Write the current design's default space into the fields."""
        try:
            space = space_for(self.current())
        except Exception as exc:  # noqa: BLE001 - a design with nothing to sweep says why
            self.results.value = f"<span class='pg-bad'>{escape(str(exc))}</span>"
            return
        self.stages.value = " ".join(map(str, space.stages))
        self.tiles.value = " ".join("x".join(map(str, t)) for t in space.tiles)
        for g, box in self.groupings.items():
            box.value = g in space.groupings

    def _progress(self, done: int, total: int, text: str) -> None:
        self.progress.max = max(total, 1)
        self.progress.value = done
        self.note.value = f"<span class='pg-note'>{escape(text)}</span>"

    def _show(self, table: Any) -> Any:
        self.last = table
        best = table.best
        self.note.value = (f"<span class='pg-ok'>{escape(table.verdict())}</span>" if best else
                           f"<span class='pg-note'>nothing timed: {escape(table.note)}</span>")
        self.results.value = rich_html(table)
        return table

    def run(self) -> Any:
        """Sweep the current design; returns the table (or None when the fields are wrong)."""
        self.results.value = ""
        self.last = None
        try:
            stages = parse_ints(self.stages.value, "stages") if self.stages.value.strip() else None
            tiles = parse_tiles(self.tiles.value) if self.tiles.value.strip() else None
            chosen = [g for g, box in self.groupings.items() if box.value]
            if not chosen:
                raise ValueError("pick at least one grouping")
        except ValueError as exc:
            self.results.value = f"<span class='pg-bad'>{escape(str(exc))}</span>"
            return None
        self.button.disabled = True
        self.progress.value = 0
        try:
            table = sweep(self.current(), stages, tiles, chosen, executor=self.executor.value,
                          results=self.results_file.value.strip() or None,
                          compile_only=True if self.compile_only.value else None,
                          progress=False, on_progress=self._progress)
        except Exception as exc:  # the GPU boundary: a message, never a traceback
            self.results.value = (f"<span class='pg-bad'>sweep failed: {escape(type(exc).__name__)}: "
                                  f"{escape(str(exc))}</span>")
            return None
        finally:
            self.button.disabled = False
        return self._show(table)

    def load(self) -> Any:
        """Show the results file named in the field (nothing runs)."""
        path = self.results_file.value.strip()
        if not path:
            self.results.value = "<span class='pg-bad'>give the results file to load</span>"
            return None
        try:
            table = load_sweep(path)
        except Exception as exc:  # noqa: BLE001 - a bad file is a message
            self.results.value = f"<span class='pg-bad'>{escape(str(exc))}</span>"
            return None
        return self._show(table)


def attach(current: Callable[[], Any], tab: Any) -> SweepPane:
    """Add the Sweep tab after the other view tabs of ``tab`` (the hook ``Studio`` calls)."""
    pane = SweepPane(current)
    titles = list(tab.titles)
    tab.children = (*tab.children, pane.widget)
    tab.titles = (*titles, TITLE)
    return pane


__all__ = ["SweepPane", "attach", "parse_ints", "parse_tiles"]

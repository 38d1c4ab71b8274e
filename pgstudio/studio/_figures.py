"""The interactive panes: the timeline and the barrier layout as Plotly widgets (zoom, pan,
hover; ``render.interactive`` draws them), a click on an event or a barrier slot shows what it is,
marks the element in the dependency graph, the step in the task's schedule and the generated
source line; "Export for Perfetto" writes the timeline as trace JSON; "Measure on the GPU" draws the
instrumented kernel's measured timeline below the simulated one.

A pane builds its widget on first draw and afterwards only swaps the figure's data, so an edit
costs no new widget."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any, Callable

import ipywidgets as W

from ._linked import Link, event_link, schedule_html, slot_link, source_html
from ._snapshot import Unavailable
from ._ui import button


#: Where the panes put a figure's legend: a row at the top of the figure, left-aligned, which
#: Plotly makes room for as it wraps in a narrow pane.  Below the plot (the pictures' own place,
#: a fixed fraction under the axis) a wrapped legend ran over the x axis title; anchored to the
#: plot's top (``yref="paper"``) it stayed where a narrower pane had put it when the pane widened,
#: over the first lanes.  Anchored to the figure's own top (``yref="container"``) it does not move.
LEGEND = {"orientation": "h", "x": 0, "xanchor": "left", "y": 1, "yanchor": "top", "yref": "container"}


def legend_on_top(spec: dict) -> dict:
    """``spec`` with its legend at the top of the figure (``LEGEND``)."""
    return {**spec, "layout": {**spec["layout"], "legend": dict(LEGEND)}}


class _FigurePane:
    """What the timeline and barrier panes share: a head, the figure widget, the details of a click."""

    def __init__(self, highlight: Callable[[str | None], Any]) -> None:
        self._highlight = highlight
        self.head = W.HTML()
        # a column, so the figure is as wide as the pane
        self.holder = W.VBox(layout=W.Layout(width="100%"))
        self.figure: Any = None  # made at the first draw, with its data (``_show``)
        self.details = W.HTML()
        self.details.add_class("pg-details")
        self.snapshot: Any = None
        self.link: Link | None = None

    def _show(self, fig: Any) -> None:
        from ..render.interactive import figure_widget, fit_when_drawn, replace_figure

        if self.figure is None:  # its data goes with it: nothing is sent to a view still drawing
            self.figure = figure_widget(fig)
            fit_when_drawn(self.figure)
            self.holder.children = (self.figure,)
        else:
            replace_figure(self.figure, fig)
        for trace in self.figure.data:
            trace.on_click(self._clicked)

    def fit(self) -> None:
        """Size the figure to the pane again: Plotly follows the window only while its pane is on
        screen, so a pane shown after the window changed would keep the width it had."""
        from ..render.interactive import fit

        if self.figure is not None:
            fit(self.figure)

    def _clicked(self, trace: Any, points: Any, _selector: Any) -> None:
        if points.point_inds:
            self.select(int(trace.customdata[points.point_inds[0]]))

    def select(self, index: int) -> None:  # pragma: no cover - each pane overrides it
        raise NotImplementedError

    def _source(self) -> Any:
        try:
            return self.snapshot.kernel_source if self.snapshot.report.ok else None
        except Exception:  # a design the generator refuses still has a timeline
            return None

    def _show_link(self, link: Link) -> None:
        self.link = link
        design = self.snapshot.design
        self.details.value = (f"<div class='pg-counts'>{escape(link.title)}</div><div class='pg-note'>{link.detail}</div>"
                              + schedule_html(design, link) + source_html(self._source(), link.source_line))
        if link.element is not None:
            self._highlight(link.element)


class TimelinePane(_FigurePane):
    """The simulated timeline; after "Measure on the GPU", the measured one below it (the same
    lanes, colours and time axis: ``render.interactive.compare_spec``) until the design changes."""

    def __init__(self, highlight: Callable[[str | None], Any], folder: Callable[[], Path],
                 executor: Callable[[], Any] = lambda: None) -> None:
        """``executor()``: where a measurement runs (the benchmark pane's executor, None: the default)."""
        super().__init__(highlight)
        self._folder = folder
        self._executor = executor
        self.export = button("Export for Perfetto", self.export_trace, icon="download",
                             tip="write the timeline(s) shown as Chrome / Perfetto trace JSON")
        self.export_note = W.HTML()
        self.measure_button = button("Measure on the GPU", self.measure, icon="tachometer",
                                     tip="run the design's instrumented kernel (verified) and draw what its first "
                                         "sampled block did below the simulated timeline")
        self.measure_note = W.HTML()
        self.widget = W.VBox([self.head, self.holder,
                              W.HBox([self.export, self.measure_button, self.export_note, self.measure_note],
                                     layout=W.Layout(align_items="center", flex_flow="row wrap")), self.details])
        self.widget.add_class("pg-pane-timeline")
        self.timeline: Any = None
        self.cost_label = ""  # what the simulated timeline's step costs are (``Snapshot.cost``)
        self.measured: Any = None  # the measured Timeline of ``measured_of`` (a design's JSON), or None
        self.measured_of: str | None = None

    def update(self, snapshot: Any) -> None:
        self.snapshot, self.link, self.details.value = snapshot, None, ""
        self.export_note.value = ""
        if self.measured is not None and self.measured_of != snapshot.design.to_json():
            self.measured = self.measured_of = None
            self.measure_note.value = ("<span class='pg-note'>the measured timeline was of an earlier version of "
                                       "the design: measure again to see this one</span>")
        try:
            self.timeline = snapshot.timeline
            self.cost_label = snapshot.cost[1]
            if not self.timeline.events:
                raise Unavailable("nothing to simulate yet: the timeline shows the steps of the design's tasks")
        except Exception as exc:
            self.timeline = None
            self.head.value = snapshot.unavailable_html(exc)
            self.holder.layout.display = "none"
            self.export.disabled = self.measure_button.disabled = True
            return
        self.holder.layout.display = None
        self.export.disabled = self.measure_button.disabled = False
        self._draw()

    def _draw(self) -> None:
        from ..render.interactive import compare_spec, timeline_spec

        measured = f"; {escape(self.measured.summary())}" if self.measured is not None else ""
        waits = f"simulated\n{self.timeline.waiting()}"
        if self.measured is not None:
            waits += f"\nmeasured\n{self.measured.waiting()}"
        self.head.value = (f"<div class='pg-counts'>{escape(self.timeline.summary())}{measured}</div>"
                           f"<div class='pg-note'>simulated with the {escape(self.cost_label)}</div>"
                           "<details class='pg-waiting'><summary class='pg-note'>where the time goes: blocked on data "
                           f"(full) or on a free stage (empty), copy latency</summary><pre>{escape(waits)}</pre></details>"
                           "<div class='pg-note'>drag to zoom, shift-drag to pan, double-click to reset; hover for "
                           "the details; click a step to see it in the schedule, the graph and the CUDA source</div>")
        if self.measured is None:
            spec = timeline_spec(self.timeline, title=False)  # the head above says what it is
        else:
            spec = compare_spec(self.timeline, self.measured, title=False)
        self._show(legend_on_top(spec))

    def measure(self) -> Any:
        """Trace the design's instrumented kernel on the GPU (``runtime.trace.trace``, verified)
        and draw its first sampled block below the simulation; returns the measured Timeline or
        None, with the reason in the pane."""
        from ..errors import GpuUnavailable, KernelFault, KernelHangError, PgStudioError
        from ..runtime.executor import check_gpu
        from ..runtime.trace import trace

        if self.snapshot is None or self.timeline is None:
            return None
        design = self.snapshot.design
        if not self.snapshot.report.ok:
            self.measure_note.value = "<span class='pg-bad'>fix the design's errors first (see Diagnostics)</span>"
            return None
        self.measure_button.disabled = True
        self.measure_note.value = "<span class='pg-note'>compiling, verifying and tracing on the GPU ...</span>"
        executor = self._executor()
        try:
            check_gpu(executor)
            tr = trace(design, executor=executor)
            problems = tr.problems()
            if problems:
                raise PgStudioError("stamps out of order: " + problems[0])
            measured = tr.timeline()
        except GpuUnavailable as exc:
            self.measure_note.value = (f"<span class='pg-na'>{escape(str(exc))}; the timeline above is the "
                                       "calibrated simulator's</span>")
            return None
        except (KernelFault, KernelHangError, PgStudioError) as exc:
            self.measure_note.value = f"<span class='pg-bad'>not measured: {escape(str(exc))}</span>"
            return None
        except Exception as exc:  # the GPU boundary: whatever it raises becomes a message, never a traceback
            self.measure_note.value = (f"<span class='pg-bad'>not measured: {escape(type(exc).__name__)}: "
                                       f"{escape(str(exc))}</span>")
            return None
        finally:
            self.measure_button.disabled = self.timeline is None
        self.measured, self.measured_of = measured, design.to_json()
        verified = "verified" if tr.meta_dict.get("verified") else "NOT verified"
        self.measure_note.value = (f"<span class='pg-ok'>measured</span> <span class='pg-note'>({verified}; block "
                                   f"{measured.meta_dict.get('grid_block', 0)}, the first of {len(tr.blocks)} sampled, "
                                   f"grid {tr.meta_dict.get('grid', '?')})</span>")
        self._draw()
        return measured

    def select(self, index: int) -> None:
        """What a click on event ``index`` of the timeline does."""
        from ..render.interactive import compared_event

        event = (self.timeline.events[index] if self.measured is None
                 else compared_event(self.timeline, self.measured, index))
        self._show_link(event_link(self.snapshot.design, event, self._source()))

    def export_trace(self) -> Path | None:
        """Write ``<design>.perfetto.json`` next to the notebook (the simulated timeline, and the
        measured one as a second process when there is one); open it in ui.perfetto.dev."""
        from ..runtime.trace import chrome_trace

        if self.timeline is None:
            return None
        path = self._folder() / f"{self.snapshot.design.name}.perfetto.json"
        shown = [self.timeline] + ([self.measured] if self.measured is not None else [])
        try:
            path.write_text(json.dumps(chrome_trace(shown)))
        except OSError as exc:
            self.export_note.value = f"<span class='pg-bad'>could not write {escape(str(path))}: {escape(str(exc))}</span>"
            return None
        self.export_note.value = (f"<span class='pg-note'>wrote <code>{escape(str(path))}</code>: open it in "
                                  f"<a href='https://ui.perfetto.dev' target='_blank'>ui.perfetto.dev</a> "
                                  f"(Open trace file) or chrome://tracing</span>")
        return path


class BarrierPane(_FigurePane):
    def __init__(self, highlight: Callable[[str | None], Any]) -> None:
        super().__init__(highlight)
        self.static = W.HTML()
        self.draw_static = button("Grouped vs ungrouped picture", self.show_static, icon="image",
                                  tip="draw this design's barriers next to its per-resource-barrier twin")
        self.widget = W.VBox([self.head, self.holder, self.details, self.draw_static, self.static])
        self.widget.add_class("pg-pane-barriers")

    def update(self, snapshot: Any) -> None:
        from ..render.interactive import barrier_spec

        self.snapshot, self.link, self.details.value = snapshot, None, ""
        self.head.value = snapshot.barrier_head_html()
        self.static.value = ""
        try:
            if not snapshot.layout.num_barriers:
                raise Unavailable("no barriers yet: every stage of a pipelined resource (a resource with a "
                                  "pipeline type and stages) gets a full and an empty barrier")
            fig = legend_on_top(barrier_spec(snapshot.layout, snapshot.smem, title=False))
        except Exception as exc:
            self.holder.layout.display = "none"
            self.details.value = snapshot.unavailable_html(exc)
            return
        self.holder.layout.display = None
        self._show(fig)

    def show_static(self) -> None:
        """The static grouped vs ungrouped picture and the slot table (drawn on request: matplotlib
        takes longer than an edit should)."""
        if self.snapshot is not None:
            self.static.value = self.snapshot.barrier_static_html()

    def select(self, index: int) -> None:
        """What a click on barrier slot ``index`` does."""
        self._show_link(slot_link(self.snapshot.design, self.snapshot.layout, index, self._source()))

"""Interactive pictures (Plotly): the timeline and the barrier layout, zoomed, panned and hovered.

Why Plotly (docs/studio.md, "Interactive pictures"): one figure object serves JupyterLab and Voila as a
widget with Python-side click callbacks (``plotly.graph_objects.FigureWidget``, built on
anywidget), a plain notebook through Plotly's own MIME renderer, and a static HTML file with the
Plotly library inlined (``to_html``: no CDN at view time).  Zoom (drag), pan (shift-drag or the
mode bar), hover and double-click-to-reset come with every figure, without JavaScript of ours.

Each mark carries its identity in ``customdata`` so a click can be traced back to the design:
timeline marks carry the event's index in ``Timeline.events``; barrier cells their slot index.
The words of a mark's hover are its ``hovertext``.
The static matplotlib / graphviz pictures stay for files, CI and HTML (``render.timeline``,
``render.barriers``).  Plotly is imported when a figure is first built.
"""

from __future__ import annotations

from typing import Any

from . import _slots, style

#: Plotly config of the studio's figures: fill the pane's width, follow it when it changes.
CONFIG = {"autosizable": True, "responsive": True, "displaylogo": False}
#: Pixels per timeline lane and per barrier row.
LANE_PX, ROW_PX = 34, 30
#: The colour of each timeline event kind (work takes its stage colour).
KIND_COLOUR = {"sync": style.SYNC, "blocked": "#E74C3C"}
#: Hover text of a timeline bar and of a mark (``hovertext`` holds the event in words).
EVENT_HOVER = "%{hovertext}<br>start %{base:.1f} ns, lasts %{x:.1f} ns<extra></extra>"
MARK_HOVER = "%{hovertext}<br>at %{x:.1f} ns<extra></extra>"


def _go() -> Any:
    import plotly.graph_objects as go
    return go


def _figure(spec: dict) -> Any:
    """A Plotly figure of trusted, internally built parts: Plotly's per-property validation is
    skipped (``_validate=False``, as plotly.express does), which keeps a studio edit fast."""
    return _go().Figure(data=spec["data"], layout=spec["layout"], _validate=False)


def _columns(trace: dict, numbers: tuple[str, ...] = ("x", "base", "customdata"),
             texts: tuple[str, ...] = ("y", "hovertext")) -> dict:
    """Columns as numpy arrays: Plotly copies a number array in one step where it checks (and
    deep-copies) a list item by item -- most of the cost of swapping a figure in the studio.  So
    ``customdata`` is a number (the mark's identity) and words go into ``hovertext``."""
    import numpy as np

    for key in numbers:
        if key in trace:
            trace[key] = np.asarray(trace[key], dtype=float)
    for key in texts:
        if key in trace:
            trace[key] = np.asarray(trace[key], dtype=object)
    return trace


def _frame(layout: dict, title: str | None, height: int) -> dict:
    """Layout entries every figure shares: the title (``None``: none, as in a studio pane whose
    heading says it), the height, and a width that follows the page (``autosize``)."""
    layout.update(autosize=True, height=height, hoverlabel={"align": "left"}, plot_bgcolor="#FBFCFC",
                  font={"family": "Helvetica, Arial, sans-serif", "size": 12})
    if title:
        layout["title"] = {"text": title, "font": {"size": 12}}
    else:
        layout["title"] = {"text": ""}
        layout["margin"] = {**layout.get("margin", {}), "t": 28}  # room for the mode bar only
    return layout


def lane_label(name: str, warp: int, n: int) -> str:
    """``load_a · warp 0`` / ``mma · warps 4-11``: the task and where it runs."""
    return f"{name} · warp {warp}" if n == 1 else f"{name} · warps {warp}-{warp + n - 1}"


def event_text(e: Any) -> str:
    """The event's fields in words (hover text; also what the studio shows for a click)."""
    parts = [f"iteration {e.iteration}" if e.iteration >= 0 else ""]
    if e.target:
        parts.append(f"on {e.target}")
    if e.barrier:
        parts.append(f"barrier {e.barrier}" + (f" (slot {e.slot})" if e.slot >= 0 else ""))
    if e.stage >= 0:
        parts.append(f"stage {e.stage}")
    if e.phase >= 0:
        parts.append(f"phase parity {e.phase}")
    return ", ".join(p for p in parts if p)


def timeline_plot(timeline: Any, *, selected: int | None = None, title: bool = True) -> Any:
    """The timeline as a Plotly figure (``timeline_spec``)."""
    return _figure(timeline_spec(timeline, selected=selected, title=title))


def compare_plot(simulated: Any, measured: Any, *, title: bool = True) -> Any:
    """Simulated above measured, one time axis, as a Plotly figure (``compare_spec``)."""
    return _figure(compare_spec(simulated, measured, title=title))


def timeline_spec(timeline: Any, *, selected: int | None = None, title: bool = True) -> dict:
    """The timeline as Plotly data and layout (``{"data": [...], "layout": {...}}``): one lane per
    task (warps in the label), work bars in their stage colour, barrier operations grey, blocked
    time red, arrivals and phase flips as marks.  Hover: task, step, target, barrier, slot, stage,
    phase parity, iteration, start and duration.
    ``selected``: index of an event to outline (a click in the studio); ``title=False`` leaves the
    summary to the page around the figure."""
    lanes = list(timeline.lanes)
    label = _labels(lanes, timeline.tasks)
    traces = _timeline_traces(timeline, label, selected)
    layout = dict(
        barmode="overlay", bargap=0.25, margin={"l": 10, "r": 10, "t": 40, "b": 40},
        xaxis={"title": "time (ns)", "rangemode": "tozero"},
        yaxis=_lane_axis(lanes, label),
        legend={"orientation": "h", "y": -0.25 if len(lanes) > 3 else -0.4}, dragmode="zoom", uirevision="timeline")
    height = (130 if title else 118) + LANE_PX * max(len(lanes), 1)
    return {"data": traces, "layout": _frame(layout, timeline.summary() if title else None, height)}


def compare_spec(simulated: Any, measured: Any, *, selected: int | None = None, title: bool = True) -> dict:
    """Two timelines of one design, one above the other, as Plotly data and layout: the same lanes
    (the simulator's, then any only the other has), the same colours and one shared time axis, so
    a zoom or pan moves both.  The first view is the span both cover.  Marks carry their event's
    index in ``simulated.events``, then ``len(simulated.events)`` + the index in ``measured.events``
    (``compared_event`` turns one back into its event)."""
    lanes = list(dict.fromkeys([*simulated.lanes, *measured.lanes]))
    label = _labels(lanes, (*simulated.tasks, *measured.tasks))
    offset = len(simulated.events)
    sel_top = selected if selected is not None and selected < offset else None
    sel_low = selected - offset if selected is not None and selected >= offset else None
    traces = _timeline_traces(simulated, label, sel_top)
    for t in _timeline_traces(measured, label, sel_low, yaxis="y2", offset=offset):
        traces.append({**t, "showlegend": False})  # the colours mean what they mean above
    ends = [max((e.end for e in tl.events), default=0.0) for tl in (simulated, measured)]
    axis = _lane_axis(lanes, label)
    layout = dict(
        barmode="overlay", bargap=0.25, margin={"l": 10, "r": 10, "t": 40, "b": 40},
        xaxis={"title": "time (ns), from each timeline's first step", "anchor": "y2",
               "range": [0, max(min(ends), 1.0)]},
        yaxis={**axis, "domain": [0.54, 1.0]}, yaxis2={**axis, "domain": [0.0, 0.46]},
        annotations=[_panel_note(simulated, 1.0), _panel_note(measured, 0.46)],
        legend={"orientation": "h", "y": -0.15}, dragmode="zoom", uirevision="compare")
    height = (150 if title else 138) + 2 * LANE_PX * max(len(lanes), 1)
    heading = f"{simulated.design}: {_source_words(simulated)} above, {_source_words(measured)} below"
    return {"data": traces, "layout": _frame(layout, heading if title else None, height)}


def compared_event(simulated: Any, measured: Any, index: int) -> Any:
    """The event a mark of ``compare_spec(simulated, measured)`` stands for."""
    offset = len(simulated.events)
    return simulated.events[index] if index < offset else measured.events[index - offset]


def _source_words(tl: Any) -> str:
    meta = tl.meta_dict
    if tl.source == "measured":
        return f"measured (block {meta.get('block', 0)})"
    return tl.source


def _panel_note(tl: Any, top: float) -> dict:
    return {"text": f"<b>{_source_words(tl)}</b>", "xref": "paper", "yref": "paper", "x": 1.0, "y": top,
            "xanchor": "right", "yanchor": "bottom", "showarrow": False, "font": {"size": 11}}


def _labels(lanes: list[str], tasks) -> dict[str, str]:
    where = {name: (w, n) for name, w, n in tasks}
    return {t: lane_label(t, *where.get(t, (0, 1))) for t in lanes}


def _lane_axis(lanes: list[str], label: dict[str, str]) -> dict:
    return {"categoryorder": "array", "categoryarray": [label[t] for t in reversed(lanes)], "automargin": True,
            "ticksuffix": "  "}  # a gap between a lane's label and its first bar


def _timeline_traces(timeline: Any, label: dict[str, str], selected: int | None, *, yaxis: str = "y",
                     offset: int = 0) -> list[dict]:
    """The bars and marks of ``timeline`` on the lane axis ``yaxis``; marks carry ``offset`` + their
    event's index."""
    bars: dict[str, dict[str, list]] = {}
    marks: dict[str, dict[str, list]] = {}
    for i, e in enumerate(timeline.events):
        words = f"<b>{e.task}</b> {e.op}<br>{event_text(e)}"
        if e.end > e.start:
            key = e.kind if e.kind in KIND_COLOUR else "work"
            b = bars.setdefault(key, {"x": [], "base": [], "y": [], "c": [], "h": [], "colour": []})
            b["x"].append(e.end - e.start)
            b["base"].append(e.start)
            b["y"].append(label.get(e.task, e.task))
            b["c"].append(offset + i)
            b["h"].append(words)
            b["colour"].append(KIND_COLOUR.get(key) or style.stage_colour(e.stage))
        else:
            m = marks.setdefault(e.kind, {"x": [], "y": [], "c": [], "h": []})
            m["x"].append(e.start)
            m["y"].append(label.get(e.task, e.task))
            m["c"].append(offset + i)
            m["h"].append(words)
    traces: list[dict] = []
    names = {"work": "work (stage colour)", "sync": "barrier operation", "blocked": "blocked on a barrier"}
    chosen = None if selected is None else offset + selected
    for key in ("work", "sync", "blocked"):
        if key not in bars:
            continue
        b = bars[key]
        lines = [2.5 if c == chosen else 0.5 for c in b["c"]]
        traces.append(_columns(dict(
            type="bar", x=b["x"], base=b["base"], y=b["y"], orientation="h", name=names[key], customdata=b["c"],
            hovertext=b["h"], marker={"color": b["colour"], "line": {"color": style.INK, "width": lines}},
            hovertemplate=EVENT_HOVER, width=0.6 if key != "sync" else 0.35, yaxis=yaxis)))
    symbols = {"arrive": ("triangle-down", style.ROLE["full"], "arrive"),
               "phase_flip": ("diamond", style.HIGHLIGHT, "phase flip")}
    for kind, m in marks.items():
        symbol, colour, name = symbols.get(kind, ("circle", style.MUTED, "instant step"))
        traces.append(_columns(dict(
            type="scatter", x=m["x"], y=m["y"], mode="markers", name=name, customdata=m["c"], hovertext=m["h"],
            marker={"symbol": symbol, "color": colour, "size": 8, "line": {"color": style.INK, "width": 0.5}},
            hovertemplate=MARK_HOVER, yaxis=yaxis)))
    return traces


def slot_text(layout: Any, s: Any, buffers: dict[str, Any] | None = None) -> str:
    """A barrier slot in words (``_slots``): set, stage, arrivals as threads and warps, tx bytes,
    who waits with which parity in which iterations, and the shared-memory bytes it guards."""
    bset = next((b for b in layout.all_sets if b.name == s.set), None)
    lines = [f"slot {s.index} at byte {s.offset}: {s.set} stage {s.stage}", _slots.arrive_text(s)]
    if bset is not None:
        lines.append(f"arrive: {_slots.arrivers_text(bset)}; wait: {', '.join(bset.waiters) or '-'}")
        if _slots.peers_text(bset):
            lines.append(_slots.peers_text(bset))
        if bset.arch:
            lines.append(f"the {bset.arch} generator's own barrier, after the tensor-memory slot")
        lines.append(_slots.parity_text(bset, s.stage))
        lines.extend(_slots.guard_lines(bset, s.stage, buffers))
    return "<br>".join(lines)


def barrier_plot(layout: Any, smem: Any = None, *, selected: int | None = None, title: bool = True) -> Any:
    """The barrier layout as a Plotly figure (``barrier_spec``)."""
    return _figure(barrier_spec(layout, smem, selected=selected, title=title))


def barrier_spec(layout: Any, smem: Any = None, *, selected: int | None = None, title: bool = True) -> dict:
    """The barrier layout as a grid: one row per barrier set (full blue, empty orange), one cell
    per stage, in shared-memory order.  Hover: slot, offset, phase parity per round, arrivals as
    threads and warps, tx bytes, arrivers and waiters, and the buffer stage it guards (``smem``:
    ``smem_layout(design)``)."""
    buffers = {b.resource: b for b in getattr(smem, "buffers", ())}
    rows = [f"{b.name}" for b in layout.all_sets]
    traces: list[dict] = []
    for role in ("full", "empty"):
        slots = [s for s in layout.all_slots if style.role_of(s.set) == role]
        if not slots:
            continue
        traces.append(_columns(dict(
            type="bar", x=[1] * len(slots), base=[s.stage for s in slots], y=[s.set for s in slots], orientation="h",
            name=style.ROLE_WHAT[role], customdata=[s.index for s in slots],
            hovertext=[slot_text(layout, s, buffers) for s in slots],
            text=[style.fmt_threads(s.arrive_count) + (f" + {style.fmt_bytes(s.tx_bytes)} tx" if s.tx_bytes else "")
                  for s in slots],
            textposition="inside", insidetextanchor="middle", constraintext="none",
            marker={"color": [style.stage_colour(s.stage) for s in slots],
                    "line": {"color": style.ROLE[role], "width": [4 if s.index == selected else 2 for s in slots]}},
            hovertemplate="%{hovertext}<extra></extra>", width=0.7)))
    stages = max((b.stages for b in layout.all_sets), default=1)
    frame = dict(
        barmode="overlay", margin={"l": 10, "r": 10, "t": 40, "b": 30},
        xaxis={"title": "stage", "tickmode": "array", "tickvals": [k + 0.5 for k in range(stages)],
               "ticktext": [str(k) for k in range(stages)], "range": [0, stages]},
        yaxis={"categoryorder": "array", "categoryarray": list(reversed(rows)), "automargin": True, "ticksuffix": "  "},
        legend={"orientation": "h", "y": -0.3}, uirevision="barriers")
    head = (f"{layout.num_barriers} barriers ({layout.num_barriers * 8} B): a cell says who arrives per phase "
            "(+ tx bytes)")
    height = (120 if title else 108) + ROW_PX * max(len(rows), 1)
    return {"data": traces, "layout": _frame(frame, head if title else None, height)}


def figure_widget(fig: Any) -> Any:
    """``fig`` (a Figure or a spec) as a widget for Lab and Voila (click callbacks in Python)."""
    spec = fig if isinstance(fig, dict) else None
    widget = _go().FigureWidget(_figure(fig) if spec else fig, _validate=False)
    # Plotly sizes a plot to its container when told to (``autosizable``; ``responsive`` keeps it so
    # when the page resizes; ``replace_figure`` asks again on every update).  The widget takes
    # Plotly's config through its synced ``_config`` trait (it has no public setter).
    widget._config = {**widget._config, **CONFIG}
    if spec is not None:
        widget._pg_layout = dict(spec["layout"])  # what replace_figure compares the next layout with
    return widget


def replace_figure(widget: Any, fig: Any) -> None:
    """Show ``fig`` (a Figure, or a spec of ``timeline_spec`` / ``barrier_spec``: cheaper, as
    nothing is copied twice) in an existing widget: swap the traces and update the layout entries
    that changed (zoom kept by ``uirevision``); far cheaper than a new widget.  Plotly checks every
    entry it is given, so the entries a spec repeats unchanged (fonts, margins, axes) are not sent."""
    if isinstance(fig, dict):
        data, layout = fig["data"], dict(fig["layout"])
    else:
        data, layout = list(fig.data), fig.layout.to_plotly_json()
        layout.pop("template", None)  # the theme is set once, when the widget is made
    shown = getattr(widget, "_pg_layout", {})
    changed = {k: v for k, v in layout.items() if k not in shown or shown[k] != v}
    changed.pop("autosize", None)
    with widget.batch_update():
        widget.data = []
        widget.add_traces(data)
        if changed:
            widget.update_layout(changed)
    widget._pg_layout = layout
    fit(widget)


def fit(widget: Any) -> None:
    """Size the plot to the page around it, now.  Plotly measures its container at a relayout that
    sets ``autosize``; an anywidget FigureWidget drawn while its tab was hidden otherwise stays at
    Plotly's default 700 px (plotly.py issue 5208).  The value is cleared and set again so the
    widget sends it even when it already holds True."""
    widget.layout.autosize = None
    widget.layout.autosize = True


def fit_when_drawn(widget: Any) -> None:
    """``fit`` ``widget`` once its view has drawn it (the view's first report of its traces, which
    it sends when its first plot is drawn; its layout report does not reach Python).  A widget
    is best made with its data: Plotly's widget view loses the traces that reach it while its
    first plot is still being drawn (an empty plot, seen on a loaded machine), so data sent into
    an empty widget just put on the page can vanish; and a view drawn before it was on the page
    has Plotly's default 700 px until it is fitted."""
    def drawn(change: Any) -> None:
        if change["new"]:
            widget.unobserve(drawn, names="_js2py_traceDeltas")
            fit(widget)
    widget.observe(drawn, names="_js2py_traceDeltas")


def to_html(fig: Any) -> str:
    """A self-contained HTML page of ``fig``: the Plotly library inlined, no CDN at view time."""
    return fig.to_html(include_plotlyjs=True, full_html=True)


__all__ = ["barrier_plot", "barrier_spec", "compare_plot", "compare_spec", "compared_event", "event_text", "figure_widget",
           "fit", "fit_when_drawn", "lane_label",
           "replace_figure", "slot_text", "timeline_plot", "timeline_spec", "to_html"]

"""The studio's interactive panes, headless: a click on a timeline event or a barrier slot marks
the schedule step, the graph element and the generated source line; Perfetto export writes trace
JSON next to the notebook."""

from __future__ import annotations

import json

import pytest

from pgstudio import examples

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")
from pgstudio.studio import Studio  # noqa: E402


@pytest.fixture
def studio(tmp_path):
    s = Studio(examples.merge_copy(), folder=tmp_path, debounce=0)
    s.views.show("timeline")
    return s


def test_click_an_event_marks_step_graph_and_source(studio):
    pane = studio.timeline
    assert pane.figure is not None and all(tr._click_callbacks for tr in pane.figure.data)
    i = next(k for k, e in enumerate(pane.timeline.events) if e.task == "store" and e.op == "blocked")
    pane.select(i)
    link = pane.link
    assert link.task == "store" and link.schedule_line >= 0 and link.source_line > 0
    src = studio.snapshot.kernel_source
    assert "wait" in src.code.splitlines()[link.source_line - 1]
    html = pane.details.value
    assert "<mark class='pg-mark'>" in html and "ab.smem_a.wait()" in html and f"line {link.source_line}" in html
    assert studio.views.highlight == "smem_a"
    studio.views.show("graph")
    assert "smem_a" in studio.views.html["graph"].value


def test_click_a_barrier_slot(studio):
    studio.views.show("barriers")
    pane = studio.barriers
    slot = next(s for s in studio.snapshot.layout.slots if s.set == "ab.shared_empty")
    pane.select(slot.index)
    assert "128 threads = 4 warps" in pane.details.value and "barrier ab.shared_empty" in "".join(
        e for _, e in studio.snapshot.kernel_source.line_map)
    assert "<mark class='pg-mark'>" in pane.details.value and studio.views.highlight == "ab"


def test_an_edit_swaps_the_figure_not_the_widget(studio):
    fig = studio.timeline.figure
    studio.set_group("ab", mode="FusedMerge")
    studio.refresh()
    assert studio.timeline.figure is fig
    assert studio.timeline.link is None and studio.report.ok


def test_export_for_perfetto(studio, tmp_path):
    path = studio.timeline.export_trace()
    doc = json.loads(path.read_text())
    assert path.parent == tmp_path and doc["traceEvents"] and "ui.perfetto.dev" in studio.timeline.export_note.value


def test_every_pane_after_an_edit_shows_the_new_design(tmp_path):
    """lazy=False draws every pane per edit; the graph is laid out beside the others (a thread
    waiting on Graphviz) and what it shows is what a fresh snapshot draws."""
    from html import escape

    from pgstudio.render.interactive import timeline_spec
    from pgstudio.studio._snapshot import Snapshot

    s = Studio(examples.merge_copy(), folder=tmp_path, debounce=0, lazy=False)
    assert s.set_group("ab", mode="FusedMerge")
    fresh = Snapshot(s.design)
    assert s.views.html["graph"].value == fresh.graph_html() and "FusedMerge" in fresh.graph_html()
    widget = s.timeline.figure
    spec = timeline_spec(fresh.timeline, title=False)
    assert widget.layout.height == spec["layout"]["height"] and widget.layout.autosize
    assert sum(len(t.x) for t in widget.data) == sum(len(t["x"]) for t in spec["data"])
    assert not widget.layout.title.text  # the pane's heading says what it is; the figure does not repeat it
    assert escape(fresh.timeline.summary()) in s.timeline.head.value
    assert escape(fresh.timeline.waiting()) in s.timeline.head.value  # where the time goes, folded


def test_an_empty_design_says_why_its_pictures_are_empty(tmp_path):
    s = Studio(folder=tmp_path, autosave=False, debounce=0)
    s.views.show("barriers")
    assert "no barriers yet" in s.barriers.details.value and s.barriers.holder.layout.display == "none"
    s.views.show("timeline")
    # with no task the design does not compile (codegen.no_tasks), so the timeline says that
    assert "not available" in s.timeline.head.value and s.timeline.export.disabled
    assert s.timeline.holder.layout.display == "none"


def test_legends_sit_at_the_top_of_the_figure(studio):
    """Below the plot a wrapping legend ran over the x axis title; anchored to the plot's top it
    stayed where a narrower pane had put it; anchored to the figure's top it cannot move."""
    for key, pane in (("timeline", studio.timeline), ("barriers", studio.barriers)):
        studio.views.show(key)
        legend = pane.figure.layout.legend
        assert (legend.yref, legend.y, legend.yanchor, legend.orientation) == ("container", 1, "top", "h")


def test_a_pane_shown_again_is_fitted_to_its_width(studio, monkeypatch):
    """Plotly follows the window only while its pane is on screen: showing a drawn pane again asks
    it to fit the pane (the window may have changed while it was hidden)."""
    from pgstudio.render import interactive

    fitted = []
    monkeypatch.setattr(interactive, "fit", lambda widget: fitted.append(widget))
    studio.views.show("graph")
    studio.views.show("timeline")
    assert fitted == [studio.timeline.figure]


def test_measure_without_a_gpu_says_so_and_keeps_the_simulation(studio, monkeypatch):
    from pgstudio.runtime import _cupy
    monkeypatch.setattr(_cupy, "gpu_available", lambda: False)
    pane = studio.timeline
    before = len(pane.figure.data)
    assert pane.measure() is None
    assert "sees no NVIDIA GPU" in pane.measure_note.value and "calibrated simulator" in pane.measure_note.value
    assert pane.measured is None and len(pane.figure.data) == before and not pane.measure_button.disabled
    monkeypatch.setattr(_cupy, "gpu_available", lambda: True)  # a GPU, but the null runtime: nothing to measure
    monkeypatch.setattr(pane, "_executor", lambda: "null")
    assert pane.measure() is None and "null runtime launches nothing" in pane.measure_note.value


class _FakeTrace:
    """What ``runtime.trace.trace`` returns, for a pane test without a GPU: a measured timeline
    (the simulator's events, later and slower) of block 0 of 2."""

    def __init__(self, simulated):
        import dataclasses
        events = tuple(dataclasses.replace(e, start=3 * e.start + 20, end=3 * e.end + 20) for e in simulated.events)
        self.tl = dataclasses.replace(simulated, events=events, source="measured", meta=(("block", 0),))
        self.blocks = (0, 1)
        self.meta_dict = {"verified": True, "grid": 132}

    def problems(self):
        return []

    def timeline(self):
        return self.tl


def test_a_measured_timeline_is_drawn_below_the_simulated_one_until_the_design_changes(studio, monkeypatch, tmp_path):
    from pgstudio.runtime import _cupy, trace as trace_mod
    monkeypatch.setattr(_cupy, "gpu_available", lambda: True)
    calls = []

    def fake_trace(design, **kw):
        calls.append((design.name, kw))
        return _FakeTrace(studio.snapshot.timeline)

    monkeypatch.setattr(trace_mod, "trace", fake_trace)
    pane = studio.timeline
    sim_events = len(pane.timeline.events)
    measured = pane.measure()
    assert measured is not None and calls == [("merge_copy", {"executor": None})]
    assert "measured" in pane.measure_note.value and "verified" in pane.measure_note.value
    axes = {t.yaxis for t in pane.figure.data}
    assert axes == {"y", "y2"}  # simulated above, measured below, one time axis
    from html import escape
    assert "measured" in pane.head.value and escape(measured.waiting()) in pane.head.value
    # a click on a measured mark names the measured event
    i = next(k for k, e in enumerate(measured.events) if e.task == "store" and e.op == "blocked")
    pane.select(sim_events + i)
    assert pane.link.task == "store" and pane.link.source_line > 0
    doc = json.loads(pane.export_trace().read_text())
    procs = [e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"]
    assert len(procs) == 2 and "measured" in procs[1]
    # an edit: the measurement was of the old design, so it goes, and the pane says why
    assert studio.set_resource("smem_a", num_stages=3) and studio.set_resource("smem_b", num_stages=3)
    assert pane.measured is None and {t.yaxis for t in pane.figure.data} == {"y"}
    assert "earlier version of the design" in pane.measure_note.value

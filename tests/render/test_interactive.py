"""render.interactive: the Plotly timeline and barrier grid carry every hover field and the identity
of each mark; the HTML export inlines Plotly (no CDN at view time)."""

from __future__ import annotations

import pytest

from pgstudio import examples
from pgstudio.analysis.layout import barrier_layout, smem_layout
from pgstudio.analysis.simulate import simulate

pytest.importorskip("plotly")
from pgstudio.render.interactive import barrier_plot, slot_text, timeline_plot, to_html  # noqa: E402


def test_timeline_marks_carry_their_event_and_every_hover_field():
    tl = simulate(examples.merge_copy(), iterations=4)
    fig = timeline_plot(tl)
    ids = sorted(int(c) for tr in fig.data for c in tr.customdata)
    assert ids == list(range(len(tl.events)))  # every event is one mark, findable by a click
    blocked = next(tr for tr in fig.data if tr.name == "blocked on a barrier")
    text = blocked.hovertext[0]
    for word in ("iteration", "barrier ab.", "slot", "stage", "phase parity"):
        assert word in text
    assert "load_a · warp 0" in fig.layout.yaxis.categoryarray and "store · warps 4-7" in fig.layout.yaxis.categoryarray


def test_simulated_and_measured_share_lanes_colours_and_one_time_axis():
    import dataclasses

    from pgstudio.render.interactive import compare_plot, compared_event
    sim = simulate(examples.merge_gemm(), iterations=2)
    # a measured timeline of the same design: the simulator's events, later and stretched, less a lane
    events = tuple(dataclasses.replace(e, start=2 * e.start + 50, end=2 * e.end + 50) for e in sim.events
                   if e.task != "load_b.tma")
    meas = dataclasses.replace(sim, events=events, source="measured", meta=(("block", 1),))
    fig = compare_plot(sim, meas)
    top = [t for t in fig.data if t.yaxis in (None, "y")]
    low = [t for t in fig.data if t.yaxis == "y2"]
    assert top and low and all(t.xaxis in (None, "x") for t in fig.data)  # one x axis: zoom and pan move both
    assert list(fig.layout.yaxis.categoryarray) == list(fig.layout.yaxis2.categoryarray)  # the same lanes
    assert "load_b.tma · warp 1" in fig.layout.yaxis2.categoryarray  # a lane only one side has stays on both
    colours = {t.name: set(t.marker.color) for t in top if t.type == "bar"}
    for t in low:
        if t.type == "bar":
            assert set(t.marker.color) <= colours[t.name] and t.showlegend is False  # same colours, one legend
    ids = sorted(int(c) for t in fig.data for c in t.customdata)
    assert ids == list(range(len(sim.events) + len(meas.events)))  # every event of both, findable by a click
    assert compared_event(sim, meas, 0) == sim.events[0]
    assert compared_event(sim, meas, len(sim.events) + 3) == meas.events[3]
    assert list(fig.layout.xaxis.range) == [0, max(e.end for e in sim.events)]  # the span both cover
    words = [a.text for a in fig.layout.annotations]
    assert words == ["<b>simulated</b>", "<b>measured (block 1)</b>"]


def test_barrier_grid_says_parity_buffer_and_arrivals_in_threads_and_warps():
    d = examples.merge_copy()
    layout, smem = barrier_layout(d), smem_layout(d)
    fig = barrier_plot(layout, smem)
    assert sum(len(tr.customdata) for tr in fig.data) == layout.num_barriers == 12
    empty = next(s for s in layout.slots if s.set == "ab.shared_empty" and s.stage == 1)
    text = slot_text(layout, empty, {b.resource: b for b in smem.buffers})
    assert "arrivals per phase: 128 threads = 4 warps" in text
    assert "the producer waits with parity 1, 0, 1 in iterations 1, 5, 9" in text
    a = next(b for b in smem.buffers if b.resource == "smem_a")
    assert f"guards smem_a stage 1: shared bytes {a.offset + 8192}..{a.offset + 2 * 8192 - 1}" in text


def test_html_export_needs_no_network():
    html = to_html(barrier_plot(barrier_layout(examples.merge_copy())))
    import re
    assert not re.search(r"<script[^>]*\bsrc=", html)  # no external script: the library is inlined
    assert len(html) > 1_000_000 and "Plotly.newPlot" in html


def test_a_widget_update_sends_what_changed_and_asks_the_page_to_fit_the_plot():
    """Plotly checks every layout entry it is sent: unchanged ones (fonts, margins) are not sent.  A
    relayout with autosize makes the page size the plot to its pane (plotly.py issue 5208)."""
    from pgstudio.render.interactive import CONFIG, figure_widget, replace_figure, timeline_spec

    small = timeline_spec(simulate(examples.merge_copy(), iterations=2), title=False)
    big = timeline_spec(simulate(examples.fork_gemm_act(), iterations=2, inner=2), title=False)
    widget = figure_widget(small)
    assert all(widget._config[k] == v for k, v in CONFIG.items())
    updates, relayouts = [], []
    widget.observe(lambda c: c["new"] and updates.append(c["new"]), names="_py2js_update")
    widget.observe(lambda c: c["new"] and relayouts.append(c["new"]["relayout_data"]), names="_py2js_relayout")
    replace_figure(widget, big)
    sent = updates[-1]["layout_data"]
    assert sent["height"] == big["layout"]["height"] and not any(k.startswith("font") for k in sent)
    assert relayouts[-1] == {"autosize": True}
    assert sum(len(t.x) for t in widget.data) == sum(len(t["x"]) for t in big["data"])


def test_a_new_widget_is_fitted_once_its_view_has_drawn_it():
    """The first trace report of the widget's view (after its first plot) asks the page to fit
    the plot, once: later reports (every restyle sends one) leave the size alone."""
    from pgstudio.render.interactive import figure_widget, fit_when_drawn, timeline_spec

    widget = figure_widget(timeline_spec(simulate(examples.merge_copy(), iterations=2), title=False))
    relayouts = []
    widget.observe(lambda c: c["new"] and relayouts.append(c["new"]["relayout_data"]), names="_py2js_relayout")
    fit_when_drawn(widget)
    assert relayouts == []  # not before the view has drawn
    report = {"trace_deltas": [{"uid": t.uid} for t in widget.data], "trace_edit_id": widget._last_trace_edit_id}
    widget._js2py_traceDeltas = report
    fitted = list(relayouts)
    assert fitted and fitted[-1] == {"autosize": True}
    widget._js2py_traceDeltas = dict(report)
    assert relayouts == fitted


def test_barrier_grid_has_the_mma_done_slots_and_a_clusters_peers():
    layout = barrier_layout(examples.merge_gemm(cluster=(1, 2)).with_targets("sm_100a"))
    fig = barrier_plot(layout)
    ids = sorted(int(c) for tr in fig.data for c in tr.customdata)
    assert ids == [s.index for s in layout.all_slots] and len(ids) == layout.num_barriers + 1
    assert "tmem_c.mma_done" in fig.layout.yaxis.categoryarray
    done = layout.internal_slots[0]
    text = slot_text(layout, done)
    assert "arrive: mma (tcgen05.commit); wait: mma" in text and "sm_100a generator's own barrier" in text
    shared = slot_text(layout, layout.slot("ab.shared_empty", 0))
    assert "mma + peer mma (mapa)" in shared and "counts the arrivals of 2 blocks of a cluster (1 each)" in shared

"""The timeline picture: one lane per task, blocked intervals exactly where the Timeline has
them, work coloured by stage, arrivals and phase flips, and zooming to a window."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from matplotlib.colors import to_hex  # noqa: E402

from pgstudio.analysis.timeline import ARRIVE, BLOCKED, PHASE_FLIP, WORK, Event, Timeline  # noqa: E402
from pgstudio.render import style  # noqa: E402
from pgstudio.render._shapes import patch_centres, patch_rects  # noqa: E402
from pgstudio.render.timeline import BAR_H, BAR_TOP, blocked_labels, timeline_figure, timeline_svg  # noqa: E402


def _patches(fig, prefix):
    return [p for ax in fig.axes for p in ax.patches if (p.get_gid() or "").startswith(prefix)]


def _boxes(patches):
    """(x0, x1, lane) of every rectangle; bars span lane + BAR_TOP .. lane + BAR_TOP + BAR_H."""
    return [(round(x0, 6), round(x1, 6), round(y0 - BAR_TOP)) for p in patches for x0, x1, y0, _ in patch_rects(p)]


def _lane_texts(fig):
    return {t.get_gid()[5:]: t.get_text() for t in fig.axes[0].texts if (t.get_gid() or "").startswith("lane-")}


def test_one_lane_per_task_with_its_warp_range(hand_timeline):
    tl = hand_timeline()
    fig = timeline_figure(tl)
    lanes = _lane_texts(fig)
    assert list(lanes) == ["load_a", "load_b", "store"]
    assert [label.split("\n")[:2] for label in lanes.values()] == [["load_a", "warp 0"], ["load_b", "warp 1"],
                                                                     ["store", "warps 4..7"]]
    ys = [t.get_position()[1] for t in fig.axes[0].texts if (t.get_gid() or "").startswith("lane-")]
    assert ys == [0, 1, 2]
    for name, label in lanes.items():
        blocked = sum(e.duration for e in tl.blocked(name))
        assert (f"blocked {blocked:.0f} ns" in label) == (blocked > 0)


def test_blocked_intervals_match_the_timeline(hand_timeline):
    tl = hand_timeline()
    assert tl.blocked(), "the hand-built timeline must block somewhere"
    fig = timeline_figure(tl)
    lane = {n: i for i, n in enumerate(tl.lanes)}
    for role in ("full", "empty"):
        want = sorted((round(e.start, 6), round(e.end, 6), lane[e.task]) for e in tl.blocked()
                      if style.role_of(e.barrier) == role)
        assert want, f"the hand-built timeline blocks on {role} barriers too"
        (hatched,) = _patches(fig, f"blocked-{role}")
        assert sorted(_boxes([hatched])) == want
        assert hatched.get_hatch() == "////"
        assert to_hex(hatched.get_edgecolor()) == style.ROLE[role].lower()


def test_blocked_labels_name_the_barrier_where_they_fit(hand_timeline):
    tl = hand_timeline()
    zoomed = timeline_figure(tl, iterations=(2, 3), width=14)
    texts = [t.get_text() for t in zoomed.axes[0].texts]
    windowed = tl.window(2, 3).blocked()
    assert windowed
    for e in windowed:
        assert any(t in texts for t in blocked_labels(e)), f"no label for {e}"
    e = windowed[0]
    assert blocked_labels(e)[0] == f"{e.barrier}[{e.stage}]"


def test_work_bars_are_coloured_by_stage(hand_timeline):
    tl = hand_timeline(stages=3)
    fig = timeline_figure(tl)
    lane = {n: i for i, n in enumerate(tl.lanes)}
    colour_of = {}
    for p in _patches(fig, "work-"):
        for box in _boxes([p]):
            colour_of[box] = to_hex(p.get_facecolor())
    events = [e for e in tl.events if e.kind == WORK]
    assert len(colour_of) == len(events)
    for e in events:
        assert colour_of[(round(e.start, 6), round(e.end, 6), lane[e.task])] == style.stage_colour(e.stage).lower()


def test_overlapping_work_in_one_lane_is_stacked():
    copies = [Event("load.tma", "copy", WORK, 10.0 * k, 10.0 * k + 35.0, stage=k % 4, iteration=k) for k in range(6)]
    fig = timeline_figure(Timeline.from_events("x", copies))
    rects = sorted(r for p in _patches(fig, "work-") for r in patch_rects(p))
    assert len(rects) == 6
    rows = {round(y0, 6) for _, _, y0, _ in rects}
    assert len(rows) == 4  # at most four copies are in flight at once
    heights = {round(y1 - y0, 6) for _, _, y0, y1 in rects}
    assert heights == {round(BAR_H / 4, 6)}
    for a in rects:  # no two bars overlap
        for b in rects:
            if a < b and a[2] == b[2]:
                assert a[1] <= b[0]


def test_arrivals_and_phase_flips_are_marked(hand_timeline):
    tl = hand_timeline()
    fig = timeline_figure(tl)
    lane = {n: i for i, n in enumerate(tl.lanes)}
    for role in ("full", "empty"):
        (arrows,) = _patches(fig, f"arrivals-{role}")
        want = sorted((e.start, lane[e.task]) for e in tl.events
                      if e.kind == ARRIVE and style.role_of(e.barrier) == role)
        got = sorted((round(x, 6), round(y + 0.37)) for x, y in patch_centres(arrows, 3))
        assert got == [(round(x, 6), y) for x, y in want]
    flip_events = [e for e in tl.events if e.kind == PHASE_FLIP]
    rows = [t.get_text() for t in fig.axes[1].texts if (t.get_gid() or "").startswith("fliprow-")]
    assert rows == list(dict.fromkeys(e.barrier for e in flip_events))
    drawn = {}
    for p in _patches(fig, "flips-"):
        for x, y in patch_centres(p, 4):
            drawn[(round(x, 6), round(y))] = (to_hex(p.get_facecolor()), to_hex(p.get_edgecolor()))
    assert len(drawn) == len(flip_events)
    for e in flip_events:
        face = style.stage_colour(e.stage).lower() if e.phase == 1 else "#ffffff"
        assert drawn[(round(e.start, 6), rows.index(e.barrier))] == (face, style.role_colour(e.barrier).lower())


def test_zoom_to_a_window_of_iterations(hand_timeline):
    tl = hand_timeline(iterations=8)
    fig = timeline_figure(tl, iterations=(3, 4))
    kept = [e for e in tl.events if 3 <= e.iteration <= 4]
    assert len(_boxes(_patches(fig, "work-"))) == sum(1 for e in kept if e.kind == WORK)
    lo, hi = fig.axes[0].get_xlim()
    assert lo <= min(e.start for e in kept) and hi >= max(e.end for e in kept)
    assert hi - lo < 0.5 * tl.end
    assert "iterations 3..4" in fig.texts[0].get_text()


def test_zoom_to_a_time_span(hand_timeline):
    tl = hand_timeline(iterations=8)
    fig = timeline_figure(tl, time=(100.0, 200.0))
    assert fig.axes[0].get_xlim()[0] < 100.0 < 200.0 < fig.axes[0].get_xlim()[1]
    inside = [e for e in tl.events if e.kind == WORK and e.end >= 100.0 and e.start <= 200.0]
    assert len(_boxes(_patches(fig, "work-"))) == len(inside)


def test_legend_explains_stages_blocking_and_markers(hand_timeline):
    fig = timeline_figure(hand_timeline())
    labels = [t.get_text() for t in fig.texts if (t.get_gid() or "").startswith("legend-")]
    assert "stage 0 work" in labels and "stage 1 work" in labels
    assert any(t.startswith("blocked on full") for t in labels)
    assert any(t.startswith("blocked on empty") for t in labels)
    assert "arrive on full" in labels and any(t.startswith("phase flip") for t in labels)


def test_empty_and_instant_only_timelines_draw():
    assert "<svg" in timeline_svg(Timeline("nothing", ()))
    only = Timeline.from_events("x", [Event("t", "arrive", ARRIVE, 5.0, 5.0, barrier="r.full", stage=0, iteration=0)],
                                [("t", 0, 1)])
    assert "<svg" in timeline_svg(only)
    blocked_only = Timeline.from_events("x", [Event("t", "blocked", BLOCKED, 0.0, 10.0, barrier="r.empty", stage=1,
                                                    iteration=0)])
    fig = timeline_figure(blocked_only)
    assert _boxes(_patches(fig, "blocked-empty")) == [(0.0, 10.0, 0)]


def test_a_deadlock_or_a_witness_says_what_went_wrong_in_its_own_units(hand_timeline):
    tl = hand_timeline(iterations=2)
    plain = timeline_figure(tl)
    assert not [t for t in plain.texts if t.get_gid() == "problem"]
    stuck = Timeline(tl.design, tl.events, tl.tasks, "simulated",
                     (("status", "deadlock"), ("stuck", ("load_a: acquire (wait ab.shared_empty[0])",))))
    (line,) = [t for t in timeline_figure(stuck).texts if t.get_gid() == "problem"]
    assert line.get_text() == "DEADLOCK: load_a: acquire (wait ab.shared_empty[0])"
    assert to_hex(line.get_color()) == style.SEVERITY["error"].lower()
    witness = Timeline(tl.design, tl.events, tl.tasks, "witness",
                       (("unit", "step"), ("violation", "deadlock"), ("message", "task 'store' waits forever")))
    fig = timeline_figure(witness)
    (line,) = [t for t in fig.texts if t.get_gid() == "problem"]
    assert line.get_text() == "DEADLOCK: task 'store' waits forever"
    assert fig.axes[-1].get_xlabel() == "time (steps)"
    assert "blocked" in _lane_texts(fig)["store"] and _lane_texts(fig)["store"].endswith("steps")

"""A ``Timeline`` (simulated, measured, or a checker's witness) as a picture (matplotlib).

* one lane per task, labelled with its warp range and the time it spent blocked; a copy lane
  (``<task>.tma``) stacks the bulk copies in flight on sub-rows;
* work (load / store / mma / read) is a bar in the colour of its pipeline stage, the same
  stage colours as the barrier picture;
* barrier operations (acquire, commit, wait, release) are thin grey ticks under the work;
* time spent **blocked** is hatched in the colour of the barrier's role (full blue: a consumer
  waiting for data; empty orange: a producer waiting for a free stage) and labelled with the
  barrier set and stage it waits on, where the bar is wide enough;
* arrivals are small triangles above the bars of the task that arrived;
* a lower panel has one row per barrier set with a diamond at each phase flip: face in the
  stage colour when phase 1 completed, white for phase 0;
* a deadlock (simulator) or a violation (checker witness) is stated in red under the title;
  a witness counts steps instead of nanoseconds and the axes say so.

``iterations=(first, last)`` zooms onto a window of iterations; ``time=(t0, t1)`` onto a span.
"""

from __future__ import annotations

from typing import Any

from . import _figure, _legend, _shapes, style

__all__ = [
    "WIDTH_IN",
    "TITLE_IN",
    "FS",
    "units",
    "problem",
    "blocked_labels",
    "sub_rows",
    "MAX_LABELS",
    "MAX_FLIP_ROWS",
    "timeline_figure",
    "timeline_svg",
]

LANE_IN, FLIP_ROW_IN = 0.62, 0.2
WIDTH_IN = 11.0
TITLE_IN = 0.55
FS = 7.0


def units(timeline: Any) -> str:
    """The time unit of a timeline: ns (simulated, measured) or steps (a checker witness)."""
    unit = str(dict(timeline.meta).get("unit", "ns"))
    return {"step": "steps"}.get(unit, unit)


def problem(timeline: Any) -> str:
    """What went wrong in this run, in one line ("" when nothing did)."""
    meta = dict(timeline.meta)
    if meta.get("status") == "deadlock":
        stuck = list(meta.get("stuck", ()))
        return "DEADLOCK: " + ("; ".join(stuck[:3]) + (" ..." if len(stuck) > 3 else "") if stuck else "stuck")
    if meta.get("violation"):
        return f"{str(meta['violation']).upper()}: {meta.get('message', '')}"
    return ""


def _lane_label(name: str, tasks: dict, blocked_ns: float | None = None, unit: str = "ns") -> str:
    lines = [name]
    if name in tasks:
        warp, n = tasks[name]
        lines.append(f"warp {warp}" if n == 1 else f"warps {warp}..{warp + n - 1}")
    if blocked_ns:
        lines.append(f"blocked {blocked_ns:.0f} {unit}")
    return "\n".join(lines)


def _fits(text: str, span_in: float, fontsize: float = FS) -> bool:
    return _figure.text_width_in(text, fontsize) + 0.04 <= span_in


def blocked_labels(event: Any) -> list[str]:
    """Labels for a blocked interval, longest first: set and stage, label and stage, role and stage."""
    if not event.barrier:
        return []
    at = f"[{event.stage}]" if event.stage >= 0 else ""
    label = event.barrier.rsplit(".", 1)[-1]
    return list(dict.fromkeys([f"{event.barrier}{at}", f"{label}{at}", f"{style.role_of(event.barrier)}{at}"]))


def _blocked_label(event: Any, span_in: float) -> str:
    for text in blocked_labels(event):
        if _fits(text, span_in, FS - 0.5):
            return text
    return ""


def _legend_items(stages: int, flips: bool) -> list[tuple[str, dict]]:
    items = [(f"stage {s} work", {"facecolor": style.stage_colour(s), "edgecolor": style.MUTED})
             for s in range(min(stages, len(style.STAGES)))]
    items += [("blocked on full (waits for data)", {"facecolor": "white", "edgecolor": style.ROLE["full"],
                                                    "hatch": "////"}),
              ("blocked on empty (waits for a free stage)", {"facecolor": "white", "edgecolor": style.ROLE["empty"],
                                                             "hatch": "////"}),
              ("barrier op (acquire, commit, wait, release)", {"facecolor": style.SYNC, "edgecolor": style.SYNC}),
              ("arrive on full", {"marker": "v", "color": style.ROLE["full"], "markersize": 6}),
              ("arrive on empty", {"marker": "v", "color": style.ROLE["empty"], "markersize": 6})]
    if flips:
        items += [("phase flip to 1 (filled) / 0 (hollow)", {"marker": "D", "markerfacecolor": style.stage_colour(0),
                                                              "markeredgecolor": style.INK, "markersize": 5})]
    return items


def _row_labels(ax: Any, labels: list[str], gids: list[str], fontsize: float, colours: list[str] | None = None) -> None:
    """Row labels left of the axes: plain texts (much cheaper to draw than tick labels)."""
    from matplotlib.transforms import blended_transform_factory

    trans = blended_transform_factory(ax.transAxes, ax.transData)
    for i, (label, gid) in enumerate(zip(labels, gids)):
        ax.text(-0.008, i, label, transform=trans, ha="right", va="center", fontsize=fontsize,
                color=colours[i] if colours else style.INK, gid=gid)
    ax.yaxis.set_visible(False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _time_grid(axes: list, t0: float, t1: float, unit: str = "ns") -> None:
    """Vertical grid lines at round times on every panel, drawn as one line collection each
    (tick-based grids create several artists per tick); only the bottom panel keeps its x axis."""
    from matplotlib.ticker import MaxNLocator

    ticks = [t for t in MaxNLocator(nbins=10).tick_values(t0, t1) if t0 <= t <= t1]
    for i, ax in enumerate(axes):
        lo, hi = sorted(ax.get_ylim())
        ax.vlines(ticks, lo, hi, colors="#EAECEE", linewidths=0.6, zorder=0)
        if i < len(axes) - 1:
            ax.xaxis.set_visible(False)
            ax.spines["bottom"].set_visible(False)
        else:
            ax.set_xticks(ticks)
            ax.set_xlabel(f"time ({unit})", fontsize=8)
            ax.tick_params(axis="x", labelsize=7.5)


def sub_rows(events: list) -> tuple[dict[int, int], int]:
    """Overlapping intervals of one lane (copies in flight) on stacked sub-rows: greedy, first
    free row.  Returns ({index in events: sub-row}, number of sub-rows)."""
    ends: list[float] = []
    where: dict[int, int] = {}
    for i in sorted(range(len(events)), key=lambda i: (events[i].start, events[i].end)):
        e = events[i]
        for r, end in enumerate(ends):
            if end <= e.start:
                ends[r] = e.end
                where[i] = r
                break
        else:
            where[i] = len(ends)
            ends.append(e.end)
    return where, max(len(ends), 1)


#: Most labels one timeline draws (each costs about half a millisecond to lay out); zoom for more.
MAX_LABELS = 50
#: Barrier sets that get a row of phase flips (a 250-resource design has hundreds of sets; a
#: picture of that many rows is neither readable nor cheap to draw).
MAX_FLIP_ROWS = 32
BAR_TOP, BAR_H = -0.3, 0.45


def _draw_lanes(ax: Any, events: tuple, row: dict[str, int], ns_per_in: float) -> None:
    """Work, barrier ops, blocked intervals and arrivals, one compound patch per colour.

    SVG ids: ``work-<k>`` (one per stage colour), ``sync``, ``blocked-full`` / ``blocked-empty``,
    ``arrivals``.  Work that overlaps in one lane (copies in flight) is stacked on sub-rows.
    Labels go where they fit without touching another label, blocked ones first, at most
    ``MAX_LABELS``.
    """
    from ..analysis.timeline import ARRIVE, BLOCKED, SYNC, WORK

    work: dict[str, list] = {}
    blocked: dict[str, list] = {"full": [], "empty": []}
    sync: list = []
    arrivals: dict[str, list] = {"full": [], "empty": []}
    labels: list[tuple[int, str, Any, float, float]] = []  # (priority, lane, event, y, bar height)
    by_lane: dict[str, list] = {}
    for e in events:
        if e.task in row and e.kind == WORK:
            by_lane.setdefault(e.task, []).append(e)
    placed = {lane: sub_rows(evs) for lane, evs in by_lane.items()}
    for lane, evs in by_lane.items():
        where, n = placed[lane]
        h = BAR_H / n
        for i, e in enumerate(evs):
            y = row[lane] + BAR_TOP + where[i] * h
            work.setdefault(style.stage_colour(e.stage), []).append((e.start, y, max(e.duration, 0.0), h))
            if n == 1:
                labels.append((1, lane, e, y + h / 2, h))
    for e in events:
        if e.task not in row:
            continue
        y = row[e.task]
        if e.kind == SYNC:
            sync.append((e.start, y + 0.2, max(e.duration, ns_per_in * 0.01), 0.12))
        elif e.kind == BLOCKED:
            blocked[style.role_of(e.barrier or "full")].append((e.start, y + BAR_TOP, e.duration, BAR_H))
            labels.append((0, e.task, e, y + BAR_TOP + BAR_H / 2, BAR_H))
        elif e.kind == ARRIVE:
            arrivals[style.role_of(e.barrier or "full")].append((e.start, y - 0.37))
    for k, (face, rects) in enumerate(work.items()):
        _shapes.add_rects(ax, rects, facecolor=face, edgecolor=style.MUTED, linewidth=0.5, gid=f"work-{k}")
    if sync:
        _shapes.add_rects(ax, sync, facecolor=style.SYNC, edgecolor="none", gid="sync")
    for role, rects in blocked.items():
        if rects:
            _shapes.add_rects(ax, rects, facecolor="white", edgecolor=style.ROLE[role], hatch="////",
                              linewidth=0.8, gid=f"blocked-{role}")
    for role, points in arrivals.items():  # a down-pointing triangle 0.07 in wide above the bars
        if points:
            _shapes.add_markers(ax, points, "v", 0.07 * ns_per_in, -0.12, facecolor=style.ROLE[role],
                                edgecolor="none", zorder=3, gid=f"arrivals-{role}")
    _draw_labels(ax, labels, ns_per_in)


def _draw_labels(ax: Any, labels: list, ns_per_in: float) -> None:
    """Place labels inside their bars, never overlapping one another in a lane."""
    from ..analysis.timeline import BLOCKED

    taken: dict[str, list[tuple[float, float]]] = {}
    backs: list[tuple[float, float, float, float]] = []  # white boxes behind labels on hatching
    drawn = 0
    for _, lane, e, y, _h in sorted(labels, key=lambda t: (t[0], t[2].start)):
        if drawn >= MAX_LABELS:
            break
        span_in = e.duration / ns_per_in
        if e.kind == BLOCKED:
            text, fs = _blocked_label(e, span_in), FS - 0.5
        else:
            text, fs = (e.op if e.iteration < 0 else f"{e.op} {e.iteration}"), FS
            text = text if _fits(text, span_in, fs) else ""
        if not text:
            continue
        mid = e.start + e.duration / 2
        half = (_figure.text_width_in(text, fs) / 2 + 0.03) * ns_per_in
        if any(lo < mid + half and mid - half < hi for lo, hi in taken.get(lane, ())):
            continue
        taken.setdefault(lane, []).append((mid - half, mid + half))
        colour = style.INK
        if e.kind == BLOCKED:
            colour = style.role_colour(e.barrier)
            backs.append((mid - half + 0.01 * ns_per_in, y - 0.13, 2 * half - 0.02 * ns_per_in, 0.26))
        ax.text(mid, y, text, ha="center", va="center", fontsize=fs, color=colour, zorder=4)
        drawn += 1
    if backs:  # one patch for all of them: a text bbox each costs more than the text
        _shapes.add_rects(ax, backs, facecolor="white", edgecolor="none", alpha=0.85, zorder=3.5, gid="label-backs")


def _draw_flips(fax: Any, events: tuple, flip_sets: list[str], ns_per_in: float, left_out: int = 0) -> None:
    """One row per barrier set, a diamond at each phase flip: face in the stage colour when
    phase 1 completed, white for phase 0; edge in the role colour.  SVG ids ``flips-<k>``.
    ``left_out``: sets past ``MAX_FLIP_ROWS`` that the title says are not drawn."""
    from ..analysis.timeline import PHASE_FLIP

    frow = {b: i for i, b in enumerate(flip_sets)}
    groups: dict[tuple[str, str], list] = {}
    for e in events:
        if e.kind == PHASE_FLIP and e.barrier in frow:
            face = style.stage_colour(e.stage) if e.phase == 1 else "#FFFFFF"
            groups.setdefault((face, style.role_colour(e.barrier)), []).append((e.start, frow[e.barrier]))
    for k, ((face, edge), points) in enumerate(groups.items()):
        _shapes.add_markers(fax, points, "D", 0.1 * ns_per_in, 0.1 / FLIP_ROW_IN, facecolor=face, edgecolor=edge,
                            linewidth=1.0, zorder=3, gid=f"flips-{k}")
    fax.set_ylim(len(flip_sets) - 0.5, -0.5)
    _row_labels(fax, flip_sets, [f"fliprow-{b}" for b in flip_sets], 6.5, [style.role_colour(b) for b in flip_sets])
    more = f" (the first {len(flip_sets)}; {left_out} more sets not drawn)" if left_out else ""
    fax.set_title(f"phase flips per barrier set{more}", fontsize=7.5, color=style.MUTED, loc="left", pad=2)


def _titles(fig: Any, timeline: Any, events: tuple, lanes: int, iterations: Any, time: Any) -> None:
    """Title, a line of numbers, and in red what went wrong (a deadlock, a checker violation)."""
    from ..analysis.timeline import BLOCKED

    fh = fig.get_figheight()
    unit = units(timeline)
    window = f", iterations {iterations[0]}..{iterations[1]}" if iterations else ""
    fig.text(0.01, 1 - 0.08 / fh, f"{timeline.design}: {timeline.source} timeline{window}", ha="left", va="top",
             fontsize=11, fontweight="bold", color=style.INK)
    blocked = sum(e.duration for e in events if e.kind == BLOCKED)
    where = "in this window" if (window or time) else "in all"
    sub = (f"{lanes} lanes, {timeline.iterations} iterations, {timeline.end:.0f} {unit}; steady-state period "
           f"{timeline.period():.1f} {unit} per iteration; {blocked:.0f} {unit} blocked {where}; "
           "hatched labels name the barrier set [stage] waited on")
    fig.text(0.01, 1 - 0.32 / fh, sub, ha="left", va="top", fontsize=7.5, color=style.MUTED)
    wrong = problem(timeline)
    if wrong:
        room = int((fig.get_figwidth() - 0.2) / _figure.text_width_in("x", 8))
        wrong = wrong if len(wrong) <= room else wrong[:room - 3] + "..."
        fig.text(0.01, 1 - 0.52 / fh, wrong, ha="left", va="top", fontsize=8, fontweight="bold",
                 color=style.SEVERITY["error"], gid="problem")


def timeline_figure(timeline: Any, *, iterations: tuple[int, int] | None = None,
                    time: tuple[float, float] | None = None, width: float = WIDTH_IN, flips: bool = True) -> Any:
    """Draw ``timeline``; see the module docstring.  Lane labels have SVG ids ``lane-<task>``."""
    from ..analysis.timeline import BLOCKED, PHASE_FLIP

    tl = timeline.window(*iterations) if iterations is not None else timeline
    lanes = list(tl.lanes) or list(timeline.lanes)
    tasks = {name: (warp, n) for name, warp, n in timeline.tasks}
    events = tl.events
    if time is not None:
        events = tuple(e for e in events if e.end >= time[0] and e.start <= time[1])
    flip_sets = list(dict.fromkeys(e.barrier for e in events if e.kind == PHASE_FLIP and e.barrier)) if flips else []
    flips_left_out = max(0, len(flip_sets) - MAX_FLIP_ROWS)  # a large design: the first sets, and how many more
    flip_sets = flip_sets[:MAX_FLIP_ROWS]
    t0 = time[0] if time else min((e.start for e in events), default=0.0)
    t1 = time[1] if time else max((e.end for e in events), default=1.0)
    if t1 <= t0:
        t1 = t0 + 1.0
    pad = (t1 - t0) * 0.01

    items = _legend_items(max((e.stage + 1 for e in tl.events), default=0), bool(flip_sets))
    legend_in = _legend.legend_height(items, width)
    lanes_in = max(len(lanes), 1) * LANE_IN
    flips_in = (len(flip_sets) * FLIP_ROW_IN + 0.35) if flip_sets else 0.0
    axis_in = 0.45
    title_in = TITLE_IN + (0.22 if problem(timeline) else 0.0)
    unit = units(timeline)
    fig = _figure.new_figure(width, title_in + lanes_in + flips_in + axis_in + legend_in)
    fh = fig.get_figheight()
    label_lines = [line for n in lanes for line in _lane_label(n, tasks, 1e6, unit).split("\n")]
    label_in = max([_figure.text_width_in(line, 8) for line in label_lines]
                   + [_figure.text_width_in(b, 6.5) for b in flip_sets] + [0.8]) + 0.25
    left, right = label_in / width, 1 - 0.2 / width
    ns_per_in = (t1 - t0 + 2 * pad) / ((right - left) * width)
    bottom = (legend_in + axis_in) / fh

    ax = fig.add_axes((left, bottom + flips_in / fh, right - left, lanes_in / fh))
    ax.set_xlim(t0 - pad, t1 + pad)
    ax.set_ylim(max(len(lanes), 1) - 0.5, -0.5)
    if not events:
        ax.text(0.5, 0.5, "no events in this window", transform=ax.transAxes, ha="center", va="center",
                fontsize=9, color=style.MUTED)
    lane_blocked = dict.fromkeys(lanes, 0.0)
    for e in events:
        if e.kind == BLOCKED and e.task in lane_blocked:
            lane_blocked[e.task] += e.duration
    _row_labels(ax, [_lane_label(n, tasks, lane_blocked[n], unit) for n in lanes], [f"lane-{n}" for n in lanes], 8)
    if len(lanes) > 1:  # lane separators: one artist for all
        ax.hlines([i - 0.5 for i in range(1, len(lanes))], t0 - pad, t1 + pad, colors="#D5D8DC", linewidths=0.6)
    _draw_lanes(ax, events, {name: i for i, name in enumerate(lanes)}, ns_per_in)

    panels = [ax]
    if flip_sets:
        fax = fig.add_axes((left, bottom, right - left, (len(flip_sets) * FLIP_ROW_IN) / fh), sharex=ax)
        _draw_flips(fax, events, flip_sets, ns_per_in, flips_left_out)
        panels.append(fax)
    _time_grid(panels, t0 - pad, t1 + pad, unit)

    _titles(fig, timeline, events, len(lanes), iterations, time)
    _legend.add_legend(fig, items)
    return fig


def timeline_svg(timeline: Any, **kwargs: Any) -> str:
    """The timeline picture as SVG text (what a notebook shows for a ``Timeline``)."""
    return _figure.to_svg(timeline_figure(timeline, **kwargs))

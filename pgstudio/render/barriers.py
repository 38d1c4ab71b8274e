"""The barrier layout as a picture: mbarrier slots in shared-memory order (matplotlib).

One row per owner (a group, or an ungrouped resource), read left to right, top to bottom, in
shared-memory order; a long owner wraps onto continuation rows at set boundaries::

    ab (Merge)    arrive: load_a   arrive: load_b   arrive: mma
                  wait: mma        wait: mma        wait: load_a, load_b
                  full_0 x4        full_1 x4        shared_empty x4
                  [s0][s1][s2][s3] [s0][s1][s2][s3] [s0][s1][s2][s3]
                  0   8   16  24   32 ...                              (byte offsets)
                  guards smem_a    guards smem_b    guards smem_a, smem_b
    data          smem_a [0K, 16K)[16K, 32K)...  smem_b [64K, 96K)...   (stage buffers)

Each cell is one 8-byte mbarrier: its stage (cell colour, the same stage colours as the
timeline), the init arrive count in threads and in warps, the transaction bytes it expects per
phase, the iterations that use the stage and the parity their waits pass on (``_slots``); its
border is the role colour (full blue, empty orange).  Under each set, which resources it guards;
for a design, a strip per shared-memory buffer shows each stage's bytes in the same stage colour,
so "stage 1 of full_0" and "bytes [16K, 32K) of smem_a" read as one thing.
``comparison_figure`` puts a design above its ``ungrouped`` twin and says how many barriers the
grouping saves.

A layout of more than ``COMPACT_SLOTS`` slots (a design of a hundred resources has a thousand) is
drawn compact: cells in stage and role colours without per-cell text, one label per set with its
arrive count and tx bytes, the byte offset of each row's first cell; its comparison shows the two
strips on one scale.  Per-cell text at that size is neither readable nor cheap (each text costs
about a millisecond to draw): the layout table (``BarrierLayout.table()``) has every number.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any

from ..model.protocol import PipelineGroupMode
from . import _figure, _legend, _shapes, _slots, style

__all__ = [
    "CELL_IN",
    "CELL_H",
    "SET_GAP",
    "BUF_H",
    "COMPACT_SLOTS",
    "COMPACT_CELLS",
    "owner_kind",
    "CAPTION",
    "COMPACT_CAPTION",
    "STRIPS_CAPTION",
    "MINI",
    "barrier_figure",
    "comparison_figure",
    "layout_svg",
]

CELL_IN = 0.86  # inches per cell (and per vertical unit)
CELL_H = 1.18
FS_CELL, FS_SET, FS_TASK, FS_OFFSET, FS_ROW = 7.0, 8.5, 7.5, 6.5, 9.5
SET_GAP = 0.22
BUF_H = 0.36  # height of a buffer-stage cell, in units
#: Past this many slots a layout is drawn compact (see the module docstring).
COMPACT_SLOTS = 160
#: Cells per row of a compact picture.
COMPACT_CELLS = 48


def _chars(n: int, fontsize: float) -> float:
    """Width of n characters in cell units."""
    return n * fontsize * _figure.CHAR_IN_PER_PT / CELL_IN


def _task_lines(s: Any) -> tuple[str, str]:
    arrive = f"arrive: {_slots.arrivers_text(s)}" if s.arrivers else ""
    wait = f"wait: {', '.join(s.waiters)}" if s.waiters else ""
    return arrive, wait


def _set_label(s: Any, compact: bool = False) -> str:
    blocks = f" ({s.peers} blocks)" if s.peers > 1 else ""
    if compact:
        tx = f" tx {style.fmt_bytes(s.tx_bytes)}" if s.tx_bytes else ""
        return f"{s.label} x{s.stages} n{s.init_count}{tx}{blocks}"
    return f"{s.label} x{s.stages}{blocks}"


def _guards(s: Any) -> str:
    return f"guards {', '.join(s.members)}"


def _cell_text(slot: Any, bset: Any) -> str:
    """Stage; arrive count in threads, then in warps; tx bytes; the iterations that use the stage
    and the parity their waits pass on (rounds 0, 1, 2)."""
    tx = style.fmt_bytes(slot.tx_bytes) if slot.tx_bytes else "0"
    its = ",".join(map(str, _slots.iterations(bset.stages, slot.stage)))
    pars = ",".join(map(str, _slots.parities(bset.role)))
    return (f"stage {slot.stage}\narrive {slot.arrive_count}\n({style.fmt_warps(slot.arrive_count)})\ntx {tx}\n"
            f"iters {its}\nparity {pars}")


def owner_kind(sets: list) -> str:
    """What an owner is, read off its sets (a layout needs no design for this): the group mode
    whose shared barriers (per the protocol table) are exactly the owner's shared sets; a row of
    a generator's own barriers (sm_100a ``mma_done``) says whose."""
    archs = {s.arch for s in sets}
    if "" not in archs:
        return f"{', '.join(sorted(archs))} generator"
    shared = {s.role for s in sets if s.shared}
    for mode in PipelineGroupMode:
        if shared and shared == set(mode.shared_barriers):
            return f"{mode} group"
    return "ungrouped"


@dataclass
class _Row:
    owner: str
    kind: str
    cont: bool
    sets: list = field(default_factory=list)  # (BarrierSet, x of its first cell)
    width: float = 0.0
    buffers: list = field(default_factory=list)  # (label, Buffer, x of its first cell), on the owner's last row


def _buffer_label(buf: Any) -> str:
    return f"{buf.resource}" + (f" (view of {buf.alias_of})" if buf.alias_of else "")


def _place_buffers(row: _Row, members: list[str], buffers: dict) -> None:
    """The owner's data buffers, left to right under its last row of sets."""
    x = 0.0
    for m in members:
        buf = _slots.buffer_of(buffers, m)
        if buf is None:
            continue
        label = _buffer_label(buf)
        lw = _chars(len(label), FS_TASK) + 0.15
        row.buffers.append((label, buf, x + lw))
        x += lw + buf.stages + SET_GAP * 2
    row.width = max(row.width, x)


def _plan(layout: Any, max_cells: int, buffers: dict | None = None, compact: bool = False) -> list[_Row]:
    """Rows of positioned sets: a new row per owner, wrapped at set boundaries past max_cells
    (``compact``: set labels only; no task, guard or buffer lines)."""
    by_owner: dict[str, list] = {}
    for s in layout.all_sets:  # a generator's own barriers (sm_100a mma_done) on a row of their own
        by_owner.setdefault(s.owner + (f" [{s.arch}]" if s.arch else ""), []).append(s)
    rows: list[_Row] = []
    for owner, sets in by_owner.items():
        row = _Row(owner, owner_kind(sets), False)
        cells = 0
        x = 0.0
        for s in sets:
            if row.sets and cells + s.stages > max_cells:
                row.width = x
                rows.append(row)
                row, cells, x = _Row(owner, row.kind, True), 0, 0.0
            arrive, wait = _task_lines(s) if not compact else ("", "")
            need = max(_chars(len(_set_label(s, compact)), FS_SET), _chars(len(arrive), FS_TASK),
                       _chars(len(wait), FS_TASK), 0.0 if compact else _chars(len(_guards(s)), FS_TASK))
            pad = max(0.0, (need - s.stages) / 2) + SET_GAP / 2
            row.sets.append((s, x + pad))
            x += s.stages + 2 * pad
            cells += s.stages
        row.width = x
        if buffers and not compact:
            _place_buffers(row, list(dict.fromkeys(m for s in sets for m in s.members)), buffers)
        rows.append(row)
    return rows


def _row_height(with_tasks: bool, row: _Row | None = None) -> float:
    buffers = BUF_H + 0.4 if row is not None and row.buffers else 0.0
    return (0.5 if with_tasks else 0.0) + 0.42 + CELL_H + 0.5 + buffers


def _label_width(rows: list[_Row]) -> float:
    longest = max((max(len(r.owner), len(r.kind) + 2) for r in rows), default=8)
    return _chars(longest, FS_ROW) + 0.35


def _draw_buffers(ax: Any, row: _Row, x0: float, y: float, panel: str, cells: dict) -> None:
    """The owner's stage buffers at height y (top): a label, then one cell per stage with its
    byte range, in the stage colour (``buffer-<resource>-<stage>`` ids)."""
    ax.text(x0 - 0.2, y - BUF_H / 2, "data", ha="right", va="center", fontsize=FS_ROW - 1.5, color=style.MUTED)
    for label, buf, bx in row.buffers:
        x = x0 + bx
        ax.text(x - 0.08, y - BUF_H / 2, label, ha="right", va="center", fontsize=FS_TASK, color=style.INK,
                gid=f"{panel}buffer-{buf.resource}")
        for stage in range(buf.stages):
            cells.setdefault((style.stage_colour(stage), style.MUTED), []).append((x + stage, y - BUF_H, 1.0, BUF_H))
            ax.text(x + stage + 0.5, y - BUF_H / 2, _slots.fmt_range(*buf.stage_range(stage)), ha="center",
                    va="center", fontsize=FS_OFFSET, color=style.INK, gid=f"{panel}buffer-{buf.resource}-{stage}")


def _draw_rows(ax: Any, layout: Any, rows: list[_Row], top: float, label_w: float, panel: str = "",
               compact: bool = False) -> float:
    """Draw the rows from y = top downwards; return the y below the last row.

    Artists carry SVG ids (``gid``) prefixed by ``panel``: ``slots-<k>`` (the cells, one patch
    per stage and role colour), ``slot-<i>`` (a cell's text), ``offset-<i>``, ``set-<name>``,
    ``tasks-<name>`` (its arrive and wait lines), ``guards-<name>``, ``row-<owner>``,
    ``buffer-<resource>`` and ``buffer-<resource>-<stage>`` (a data buffer and its stages).
    ``compact``: no cell texts, no task or guard lines, one offset per row (see the module docstring)."""

    with_tasks = not compact and any(s.arrivers or s.waiters for s in layout.all_sets)
    from matplotlib.collections import LineCollection

    cells: dict[tuple[str, str], list] = {}  # (face, edge) -> rectangles
    buffer_cells: dict[tuple[str, str], list] = {}
    lines: dict[tuple[str, float], list] = {}  # (colour, width) -> brackets and offset axes
    y = top
    for row in rows:
        rh = _row_height(with_tasks, row)
        cells_top = y - (0.5 if with_tasks else 0.0) - 0.42
        mid = cells_top - CELL_H / 2
        name = row.owner + (" (cont.)" if row.cont else "")
        ax.text(label_w - 0.2, mid + 0.12, name, ha="right", va="center", fontsize=FS_ROW, fontweight="bold",
                color=style.INK, gid=f"{panel}row-{row.owner}")
        ax.text(label_w - 0.2, mid - 0.16, row.kind, ha="right", va="center", fontsize=FS_ROW - 1.5,
                color=style.MUTED)
        for s, x0 in row.sets:
            x = label_w + x0
            colour = style.role_colour(s.role)
            cx = x + s.stages / 2
            # bracket and set label
            by = cells_top + 0.1
            lines.setdefault((colour, 2.2 if s.shared else 1.2), []).append(
                [(x + 0.03, by - 0.06), (x + 0.03, by), (x + s.stages - 0.03, by), (x + s.stages - 0.03, by - 0.06)])
            ax.text(cx, by + 0.05, _set_label(s, compact), ha="center", va="bottom", fontsize=FS_SET,
                    fontweight="bold", color=colour, gid=f"{panel}set-{s.name}")
            if with_tasks:
                # one text for both lines: each text object costs as much to draw as its lines
                ax.text(cx, by + 0.29, "\n".join(_task_lines(s)), ha="center", va="bottom", fontsize=FS_TASK,
                        color=style.INK, linespacing=1.35, gid=f"{panel}tasks-{s.name}")
            for stage in range(s.stages):
                slot = layout.all_slots[s.first + stage]
                key = (style.stage_colour(slot.stage), colour)
                cells.setdefault(key, []).append((x + stage, cells_top - CELL_H, 1.0, CELL_H))
                if compact and (stage or s is not row.sets[0][0]):
                    continue
                if not compact:
                    ax.text(x + stage + 0.5, cells_top - CELL_H / 2, _cell_text(slot, s), ha="center", va="center",
                            fontsize=FS_CELL, color=style.INK, linespacing=1.2, gid=f"{panel}slot-{slot.index}")
                ax.text(x + stage + 0.04, cells_top - CELL_H - 0.06, str(slot.offset), ha="left", va="top",
                        fontsize=FS_OFFSET, color=style.MUTED, gid=f"{panel}offset-{slot.index}")
            if not compact:
                ax.text(cx, cells_top - CELL_H - 0.3, _guards(s), ha="center", va="top", fontsize=FS_TASK,
                        color=style.MUTED, gid=f"{panel}guards-{s.name}")
            # the byte-offset axis under the cells
            axis_y = cells_top - CELL_H
            lines.setdefault((style.MUTED, 0.6), []).append([(x, axis_y), (x + s.stages, axis_y)])
        if row.buffers:
            _draw_buffers(ax, row, label_w, cells_top - CELL_H - 0.62, panel, buffer_cells)
        y -= rh
    for (colour, width), segments in lines.items():
        ax.add_collection(LineCollection(segments, colors=colour, linewidths=width, capstyle="butt"), autolim=False)
    for k, ((face, edge), rects) in enumerate(cells.items()):
        _shapes.add_rects(ax, rects, facecolor=face, edgecolor=edge, linewidth=1.6, gid=f"{panel}slots-{k}")
    for k, ((face, edge), rects) in enumerate(buffer_cells.items()):
        _shapes.add_rects(ax, rects, facecolor=face, edgecolor=edge, linewidth=0.6, gid=f"{panel}buffers-{k}")
    return y


def _legend_items(layouts: list) -> list[tuple[str, dict]]:
    stages = max((s.stages for lay in layouts for s in lay.all_sets), default=0)
    items = [(f"{role} barrier ({side} arrives)", {"facecolor": "white", "edgecolor": style.ROLE[role], "linewidth": 2})
             for role, side in (("full", "producer"), ("empty", "consumer"))]
    return items + _legend.stage_items(stages)


CAPTION = ("each cell is one 8-byte mbarrier: its stage; the init arrive count in threads (and warps); the tx "
           "bytes it expects per phase; the iterations that use the stage and the parity their waits pass on "
           "(rounds 0, 1, 2; a fresh barrier counts as if phase -1 had completed, so the producer's first round "
           "passes). Numbers under the cells: byte offsets in barrier storage. Data strips: the shared-memory bytes "
           "each stage guards, in the same stage colour.")


COMPACT_CAPTION = ("each cell is one 8-byte mbarrier in its stage colour; n: init arrive count, tx: bytes per phase; "
                   "the number under a row is the byte offset of its first barrier")
STRIPS_CAPTION = ("each strip is one layout, every 8-byte mbarrier in shared-memory order (full blue, empty orange); "
                  "BarrierLayout.table() lists each one")


def _as_layout(x: Any) -> tuple[Any, str, dict | None]:
    """(BarrierLayout, name, {resource: Buffer} or None) from a layout, design, group or pipelined
    resource; only a design has shared-memory buffers."""
    from ..analysis.layout import BarrierLayout, barrier_layout, smem_layout
    from ..model.design import Design

    if isinstance(x, BarrierLayout):
        return x, "", None
    buffers = {b.resource: b for b in smem_layout(x).buffers} if isinstance(x, Design) else None
    return barrier_layout(x), getattr(x, "name", ""), buffers


def _summary(name: str, layout: Any) -> str:
    head = f"{name}: " if name else ""
    return f"{head}{layout.num_barriers} barriers, {layout.num_bytes} B of shared memory"


MINI = 0.32  # height of a comparison strip, in units


def _draw_strips(ax: Any, panels: list, y: float, x0: float, width: float) -> float:
    """One thin strip per layout, every slot a small cell in role colour, on one scale."""
    most = max((lay.num_barriers for _, lay, _ in panels), default=1) or 1
    w = min(0.4, width / most)
    by_role: dict[str, list] = {"full": [], "empty": []}
    for k, (_name, lay, _) in enumerate(panels):
        ax.text(x0 - 0.2, y - MINI / 2, f"{lay.num_barriers} barriers", ha="right", va="center",
                fontsize=FS_ROW - 1, fontweight="bold", color=style.INK, gid=f"strip-{k}")
        for slot in lay.slots:
            by_role[style.role_of(slot.barrier)].append((x0 + slot.index * w, y - MINI, w, MINI))
        y -= MINI + 0.18
    for role, rects in by_role.items():
        if rects:
            _shapes.add_rects(ax, rects, facecolor=style.ROLE[role], edgecolor="white", linewidth=0.6,
                              gid=f"strips-{role}")
    return y


def _caption_lines(text: str, width_in: float, fontsize: float = 7.0) -> list[str]:
    per_line = max(40, int((width_in - 0.2) / (fontsize * _figure.CHAR_IN_PER_PT)))
    return textwrap.wrap(text, per_line)


def _compose(panels: list, title: str, max_cells: int, strips: bool = False) -> Any:
    """Lay out one or more (name, layout, heading, buffers) panels into one figure.  A compact
    picture (a layout past ``COMPACT_SLOTS``) with strips shows the strips alone."""
    compact = any(lay.num_barriers > COMPACT_SLOTS for _, lay, *_ in panels)
    if compact:
        max_cells = max(max_cells, COMPACT_CELLS)
    plans = [(name, lay, heading, [] if compact and strips else _plan(lay, max_cells, buffers, compact))
             for name, lay, heading, buffers in panels]
    label_w = max(_label_width(rows) for *_, rows in plans) if not (compact and strips) else 4.0
    content = max((r.width for *_, rows in plans for r in rows), default=4.0 if not (compact and strips) else 16.0)
    width_in = max((label_w + content + 0.3) * CELL_IN, 7.0)
    heights = [sum(_row_height(not compact and any(s.arrivers or s.waiters for s in lay.all_sets), r) for r in rows) + 0.1
               for _, lay, _, rows in plans]
    head = 0.45 if len(panels) > 1 else 0.0
    strip_h = (len(panels) * (MINI + 0.18) + 0.2) if strips else 0.0
    body = sum(heights) + head * len(panels) + strip_h
    items = _legend_items([lay for _, lay, *_ in panels])
    legend_in = _legend.legend_height(items, width_in)
    caption = _caption_lines((STRIPS_CAPTION if strips else COMPACT_CAPTION) if compact else CAPTION, width_in)
    title_in = 0.36 + 0.13 * len(caption)
    fig = _figure.new_figure(width_in, body * CELL_IN + title_in + legend_in)
    fh = fig.get_figheight()
    ax = fig.add_axes((0, legend_in / fh, 1, 1 - (title_in + legend_in) / fh))
    ax.set_axis_off()
    ax.set_xlim(0, width_in / CELL_IN)
    ax.set_ylim(-body, 0)
    y = 0.0
    if strips:
        y = _draw_strips(ax, [p[:3] for p in panels], y - 0.05, label_w, width_in / CELL_IN - label_w - 0.3) - 0.15
    for k, (_name, lay, heading, rows) in enumerate(plans):
        if heading:
            ax.text(0.1, y - 0.08, heading, ha="left", va="top", fontsize=10, fontweight="bold", color=style.INK)
            y -= head
        y = _draw_rows(ax, lay, rows, y, label_w, f"p{k}-" if len(plans) > 1 else "", compact)
        if len(panels) > 1:
            ax.plot([0.1, width_in / CELL_IN - 0.1], [y + 0.05] * 2, color="#D5D8DC", lw=0.8)
    fig.text(0.01, 1 - 0.08 / fh, title, ha="left", va="top", fontsize=11, fontweight="bold", color=style.INK)
    fig.text(0.01, 1 - 0.32 / fh, "\n".join(caption), ha="left", va="top", fontsize=7, color=style.MUTED,
             linespacing=1.3, gid="caption")
    _legend.add_legend(fig, items)
    return fig


def barrier_figure(x: Any, *, title: str | None = None, max_cells: int = 16) -> Any:
    """The slots of a ``BarrierLayout`` (or of a Design / PipelineGroup / resource) as a Figure."""
    layout, name, buffers = _as_layout(x)
    return _compose([(name, layout, "", buffers)], title or _summary(name, layout), max_cells)


def comparison_figure(design: Any, *, max_cells: int = 16) -> Any:
    """The design's barriers above those of ``ungrouped(design)``, with the number saved."""
    from ..analysis.layout import barrier_layout, smem_layout
    from ..model.ungroup import ungrouped

    twin = ungrouped(design)
    buffers = {b.resource: b for b in smem_layout(design).buffers}
    grouped, alone = barrier_layout(design), barrier_layout(twin)
    saved = alone.num_barriers - grouped.num_barriers
    verb = "saves" if saved >= 0 else "costs"
    title = (f"{design.name}: grouping {verb} {abs(saved)} barriers ({abs(saved) * 8} B), "
             f"{grouped.num_barriers} instead of {alone.num_barriers}")
    panels = [(design.name, grouped, f"grouped: {_summary(design.name, grouped)}", buffers),
              (twin.name, alone, f"per-resource barriers: {_summary(twin.name, alone)}", None)]
    return _compose(panels, title, max_cells, strips=True)


def layout_svg(layout: Any) -> str:
    """The barrier picture as SVG text (what a notebook shows for a ``BarrierLayout``)."""
    return _figure.to_svg(barrier_figure(layout))

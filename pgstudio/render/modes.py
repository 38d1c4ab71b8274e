"""One teaching figure: the same members ungrouped, as a Merge, a Fork and a FusedMerge, side by
side, with the barriers each costs (matplotlib).

Rows are the members, shared by every panel; each panel has a ``full`` column (producers arrive)
and an ``empty`` column (consumers arrive).  A member's own barrier set is a strip of S cells on
its row; a set the group shares spans every member row once, so what each mode collapses is seen
at a glance::

                 ungrouped          Merge             Fork              FusedMerge
                 12 barriers        9 barriers        9 barriers        6 barriers
                 full    empty      full   empty      full   empty      full   empty
    smem_a       [..]    [..]       [..]   [    ]     [    ] [..]       [    ] [    ]
    smem_b       [..]    [..]       [..]   [    ]     [    ] [..]       [    ] [    ]

Under each panel: the count as a formula of N members and S stages, the side the group collapses
and the ops its task calls once on the group object (all read off the protocol table).  A mode the
members cannot form (e.g. a Merge of different consumer kinds) says why instead.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from . import _figure, _legend, _shapes, style

CELL_IN = 0.24  # inches per stage cell (and per vertical unit)
ROW_H = 1.5  # units per member row
FS = 8.0
MODES = ("Merge", "Fork", "FusedMerge")


def _members(x: Any) -> list:
    """The members of a PipelineGroup, or a list of pipelined resources as given."""
    members = list(getattr(x, "members", x))
    if len(members) < 2 or any(getattr(m, "pipeline_config", None) is None for m in members):
        raise ValueError("modes_figure() takes a PipelineGroup or at least two pipelined resources, got "
                         f"{[getattr(m, 'name', m) for m in members]!r}")
    return members


def mode_layouts(members: Sequence[Any]) -> dict[str, Any]:
    """``{"ungrouped" | mode: BarrierLayout or the first error (a str)}`` for ``members``."""
    from ..analysis.layout import barrier_layout
    from ..model.group import PipelineGroup
    from ..model.group_rules import check_group
    from ..model.protocol import PipelineGroupMode

    out: dict[str, Any] = {"ungrouped": _concat([barrier_layout(m) for m in members])}
    for name in MODES:
        mode = PipelineGroupMode(name)
        errors = [d for d in check_group("g", members, mode, None) if d.severity == "error"]
        if errors:
            first = errors[0].message.split(";")[0]  # the rule; the details name the members' kinds
            out[name] = re.sub(r"group 'g'( \(\w+\))?", f"a {name}", first)
            continue
        out[name] = barrier_layout(PipelineGroup.unchecked("g", members, mode))
    return out


def _concat(layouts: list) -> Any:
    """The per-resource layouts one after another (slot indices renumbered)."""
    from dataclasses import replace

    from ..analysis.layout import BarrierLayout

    sets, slots, first = [], [], 0
    for lay in layouts:
        for s in lay.sets:
            sets.append(replace(s, first=s.first + first))
        for sl in lay.slots:
            slots.append(replace(sl, index=sl.index + first, offset=(sl.index + first) * 8))
        first += lay.num_barriers
    return BarrierLayout(tuple(slots), tuple(sets))


def formula(name: str, n: int, s: int) -> str:
    """The count as a formula: '2 x N x S = 2 x 2 x 4' and friends (semantics.md section 4)."""
    if name == "ungrouped":
        return f"2·N·S = 2·{n}·{s}"
    if name == "FusedMerge":
        return f"2·S = 2·{s}"
    return f"(N+1)·S = {n + 1}·{s}"


def _notes(name: str) -> list[str]:
    """What the mode collapses and which ops are called once on the group (the protocol table)."""
    from ..model.protocol import PipelineGroupMode

    if name == "ungrouped":
        return ["every member: own full", "and own empty barriers"]
    mode = PipelineGroupMode(name)
    ops = ", ".join(f"group.{op}()" for op in mode.group_ops if not op.value.startswith("try_"))
    shared = " + ".join(str(r) for r in mode.shared_barriers)
    return [f"{mode.collapsed_side} side collapsed", f"shared: {shared}", f"once: {ops}"]


def modes_figure(x: Any, *, title: str | None = None) -> Any:
    """Merge, Fork and FusedMerge of the same members (a ``PipelineGroup`` or a list of pipelined
    resources) side by side with the ungrouped members; see the module docstring."""
    members = _members(x)
    names = [m.name for m in members]
    layouts = mode_layouts(members)
    n, stages = len(members), members[0].pipeline_config.num_stages
    label_w = max(len(nm) for nm in names) * (FS + 1) * 1.15 * _figure.CHAR_IN_PER_PT / CELL_IN + 1.4
    col_w = stages + 1.2  # one barrier set plus a gap
    panel_w = max(2 * col_w + 1.0, 26 * FS * _figure.CHAR_IN_PER_PT / CELL_IN)
    head_h, foot_h = 4.3, 3.6
    body = head_h + n * ROW_H + foot_h
    width_units = label_w + len(layouts) * panel_w
    items = [(f"{role} barrier ({side} arrives)", {"facecolor": "white", "edgecolor": style.ROLE[role], "linewidth": 2})
             for role, side in (("full", "producer"), ("empty", "consumer"))] + _legend.stage_items(stages)
    width_in = width_units * CELL_IN
    legend_in = _legend.legend_height(items, width_in)
    title_in = 0.45
    fig = _figure.new_figure(width_in, body * CELL_IN + title_in + legend_in)
    fh = fig.get_figheight()
    ax = fig.add_axes((0, legend_in / fh, 1, 1 - (title_in + legend_in) / fh))
    ax.set_axis_off()
    ax.set_xlim(0, width_units)
    ax.set_ylim(-body, 0)
    row_mid = [-(head_h + (i + 0.5) * ROW_H) for i in range(n)]
    for nm, y in zip(names, row_mid):
        ax.text(label_w - 0.6, y, nm, ha="right", va="center", fontsize=FS + 1, fontweight="bold", color=style.INK,
                gid=f"member-{nm}")
    cells: dict[tuple[str, str], list] = {}
    for k, (name, lay) in enumerate(layouts.items()):
        x0 = label_w + k * panel_w
        cx = x0 + panel_w / 2
        ax.plot([x0 + 0.2, x0 + 0.2], [-0.2, -body + 0.4], color="#D5D8DC", lw=0.8)
        ax.text(cx, -0.3, name, ha="center", va="top", fontsize=FS + 2, fontweight="bold", color=style.INK,
                gid=f"mode-{name}")
        if isinstance(lay, str):
            ax.text(cx, -(head_h + n * ROW_H / 2), _wrap(f"not allowed: {lay}", 30), ha="center", va="center",
                    fontsize=FS - 0.5, color=style.SEVERITY["error"], gid=f"count-{name}")
            continue
        ax.text(cx, -1.35, f"{lay.num_barriers} barriers", ha="center", va="top", fontsize=FS + 3, fontweight="bold",
                color=style.ROLE["full"] if name != "ungrouped" else style.MUTED, gid=f"count-{name}")
        ax.text(cx, -2.45, formula(name, n, stages), ha="center", va="top", fontsize=FS, color=style.MUTED,
                gid=f"formula-{name}")
        for j, role in enumerate(("full", "empty")):
            left = cx - col_w + j * col_w + 0.6
            ax.text(left + stages / 2, -(head_h - 0.2), role, ha="center", va="bottom", fontsize=FS,
                    fontweight="bold", color=style.ROLE[role])
            for s in (s for s in lay.sets if s.role == role):
                rows = [names.index(m) for m in s.members if m in names]
                top, bottom = row_mid[min(rows)] + 0.5, row_mid[max(rows)] - 0.5
                for stage in range(s.stages):
                    cells.setdefault((style.stage_colour(stage), style.ROLE[role]), []).append(
                        (left + stage, bottom, 1.0, top - bottom))
                ax.text(left + s.stages / 2, (top + bottom) / 2, "shared" if s.shared else "", ha="center",
                        va="center", fontsize=FS - 1, color=style.INK, rotation=0, gid=f"set-{name}-{s.label}")
        for i, line in enumerate(_notes(name)):
            ax.text(cx, -(head_h + n * ROW_H + 0.5 + i * 1.0), line, ha="center", va="top", fontsize=FS - 0.5,
                    color=style.INK, gid=f"note-{name}-{i}")
    for k, ((face, edge), rects) in enumerate(cells.items()):
        _shapes.add_rects(ax, rects, facecolor=face, edgecolor=edge, linewidth=1.4, gid=f"cells-{k}")
    counts = {nm: lay.num_barriers for nm, lay in layouts.items() if not isinstance(lay, str)}
    head = title or (f"{', '.join(names)} ({stages} stages): " + ", ".join(f"{nm} {c}" for nm, c in counts.items())
                     + " barriers")
    fig.text(0.01, 1 - 0.1 / fh, head, ha="left", va="top", fontsize=11, fontweight="bold", color=style.INK,
             gid="title")
    _legend.add_legend(fig, items)
    return fig


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def modes_svg(x: Any, **kwargs: Any) -> str:
    return _figure.to_svg(modes_figure(x, **kwargs))


__all__ = ["formula", "mode_layouts", "modes_figure", "modes_svg"]

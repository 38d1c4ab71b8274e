"""A sweep (``explore.sweep_table.SweepTable``) as a picture: a heatmap per grouping, or bars.

* ``heatmap``: one panel per grouping (and warps / options, where those vary), stage count
  down, tile across (bytes per stage, or BMxBNxBK); a cell's colour is its rate (the table's
  unit: GB/s for streaming, TFLOP/s for GEMM, one scale for every panel) and it is labelled
  with it; the best variant has a thick outline; an invalid variant is a hatched grey cell
  marked "invalid", a failed one "failed", one not run "-".  A sweep that compiled without
  timing (no GPU) colours its compiled cells by shared memory per block (KiB) instead.
* ``bars``: every timed variant as a horizontal bar of its median time, fastest on top,
  coloured by grouping, the best one named.

Works from any object with the table's fields (``rows`` with grouping, num_stages, tile,
status, median_ms, rate, smem_bytes, label; ``unit``, ``problem``, ``best``), so it needs
nothing from the runtime.
"""

from __future__ import annotations

from typing import Any

from . import _figure, style

KINDS = ("heatmap", "bars")
_GROUP_COLOURS = ("#1F6FB4", "#D35400", "#3C8D40", "#7D3C98", "#B9770E")


def _fmt(table: Any, value: float) -> str:
    return f"{value:,.0f}" if table.unit == "GB/s" else f"{value:,.1f}"


def _title(fig: Any, table: Any, text: str) -> None:
    h = fig.get_figheight()
    fig.text(0.01, 1 - 0.06 / h, f"{table.design}: {text}", ha="left", va="top", fontsize=11, fontweight="bold",
             color=style.INK)
    best = table.best
    sub = (f"{table.problem}; best {best.label}: {best.median_ms * 1e3:.1f} µs, {_fmt(table, best.rate)} {table.unit}"
           if best else f"{table.problem}; nothing was timed")
    fig.text(0.01, 1 - 0.3 / h, sub, ha="left", va="top", fontsize=8, color=style.MUTED)


def _panel(r: Any) -> str:
    """The heatmap panel of a row: its grouping, and its warps / options where given."""
    parts = [r.grouping]
    if getattr(r, "warps", None) is not None:
        parts.append(f"{r.warps} warps")
    if getattr(r, "options", ()):
        parts.append(",".join(f"{k}={v}" for k, v in r.options))
    return " ".join(parts)


def _tile_label(tile: tuple) -> str:
    return style.fmt_bytes(tile[0]) if len(tile) == 1 else "x".join(map(str, tile))


def _heatmap(table: Any) -> Any:
    from matplotlib import cm, colormaps, colors

    panels = list(dict.fromkeys(_panel(r) for r in table.rows))
    stages = sorted({r.num_stages for r in table.rows})
    tiles = sorted({tuple(r.tile) for r in table.rows})
    timed = [r.rate for r in table.rows if r.status == "ok"]
    by_smem = not timed  # compiled only: colour by shared memory per block
    values = timed or [r.smem_bytes / 1024 for r in table.rows if r.status == "compiled" and r.smem_bytes]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    norm = colors.Normalize(vmin=lo * 0.98, vmax=hi if hi > lo else lo + 1.0)
    cmap = colormaps["viridis"]
    panel_w = max(2.4, (0.85 if all(len(t) == 1 for t in tiles) else 1.15) * len(tiles) + 0.9)
    width = min(max(panel_w * len(panels) + 1.2, 6.0), 24.0)
    shapes = any(len(t) > 1 for t in tiles)  # BMxBNxBK labels are slanted: more room below
    bottom = 0.85 if shapes else 0.55
    height = 1.5 + 0.42 * len(stages) + (bottom - 0.55)
    fig = _figure.new_figure(width, height)
    best = table.best
    n = len(panels)
    left, right, gap = 0.07, 0.9, 0.03
    w = (right - left - gap * (n - 1)) / max(n, 1)
    for i, g in enumerate(panels):
        ax = fig.add_axes((left + i * (w + gap), bottom / height, w, 1 - (bottom + 0.75) / height))
        ax.set_xlim(-0.5, len(tiles) - 0.5)
        ax.set_ylim(len(stages) - 0.5, -0.5)
        for r in (r for r in table.rows if _panel(r) == g):
            x, y = tiles.index(tuple(r.tile)), stages.index(r.num_stages)
            shown = r.status == "ok" or (by_smem and r.status == "compiled" and r.smem_bytes)
            if shown:
                value = r.rate if r.status == "ok" else r.smem_bytes / 1024
                face = cmap(norm(value))
                ax.add_patch(_rect(x, y, face, "white"))
                dark = sum(face[:3]) / 3 < 0.5
                ax.text(x, y, _fmt(table, value) if r.status == "ok" else f"{value:.1f}", ha="center", va="center",
                        fontsize=7.5, color="white" if dark else style.INK)
                if best is not None and r is best:
                    ax.add_patch(_rect(x, y, "none", style.SEVERITY["error"], lw=2.5))
            else:
                ax.add_patch(_rect(x, y, "#EEEEEE", "#BBBBBB", hatch="///" if r.status == "invalid" else None))
                label = {"invalid": "invalid", "failed": "failed"}.get(r.status, "-")
                ax.text(x, y, label, ha="center", va="center", fontsize=7, color=style.MUTED)
        ax.set_xticks(range(len(tiles)))
        ax.set_xticklabels([_tile_label(t) for t in tiles], fontsize=7, rotation=30 if shapes else 0)
        ax.set_yticks(range(len(stages)))
        ax.set_yticklabels([str(s) for s in stages] if i == 0 else [], fontsize=7.5)
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
        ax.set_title(g, fontsize=9, color=style.INK)
        ax.set_xlabel("tile BMxBNxBK" if shapes else "bytes per stage", fontsize=7.5, color=style.MUTED)
        if i == 0:
            ax.set_ylabel("stages", fontsize=7.5, color=style.MUTED)
    cax = fig.add_axes((right + 0.02, bottom / height, 0.015, 1 - (bottom + 0.75) / height))
    unit = "KiB" if by_smem else table.unit
    fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), cax=cax).set_label(unit, fontsize=7.5)
    cax.tick_params(labelsize=7)
    _title(fig, table, "shared memory per block (KiB) of every compiled variant; nothing was timed" if by_smem
           else f"{'bandwidth' if table.unit == 'GB/s' else 'throughput'} per variant (red outline: best)")
    return fig


def _rect(x: float, y: float, face: Any, edge: str, lw: float = 1.0, hatch: str | None = None) -> Any:
    from matplotlib.patches import Rectangle
    return Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=face, edgecolor=edge, linewidth=lw, hatch=hatch)


def _bars(table: Any) -> Any:
    rows = sorted((r for r in table.rows if r.status == "ok"), key=lambda r: r.median_ms)
    groupings = list(dict.fromkeys(r.grouping for r in table.rows))
    colour = {g: _GROUP_COLOURS[i % len(_GROUP_COLOURS)] for i, g in enumerate(groupings)}
    height = 1.5 + 0.2 * max(len(rows), 1)
    fig = _figure.new_figure(9.0, height)
    ax = fig.add_axes((0.24, 0.7 / height, 0.72, 1 - 1.5 / height))
    for i, r in enumerate(rows):
        ax.barh(i, r.median_ms * 1e3, color=colour[r.grouping], height=0.7)
        ax.text(r.median_ms * 1e3, i, f" {_fmt(table, r.rate)} {table.unit}", va="center", fontsize=6.5,
                color=style.MUTED)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r.label for r in rows], fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("median time per launch (µs, lower is better)", fontsize=8)
    ax.tick_params(axis="x", labelsize=7.5)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=colour[g], label=g) for g in groupings], fontsize=7, loc="lower right",
              bbox_to_anchor=(1.0, 1.0), ncol=len(groupings), frameon=False)
    if not rows:
        ax.text(0.5, 0.5, "no variant was timed", transform=ax.transAxes, ha="center", fontsize=9, color=style.MUTED)
    _title(fig, table, "median time per variant")
    return fig


def sweep_figure(table: Any, *, kind: str = "heatmap") -> Any:
    """The sweep as a ``matplotlib.figure.Figure``; see the module docstring."""
    if kind not in KINDS:
        raise ValueError(f"sweep picture kind {kind!r} is not known; use one of {', '.join(KINDS)}")
    return _heatmap(table) if kind == "heatmap" else _bars(table)


def sweep_svg(table: Any, **kwargs: Any) -> str:
    return _figure.to_svg(sweep_figure(table, **kwargs))


__all__ = ["KINDS", "sweep_figure", "sweep_svg"]

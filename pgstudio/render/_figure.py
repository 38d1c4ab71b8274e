"""Matplotlib plumbing shared by the barrier and timeline pictures.

Figures are plain ``matplotlib.figure.Figure`` objects on an Agg canvas: no pyplot, no global
state, so they work headless, in threads and in any notebook.  SVG text stays text
(``svg.fonttype = none``: small, selectable, fast) and carries no date, so the same figure
gives the same bytes.
"""

from __future__ import annotations

import io
from typing import Any

from . import style

#: Width of a character, in inches per point of font size (a sans font, on average).
CHAR_IN_PER_PT = 0.56 / 72


def new_figure(width_in: float, height_in: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=100, facecolor="white")
    FigureCanvasAgg(fig)
    return fig


def text_width_in(text: str, fontsize: float) -> float:
    """A width estimate (inches) used to keep labels from overlapping without a renderer."""
    return len(text) * fontsize * CHAR_IN_PER_PT


def to_svg(fig: Any) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "pgstudio"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


def to_png(fig: Any, dpi: int = 110) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def stage_items(num_stages: int) -> list[tuple[str, dict]]:
    return [(f"stage {s}", {"facecolor": style.stage_colour(s), "edgecolor": style.MUTED})
            for s in range(min(num_stages, len(style.STAGES)))]


SWATCH_IN, ENTRY_GAP_IN = 0.32, 0.3


def _entry_width(label: str, fontsize: float) -> float:
    return SWATCH_IN + text_width_in(label, fontsize) + ENTRY_GAP_IN


def legend_rows(labels: list[str], width_in: float, fontsize: float = 7.5) -> list[list[int]]:
    """Entries flowed left to right into rows no wider than ``width_in`` (indices per row)."""
    rows: list[list[int]] = [[]]
    used = 0.0
    for i, label in enumerate(labels):
        w = _entry_width(label, fontsize)
        if rows[-1] and used + w > width_in - 0.3:
            rows.append([])
            used = 0.0
        rows[-1].append(i)
        used += w
    return rows


def legend_height(items: list[tuple[str, dict]], width_in: float, fontsize: float = 7.5) -> float:
    return 0.12 + len(legend_rows([t for t, _ in items], width_in, fontsize)) * fontsize * 2.0 / 72


def add_legend(fig: Any, items: list[tuple[str, dict]], fontsize: float = 7.5) -> None:
    """A key along the bottom edge of ``fig`` (reserve ``legend_height`` inches there).

    Drawn as plain artists in inches (a swatch or marker and a text per entry, SVG ids
    ``legend-<i>``), rows centred: matplotlib's Legend measures every entry several times,
    which costs more than the rest of a small figure.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    labels = [t for t, _ in items]
    rows = legend_rows(labels, fig.get_figwidth(), fontsize)
    row_in = fontsize * 2.0 / 72
    inches = fig.dpi_scale_trans
    for r, row in enumerate(rows):
        widths = [_entry_width(labels[i], fontsize) for i in row]
        x = (fig.get_figwidth() - sum(widths) + ENTRY_GAP_IN) / 2
        y = 0.06 + (len(rows) - 1 - r) * row_in + row_in / 2
        for i, w in zip(row, widths):
            label, kw = items[i]
            if "marker" in kw:
                fig.add_artist(Line2D([x + 0.12], [y], transform=inches, linestyle="none", **kw))
            else:
                fig.add_artist(Rectangle((x, y - 0.05), 0.24, 0.1, transform=inches, **kw))
            fig.text(x + SWATCH_IN, y, label, transform=inches, ha="left", va="center", fontsize=fontsize,
                     color=style.INK, gid=f"legend-{i}")
            x += w


def rect_patch(rects: list[tuple[float, float, float, float]], **kwargs: Any) -> Any:
    """Many (x, y, width, height) rectangles as ONE compound path patch.

    One patch per colour instead of one artist (or collection path) per rectangle keeps a
    timeline of thousands of events fast to draw and small as SVG.
    """
    import numpy as np
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path

    r = np.asarray(rects, dtype=float).reshape(-1, 4)
    x0, y0, x1, y1 = r[:, 0], r[:, 1], r[:, 0] + r[:, 2], r[:, 1] + r[:, 3]
    verts = np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1), np.stack([x1, y1], 1),
                      np.stack([x0, y1], 1), np.stack([x0, y0], 1)], 1).reshape(-1, 2)
    codes = np.tile(np.array([Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY],
                             dtype=Path.code_type), len(r))
    return PathPatch(Path(verts, codes), **kwargs)


def patch_rects(patch: Any) -> list[tuple[float, float, float, float]]:
    """The (x0, x1, y0, y1) rectangles of a ``rect_patch``, in drawing order (for tests, tools)."""
    v = patch.get_path().vertices.reshape(-1, 5, 2)
    return [(float(r[:, 0].min()), float(r[:, 0].max()), float(r[:, 1].min()), float(r[:, 1].max())) for r in v]


def add_rects(ax: Any, rects: list, **kwargs: Any) -> Any:
    """Add a ``rect_patch`` to ``ax`` without the per-vertex data-limit update of ``add_patch``
    (every picture here sets its limits explicitly)."""
    patch = rect_patch(rects, **kwargs)
    ax.add_artist(patch)
    return patch


#: Unit marker outlines (centred, spanning -0.5..0.5): a down triangle and a diamond.
MARKERS = {"v": ((-0.5, 0.5), (0.5, 0.5), (0.0, -0.5)), "D": ((0.0, 0.5), (0.5, 0.0), (0.0, -0.5), (-0.5, 0.0))}


def add_markers(ax: Any, points: list[tuple[float, float]], shape: str, width: float, height: float,
                **kwargs: Any) -> Any:
    """Many same-size markers as ONE compound path in data units (``width`` x ``height``).

    For y pointing down (lanes), the "v" outline is flipped by passing a negative height.
    Cheaper than a scatter with per-point colours, which writes one SVG element per point.
    """
    import numpy as np
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path

    unit = np.asarray(MARKERS[shape], dtype=float)
    k = len(unit)
    centres = np.asarray(points, dtype=float).reshape(-1, 2)
    verts = centres[:, None, :] + unit[None, :, :] * np.array([width, height])
    verts = np.concatenate([verts, verts[:, :1, :]], axis=1).reshape(-1, 2)
    codes = np.tile(np.array([Path.MOVETO] + [Path.LINETO] * (k - 1) + [Path.CLOSEPOLY], dtype=Path.code_type),
                    len(centres))
    patch = PathPatch(Path(verts, codes), **kwargs)
    ax.add_artist(patch)
    return patch


def patch_centres(patch: Any, corners: int) -> list[tuple[float, float]]:
    """Centres of the markers of an ``add_markers`` patch (for tests, tools)."""
    v = patch.get_path().vertices.reshape(-1, corners + 1, 2)[:, :corners, :]
    return [(float(x), float(y)) for x, y in v.mean(axis=1)]

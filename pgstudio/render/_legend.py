"""The key under a picture, drawn as plain artists (a swatch or marker and a text per entry).

matplotlib's ``Legend`` measures every entry several times, which costs more than the rest of
a small figure; here entries flow into centred rows using the width estimate of ``_figure``.
"""

from __future__ import annotations

from typing import Any

from . import style
from ._figure import text_width_in

__all__ = ["stage_items", "legend_rows", "legend_height", "add_legend"]


def stage_items(num_stages: int) -> list[tuple[str, dict]]:
    """Entries for the stage colours (the same in the barrier and timeline pictures)."""
    return [(f"stage {s}", {"facecolor": style.stage_colour(s), "edgecolor": style.MUTED})
            for s in range(min(num_stages, len(style.STAGES)))]


SWATCH_IN, ENTRY_GAP_IN = 0.32, 0.3


def _entry_width(label: str, fontsize: float) -> float:
    return SWATCH_IN + 0.9 * text_width_in(label, fontsize) + ENTRY_GAP_IN


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
    """A key along the bottom edge of ``fig`` (reserve ``legend_height`` inches there); its
    texts have SVG ids ``legend-<i>``."""
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

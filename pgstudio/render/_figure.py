"""Matplotlib plumbing shared by the barrier and timeline pictures.

Figures are plain ``matplotlib.figure.Figure`` objects on an Agg canvas: no pyplot, no global
state, so they work headless, in threads and in any notebook.  SVG text stays text
(``svg.fonttype = none``: small, selectable, fast) and carries no date, so the same figure
gives the same bytes.
"""

from __future__ import annotations

import io
from typing import Any

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

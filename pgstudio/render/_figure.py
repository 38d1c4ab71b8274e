"""Matplotlib plumbing shared by the barrier and timeline pictures.

Figures are plain ``matplotlib.figure.Figure`` objects on an Agg canvas: no pyplot, no global
state, so they work headless, in threads and in any notebook.  SVG text stays text
(``svg.fonttype = none``: small, selectable, fast) and carries no date, so the same figure
gives the same bytes.
"""

from __future__ import annotations

import io
from typing import Any

__all__ = ["CHAR_IN_PER_PT", "new_figure", "text_width_in", "SVG_RC", "to_svg", "to_png"]

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


#: The SVG settings that make the bytes a function of the figure alone: text as text, ids salted.
SVG_RC = {"svg.fonttype": "none", "svg.hashsalt": "pgstudio"}


def to_svg(fig: Any, attempts: int = 3) -> str:
    """The figure as SVG text, the same bytes for the same figure.

    Matplotlib reads these settings from its global rcParams while it draws, so other code that
    restores rcParams during the draw (seen once in a notebook kernel under load: a picture with
    glyph paths and random ids, i.e. the defaults) would change the bytes; the settings are
    checked after the draw and the figure is drawn again when they did not hold."""
    import matplotlib

    for _ in range(attempts):
        buf = io.StringIO()
        with matplotlib.rc_context(SVG_RC):
            fig.savefig(buf, format="svg", metadata={"Date": None})
            held = all(matplotlib.rcParams[k] == v for k, v in SVG_RC.items())
        if held:
            return buf.getvalue()
    raise RuntimeError(f"matplotlib's SVG settings {SVG_RC} were changed during {attempts} drawings in a row; "
                       "some other code resets rcParams while pictures are drawn")


def to_png(fig: Any, dpi: int = 110) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()

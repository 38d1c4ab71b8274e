"""Many rectangles or markers as ONE compound path per colour.

One patch per colour instead of one artist (or collection path) per item keeps a timeline of
thousands of events fast to draw and small as SVG.  Coordinates are data units; the pictures
set their axis limits themselves, so patches are added without a data-limit update.
"""

from __future__ import annotations

from typing import Any

__all__ = ["rect_patch", "patch_rects", "add_rects", "MARKERS", "add_markers", "patch_centres"]


def rect_patch(rects: list[tuple[float, float, float, float]], **kwargs: Any) -> Any:
    """Many (x, y, width, height) rectangles as one compound path patch."""
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

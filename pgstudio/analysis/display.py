"""Rich display of model and analysis values in a notebook cell, without heavy imports.

When the render extra is installed, pictures are added (SVG); otherwise a readable HTML table.
"""

from __future__ import annotations

from html import escape
from typing import Any


def _pre(text: str) -> str:
    return f"<pre style='font-size:12px'>{escape(text)}</pre>"


def layout_bundle(layout: Any) -> dict[str, str]:
    bundle = {"text/plain": layout.table(), "text/html": _pre(layout.table())}
    try:
        from ..render.barriers import layout_svg
    except ImportError:
        return bundle
    try:
        bundle["image/svg+xml"] = layout_svg(layout)
    except Exception as exc:  # a picture must never break the cell: show the table and why
        bundle["text/html"] += f"<p>(no picture: {escape(str(exc))})</p>"
    return bundle


def design_bundle(design: Any) -> dict[str, str]:
    from .layout import barrier_layout, smem_layout
    report = design.validate()
    layout = barrier_layout(design)
    text = "\n".join([design.summary(), str(report), layout.table(), smem_layout(design).report()])
    html = (f"<div><b>{escape(design.summary())}</b>{report._repr_html_()}{_pre(layout.table())}"
            f"<p>{escape(smem_layout(design).report())}</p></div>")
    bundle = {"text/plain": text, "text/html": html}
    try:
        from ..render.graph import dependency_graph
    except ImportError:
        return bundle
    try:
        bundle["image/svg+xml"] = dependency_graph(design, report=report).pipe(format="svg").decode()
    except Exception as exc:
        bundle["text/html"] += f"<p>(no picture: {escape(str(exc))})</p>"
    return bundle

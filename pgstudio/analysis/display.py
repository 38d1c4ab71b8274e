"""Rich display of model and analysis values in a notebook cell, without heavy imports.

A bare ``Design``, ``Report``, ``BarrierLayout``, ``Timeline`` or checker verdict at the end of
a cell shows a short summary and its picture.  Front ends prefer ``text/html`` over
``image/svg+xml``, so the picture is inlined in the HTML as well as given on its own; the
details (diagnostics table, layout table, event table) fold away under the picture.  The
pictures come from ``pgstudio.render``, imported here only when a cell is displayed; without
the render extra (or if drawing fails) the text and tables still show, with the reason.
"""

from __future__ import annotations

from html import escape
from typing import Any, Callable


def _pre(text: str) -> str:
    return f"<pre style='font-size:12px'>{escape(text)}</pre>"


def inline_svg(svg: str) -> str:
    """SVG text that can sit inside HTML: the XML prolog, doctype and comments before <svg> go."""
    start = svg.find("<svg")
    body = svg[start:] if start >= 0 else svg
    return f"<div style='overflow-x:auto;max-width:100%'>{body}</div>"


def _bundle(text: str, head_html: str, picture: Callable[[], str] | None, details: str = "",
            details_title: str = "details") -> dict[str, str]:
    """text/plain + text/html (summary, inline picture, folded details) + image/svg+xml."""
    bundle = {"text/plain": text}
    note = ""
    svg = None
    if picture is not None:
        try:
            svg = picture()
        except ImportError as exc:  # the render extra is not installed: tables only
            note = f"<p style='color:#7f8c8d'>(no picture: {escape(str(exc))}; pip install 'pgstudio[render]')</p>"
        except Exception as exc:  # a picture must never break the cell: show the tables and why
            note = f"<p style='color:#c0392b'>(no picture: {escape(type(exc).__name__)}: {escape(str(exc))})</p>"
    html = f"<div class='pgstudio'>{head_html}"
    if svg is not None:
        bundle["image/svg+xml"] = svg
        html += inline_svg(svg)
    html += note
    if details:
        html += f"<details><summary>{escape(details_title)}</summary>{details}</details>"
    bundle["text/html"] = html + "</div>"
    return bundle


def layout_bundle(layout: Any) -> dict[str, str]:
    def picture() -> str:
        from ..render.barriers import layout_svg
        return layout_svg(layout)

    head = f"<b>{layout.num_barriers} barriers, {layout.num_bytes} B of shared memory</b>"
    return _bundle(layout.table(), head, picture, _pre(layout.table()), "barrier table")


def _status_html(report: Any) -> str:
    if report.ok and not report.diagnostics:
        return "<span style='color:#1e8449'>valid</span>"
    colour = "#c0392b" if not report.ok else "#b9770e"
    return (f"<span style='color:{colour}'>{len(report.errors)} error(s), {len(report.warnings)} warning(s)"
            f"</span>")


def design_bundle(design: Any) -> dict[str, str]:
    from .layout import barrier_layout, smem_layout
    report = design.validate()
    try:
        layout_text, smem_text = barrier_layout(design).table(), smem_layout(design).report()
    except Exception as exc:  # a broken design still displays; its diagnostics say why
        layout_text, smem_text = f"(no barrier layout: {exc})", ""
    text = "\n".join([design.summary(), str(report), layout_text, smem_text])

    def picture() -> str:
        from ..render.graph import dependency_graph
        return dependency_graph(design, report=report).pipe(format="svg").decode()

    head = f"<b>{escape(design.summary())}</b>: {_status_html(report)}"
    details = f"{report._repr_html_()}{_pre(layout_text)}<p>{escape(smem_text)}</p>"
    return _bundle(text, head, picture, details, "diagnostics, barrier layout, shared memory")


def report_bundle(report: Any) -> dict[str, str]:
    """The diagnostics table; the dependency graph with the findings outlined when the report
    knows its design (``Report.subject``)."""
    design = getattr(report, "subject", None)
    picture = None
    if design is not None:
        def picture() -> str:
            from ..render.graph import dependency_graph
            return dependency_graph(design, report=report).pipe(format="svg").decode()

    head = f"<b>design {escape(report.design)}</b>: {_status_html(report)}{report._repr_html_()}"
    verdict = getattr(report, "verdict", None)
    if verdict is not None:
        summary = verdict.summary() if hasattr(verdict, "summary") else str(verdict)
        head += f"<p>checker: {escape(summary)}</p>"
    return _bundle(str(report), head, picture)


def timeline_bundle(timeline: Any) -> dict[str, str]:
    def picture() -> str:
        from ..render.timeline import timeline_svg
        return timeline_svg(timeline)

    table = timeline.table()
    return _bundle(timeline.summary() + "\n" + table, f"<b>{escape(timeline.summary())}</b>", picture,
                   f"<pre style='font-size:11px'>{escape(table)}</pre>", "events")


def _verdict_timeline(verdict: Any) -> Any:
    from .timeline import Timeline
    for attr in ("timeline", "witness", "trace"):
        value = getattr(verdict, attr, None)
        if isinstance(value, Timeline):
            return value
    return None


def verdict_bundle(verdict: Any) -> dict[str, str]:
    """The checker's verdict: its summary, and its witness trace as a timeline when it has one."""
    summary = verdict.summary() if hasattr(verdict, "summary") else str(verdict)
    witness = _verdict_timeline(verdict)
    picture = None
    if witness is not None:
        def picture() -> str:
            from ..render.timeline import timeline_svg
            return timeline_svg(witness)

    text = str(verdict) if str(verdict) != summary else summary
    details = _pre(witness.table()) if witness is not None else ""
    return _bundle(text, f"<b>{escape(summary)}</b>", picture, details, "witness trace")

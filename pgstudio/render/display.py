"""Rich display of pgstudio values in a notebook cell: the one home of every ``text/html`` view.

A bare ``Design``, ``Report``, ``BarrierLayout``, ``Timeline``, checker ``Verdict``,
``KernelSource`` or runtime result at the end of a cell shows a short summary and its picture.
Front ends prefer ``text/html`` over ``image/svg+xml``, so the picture is inlined in the HTML as
well as given on its own; the details (diagnostics table, layout table, event table) fold away
under the picture.  graphviz and matplotlib are imported only when a cell is displayed; without
them (or if drawing fails) the text and tables still show, with the reason.

The values themselves know nothing of display (the house points one way: model and analysis
never import render).  ``register(shell)`` tells IPython how to show each type, by module and
class name, so no layer above is imported here either; ``import pgstudio`` calls it when it finds
a running IPython shell, and ``%load_ext pgstudio`` does the same by hand.  ``bundle(value)`` is
the same view for callers that draw it themselves (the studio).
"""

from __future__ import annotations

from html import escape as _html_escape
from typing import Any, Callable

from ..analysis.layout import barrier_layout, smem_layout
from ..analysis.timeline import Timeline
from ..analysis.validate import validate
from ..analysis.verdict import INCOMPLETE, SAFE, UNSAFE
from ..model.text import visible


def escape(text: Any) -> str:
    """Every piece of text in a view goes through here: printable lines (a control character or
    lone surrogate shown as its escape; line breaks of tables kept), HTML-escaped, never raw."""
    return _html_escape("\n".join(visible(line) for line in str(text).split("\n")))


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
        from .barriers import layout_svg
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
    report = validate(design)
    try:
        layout_text, smem_text = barrier_layout(design).table(), smem_layout(design).report()
    except Exception as exc:  # a broken design still displays; its diagnostics say why
        layout_text, smem_text = f"(no barrier layout: {exc})", ""
    text = "\n".join([design.summary(), str(report), layout_text, smem_text])

    def picture() -> str:
        from .graph import dependency_graph
        return dependency_graph(design, report=report).pipe(format="svg").decode()

    head = f"<b>{escape(design.summary())}</b>: {_status_html(report)}"
    details = f"{report_html(report)}{_pre(layout_text)}<p>{escape(smem_text)}</p>"
    return _bundle(text, head, picture, details, "diagnostics, barrier layout, shared memory")


def report_bundle(report: Any) -> dict[str, str]:
    """The diagnostics table; the dependency graph with the findings outlined when the report
    knows its design (``Report.subject``)."""
    design = getattr(report, "subject", None)
    picture = None
    if design is not None:
        def picture() -> str:
            from .graph import dependency_graph
            return dependency_graph(design, report=report).pipe(format="svg").decode()

    head = f"<b>design {escape(report.design)}</b>: {_status_html(report)}{report_html(report)}"
    verdict = getattr(report, "verdict", None)
    if verdict is not None:
        summary = verdict.summary() if hasattr(verdict, "summary") else str(verdict)
        head += f"<p>checker: {escape(summary)}</p>"
    return _bundle(str(report), head, picture)


def timeline_bundle(timeline: Any) -> dict[str, str]:
    def picture() -> str:
        from .timeline import timeline_svg
        return timeline_svg(timeline)

    table = timeline.table()
    return _bundle(timeline.summary() + "\n" + table, f"<b>{escape(timeline.summary())}</b>", picture,
                   f"<pre style='font-size:11px'>{escape(table)}</pre>", "events")


def _verdict_timeline(verdict: Any) -> Any:
    for attr in ("timeline", "witness", "trace"):
        value = getattr(verdict, attr, None)
        if isinstance(value, Timeline):
            return value
    return None


def report_html(report: Any) -> str:
    """The diagnostics of a ``Report`` as an HTML table (severity, code, message, where, fix)."""
    colour = {"error": "#c0392b", "warning": "#b9770e", "info": "#2e86c1"}
    rows = "".join(
        f"<tr><td style='color:{colour[d.severity.value]}'>{d.severity}</td><td><code>{escape(d.code)}</code></td>"
        f"<td>{escape(d.message)}</td><td>{escape(', '.join(d.where))}</td><td>{escape(d.hint)}</td></tr>"
        for d in report.diagnostics)
    status = "valid" if report.ok else f"{len(report.errors)} error(s)"
    body = (f"<table><tr><th>severity</th><th>code</th><th>message</th><th>where</th><th>fix</th></tr>{rows}</table>"
            if rows else "<p>no problems found</p>")
    return f"<div><b>design {escape(report.design)}: {status}</b>{body}</div>"


def verdict_html(verdict: Any) -> str:
    """The checker's verdict: its summary, and with a finding (UNSAFE, or a possible one when
    INCOMPLETE) the finding, the fix and the witness table."""
    colour = {SAFE: "#1e8449", UNSAFE: "#c0392b", INCOMPLETE: "#b9770e"}[verdict.status]
    html = f"<div class='pgstudio'><b style='color:{colour}'>{escape(verdict.summary())}</b>"
    if verdict.witness:
        html += f"<p>{escape(verdict.message)}</p><p><i>fix:</i> {escape(verdict.hint())}</p>"
        head = "".join(f"<th>{h}</th>" for h in ("#", "agent", "step", "action", "iteration", "barrier", "after"))
        body = ""
        for r in verdict.witness:
            style = " style='background:#fdecea'" if r.note else ""
            after = f"<b>{escape(r.note)}</b>" if r.note else escape(r.state)
            body += (f"<tr{style}><td>{r.index}</td><td>{escape(r.agent)}</td><td><code>{escape(r.step)}</code></td>"
                     f"<td>{escape(r.action)}</td><td>{r.iteration}</td><td>{escape(r.barrier)}</td>"
                     f"<td>{after}</td></tr>")
        html += f"<table><tr>{head}</tr>{body}</table>"
    return html + "</div>"


def verdict_bundle(verdict: Any) -> dict[str, str]:
    """The checker's verdict: its summary (and, for a ``Verdict``, its finding and witness table), and
    its witness trace as a timeline when it has one."""
    summary = verdict.summary() if hasattr(verdict, "summary") else str(verdict)
    witness = _verdict_timeline(verdict)
    picture = None
    if witness is not None and witness.events:
        def picture() -> str:
            from .timeline import timeline_svg
            return timeline_svg(witness)

    text = str(verdict) if str(verdict) != summary else summary
    if hasattr(verdict, "status") and hasattr(verdict, "witness"):
        return _bundle(text, verdict_html(verdict), picture)
    details = _pre(witness.table()) if witness is not None else ""
    return _bundle(text, f"<b>{escape(summary)}</b>", picture, details, "witness trace")


def source_bundle(source: Any) -> dict[str, str]:
    """A ``KernelSource``: its launch shape, the CUDA text folded away."""
    head = (f"// {source.entry}: block {source.block}, grid {source.grid or 'persistent'}, "
            f"{source.smem_bytes} B smem, {source.arch}")
    return {"text/plain": head + "\n" + source.code,
            "text/html": f"<details><summary><code>{escape(head)}</code></summary><pre>{escape(source.code)}</pre></details>"}


def bench_bundle(table: Any) -> dict[str, str]:
    """A benchmark table (either kind): every variant's median time, rate, time relative to the
    design and to the best library peer; the table's own header and footer around it (a null
    runtime's table says there that nothing was timed)."""
    head = "".join(f"<th>{escape(c)}</th>" for c in table.columns())
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in table.cells(r)) + "</tr>" for r in table.rows)
    return {"text/plain": table.table(),
            "text/html": f"<p>{escape(table.header())}</p><table><tr>{head}</tr>{body}</table>"
                         f"<p>{escape(table.footer())}</p>"}


def rows_bundle(result: Any) -> dict[str, str]:
    """A result that describes itself as (label, value) rows: one two-column table."""
    body = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th><td style='text-align:left'>{escape(v)}"
                   f"</td></tr>" for k, v in result.rows())
    return {"text/plain": str(result), "text/html": f"<table>{body}</table>"}


def sweep_html(table: Any) -> str:
    """A sweep as a real HTML table; invalid and failed variants with their reasons, the best in bold."""
    best = table.best
    head = "".join(f"<th>{escape(h)}</th>" for h in (*table.columns(), "why"))
    body = []
    for r in table.rows:
        colour = {"ok": "#1e8449", "invalid": "#c0392b", "failed": "#c0392b"}.get(r.status, "#7f8c8d")
        bold = ";font-weight:bold" if best is not None and r is best else ""
        cells = "".join(f"<td>{escape(c)}</td>" for c in table.cells(r, best))
        why = escape(r.message) if r.status != "ok" else ""
        body.append(f"<tr style='color:{colour}{bold}'>{cells}<td style='text-align:left'>{why}</td></tr>")
    return (f"<table class='pg-table pg-sweep-table'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def sweep_bundle(table: Any) -> dict[str, str]:
    """A sweep: what ran and the best variant, its heatmap (rates, or shared memory per block
    when nothing was timed), and the whole table with every reason."""
    def picture() -> str:
        from .sweep import sweep_svg
        return sweep_svg(table)

    skipped = table.extra.get("skipped", "") if isinstance(getattr(table, "extra", None), dict) else ""
    head = (f"<b>{escape(table.summary())}</b>" + (f"<div>{escape(skipped)}</div>" if skipped else "")
            + f"<div><b>{escape(table.verdict())}</b></div>")
    bundle = _bundle(table.table(), head, picture if table.rows else None)
    bundle["text/html"] = bundle["text/html"][:-len("</div>")] + sweep_html(table) + "</div>"
    return bundle


def trace_bundle(trace: Any) -> dict[str, str]:
    """A measured trace: its timeline's view, with the trace's own summary as text."""
    out = dict(timeline_bundle(trace.timeline())) if trace.lanes else {}
    out["text/plain"] = trace.summary()
    return out


#: How each pgstudio type displays: (module, class name) -> view.  Named, not imported, so that
#: render needs no layer above it (runtime results display through the same table).
DISPLAYS: dict[tuple[str, str], Callable[[Any], dict[str, str]]] = {
    ("pgstudio.model.design", "Design"): design_bundle,
    ("pgstudio.analysis.diagnostics", "Report"): report_bundle,
    ("pgstudio.analysis.barrier_layout", "BarrierLayout"): layout_bundle,
    ("pgstudio.analysis.timeline", "Timeline"): timeline_bundle,
    ("pgstudio.analysis.verdict", "Verdict"): verdict_bundle,
    ("pgstudio.codegen.source", "KernelSource"): source_bundle,
    ("pgstudio.runtime.bench_table", "BenchTable"): bench_bundle,
    ("pgstudio.runtime.launch", "RunResult"): rows_bundle,
    ("pgstudio.explore.sweep_table", "SweepTable"): sweep_bundle,
    ("pgstudio.runtime.trace", "Trace"): trace_bundle,
}


def view_of(value: Any) -> Callable[[Any], dict[str, str]] | None:
    """The view of ``value``'s type (or of a base class), or None."""
    for cls in type(value).__mro__:
        view = DISPLAYS.get((cls.__module__, cls.__qualname__))
        if view is not None:
            return view
    return None


def bundle(value: Any) -> dict[str, str]:
    """The MIME bundle a notebook shows for ``value`` (``text/plain`` only for a type without a view)."""
    view = view_of(value)
    return view(value) if view is not None else {"text/plain": str(value)}


def register(shell: Any) -> None:
    """Teach an IPython shell to show every type of ``DISPLAYS`` with its view."""
    formatter = shell.display_formatter.mimebundle_formatter
    for (module, name), view in DISPLAYS.items():
        formatter.for_type_by_name(module, name, view)


__all__ = ["DISPLAYS", "bench_bundle", "bundle", "design_bundle", "inline_svg", "layout_bundle", "register",
           "report_bundle", "report_html", "rows_bundle", "source_bundle", "sweep_bundle", "sweep_html",
           "timeline_bundle", "trace_bundle", "verdict_bundle", "verdict_html", "view_of"]

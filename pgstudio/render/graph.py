"""The dependency graph of a design, as a ``graphviz.Digraph`` (nothing is written to disk).

Data flows left to right::

    gmem_a --> [load_a] --> smem_a --> [mma] --> tmem_c --> [epilogue] --> gmem_d

* resources are boxes filled by memory (gmem / smem / tmem), labelled with name, pipeline
  type, what they compute, stages and bytes per stage;
* solid dark arrows are the design's dependency edges (``resource <- the resources it is
  computed from``);
* tasks are rounded white boxes with their warp range; a blue arrow goes from a task to each
  resource it produces (producers arrive on the **full** barrier), an orange arrow from each
  resource it consumes to the task (consumers arrive on the **empty** barrier);
* groups are clusters labelled with their mode, the side they share and their barrier count;
* anything a diagnostic names is outlined in red (errors) or amber (warnings), the messages as
  tooltip; ``highlight=`` marks one element (the studio's selected diagnostic).

Call ``.pipe(format="svg")`` on the result, or display it in a notebook.
"""

from __future__ import annotations

import re
from html import escape as _html_escape
from typing import Any

from ..analysis.validate import validate
from ..model.text import visible
from . import style
from ._graphviz import select

__all__ = ["escape", "dot_text", "resource_label", "warp_range", "dependency_graph", "graph_svg"]

_PLAIN_ID = re.compile(r"[A-Za-z0-9_]+")


def escape(text: Any) -> str:
    """A piece of an HTML-like label: one printable line, XML-escaped (never pasted raw)."""
    return _html_escape(visible(str(text)))


def dot_text(text: Any) -> Any:
    """A plain DOT attribute value (tooltip, graph name): one printable line through graphviz's own
    quoting, so backslashes, quotes and '<...>' are literal text."""
    import graphviz

    return graphviz.escape(visible(str(text)))


def _node_id(kind: str, name: str) -> str:
    """A node id no name can break (':' would make a port, a quote end the id): plain names as
    they are, any other as its hex code, so ids stay distinct."""
    if _PLAIN_ID.fullmatch(name):
        return f"{kind}__{name}"
    return f"{kind}_x_{name.encode('utf-8', 'surrogatepass').hex()}"


def _diagnostics(design: Any, report: Any) -> tuple[Any, list]:
    """(report-ish, diagnostics): validate when no report was passed."""
    if report is None:
        report = validate(design)
    diags = list(getattr(report, "diagnostics", report) or ())
    return report, diags


def _findings(diags: list, element: str) -> list:
    return [d for d in diags if element in getattr(d, "where", ())]


def _outline(attrs: dict, found: list, element: str, highlight: str | None, base: str) -> dict:
    """Red / amber outline and tooltip for diagnostics; a gold halo for the highlighted element."""
    if found:
        worst = "error" if any(str(d.severity) == "error" for d in found) else str(found[0].severity)
        attrs["color"] = style.SEVERITY.get(worst, style.SEVERITY["error"])
        attrs["penwidth"] = "2.5"
        attrs["tooltip"] = dot_text(" | ".join(f"{d.severity} [{d.code}] {d.message}" for d in found))
    else:
        attrs["tooltip"] = dot_text(base)
    if highlight is not None and element == highlight:
        attrs["penwidth"] = "4"
        attrs["style"] = attrs.get("style", "") + ",bold"
        if not found:
            attrs["color"] = style.HIGHLIGHT
        attrs["fillcolor"] = "#FEF9E7"
    return attrs


def _table(*rows: str) -> str:
    cells = "".join(f"<TR><TD>{r}</TD></TR>" for r in rows)
    return f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{cells}</TABLE>>'


def _small(text: str) -> str:
    return f'<FONT POINT-SIZE="9">{escape(text)}</FONT>'


def resource_label(r: Any) -> str:
    """Name, then type and computation, then stages x bytes (HTML-like label)."""
    cfg = r.pipeline_config
    rows = [f"<B>{escape(r.name)}</B>"]
    compute = str(r.compute)
    if cfg is None:
        rows.append(_small(f"{r.memory}, {compute}"))
    else:
        rows.append(_small(f"{cfg.pipeline_type}, {compute}"))
        stages = f"{cfg.num_stages} stage{'s' if cfg.num_stages != 1 else ''} x {style.fmt_bytes(cfg.num_bytes)}"
        rows.append(_small(stages))
    if r.aliases:
        rows.append(_small(f"view of {r.aliases}"))
    return _table(*rows)


def warp_range(task: Any) -> str:
    last = task.warp_idx + task.num_warps - 1
    return f"warp {task.warp_idx}" if task.num_warps == 1 else f"warps {task.warp_idx}..{last}"


def _group_barriers(design: Any) -> dict[str, int]:
    """Barrier slots each group owns (from the one layout); empty when the layout cannot be built."""
    try:
        from ..analysis.layout import barrier_layout
        layout = barrier_layout(design)
    except Exception:  # a broken design still gets a picture; its diagnostics say why
        return {}
    out: dict[str, int] = {}
    for s in layout.sets:
        out[s.owner] = out.get(s.owner, 0) + s.stages
    return out




def _caption_line(d: Any, width: int = 120) -> str:
    text = f"{d.severity} [{d.code}] {d.message}"
    text = text if len(text) <= width else text[:width - 3] + "..."
    return f'<FONT COLOR="{style.SEVERITY.get(str(d.severity), style.INK)}">{escape(text)}</FONT>'


def _legend(design: Any, diags: list, limit: int = 6) -> str:
    """Caption under the graph: design name and status, the first diagnostics, the key."""
    errors = sum(1 for d in diags if str(d.severity) == "error")
    warnings = sum(1 for d in diags if str(d.severity) == "warning")
    if errors or warnings:
        colour = style.SEVERITY["error" if errors else "warning"]
        status = (f'<FONT COLOR="{colour}">{errors} error(s), {warnings} warning(s), outlined '
                  f'(hover for the message)</FONT>')
    else:
        status = "no problems found"
    rows = [f"<B>{escape(design.name)}</B>: {status}"]
    rows += [_caption_line(d) for d in diags[:limit]]
    if len(diags) > limit:
        rows.append(escape(f"... and {len(diags) - limit} more"))
    swatches = "".join(
        f'<TD BGCOLOR="{fill}" COLOR="{border}" BORDER="1" CELLPADDING="3">{kind}</TD><TD WIDTH="6"></TD>'
        for kind, (fill, border) in style.MEMORY.items())
    def key(colour: str, bold: str, text: str) -> str:
        return f'<TD><FONT COLOR="{colour}"><B>{bold}</B>: {text}</FONT></TD><TD WIDTH="10"></TD>'

    row_a = (swatches + key(style.INK, "solid arrow", "depends on")
             + key(style.MUTED, "dashed grey", "reads / writes gmem (no barrier)"))
    row_b = (key(style.ROLE["full"], "dashed blue", "task produces (arrives on full)")
             + key(style.ROLE["empty"], "dashed orange", "task consumes (arrives on empty)"))
    rows += [f'<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="2"><TR>{r}</TR></TABLE>' for r in (row_a, row_b)]
    body = "".join(f'<TR><TD ALIGN="LEFT">{r}</TD></TR>' for r in rows)
    return f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="1">{body}</TABLE>>'


def dependency_graph(design: Any, report: Any = None, *, highlight: str | None = None,
                     tasks: bool = True, legend: bool = True) -> Any:
    """A ``graphviz.Digraph`` of ``design``; see the module docstring.

    ``report``: a ``Report`` (or any iterable of diagnostics); default ``design.validate()``.
    ``highlight``: the name of a resource, group or task to mark.
    """
    import graphviz

    select()
    _, diags = _diagnostics(design, report)
    g = graphviz.Digraph(name=dot_text(design.name), graph_attr={
        "rankdir": "LR", "fontname": style.FONT, "fontsize": "11", "nodesep": "0.25", "ranksep": "0.45",
        "bgcolor": "white", "labelloc": "b", "labeljust": "c", "tooltip": dot_text(design.summary()),
    }, node_attr={"fontname": style.FONT, "fontsize": "11", "margin": "0.08,0.04"},
        edge_attr={"fontname": style.FONT, "fontsize": "9", "arrowsize": "0.7"})
    drawing = _Drawing(design, diags, highlight, g)
    drawing.groups_and_resources()
    drawing.dependencies()
    if tasks:
        drawing.tasks()
    if legend:
        g.attr(label=_legend(design, diags))
    return g


class _Drawing:
    """One dependency graph being drawn: the nodes known so far and the diagnostics that mark them.
    A name the design uses but does not declare gets one dashed red 'missing' node."""

    def __init__(self, design: Any, diags: list, highlight: str | None, g: Any) -> None:
        self.design, self.diags, self.highlight, self.g = design, diags, highlight, g
        self.known = {r.name: r for r in design.resources}
        self.grouped: dict[str, str] = {}
        for grp in design.groups:
            for m in grp.members:
                self.grouped.setdefault(m.name, grp.name)
                self.known.setdefault(m.name, m)
        self.missing: set[str] = set()

    def add_resource(self, container: Any, r: Any) -> None:
        fill, border = style.memory_colours(r.memory)
        attrs = {"shape": "box", "style": "filled,rounded" if r.memory.value == "tmem" else "filled",
                 "fillcolor": fill, "color": border, "penwidth": "1.2"}
        base = f"{r.name}: {style.MEMORY_WHAT.get(str(r.memory), r.memory)}"
        container.node(_node_id("res", r.name), resource_label(r),
                       **_outline(attrs, _findings(self.diags, r.name), r.name, self.highlight, base))

    def groups_and_resources(self) -> None:
        """Each group as a cluster around its members (with its mode and barrier count), then the
        resources outside any group."""
        barriers = _group_barriers(self.design)
        for grp in self.design.groups:
            with self.g.subgraph(name="cluster_" + _node_id("grp", grp.name).removeprefix("grp__")) as c:
                count = barriers.get(grp.name)
                mode = grp.mode.value
                shared = "shared " + " + ".join(grp.mode.shared_barriers)  # from the protocol table
                label = (f"<<B>{escape(grp.name)}</B>: {mode} ({shared})<BR ALIGN=\"LEFT\"/>"
                         f"<FONT POINT-SIZE=\"9\">{count if count is not None else '?'} barriers</FONT>"
                         f"<BR ALIGN=\"LEFT\"/>>")
                attrs = {"label": label, "style": "rounded,filled", "fillcolor": style.GROUP_FILL,
                         "color": style.MUTED, "penwidth": "1.2", "fontsize": "11", "labeljust": "l", "labelloc": "t"}
                attrs = _outline(attrs, _findings(self.diags, grp.name), grp.name, self.highlight,
                                 f"group {grp.name}: {mode}")
                c.attr(**attrs)
                for m in grp.members:
                    if self.grouped.get(m.name) == grp.name:
                        self.add_resource(c, m)
        for r in self.design.resources:
            if r.name not in self.grouped:
                self.add_resource(self.g, r)

    def staged_name(self, name: str) -> bool:
        """Is ``name`` a pipelined resource (one with barriers)?  Unknown names count as staged."""
        r = self.known.get(name)
        return r is None or r.pipeline_config is not None

    def ref(self, name: str) -> str:
        """Node id of a resource; an unknown name gets a dashed red 'missing' node once."""
        if name not in self.known and name not in self.missing:
            self.missing.add(name)
            self.g.node(_node_id("res", name), _table(f"<B>{escape(name)}</B>", _small("not a resource of the design")),
                        shape="box", style="dashed",
                        color=style.SEVERITY["error"], fontcolor=style.SEVERITY["error"],
                        tooltip=dot_text(f"{name!r} is named but not declared as a resource"))
        return _node_id("res", name)

    def edge_attrs(self, a: str, b: str, colour: str, base: str) -> dict:
        """A diagnostic naming both ends of an edge colours the edge too."""
        found = [d for d in self.diags if a in getattr(d, "where", ()) and b in getattr(d, "where", ())]
        if not found:
            return {"color": colour, "tooltip": dot_text(base)}
        tip = dot_text(" | ".join(f"{d.severity} [{d.code}] {d.message}" for d in found))
        return {"color": style.SEVERITY["error"], "penwidth": "2.2", "tooltip": tip}

    def dependencies(self) -> None:
        for target, deps in self.design.graph:
            for dep in deps:
                self.g.edge(self.ref(dep), self.ref(target), **{"penwidth": "1.6",
                            **self.edge_attrs(dep, target, style.INK, f"{target} depends on {dep}")})

    def tasks(self) -> None:
        """Each task as a node, with dashed edges to what it consumes (full / empty colours when staged)."""
        for t in self.design.tasks:
            attrs = {"shape": "box", "style": "rounded,filled", "fillcolor": style.TASK_FILL,
                     "color": style.TASK_BORDER, "penwidth": "1.2"}
            base = f"task {t.name}: {warp_range(t)} ({t.num_threads} threads)"
            self.g.node(_node_id("task", t.name), _table(f"<B>{escape(t.name)}</B>", _small(warp_range(t))),
                        **_outline(attrs, _findings(self.diags, t.name), t.name, self.highlight, base))
            for src in t.src_resources:
                staged = self.staged_name(src)
                self.g.edge(self.ref(src), _node_id("task", t.name), style="dashed", arrowhead="vee",
                            **self.edge_attrs(src, t.name, style.ROLE["empty"] if staged else style.MUTED,
                                              f"{t.name} consumes {src}: waits on full, arrives on empty" if staged
                                              else f"{t.name} reads {src} (no barrier)"))
            for dst in t.dst_resources:
                staged = self.staged_name(dst)
                self.g.edge(_node_id("task", t.name), self.ref(dst), style="dashed", arrowhead="vee",
                            **self.edge_attrs(t.name, dst, style.ROLE["full"] if staged else style.MUTED,
                                              f"{t.name} produces {dst}: waits on empty, arrives on full" if staged
                                              else f"{t.name} writes {dst} (no barrier)"))


def graph_svg(design: Any, report: Any = None, **kwargs: Any) -> str:
    """The dependency graph as SVG text."""
    return dependency_graph(design, report, **kwargs).pipe(format="svg").decode()

"""What every pane shows for one Design, as HTML text (no widgets here).

A ``Snapshot`` is computed from the current Design after each edit; each pane asks it for its
HTML.  The heavy parts (pictures, simulation, the checker, code generation) are computed only
when a pane asks, and at most once per design.  A piece that cannot be shown -- its module is
not installed, or the design has errors that make it meaningless -- gives a short
"not available: <why>" note instead of an exception, so one missing piece never breaks the
studio.
"""

from __future__ import annotations

import base64
import importlib
import inspect
import io
from functools import cached_property
from html import escape
from typing import Any, Callable

from ..analysis.layout import barrier_layout, smem_layout
from ..analysis.validate import validate
from ..model.design import Design
from ..model.ungroup import ungrouped


#: Iterations of inner (k) loops the timeline and the checker unroll: enough to show the pattern.
INNER = 2


class Unavailable(Exception):
    """A pane cannot show its content; the message says why."""


def not_available(why: str) -> str:
    return f"<div class='pg-na'>not available: {escape(why)}</div>"


def optional(module: str, attr: str, what: str) -> Callable[..., Any]:
    """``module.attr``, or ``Unavailable`` saying which piece is missing and why."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            raise Unavailable(f"{what} ({module}) is not part of this pgstudio installation") from None
        raise Unavailable(f"{what} needs the package {exc.name!r}; install it with pip install 'pgstudio[studio]'") from None
    except ImportError as exc:
        raise Unavailable(f"{what} could not be imported: {exc}") from None
    fn = getattr(mod, attr, None)
    if fn is None:
        raise Unavailable(f"{what}: {module} has no {attr}()")
    return fn


def figure_svg(fig: Any) -> str:
    """SVG text of a Figure that render/ made: through render's own writer (text kept as text,
    small and fast), else by asking the figure to save itself."""
    try:
        return optional("pgstudio.render._figure", "to_svg", "the figure writer")(fig)
    except Unavailable:
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
        return buf.getvalue()


def svg_block(svg: str, *, inline: bool = False, alt: str = "") -> str:
    """An SVG picture for an HTML pane.  Inline keeps graphviz tooltips; matplotlib figures go in
    an <img> so their clip-path ids cannot collide with another figure's on the same page."""
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    if inline:
        return f"<div class='pg-fig'>{svg}</div>"
    data = base64.b64encode(svg.encode()).decode()
    return f"<div class='pg-fig'><img alt='{escape(alt)}' src='data:image/svg+xml;base64,{data}'></div>"


def pre(text: str, cls: str = "pg-pre") -> str:
    return f"<pre class='{cls}'>{escape(text)}</pre>"


def guarded(fn: Callable[[], str]) -> str:
    """Run a pane builder; any failure becomes a readable note, never a traceback."""
    try:
        return fn()
    except Unavailable as exc:
        return not_available(str(exc))
    except Exception as exc:  # a broken design must not break the pane
        return not_available(f"{type(exc).__name__}: {exc}")


class Snapshot:
    """Analysis of one design for the studio's panes; see the module docstring."""

    def __init__(self, design: Design, iterations: int = 2) -> None:
        self.design = design
        self.iterations = iterations

    # -- always computed (cheap, standard library) ----------------------------------------
    @cached_property
    def report(self) -> Any:
        return validate(self.design)

    @property
    def diagnostics(self) -> tuple:
        return self.report.diagnostics

    @property
    def errors(self) -> int:
        return len(self.report.errors)

    @cached_property
    def layout(self) -> Any:
        return barrier_layout(self.design)

    @cached_property
    def twin_layout(self) -> Any:
        return barrier_layout(ungrouped(self.design))

    def status(self) -> str:
        """One line: valid or how many problems."""
        r = self.report
        if r.ok and not r.warnings:
            return "valid: no problems found"
        parts = []
        if r.errors:
            parts.append(f"{len(r.errors)} error{'s' if len(r.errors) != 1 else ''}")
        if r.warnings:
            parts.append(f"{len(r.warnings)} warning{'s' if len(r.warnings) != 1 else ''}")
        return ", ".join(parts)

    def _needs_valid(self, what: str) -> None:
        if not self.report.ok:
            n = len(self.report.errors)
            raise Unavailable(f"{what} needs a valid design; this one has {n} error{'s' if n != 1 else ''} "
                              f"(see Diagnostics)")

    # -- panes ------------------------------------------------------------------------------
    def barrier_counts(self) -> str:
        """``16 barriers (128 B); ungrouped 20; grouping saves 4 (32 B)``."""
        try:
            mine, twin = self.layout.num_barriers, self.twin_layout.num_barriers
        except Exception as exc:
            return f"barrier layout unavailable: {exc}"
        saved = twin - mine
        text = f"{mine} barriers ({mine * 8} B); ungrouped {twin}"
        if saved > 0:
            text += f"; grouping saves {saved} ({saved * 8} B)"
        return text

    def smem_text(self) -> str:
        try:
            return smem_layout(self.design).report()
        except Exception as exc:
            return f"shared memory layout unavailable: {exc}"

    def graph_html(self, highlight: str | None = None) -> str:
        def build() -> str:
            graph = optional("pgstudio.render.graph", "dependency_graph", "the dependency graph")
            svg = graph(self.design, report=self.report, highlight=highlight).pipe(format="svg").decode()
            return svg_block(svg, inline=True)
        return guarded(build)

    def barriers_html(self) -> str:
        def build() -> str:
            counts = (f"<div class='pg-counts'>{escape(self.barrier_counts())}</div>"
                      f"<div class='pg-note'>{escape(self.smem_text())}</div>")
            try:
                compare = optional("pgstudio.render.barriers", "comparison_figure", "the barrier picture")
                picture = svg_block(figure_svg(compare(self.design)), alt="barrier layout")
            except Unavailable as exc:
                picture = not_available(str(exc))
            except Exception as exc:
                picture = not_available(f"the picture failed: {type(exc).__name__}: {exc}")
            return counts + picture + f"<details><summary>slot table</summary>{pre(self.layout.table())}</details>"
        return guarded(build)

    def timeline_html(self) -> str:
        def build() -> str:
            self._needs_valid("the simulated timeline")
            simulate = optional("pgstudio.analysis.simulate", "simulate", "the simulator")
            kwargs = {"inner": INNER} if "inner" in inspect.signature(simulate).parameters else {}
            tl = simulate(self.design, iterations=max(self.iterations, 4), **kwargs)
            head = f"<div class='pg-counts'>{escape(tl.summary())}</div>"
            try:
                draw = optional("pgstudio.render.timeline", "timeline_svg", "the timeline picture")
                return head + svg_block(draw(tl), alt="timeline")
            except Unavailable as exc:
                return head + not_available(str(exc)) + pre(tl.table())
        return guarded(build)

    def checker_html(self) -> str:
        def build() -> str:
            self._needs_valid("the exhaustive checker")
            check = optional("pgstudio.analysis.check", "check", "the exhaustive checker")
            kwargs = {"inner": INNER} if "inner" in inspect.signature(check).parameters else {}
            verdict = check(self.design, iterations=self.iterations, **kwargs)
            return rich_html(verdict, f"every interleaving of {self.iterations} iterations "
                                      f"(inner loops {INNER}) explored")
        return guarded(build)

    @cached_property
    def kernel_source(self) -> Any:
        self._needs_valid("code generation")
        emit = optional_emit()
        return emit(self.design)

    def source_html(self) -> str:
        def build() -> str:
            src = self.kernel_source
            head = (f"{src.entry}: block {tuple(src.block)}, grid {src.grid or 'persistent (one block per SM)'}, "
                    f"{src.smem_bytes} B shared memory, {src.arch}, {len(src.code.splitlines())} lines")
            return f"<div class='pg-counts'>{escape(head)}</div>{pre(src.code, 'pg-pre pg-code')}"
        return guarded(build)


def optional_emit() -> Callable[[Design], Any]:
    """The code generator's ``emit``, wherever codegen keeps it."""
    for module in ("pgstudio.codegen", "pgstudio.codegen.kernel", "pgstudio.codegen.emit"):
        try:
            return optional(module, "emit", "the CUDA code generator")
        except Unavailable as exc:
            last = exc
    raise last


def rich_html(value: Any, caption: str = "") -> str:
    """HTML of any value with a rich display (``_repr_html_`` / mimebundle), else its text."""
    html = None
    if hasattr(value, "_repr_mimebundle_"):
        bundle = value._repr_mimebundle_() or {}
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        html = bundle.get("text/html")
        if html is None and "image/svg+xml" in bundle:
            html = svg_block(bundle["image/svg+xml"], alt=type(value).__name__)
    if html is None and hasattr(value, "_repr_html_"):
        html = value._repr_html_()
    head = f"<div class='pg-note'>{escape(caption)}</div>" if caption else ""
    if html:
        return head + html
    summary = value.summary() if hasattr(value, "summary") else ""
    return head + (f"<div class='pg-counts'>{escape(summary)}</div>" if summary else "") + pre(str(value))

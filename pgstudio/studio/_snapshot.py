"""What every pane shows for one Design, as HTML text (no widgets here).

A ``Snapshot`` is computed from the current Design after each edit; each pane asks it for its
HTML.  The heavy parts (pictures, simulation, the checker, code generation) are computed only
when a pane asks, and at most once per design.  A piece that cannot be shown -- its picture
library is not installed, or the design has errors that make it meaningless -- gives a short
"not available: <why>" note instead of an exception, so one missing piece never breaks the
studio.
"""

from __future__ import annotations

import base64
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cached_property
from html import escape
from typing import Any, Callable

from ..analysis.check import check
from ..analysis.converge import offered
from ..analysis.cost import design_cost
from ..analysis.layout import barrier_layout, smem_layout
from ..analysis.predict import prediction
from ..analysis.simulate import simulate
from ..analysis.validate import validate
from ..codegen.kernel import emit
from ..model.design import Design
from ..model.ungroup import ungrouped
from ..render import comparison_figure, dependency_graph, timeline_svg, to_svg
from ..render.display import bundle


#: Iterations of inner (k) loops the timeline and the checker unroll: enough to show the pattern.
INNER = 2


#: One thread lays out dependency graphs: Graphviz runs as a subprocess, so while it works the
#: studio's own thread draws the other panes (``Snapshot.prefetch_graph``).
_GRAPHVIZ: ThreadPoolExecutor | None = None


def _graphviz_thread() -> ThreadPoolExecutor:
    global _GRAPHVIZ
    if _GRAPHVIZ is None:
        _GRAPHVIZ = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pgstudio-graphviz")
    return _GRAPHVIZ


class Unavailable(Exception):
    """A pane cannot show its content; the message says why."""


def not_available(why: str) -> str:
    return f"<div class='pg-na'>not available: {escape(why)}</div>"


def svg_block(svg: str, *, inline: bool = False, alt: str = "") -> str:
    """An SVG picture for an HTML pane.  Inline keeps graphviz tooltips; matplotlib figures go in
    an <img> so their clip-path ids cannot collide with another figure's on the same page."""
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    if inline:
        return f"<div class='pg-fig'>{svg}</div>"
    data = base64.b64encode(svg.encode()).decode()
    return f"<div class='pg-fig'><img alt='{escape(alt)}' src='data:image/svg+xml;base64,{data}'></div>"


#: The smallest text a picture of the studio may show, in screen pixels.
LEGIBLE_PX = 10.0


def legible(svg: str, min_px: float = LEGIBLE_PX) -> str:
    """A Graphviz SVG that is never drawn narrower than its smallest text allows: the pane's
    ``max-width: 100%`` scales a wide graph down with its text (9-unit labels came out at 7 px
    in a narrow pane), so the root gets a ``min-width`` at which that text is ``min_px`` pixels
    high; a narrower pane scrolls the picture sideways instead of shrinking it."""
    import re

    root = re.search(r"<svg\b[^>]*>", svg)
    box = re.search(r'viewBox="\s*[-\d.]+\s+[-\d.]+\s+([\d.]+)\s+[\d.]+\s*"', root.group(0)) if root else None
    sizes = [float(x) for x in re.findall(r'font-size="([\d.]+)"', svg) if float(x) > 0]
    if root is None or box is None or not sizes:
        return svg
    width = float(box.group(1)) * min_px / min(sizes)
    tag = root.group(0)
    styled = (tag.replace('style="', f'style="min-width: {width:.0f}px; ', 1) if 'style="' in tag
              else tag[:-1] + f' style="min-width: {width:.0f}px">')
    return svg[:root.start()] + styled + svg[root.end():]


def pre(text: str, cls: str = "pg-pre") -> str:
    return f"<pre class='{cls}'>{escape(text)}</pre>"


def guarded(fn: Callable[[], str]) -> str:
    """Run a pane builder; any failure becomes a readable note, never a traceback."""
    try:
        return fn()
    except Unavailable as exc:
        return not_available(str(exc))
    except ImportError as exc:  # graphviz / matplotlib missing: say which extra brings them
        return not_available(f"{exc}; install the picture libraries: pip install 'pgstudio[render]'")
    except Exception as exc:  # a broken design must not break the pane
        return not_available(f"{type(exc).__name__}: {exc}")


class Snapshot:
    """Analysis of one design for the studio's panes; see the module docstring."""

    def __init__(self, design: Design, iterations: int = 2, last_valid: Design | None = None) -> None:
        self.design = design
        self.iterations = iterations
        self.last_valid = last_valid  # the studio's last valid design: fixes back to it come first
        self._graphs: dict[str | None, Future] = {}

    # -- always computed (cheap, standard library) ----------------------------------------
    @cached_property
    def report(self) -> Any:
        """Every diagnostic, root causes first, with the fixes that converge (tried on the design,
        the ones back to the last valid design's values first: ``analysis.converge``)."""
        return offered(self.design, validate(self.design), self.last_valid)

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
        if saved > 0 and self.report.ok:  # a saving of a design with errors is no saving yet
            text += f"; grouping saves {saved} ({saved * 8} B)"
        return text

    def predicted_text(self) -> str:
        """``predicted 0.1771 ms (compute-bound) [NVIDIA H200 fit]`` for a valid design, else ""."""
        if not self.report.ok:
            return ""
        try:
            p = prediction(self.design)
        except Exception:  # noqa: BLE001 - a design the model does not cover shows no prediction
            return ""
        return f"predicted {p.ms:.4f} ms ({p.bound}-bound) [{p.machine}]"

    def smem_text(self) -> str:
        try:
            return smem_layout(self.design).report()
        except Exception as exc:
            return f"shared memory layout unavailable: {exc}"

    def _graph_svg(self, highlight: str | None) -> str:
        return dependency_graph(self.design, report=self.report, highlight=highlight).pipe(format="svg").decode()

    def prefetch_graph(self, highlight: str | None = None) -> None:
        """Start laying out the graph in the background; ``graph_html`` picks the result up."""
        if highlight not in self._graphs:
            _ = self.report  # computed here, not raced for by the thread
            self._graphs[highlight] = _graphviz_thread().submit(self._graph_svg, highlight)

    def graph_html(self, highlight: str | None = None) -> str:
        def build() -> str:
            pending = self._graphs.pop(highlight, None)
            return svg_block(legible(pending.result() if pending else self._graph_svg(highlight)), inline=True)
        return guarded(build)

    @cached_property
    def smem(self) -> Any:
        return smem_layout(self.design)

    def unavailable_html(self, exc: BaseException) -> str:
        """A pane's note for ``exc`` (what ``guarded`` would say)."""
        def fail() -> str:
            raise exc
        return guarded(fail)

    def barrier_head_html(self) -> str:
        return (f"<div class='pg-counts'>{escape(self.barrier_counts())}</div>"
                f"<div class='pg-note'>{escape(self.smem_text())}. Hover a cell: slot, offset, phase parity per "
                f"round, arrivals as threads and warps, the buffer stage it guards; click it to see it in the "
                f"graph and the CUDA source.</div>")

    def barrier_static_html(self) -> str:
        """The grouped vs ungrouped picture and the slot table, folded (files and HTML keep the static pictures)."""
        def build() -> str:
            try:
                picture = svg_block(to_svg(comparison_figure(self.design)), alt="barrier layout")
            except ImportError as exc:
                picture = not_available(f"{exc}; install the picture libraries: pip install 'pgstudio[render]'")
            return picture + f"<details><summary>slot table</summary>{pre(self.layout.table())}</details>"
        return guarded(build)

    def barriers_html(self) -> str:
        """The Barriers pane as static HTML (counts, the grouped vs ungrouped picture, the slot table)."""
        def build() -> str:
            picture = svg_block(to_svg(comparison_figure(self.design)), alt="barrier layout")
            return (f"<div class='pg-counts'>{escape(self.barrier_counts())}</div>"
                    f"<div class='pg-note'>{escape(self.smem_text())}</div>" + picture
                    + f"<details><summary>slot table</summary>{pre(self.layout.table())}</details>")
        return guarded(build)

    @cached_property
    def cost(self) -> tuple[Any, str]:
        """(the step costs the timeline is simulated with, what they are): ``cost.design_cost``."""
        return design_cost(self.design)

    @cached_property
    def timeline(self) -> Any:
        """The simulated timeline (``Unavailable`` for a design with errors), with the calibrated
        step costs of the design where it has a problem to size them (``cost``)."""
        self._needs_valid("the simulated timeline")
        return simulate(self.design, iterations=max(self.iterations, 4), inner=INNER, cost=self.cost[0])

    def timeline_html(self) -> str:
        def build() -> str:
            tl = self.timeline
            head = (f"<div class='pg-counts'>{escape(tl.summary())}</div>"
                    f"<div class='pg-note'>simulated with the {escape(self.cost[1])}</div>")
            try:
                return head + svg_block(timeline_svg(tl), alt="timeline")
            except ImportError as exc:
                return head + not_available(f"{exc}; pip install 'pgstudio[render]'") + pre(tl.table())
        return guarded(build)

    def checker_html(self) -> str:
        def build() -> str:
            self._needs_valid("the exhaustive checker")
            verdict = check(self.design, iterations=self.iterations, inner=INNER)
            return rich_html(verdict, f"every interleaving of {self.iterations} iterations "
                                      f"(inner loops {INNER}) explored")
        return guarded(build)

    @cached_property
    def kernel_source(self) -> Any:
        self._needs_valid("code generation")
        return emit(self.design)

    def source_html(self) -> str:
        def build() -> str:
            src = self.kernel_source
            head = (f"{src.entry}: block {tuple(src.block)}, grid {src.grid or 'persistent (one block per SM)'}, "
                    f"{src.smem_bytes} B shared memory, {src.arch}, {len(src.code.splitlines())} lines")
            return f"<div class='pg-counts'>{escape(head)}</div>{pre(src.code, 'pg-pre pg-code')}"
        return guarded(build)


def rich_html(value: Any, caption: str = "") -> str:
    """HTML of any value with a rich view (``render.display``), else its text."""
    views = bundle(value)
    html = views.get("text/html")
    if html is None and "image/svg+xml" in views:
        html = svg_block(views["image/svg+xml"], alt=type(value).__name__)
    head = f"<div class='pg-note'>{escape(caption)}</div>" if caption else ""
    if html:
        return head + html
    summary = value.summary() if hasattr(value, "summary") else ""
    return head + (f"<div class='pg-counts'>{escape(summary)}</div>" if summary else "") + pre(str(value))

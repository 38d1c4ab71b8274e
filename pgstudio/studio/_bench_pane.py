"""Compile & Benchmark: generate the kernel, compile it for sm_90a and sm_100a, then run and time
the design against its ungrouped twin and the library peer, each verified first.

Progress is shown step by step, the benchmark's rounds with tqdm's rate and ETA.  Without a GPU
the pane says so and still compiles for both architectures (or, on the null runtime --
``executor="null"``, or ``PGSTUDIO_EXECUTOR=null`` -- runs every step of the benchmark with nothing
launched, and shows its table as "no GPU: null runtime"); the benchmark runs in a GPU worker
process, so a kernel that traps costs that worker (the pane shows the error and its likely
cause) and never the notebook; a kernel that hangs is stopped by its watchdog and the watchdog's
message (which task, barrier, stage, phase and iteration stopped) is shown.  The chart is plain
HTML bars.
"""

from __future__ import annotations

import math
import re
from html import escape, unescape
from typing import Any, Callable

import ipywidgets as W

from ..analysis.validate import validate
from ..analysis.predict import prediction
from ..codegen.kernel import emit
from ..errors import CompileError, GpuUnavailable, KernelFault, KernelHangError
from ..model.targets import ARCHES
from ..explore.bench import tuned_benchmark as benchmark
from ..runtime.compile import compile_cubin
from ..runtime.executor import check_gpu
from ..runtime.progress import Progress
from ..runtime.verify import NULL_RUNTIME
from ._snapshot import rich_html

def compile_for(design: Any, arch: str) -> tuple[Any, Any]:
    """Generate the kernel of ``design`` for ``arch`` and compile it (NVRTC; no GPU needed).
    Returns (KernelSource, compiled image)."""
    source = emit(design, arch=arch)
    return source, compile_cubin(source, arch)


def binary_size(compiled: Any) -> str:
    for attr in ("data", "cubin", "image", "binary"):
        data = getattr(compiled, attr, None)
        if isinstance(data, (bytes, bytearray)) and data:
            seconds = getattr(compiled, "seconds", None)
            took = f" in {seconds:.2f} s" if isinstance(seconds, float) and seconds > 0 else ""
            return f"{len(data):,} B cubin{took}"
    return "compiled"


# -- results -> chart -------------------------------------------------------------------------

def _get(row: Any, *names: str) -> Any:
    for n in names:
        if isinstance(row, dict) and n in row:
            return row[n]
        if hasattr(row, n):
            return getattr(row, n)
    return None


def result_rows(results: Any) -> list[tuple[str, float, str]]:
    """(variant, time in microseconds, verification) from a results table, as far as it says."""
    rows = _get(results, "rows", "results", "variants")
    if rows is None and isinstance(results, (list, tuple)):
        rows = results
    out = []
    for r in rows or ():
        if isinstance(r, tuple) and len(r) >= 2 and isinstance(r[0], str):  # (variant, median ms, ...)
            r = {"name": r[0], "median_ms": r[1]}
        name = _get(r, "variant", "name", "label")
        us = _get(r, "time_us", "median_us", "us")
        if us is None:
            ms = _get(r, "time_ms", "median_ms", "ms")
            us = ms * 1e3 if isinstance(ms, (int, float)) else None
        verified = _get(r, "verified", "ok", "correct", "verification")
        if name is None or not isinstance(us, (int, float)) or not math.isfinite(us):
            continue  # no time to draw (the null runtime measures none)
        # the runtime verifies every variant against a reference before timing it: a row is verified
        status = "NOT verified" if verified is False else "verified"
        out.append((str(name), float(us), status))
    return out


def predicted_line(design: Any, measured_us: float | None = None) -> str:
    """The calibrated model's kernel time for the design's problem, beside the measured one after a
    benchmark ("" when the model does not cover the design): what a design decision is weighed by."""
    try:
        p = prediction(design)
    except Exception:  # noqa: BLE001 - a design the model does not cover shows no prediction
        return ""
    text = p.beside(measured_us / 1e3) if measured_us else f"predicted {p.ms:.4f} ms"
    return f"{text}; {p.bound}-bound, {p.units} work units in {p.rounds} round(s) [{p.machine}]"


def bar_chart(rows: list[tuple[str, float, str]]) -> str:
    """Horizontal bars, shortest time first best; plain HTML so the studio needs no plotting library."""
    if not rows:
        return ""
    top = max(us for _, us, _ in rows) or 1.0
    best = min(us for _, us, _ in rows)
    lines = []
    for name, us, status in rows:
        width = max(2.0, 100.0 * us / top)
        colour = "#1F6FB4" if status == "verified" else "#C0392B"
        speed = f"{best / us:.2f}x of best" if us else ""
        lines.append(f"<tr><td><b>{escape(name)}</b></td><td style='width:60%'><div style='background:{colour};"
                     f"width:{width:.1f}%;height:14px;border-radius:2px'></div></td><td>{us:.1f} µs</td>"
                     f"<td>{escape(status)}</td><td class='pg-note'>{speed}</td></tr>")
    return ("<div class='pg-section'>time per launch (lower is better)</div>"
            f"<table class='pg-bars'>{''.join(lines)}</table>")


class BenchPane:
    STEPS = ("generate CUDA source", *(f"compile for {a}" for a in ARCHES), "verify and time on the GPU")

    def __init__(self, current: Callable[[], Any], executor: Any = None) -> None:
        """``current()``: the design to compile and time; ``executor``: where the benchmark runs
        (``benchmark``'s; None: the default, ``$PGSTUDIO_EXECUTOR`` when set)."""
        self.current = current
        self.executor = executor
        self.button = W.Button(description="Compile & Benchmark", icon="bolt", button_style="primary",
                               tooltip="compile for sm_90a and sm_100a, then verify and time on the GPU if there is one",
                               layout=W.Layout(width="220px"))
        self.button.on_click(lambda _b: self.run())
        self.button.add_class("pg-bench-button")
        self.progress = W.IntProgress(min=0, max=len(self.STEPS), value=0, layout=W.Layout(width="260px"))
        self.stage = W.HTML("<span class='pg-note'>design vs ungrouped vs library peer; each verified before "
                            "it is timed</span>")
        self.eta = W.HTML()
        self.eta.add_class("pg-eta")
        self.log = W.HTML()
        self.results = W.HTML()
        self.widget = W.VBox([W.HBox([self.button, self.progress, self.stage], layout=W.Layout(align_items="center")),
                              self.eta, self.log, self.results])
        self.last: Any = None
        self._bar: Progress | None = None

    def design_changed(self, design: Any) -> None:
        if self.last is not None:
            self.stage.value = "<span class='pg-note'>the design changed since these results</span>"

    def _step(self, i: int, text: str) -> None:
        """Step ``i`` of ``STEPS`` begins (``text``); the ones before it are done (tqdm's ETA)."""
        while self._bar is not None and self._bar.done < min(i, len(self.STEPS)):
            self._bar.update(1, self.STEPS[self._bar.done])
        self.progress.value = i
        self.stage.value = f"<span class='pg-note'>{escape(text)} ...</span>" if text else ""

    def _show_eta(self, done: int, total: int, text: str) -> None:
        """The steps of compile and benchmark, with tqdm's rate and ETA."""
        self.eta.value = f"<span class='pg-note'>{escape(text)}</span>"

    def _bench_progress(self, done: int, total: int, text: str) -> None:
        """The benchmark's rounds, relayed from its GPU worker, with tqdm's rate and ETA."""
        self.stage.value = f"<span class='pg-note'>{escape(self.STEPS[-1])}: {escape(text)}</span>"

    def _log(self, html: str) -> None:
        self.log.value += f"<div>{html}</div>"

    def log_text(self) -> str:
        """What the pane's log says, as plain text, one line per step (for a page read without a
        running kernel, and for tests)."""
        lines = re.sub(r"<details>.*?</details>", "", self.log.value, flags=re.S).split("</div>")
        return "\n".join(" ".join(unescape(re.sub(r"<[^>]+>", "", ln)).split()) for ln in lines if ln.strip())

    def run(self) -> Any:
        """Compile and benchmark the current design; returns the results table or None."""
        design = self.current()
        self.button.disabled = True
        self.log.value = ""
        self.results.value = ""
        self.eta.value = ""
        self.last = None
        self._bar = Progress(len(self.STEPS), "compile & benchmark", "step", enabled=False, on_update=self._show_eta)
        try:
            return self._run(design)
        finally:
            self._bar.close()
            self._bar = None
            self.button.disabled = False

    def _run(self, design: Any) -> Any:
        report = validate(design)
        if not report.ok:
            self._step(0, "")
            self._log(f"<span class='pg-bad'>cannot compile: the design has {len(report.errors)} error(s); "
                      f"fix them first (see Diagnostics)</span>")
            return None
        self._step(0, self.STEPS[0])
        try:
            source = emit(design)
        except Exception as exc:
            self._log(f"<span class='pg-bad'>code generation failed: {escape(str(exc))}</span>")
            return None
        self._log(f"generated <code>{escape(source.entry)}</code>: {len(source.code.splitlines())} lines, "
                  f"{source.smem_bytes:,} B shared memory")
        for i, arch in enumerate(ARCHES, start=1):
            self._step(i, self.STEPS[i])
            try:
                _src, compiled = compile_for(design, arch)
            except CompileError as exc:
                log = getattr(exc, "log", "")
                self._log(f"<span class='pg-bad'>{arch}: {escape(str(exc))}</span>"
                          + (f"<details><summary>compiler log</summary><pre class='pg-pre'>{escape(log)}</pre></details>"
                             if log else ""))
                continue
            except Exception as exc:  # GpuUnavailable, no NVRTC library, a generator limit: say so, go on
                self._log(f"<div class='pg-na'>{arch}: not compiled: {escape(type(exc).__name__)}: {escape(str(exc))}</div>")
                continue
            self._log(f"✔ compiled for <b>{arch}</b> ({escape(binary_size(compiled))})")
        self._step(len(ARCHES) + 1, self.STEPS[-1])
        try:
            check_gpu(self.executor, null_ok=True)  # the null runtime's benchmark runs the plumbing
            results = benchmark(design, progress=False, on_progress=self._bench_progress, executor=self.executor)
        except GpuUnavailable as exc:
            self._log(f"<div class='pg-na'>no GPU here, so nothing was timed ({escape(str(exc))}); "
                      f"the CUDA kernel was compiled for {' and '.join(ARCHES)} above.</div>")
            guess = predicted_line(design)
            if guess:
                self._log(f"<div class='pg-note'>{escape(guess)}</div>")
            self._step(len(self.STEPS), "")
            self.stage.value = "<span class='pg-note'>compiled only (no GPU)</span>"
            return None
        except KernelFault as exc:
            self._log(f"<span class='pg-bad'>the kernel failed and took its worker process with it: "
                      f"{escape(str(exc))}</span><div class='pg-note'>this notebook is unaffected; the next run starts "
                      "a fresh worker</div>")
            self._step(len(self.STEPS), "")
            return None
        except KernelHangError as exc:
            record = "".join(f"<tr><td>{escape(str(k))}</td><td>{escape(str(v))}</td></tr>" for k, v in exc.record.items())
            self._log(f"<span class='pg-bad'>the kernel hung and its watchdog stopped it: {escape(str(exc))}</span>"
                      + (f"<table class='pg-table'>{record}</table>" if record else ""))
            self._step(len(self.STEPS), "")
            return None
        except Exception as exc:  # the GPU boundary: whatever it raises becomes a message, never a traceback
            self._log(f"<span class='pg-bad'>benchmark failed: {escape(type(exc).__name__)}: {escape(str(exc))}</span>")
            self._step(len(self.STEPS), "")
            return None
        self.last = results
        rows = result_rows(results)
        self.results.value = bar_chart(rows) + rich_html(results)
        if getattr(results, "measured", True) is False:
            self._log(f"<div class='pg-na'>{escape(NULL_RUNTIME)}: every step of the benchmark ran and nothing was "
                      "launched, verified or timed</div>")
        # the design as given is what the model predicts (row 0 may be the tuner's choice)
        given = [us for name, us, _ in rows if name.endswith(("as designed", "_as_designed"))]
        guess = predicted_line(design, (given or [r[1] for r in rows] or [None])[0])
        if guess:
            self._log(f"<div class='pg-note'>{escape(guess)}</div>")
        self._step(len(self.STEPS), "")
        self.stage.value = ("<span class='pg-ok'>done</span>" if getattr(results, "measured", True) is not False
                            else f"<span class='pg-note'>done ({escape(NULL_RUNTIME)}: nothing measured)</span>")
        return results

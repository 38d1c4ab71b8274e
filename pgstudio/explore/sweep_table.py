"""A sweep's result: ``SweepRow`` per variant, ``SweepTable`` for all of them.

The table prints as fixed-width text (the CLI), names the best verified variant, lists every
invalid or failed variant with its reasons (diagnostic codes and messages), and says plainly
when nothing was timed and why (no GPU: every variant compiled, none run).  In a notebook it
displays as a real HTML table with its plot (``render.display.sweep_bundle``, which reads
``columns`` / ``cells``).  ``load_sweep(path)`` rebuilds it from a results file (``sweep_log``).

``with_predictions(design)`` adds the model's kernel time of every valid variant
(``analysis.predict``, the calibrated machine): a ``predicted ms`` column, so a sweep compiled on
a laptop already ranks its variants before any GPU run, and a timed one shows predicted beside
measured.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .sweep_jobs import COMPILED, FAILED, INVALID, NOT_RUN, OK
from .sweep_space import Variant

NAN = float("nan")


def _num(value: Any, default: float = NAN) -> float:
    return default if value is None else float(value)


@dataclass(frozen=True)
class SweepRow:
    """One variant's outcome: ``status`` is ok | compiled | invalid | failed | not run."""

    grouping: str
    num_stages: int
    tile: tuple[int, ...]
    status: str
    median_ms: float = NAN
    rate: float = NAN  # GB/s (streaming) or TFLOP/s (GEMM): the table's unit
    smem_bytes: int = 0
    blocks_per_sm: int = 0
    message: str = ""
    runs: int = 0
    warps: int | None = None
    options: tuple[tuple[str, str], ...] = ()
    codes: tuple[str, ...] = ()
    cubin_bytes: int = 0
    compile_s: float = NAN
    attempts: int = 1
    where: str = ""
    registers: int = 0
    predicted_ms: float = NAN  # the kernel-time model's figure (``SweepTable.with_predictions``)

    @property
    def variant(self) -> Variant:
        return Variant(self.grouping, self.num_stages, tuple(self.tile), self.warps, tuple(self.options))

    @property
    def key(self) -> str:
        return self.variant.key

    @property
    def label(self) -> str:
        return self.variant.label

    @property
    def tile_bytes(self) -> int | None:
        """Bytes per stage of a streaming variant (None for a GEMM tile shape)."""
        return self.tile[0] if len(self.tile) == 1 else None

    @classmethod
    def from_record(cls, rec: dict) -> "SweepRow":
        v = Variant.from_dict(rec["variant"])
        return cls(v.grouping, v.num_stages, v.tile, str(rec.get("status", NOT_RUN)), _num(rec.get("median_ms")),
                   _num(rec.get("rate")), int(rec.get("smem_bytes") or 0), int(rec.get("blocks_per_sm") or 0),
                   str(rec.get("message") or ""), int(rec.get("runs") or 0), v.warps, v.options,
                   tuple(rec.get("codes") or ()), int(rec.get("cubin_bytes") or 0), _num(rec.get("compile_s")),
                   int(rec.get("attempts") or 1), str(rec.get("where") or ""), int(rec.get("registers") or 0),
                   _num(rec.get("predicted_ms")))


@dataclass(frozen=True)
class SweepTable:
    """The rows of a sweep in the order of its space; ``best`` is the fastest verified variant."""

    design: str
    problem: str
    unit: str
    rows: tuple[SweepRow, ...]
    note: str = ""
    seconds: float = 0.0
    executor: str = ""
    results: str = ""
    reused: int = 0
    extra: dict = field(default_factory=dict, compare=False)

    # -- queries --------------------------------------------------------------------------------
    @property
    def timed(self) -> tuple[SweepRow, ...]:
        return tuple(r for r in self.rows if r.status == OK)

    @property
    def compiled(self) -> tuple[SweepRow, ...]:
        """Variants that compiled (timed or not)."""
        return tuple(r for r in self.rows if r.status in (OK, COMPILED))

    @property
    def best(self) -> SweepRow | None:
        return min(self.timed, key=lambda r: r.median_ms, default=None)

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.rows)

    def row(self, grouping: str, num_stages: int, tile: Any, warps: int | None = None) -> SweepRow:
        tile = (tile,) if isinstance(tile, int) else tuple(tile)
        for r in self.rows:
            if (r.grouping, r.num_stages, tuple(r.tile), r.warps) == (grouping, num_stages, tile, warps):
                return r
        raise KeyError(f"no variant {grouping} {num_stages}x{'x'.join(map(str, tile))} in this sweep")

    # -- words ----------------------------------------------------------------------------------
    def summary(self) -> str:
        n, timed = len(self.rows), len(self.timed)
        parts = [f"{timed} verified and timed"] if timed else []
        for status, words in ((COMPILED, "compiled, not timed"), (INVALID, "invalid"), (FAILED, "failed"),
                              (NOT_RUN, "not run")):
            if self.count(status):
                parts.append(f"{self.count(status)} {words}")
        runs = max((r.runs for r in self.timed), default=0)
        how = f" (medians of {runs} runs)" if runs else ""
        where = "; " + " ".join(filter(None, [f"ran on {self.executor}" if self.executor else "",
                                               f"in {self.seconds:.0f} s" if self.seconds else ""]))
        reused = f"; {self.reused} taken from {Path(self.results).name}" if self.reused else ""
        return (f"sweep of {self.design}: {self.problem}; {n} variants: {', '.join(parts) or 'none'}{how}"
                f"{where if where != '; ' else ''}{reused}")

    def verdict(self) -> str:
        best = self.best
        if best is not None:
            return f"best: {best.label} at {best.median_ms:.4f} ms ({best.rate:,.{self._digits}f} {self.unit})"
        text = f"best: none ({self.note or 'no variant was timed'})"
        guess = self.predicted_best
        return text + (f"; predicted best: {guess.label} at {guess.predicted_ms:.4f} ms" if guess else "")

    # -- the model's figures ----------------------------------------------------------------------
    @property
    def _has_predictions(self) -> bool:
        return any(math.isfinite(r.predicted_ms) for r in self.rows)

    @property
    def predicted_best(self) -> SweepRow | None:
        """The valid variant the model predicts fastest (None without predictions)."""
        rows = [r for r in self.rows if math.isfinite(r.predicted_ms) and r.status in (OK, COMPILED)]
        return min(rows, key=lambda r: r.predicted_ms, default=None)

    def with_predictions(self, design: Any, machine: Any = None, n: int | None = None) -> "SweepTable":
        """This table with every valid variant's predicted kernel time (``design``: the swept base
        design; ``n``: a streaming sweep's element count).  A variant the model cannot read keeps
        no prediction; nothing here raises for one variant."""
        from ..analysis.predict import prediction
        from ..errors import PgStudioError
        rows = []
        for r in self.rows:
            ms = NAN
            if r.status in (OK, COMPILED, NOT_RUN):
                try:
                    ms = prediction(r.variant.build(design), machine, num_elements=n, blocks_per_sm=r.blocks_per_sm).ms
                except (PgStudioError, ValueError, LookupError, ArithmeticError):
                    ms = NAN
            rows.append(dataclasses.replace(r, predicted_ms=ms))
        return dataclasses.replace(self, rows=tuple(rows))

    @property
    def _digits(self) -> int:
        return 0 if self.unit == "GB/s" else 1

    def cells(self, r: SweepRow, best: SweepRow | None = None) -> list[str]:
        """The text of ``r``'s cells, in ``columns()`` order (pass ``best`` when doing many rows)."""
        best = best if best is not None else self.best
        timed = r.status == OK
        return [r.grouping, str(r.num_stages), r.variant.tile_label, *([str(r.warps)] if self._has_warps else []),
                *([",".join(f"{k}={v}" for k, v in r.options) or "-"] if self._has_options else []), r.status,
                f"{r.median_ms:.4f}" if timed else "-",
                *([f"{r.predicted_ms:.4f}" if math.isfinite(r.predicted_ms) else "-"] if self._has_predictions else []),
                f"{r.rate:,.{self._digits}f}" if timed else "-",
                f"{r.median_ms / best.median_ms:.3f}" if timed and best else "-",
                f"{r.smem_bytes / 1024:.1f}" if r.smem_bytes else "-", str(r.blocks_per_sm) if r.blocks_per_sm else "-",
                f"{r.cubin_bytes:,}" if r.cubin_bytes else "-"]

    @property
    def _has_warps(self) -> bool:
        return any(r.warps is not None for r in self.rows)

    @property
    def _has_options(self) -> bool:
        return any(r.options for r in self.rows)

    def columns(self) -> list[str]:
        """Column titles: warps and options only where a variant sets them."""
        return ["grouping", "stages", "tile", *(["warps"] if self._has_warps else []),
                *(["options"] if self._has_options else []), "status", "median ms",
                *(["predicted ms"] if self._has_predictions else []), self.unit, "x best", "smem KiB",
                "blocks/SM", "cubin B"]

    def table(self) -> str:
        """Fixed-width text: the summary, a row per variant, the reasons, the best."""
        best = self.best
        head = self.columns()
        lines = [head] + [self.cells(r, best) for r in self.rows]
        widths = [max(len(ln[i]) for ln in lines) for i in range(len(head))]
        left = {0, head.index("status")} | ({head.index("options")} if self._has_options else set())
        out = ["  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(ln, widths))).rstrip()
               for ln in lines]
        out.insert(1, "  ".join("-" * w for w in widths))
        out.insert(0, self.summary())
        if self.extra.get("skipped"):
            out.insert(1, self.extra["skipped"])
        problems = [r for r in self.rows if r.status in (INVALID, FAILED, NOT_RUN) and r.message]
        if problems:
            out.append("")
            shown = problems[:40]
            out += [f"{r.label} {r.status}: {r.message}" for r in shown]
            if len(problems) > len(shown):
                out.append(f"... and {len(problems) - len(shown)} more (every reason is in the results file)")
        out.append("")
        out.append(self.verdict())
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()


def load_sweep(path: str | Path) -> SweepTable:
    """The table of a results file (every recorded variant, in the order first recorded)."""
    from .sweep_log import read
    header, records, note = read(path)
    latest: dict[str, dict] = {}
    for rec in records:
        latest[rec["key"]] = rec
    rows = tuple(SweepRow.from_record(r) for r in latest.values())
    return SweepTable(str(header.get("design", "?")), str(header.get("problem", "")), str(header.get("unit", "GB/s")),
                      rows, note=note or _why_nothing_timed(rows), results=str(path), reused=len(rows),
                      extra={"header": header})


def _why_nothing_timed(rows: tuple[SweepRow, ...]) -> str:
    if any(r.status == OK for r in rows):
        return ""
    compiled = sum(r.status == COMPILED for r in rows)
    if compiled:
        return f"compiled {compiled} of {len(rows)} variants; nothing was timed (no GPU)"
    return ""


__all__ = ["SweepRow", "SweepTable", "load_sweep"]

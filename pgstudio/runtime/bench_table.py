"""A benchmark's result, for either kind of kernel: one row per contender, medians and rates.

``BenchTable`` prints as fixed-width text and displays as an HTML table in a notebook
(``render.display``).  Its rate is GB/s for a streaming design and TFLOP/s for a GEMM
(``unit``); ``time / design`` divides each row's time by the first row's (the design as it ran);
the rows that are library calls (``peer``) give ``best_peer``, the fastest of them, which
``x best library`` divides by (above 1: the design is faster).  A table of the null runtime
(``measured=False``) has no times at all and says so in every place a number would be.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .launch import NOT_MEASURED
from .verify import NULL_RUNTIME


@dataclass(frozen=True)
class BenchRow:
    """One contender's medians: ``rate`` is in the table's ``unit``; ``peer``: a library call."""

    name: str
    what: str
    median_ms: float
    rate: float
    runs: int
    peer: bool = False


@dataclass(frozen=True)
class BenchTable:
    """Medians of every contender; ``speedup(a, b)`` = time of b / time of a."""

    design: str
    problem: str  # "4,194,304 float32 elements" | "4096x4096x4096 bfloat16"
    dtype: str
    rows: tuple[BenchRow, ...]
    note: str = ""  # how the design was tuned, when it was
    unit: str = "GB/s"
    shape: tuple[int, ...] = ()  # (n,) elements, or (M, N, K)
    measured: bool = True  # False: the null runtime's table, with no times

    def row(self, name: str) -> BenchRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no variant {name!r}; variants: {', '.join(r.name for r in self.rows)}")

    def speedup(self, a: str, b: str) -> float:
        return self.row(b).median_ms / self.row(a).median_ms

    def bandwidth_ratio(self, a: str, b: str) -> float:
        """Rate of ``a`` / rate of ``b`` (GB/s, or TFLOP/s for a GEMM)."""
        return self.row(a).rate / self.row(b).rate

    @property
    def peers(self) -> tuple[str, ...]:
        """The rows that are library calls."""
        return tuple(r.name for r in self.rows if r.peer)

    @property
    def best_peer(self) -> tuple[str, float] | None:
        """(label, median ms) of the fastest library row, None when no peer was timed."""
        timed = [(r.name, r.median_ms) for r in self.rows if r.peer and not math.isnan(r.median_ms)]
        return min(timed, key=lambda x: x[1]) if timed else None

    def vs_best_library(self, variant: str | None = None) -> float:
        """Best library time / ``variant``'s time (the design by default); nan without a peer."""
        best = self.best_peer
        ms = self.row(variant or self.rows[0].name).median_ms
        return best[1] / ms if best else float("nan")

    def header(self) -> str:
        runs = (f"medians of {self.rows[0].runs} interleaved runs" if self.measured else
                f"nothing was verified or timed ({NULL_RUNTIME})")
        return f"{self.design}: {self.problem}, {runs}" + (f"; {self.note}" if self.note else "")

    def cells(self, r: BenchRow) -> tuple[str, ...]:
        """The text cells of row ``r``: variant, what, median ms, rate, time / design, x best library."""
        if not self.measured:
            return (r.name, r.what, "-", "-", "-", "-")
        best, first = self.best_peer, self.rows[0].median_ms
        rate = f"{r.rate:,.0f}" if self.unit == "GB/s" else f"{r.rate:,.1f}"
        return (r.name, r.what, f"{r.median_ms:.4f}", rate, f"{r.median_ms / first:.3f}",
                f"{best[1] / r.median_ms:.3f}" if best else "-")

    def columns(self) -> tuple[str, ...]:
        return ("variant", "what", "median ms", self.unit, "time / design", "x best library")

    def footer(self) -> str:
        if not self.measured:
            return f"times: {NOT_MEASURED}"
        best = self.best_peer
        return (f"best library: {best[0]} ({best[1]:.4f} ms), fastest of {', '.join(self.peers)}" if best
                else "no library peer ran")

    def table(self) -> str:
        lines = [self.columns()] + [self.cells(r) for r in self.rows]
        widths = [max(len(ln[i]) for ln in lines) for i in range(len(lines[0]))]
        out = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(ln, widths)))
               for ln in lines]
        out.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join([self.header(), *out, self.footer()])

    def __str__(self) -> str:
        return self.table()


__all__ = ["BenchRow", "BenchTable"]

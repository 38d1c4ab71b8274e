"""``Tuned``: a tuning -- the design to run, the settings chosen for it and where the choice came from.

The explorer chooses one (``explore.tuning``: a short measured search, or the per-device cache of
an earlier one) and hands it to ``runtime.bench.benchmark(design, tuned=...)``, which runs it beside
the design as given.  The runtime never chooses a tuning itself: it times what it is handed, so
the explorer asks the runtime to time and the runtime never asks the explorer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.design import Design


@dataclass(frozen=True)
class Tuned:
    """The design to run, the settings that were chosen and where the choice came from."""

    design: Design
    settings: str  # "6 stages x 4096 B"
    source: str  # "search of 10 variants on <device>" | "cached for <device>"
    rate: float = float("nan")  # what the search measured (GB/s or TFLOP/s)
    options: tuple[tuple[str, str], ...] = ()  # code options (``emit(tuning=...)``) to build it with

    def describe(self) -> str:
        return f"tuned: {self.settings} ({self.source})"


__all__ = ["Tuned"]

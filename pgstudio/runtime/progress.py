"""Progress with an ETA for every long step (compile, benchmark, sweep), drawn by tqdm.

One helper so the CLI and the studio say the same thing: in a terminal tqdm draws its bar on
stderr (count, elapsed, remaining time); the studio passes ``on_step`` and shows the same figures
on its own bar (the time left is the average time per step so far times the steps left, written
with tqdm's interval format).

>>> seen = []
>>> with Progress(2, enabled=False, desc="compile", on_step=lambda s: seen.append((s.done, s.total, s.label))) as bar:
...     _ = bar.step("sm_90a")
...     _ = bar.step("sm_100a")
>>> seen
[(1, 2, 'sm_90a'), (2, 2, 'sm_100a')]
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from tqdm import tqdm


@dataclass(frozen=True)
class Step:
    """Where a long job stands after a step: ``done`` of ``total``, the step's ``label``, seconds
    so far and tqdm's estimate of the seconds left (None until it has a rate)."""

    done: int
    total: int
    label: str
    elapsed: float
    remaining: float | None

    def text(self) -> str:
        """"2/4 sm_100a, 3 s so far, about 3 s left" (what the studio's bar says)."""
        left = f", about {tqdm.format_interval(self.remaining)} left" if self.remaining is not None and self.done < self.total else ""
        return f"{self.done}/{self.total} {self.label}, {tqdm.format_interval(self.elapsed)} so far{left}"


class Progress:
    """``total`` steps described by ``desc``; ``step(label)`` after each.  ``enabled``: draw tqdm's
    bar on stderr; ``on_step(Step)``: called after each step (the studio's widgets)."""

    def __init__(self, total: int, enabled: bool = True, desc: str = "", *,
                 on_step: Callable[[Step], Any] | None = None, file: Any = None) -> None:
        self.total = max(int(total), 0)
        self.on_step = on_step
        self.done = 0  # counted here: a disabled tqdm bar does not count
        self.start = time.monotonic()
        self.bar = tqdm(total=self.total, desc=desc or None, disable=not enabled, file=file or sys.stderr,
                        leave=True, dynamic_ncols=True, unit="step")

    def step(self, label: str = "") -> Step:
        self.done += 1
        self.bar.set_postfix_str(label, refresh=False)
        self.bar.update(1)
        elapsed = time.monotonic() - self.start
        remaining = elapsed / self.done * max(self.total - self.done, 0)
        state = Step(self.done, self.total, label, elapsed, remaining)
        if self.on_step is not None:
            self.on_step(state)
        return state

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

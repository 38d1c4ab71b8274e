"""Progress with an ETA for compile, benchmark and sweep: a thin adapter over tqdm.

tqdm draws (``tqdm.auto``: a text bar on a terminal's stderr, a widget in a notebook) and
computes rate and ETA; this module adds two things pgstudio needs around it:

* ``on_update(done, total, text)``: a callback with tqdm's own meter text ("12/48
  [00:05<00:15, 2.40 variant/s]"), which the studio shows in its panes;
* a relay for worker processes: inside a GPU worker, a ``Progress`` posts its steps to the
  queue the executor gave the worker (``relay_to``) instead of drawing, and the caller's
  process draws them (``Progress.absorb``).

tqdm is imported on first use, so ``import pgstudio`` stays light.
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Any, Callable, Iterator

#: In a worker process: the executor's queue that progress steps go to (see ``relay_to``).
_RELAY: list[Any] = []
#: The job a worker is running, so relayed steps can be told apart.
_CURRENT: list[str] = [""]


def relay_to(queue: Any) -> None:
    """Send every ``Progress`` of this process to ``queue`` (a GPU worker's initializer calls it)."""
    _RELAY[:] = [queue]


def running(job_key: str) -> None:
    _CURRENT[0] = job_key


def current_relay() -> Any:
    """Where this process's ``Progress`` steps go instead of being drawn (None: drawn here)."""
    return _RELAY[0] if _RELAY else None


@contextlib.contextmanager
def relaying(sink: Any) -> Iterator[None]:
    """Send every ``Progress`` made inside the block to ``sink`` (anything with ``put``), as a GPU
    worker does with its queue: how an executor that runs its jobs in this process (the null
    runtime's) hands their steps to the caller instead of drawing them."""
    saved = _RELAY[:]
    _RELAY[:] = [sink] if sink is not None else []
    try:
        yield
    finally:
        _RELAY[:] = saved


class Progress:
    """A progress bar over ``total`` steps; see the module docstring.

    ``enabled`` draws a tqdm bar (stderr, or a notebook widget); ``on_update`` receives every
    step with tqdm's meter text.  Both off: nothing is drawn and nothing is imported.
    """

    def __init__(self, total: int, desc: str = "", unit: str = "it", *, enabled: bool = True,
                 on_update: Callable[[int, int, str], None] | None = None) -> None:
        self.total, self.done, self.desc, self.unit = max(int(total), 0), 0, desc, unit
        self.on_update = on_update
        self.relay = _RELAY[0] if _RELAY else None
        self.t0 = time.monotonic()
        self.bar = None
        if enabled and self.relay is None:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=self.total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=True)

    def text(self, label: str = "") -> str:
        """tqdm's meter ("12/48 [00:05<00:15, 2.40 variant/s]") and the label of the last step."""
        from tqdm import tqdm
        meter = tqdm.format_meter(self.done, self.total or None, time.monotonic() - self.t0, unit=self.unit,
                                  bar_format="{n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]")
        return f"{meter} {label}".rstrip()

    def update(self, n: int = 1, label: str = "") -> None:
        self.done += n
        if self.relay is not None:
            try:
                self.relay.put((_CURRENT[0], self.desc, self.unit, self.done, self.total, label))
            except Exception:  # noqa: BLE001 - progress must never fail the work
                pass
        if self.bar is not None:
            self.bar.update(n)
            if label:
                self.bar.set_postfix_str(label, refresh=False)
        if self.on_update is not None:
            self.on_update(self.done, self.total, self.text(label))

    def set_total(self, total: int) -> None:
        """Change the number of steps (a sweep learns how many variants need timing as it goes)."""
        self.total = max(int(total), self.done)
        if self.bar is not None:
            self.bar.total = self.total
            self.bar.refresh()

    def absorb(self, done: int, total: int, label: str = "") -> None:
        """Show a step relayed from a worker (its counts replace ours)."""
        if total and total != self.total:
            self.set_total(total)
        self.update(max(done - self.done, 0), label)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["Progress", "current_relay", "relay_to", "relaying", "running"]

"""Run a refresh once edits stop arriving for a moment.

Inside a Jupyter kernel an asyncio loop is running, so the refresh is scheduled on it with
``call_later``; each new edit pushes it back.  Without a running loop (plain Python, tests) or
with a delay of 0 the refresh runs at once, so headless use stays synchronous and predictable.
"""

from __future__ import annotations

import asyncio
from typing import Callable


class Debouncer:
    def __init__(self, delay: float, fn: Callable[[], None]) -> None:
        self.delay = delay
        self.fn = fn
        self._handle: asyncio.TimerHandle | None = None

    @property
    def pending(self) -> bool:
        return self._handle is not None

    def trigger(self) -> None:
        if self.delay <= 0:
            self.fn()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.fn()
            return
        self.cancel()
        self._handle = loop.call_later(self.delay, self._fire)

    def _fire(self) -> None:
        self._handle = None
        self.fn()

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def flush(self) -> None:
        """Run a pending refresh now."""
        if self._handle is not None:
            self.cancel()
            self.fn()

"""A line writer that remembers which design element produced which generated line."""

from __future__ import annotations

import contextlib
from typing import Iterator


class Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.map: list[tuple[int, str]] = []
        self.depth = 0

    def add(self, text: str = "", element: str | None = None) -> int:
        """Append ``text`` (may span lines) at the current indent; returns its first line (1-based)."""
        first = len(self.lines) + 1
        for ln in text.split("\n"):
            self.lines.append(("  " * self.depth + ln) if ln else "")
        if element:
            self.map.append((first, element))
        return first

    @contextlib.contextmanager
    def block(self, head: str, element: str | None = None, tail: str = "}") -> Iterator[None]:
        self.add(head, element)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            self.add(tail)

    @property
    def next_line(self) -> int:
        return len(self.lines) + 1

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

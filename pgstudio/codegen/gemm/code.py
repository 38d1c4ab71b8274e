"""The text of a kernel being written: indented lines and where each design element begins.

Every emitter of the GEMM package writes through one ``Code``: ``code(*lines)`` appends lines at
the current depth, ``code.block(head)`` opens a brace block, ``code.mark(element)`` records that
the next line starts the code of a task or a step (the studio's line -> design element map).
"""

from __future__ import annotations

from contextlib import contextmanager


class Code:
    """Lines with indentation and a line -> design element map."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0
        self.map: list[tuple[int, str]] = []

    def __call__(self, *lines: str) -> None:
        for text in lines:
            for ln in text.split("\n"):
                self.lines.append(("  " * self.depth + ln) if ln else "")

    def mark(self, element: str) -> None:
        self.map.append((len(self.lines) + 1, element))

    @contextmanager
    def block(self, head: str, tail: str = "}"):
        self(head + " {")
        self.depth += 1
        yield
        self.depth -= 1
        self(tail)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


#: Named barrier the MMA task syncs on before its elected thread signals (0 is __syncthreads).
MMA_BAR_ID = 1

__all__ = ["Code", "MMA_BAR_ID"]

"""Undo / redo: a list of Designs.  Designs are immutable values, so history is just them."""

from __future__ import annotations

from ..model.design import Design

#: Designs kept for undo (older ones are dropped).
LIMIT = 200


class History:
    """The current design plus the designs before it (undo) and after it (redo)."""

    def __init__(self, design: Design, limit: int = LIMIT) -> None:
        self._past: list[Design] = []
        self._future: list[Design] = []
        self._current = design
        self.limit = limit

    @property
    def current(self) -> Design:
        return self._current

    @property
    def can_undo(self) -> bool:
        return bool(self._past)

    @property
    def can_redo(self) -> bool:
        return bool(self._future)

    def push(self, design: Design) -> bool:
        """Make ``design`` current; False (and nothing recorded) when it equals the current one."""
        if design == self._current:
            return False
        self._past.append(self._current)
        del self._past[:-self.limit]
        self._future.clear()
        self._current = design
        return True

    def undo(self) -> Design:
        if self._past:
            self._future.append(self._current)
            self._current = self._past.pop()
        return self._current

    def redo(self) -> Design:
        if self._future:
            self._past.append(self._current)
            self._current = self._future.pop()
        return self._current

    def __len__(self) -> int:
        return len(self._past) + 1 + len(self._future)

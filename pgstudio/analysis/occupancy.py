"""Who holds, writes and has given back which stage, at every position of every task.

The checker's rules (``violations.py``) ask, for a task at position ``pc``: does it hold stage
``s`` of resource ``r`` (between its wait and its release)?  Is it writing stage ``s`` of buffer
``b`` (between its write and its commit)?  How many rounds of ``(r, s)`` has it released?  These
are functions of the position alone, fixed when the program is compiled.

They used to be kept as one snapshot per position (a set or a dict per instruction: memory that
grows with the program's length times the stages it touches, and rules that scanned every task's
snapshot).  Here each answer is a sorted list of the positions where it changes, per task and
key, so a question is one bisection, memory grows with the changes only, and ``holders`` /
``writers`` name the only tasks a rule about one buffer stage needs to ask.

An instruction at index ``k`` takes effect for positions ``k + 1`` and later; within one
instruction a release is applied after a hold (a step cannot keep what it gives back) and a new
write after a commit.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterable

from .budget import NEVER, Deadline


class Occupancy:
    """Built from every task's instructions (objects with ``holds``, ``frees``, ``commits`` and
    ``writing``, as ``statespace.Instr``); ``roots`` maps a resource to the resource whose
    buffer it occupies; ``deadline`` is polled as it goes (``budget.Deadline``)."""

    def __init__(self, code: Iterable, roots: dict[str, str], deadline: Deadline = NEVER) -> None:
        # (task, key) -> ([effective positions], [True: held / writing, False: given back / committed])
        self._held: dict[tuple[int, tuple[str, int]], tuple[list[int], list[bool]]] = {}
        self._writing: dict[tuple[int, tuple[str, int]], tuple[list[int], list[bool]]] = {}
        self._released: dict[tuple[int, tuple[str, int]], list[int]] = {}
        holders: dict[tuple[str, int], set[tuple[int, str]]] = {}
        writers: dict[tuple[str, int], set[int]] = {}
        for t, instrs in enumerate(code):
            for k, ins in enumerate(instrs):
                if not k & 0x3FFF:
                    deadline.check(f"building the checker's tables (who holds which stage, task {t})")
                at = k + 1
                for key in ins.holds:
                    _change(self._held, (t, key), at, True)
                    holders.setdefault((roots[key[0]], key[1]), set()).add((t, key[0]))
                for key in ins.frees:
                    _change(self._held, (t, key), at, False)
                    self._released.setdefault((t, key), []).append(at)
                for key in ins.commits:
                    _change(self._writing, (t, key), at, False)
                if ins.writing:
                    _change(self._writing, (t, ins.writing), at, True)
                    writers.setdefault(ins.writing, set()).add(t)
        #: (buffer, stage) -> the (task, resource) pairs that ever hold a stage of that buffer
        self.holders = {key: tuple(sorted(v)) for key, v in holders.items()}
        #: (buffer, stage) -> the tasks that ever write it themselves (not by a bulk copy)
        self.writers = {key: tuple(sorted(v)) for key, v in writers.items()}

    @staticmethod
    def _state(changes: tuple[list[int], list[bool]] | None, pc: int) -> bool:
        if not changes:
            return False
        i = bisect_right(changes[0], pc)  # the last change effective at pc (same position: the later)
        return i > 0 and changes[1][i - 1]

    def holds(self, task: int, key: tuple[str, int], pc: int) -> bool:
        """Does ``task`` at position ``pc`` hold ``key`` = (resource, stage)?"""
        return self._state(self._held.get((task, key)), pc)

    def writing(self, task: int, key: tuple[str, int], pc: int) -> bool:
        """Is ``task`` at ``pc`` writing ``key`` = (buffer, stage) (written, not yet committed)?"""
        return self._state(self._writing.get((task, key)), pc)

    def released(self, task: int, key: tuple[str, int], pc: int) -> int:
        """Rounds of ``key`` = (resource, stage) that ``task`` has released before ``pc``."""
        at = self._released.get((task, key))
        return bisect_right(at, pc) if at else 0


def _change(table: dict, key, at: int, value: bool) -> None:
    positions, values = table.setdefault(key, ([], []))
    positions.append(at)
    values.append(value)


__all__ = ["Occupancy"]

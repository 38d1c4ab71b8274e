"""``RangeOr``: the OR of footprint triples over any range of a task's instructions, in O(1).

The partial-order reduction (``reduction.py``) asks again and again what a stretch of a task's
instructions touches: the OR of their (reads, writes, adds) masks over a range of pcs.  A sparse
table answers in two lookups however long the range is: level k holds the OR of every run of
2**k triples, and two runs of one level cover any range (OR does not mind that they overlap).
Building it takes n log n ORs, span by span, polling the checker's deadline (``budget``).

>>> table = RangeOr([(1, 0, 0), (0, 2, 0), (0, 0, 4), (8, 0, 0)])
>>> table.query(0, 3), table.query(1, 4), table.query(2, 2)
((1, 2, 4), (8, 2, 4), (0, 0, 0))
"""

from __future__ import annotations

from .budget import NEVER, Deadline

__all__ = ["RangeOr"]


class RangeOr:
    """OR of (reads, writes, adds) triples over [lo, hi) in O(1): a sparse table."""

    def __init__(self, items: list[tuple[int, int, int]], deadline: Deadline = NEVER, what: str = "") -> None:
        self.levels = [list(items)]
        n = len(items)
        span = 1
        while span * 2 <= n:
            prev = self.levels[-1]
            level: list[tuple[int, int, int]] = []
            for lo, hi in deadline.spans(n - 2 * span + 1, what):
                level += [(prev[i][0] | prev[i + span][0], prev[i][1] | prev[i + span][1],
                           prev[i][2] | prev[i + span][2]) for i in range(lo, hi)]
            self.levels.append(level)
            span *= 2

    def query(self, lo: int, hi: int) -> tuple[int, int, int]:
        if hi <= lo:
            return 0, 0, 0
        k = (hi - lo).bit_length() - 1
        level = self.levels[k]
        a, b = level[lo], level[hi - (1 << k)]
        return a[0] | b[0], a[1] | b[1], a[2] | b[2]

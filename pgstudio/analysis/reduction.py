"""Stubborn sets (Valmari) for the checker's search, computed on demand.

A stubborn set of a state is a set of agents closed under two rules (see ``search.py`` for why
expanding only its enabled transitions keeps every verdict):

* an enabled transition in the set pulls in every agent outside the set whose *horizon* it
  conflicts with;
* a disabled wait in the set pulls in every agent whose horizon writes the awaited slot.

An agent's horizon is everything it can do before it reaches a wait that stays blocked while
only agents outside the set move.  A task's wait is *passable* when it has passed already (the
phase of its parity completed), when the task itself writes the slot before reaching it, when
the copies in flight outside the set can complete the phase (arrivals are not pending and tx
lies in (0, the bytes they may still land]), or when another outside task's horizon writes the
slot.  The last condition is recursive, and the horizons are its *least* fixpoint: two tasks
waiting on each other do not unblock each other.

The set starts from one enabled agent ``a``; the horizons are those with ``a`` inside and every
other agent outside.  Agents pulled in later keep these horizons: with fewer agents outside, a
horizon can only shrink, so the set stays stubborn (recomputing them per round, as an earlier
version did, visited exactly as many states on the canonical designs and on chains of groups).

Why on demand: computing every agent's horizon costs a sweep over the whole design per state,
and in a chain of groups the fixpoint propagates from task to task, so the checker's cost per
state grew with the design.  Here a closure asks only about the agents whose code touches what
its members do (a static index), and only whether a horizon reaches one position (the first
conflicting step, or the first write of an awaited slot).  ``_Query`` answers that as a Horn
problem over the waits it meets -- "wait k of task y is passable" holds if a base condition
holds, or if for some other outside task z every wait of z before its first write of the slot
is passable -- exploring the waits the question reaches and solving their least fixpoint.  A
question that would explore more than ``EXPLORE`` waits answers "passable" for the rest: a
horizon taken larger than it is only makes the set larger, never wrong.
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right

from .budget import NEVER, Deadline
from .statespace import State, StateSpace, conflict

#: Waits one question may explore before it answers "passable" unexplored (a safe guess: a
#: larger horizon only makes the stubborn set larger).  Deeper dependencies run along a chain of
#: groups; on chains of up to 31 groups of each mode and on the canonical designs, 8 visits as
#: few states as an unbounded exploration (with 2, the FusedMerge designs need over ten times as many).
EXPLORE = 8


class Reducer:
    """Stubborn sets of one state space; ``ample(state, agents, enabled)`` gives the agents to
    expand."""

    def __init__(self, space: StateSpace, deadline: Deadline = NEVER) -> None:
        self.space = space
        sp = space
        self.ends = [len(code) for code in sp.code]
        slot_bits = (1 << sp.nslots) - 1
        # per task: slot -> sorted positions of the instructions that write (or add to) it
        self.writes_at: list[dict[int, list[int]]] = []
        writers: dict[int, list[int]] = {}
        touch: dict[int, set[int]] = {}  # object bit -> tasks whose code touches it at all
        for y, each in enumerate(sp.each):
            at: dict[int, list[int]] = {}
            used = 0
            for pos, (r, w, a) in enumerate(each):
                if not pos & 0x3FFF:
                    deadline.check(f"indexing the program for the reduction (task {sp.tasks[y]}, {len(each):,} "
                                   "instructions)")
                used |= r | w | a
                for bit in _bits((w | a) & slot_bits):
                    at.setdefault(bit, []).append(pos)
            for bit in _bits(used):
                touch.setdefault(bit, set()).add(y)
            self.writes_at.append(at)
            for slot in at:
                writers.setdefault(slot, []).append(y)
        self.writers = {slot: tuple(ts) for slot, ts in writers.items()}
        self.touch = {bit: tuple(sorted(ts)) for bit, ts in touch.items()}

    def ample(self, s: State, agents: list[int], enabled: list[int], deadline: float | None = None) -> list[int]:
        """The smallest of the stubborn sets started from each enabled agent; past ``deadline``
        (``time.perf_counter``) the smallest found so far (every one is stubborn: the choice
        only costs states, never a verdict), so one state of a huge design cannot outlast the
        checker's time budget by more than one closure."""
        sp = self.space
        quiet, pcs = sp.quiet, s.pcs
        for a in enabled:  # a step that touches nothing shared commutes with everything
            if a >= 0 and quiet[a][pcs[a]]:
                return [a]
        fp = _Footprints(sp, s)
        copy_bytes: dict[int, int] = {}
        for j in range(len(s.copies)):
            slot, left = sp.copy_slot(s, j)
            copy_bytes[slot] = copy_bytes.get(slot, 0) + left
        en = set(enabled)
        best = None
        # copies first: a landing usually needs only its consumer, blocked on it
        for a in sorted(enabled, key=lambda x: (x >= 0, x)):
            chosen = self._closure(s, agents, _Query(self, s, a, copy_bytes), fp, en)
            if len(chosen) == 1:
                return chosen
            if best is None or len(chosen) < len(best):
                best = chosen
            if deadline is not None and time.perf_counter() > deadline:
                break
        return best

    def _closure(self, s: State, agents: list[int], q: "_Query", fp, en) -> list[int]:
        sp = self.space
        start = q.start
        inside = [start]
        seen = {start}
        new = [start]
        pcs = s.pcs
        ends = self.ends
        copies = [y for y in agents if y < 0]
        while new:
            added: list[int] = []
            for x in new:
                if x in en:
                    f = fp[x]
                    for y in self._touching(f[0] | f[1] | f[2]):
                        if y in seen or pcs[y] >= ends[y]:
                            continue
                        if conflict(f, sp.future[y][pcs[y]]) and q.reaches(y, self._first_conflict(y, pcs[y], f)):
                            seen.add(y)
                            added.append(y)
                    for y in copies:  # a copy's horizon is its landing
                        if y not in seen and conflict(f, fp[y]):
                            seen.add(y)
                            added.append(y)
                else:  # a blocked wait: whoever can complete its phase
                    slot = sp.code[x][pcs[x]].act.slot
                    mask = sp.slot_mask[slot]
                    for y in self.writers.get(slot, ()):
                        if y in seen or pcs[y] >= ends[y]:
                            continue
                        pos = self.first_write(y, slot, pcs[y])
                        if pos is not None and q.reaches(y, pos):
                            seen.add(y)
                            added.append(y)
                    for y in copies:
                        if y not in seen and fp[y][1] & mask:
                            seen.add(y)
                            added.append(y)
            inside += added
            new = added
        return [x for x in inside if x in en]

    def _touching(self, objects: int) -> list[int]:
        """Tasks whose code touches any of ``objects`` (a superset of those that conflict), in
        task order."""
        out: set[int] = set()
        for bit in _bits(objects):
            out.update(self.touch.get(bit, ()))
        return sorted(out)

    def first_write(self, y: int, slot: int, pc: int) -> int | None:
        """The first position >= ``pc`` where task ``y`` writes ``slot`` (None: it never does)."""
        at = self.writes_at[y].get(slot)
        if not at:
            return None
        i = bisect_left(at, pc)
        return at[i] if i < len(at) else None

    def _first_conflict(self, y: int, pc: int, f) -> int:
        """The first position >= ``pc`` of task ``y`` whose footprint conflicts with ``f`` (one
        exists: the caller checked the future)."""
        table = self.space.tables[y]
        lo, hi = pc, len(self.space.code[y]) - 1
        while lo < hi:  # smallest p with a conflict in [pc, p]
            mid = (lo + hi) // 2
            if conflict(f, table.query(pc, mid + 1)):
                hi = mid
            else:
                lo = mid + 1
        return lo


class _Footprints(dict):
    """Agent -> the footprint of its next transition, computed when first asked for."""

    def __init__(self, space: StateSpace, s: State) -> None:
        super().__init__()
        self.space, self.s = space, s

    def __missing__(self, a: int) -> tuple[int, int, int]:
        f = self[a] = self.space.footprint(self.s, a)
        return f


def _bits(mask: int):
    """The indices of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class _Query:
    """Horizons of one state with ``start`` inside the stubborn set and every other agent
    outside, asked one position at a time (``reaches``); answers are memoised per wait."""

    def __init__(self, reducer: Reducer, s: State, start: int, copy_bytes: dict[int, int]) -> None:
        self.r = reducer
        self.sp = reducer.space
        self.s = s
        self.start = start
        if start < 0:  # the start copy is inside: its bytes no longer count
            slot, left = self.sp.copy_slot(s, ~start)
            copy_bytes = dict(copy_bytes)
            copy_bytes[slot] -= left
        self.copy_bytes = copy_bytes
        self.settled: dict[tuple[int, int], bool] = {}  # (task, wait position) -> passable

    def reaches(self, y: int, pos: int) -> bool:
        """Does task ``y``'s horizon include position ``pos`` (every wait up to it passable)?"""
        for node in self._waits(y, pos):
            if not self._passable(node):
                return False
        return True

    def _waits(self, y: int, pos: int) -> list[tuple[int, int]]:
        """The waits of task ``y`` from its pc up to and including ``pos``."""
        waits = self.sp.waits[y]
        lo = bisect_left(waits, self.s.pcs[y])
        hi = bisect_right(waits, pos)
        return [(y, k) for k in waits[lo:hi]]

    def _base(self, y: int, k: int) -> bool:
        """Passable without another outside task: passed already, written by ``y`` itself
        before it gets there, or completable by the outside copies."""
        sp, s = self.sp, self.s
        act = sp.code[y][k].act
        pending, tx, phase = s.bars[act.slot]
        if (phase & 1) != act.parity:
            return True
        _, w, a = sp.tables[y].query(s.pcs[y], k)
        if (w | a) & sp.slot_mask[act.slot]:
            return True
        return pending == 0 and 0 < tx <= self.copy_bytes.get(act.slot, 0)

    def _passable(self, root: tuple[int, int]) -> bool:
        """Least fixpoint over the waits ``root`` depends on (a Horn problem: a wait is passable
        when its base holds, or when all waits of one other writer before its write are).
        Explores what ``root`` reaches, then propagates truth with counters (linear); whatever
        never becomes true is false."""
        settled = self.settled
        if root in settled:
            return settled[root]
        sp, s, r = self.sp, self.s, self.r
        options_of: dict[tuple[int, int], list[list[tuple[int, int]]]] = {}
        true: list[tuple[int, int]] = []
        is_true: set[tuple[int, int]] = set()
        stack = [root]
        budget = EXPLORE
        while stack:
            node = stack.pop()
            if node in options_of or node in is_true or node in settled:
                continue
            y, k = node
            budget -= 1
            if budget < 0 or self._base(y, k):
                is_true.add(node)
                true.append(node)
                continue
            slot = sp.code[y][k].act.slot
            options: list[list[tuple[int, int]]] | None = []
            for z in r.writers.get(slot, ()):
                if z == y or z == self.start or s.pcs[z] >= len(sp.code[z]):
                    continue
                pos = r.first_write(z, slot, s.pcs[z])
                if pos is None:
                    continue
                need = []
                for m in self._waits(z, pos):
                    known = settled.get(m)
                    if known is False:
                        break
                    if known is None:
                        need.append(m)
                else:
                    if not need:  # z writes the slot with nothing in its way
                        options = None
                        break
                    options.append(need)
            if options is None:
                is_true.add(node)
                true.append(node)
                continue
            options_of[node] = options
            for need in options:
                stack.extend(need)
        # counters: per (node, option) the members still not known true
        missing: dict[tuple[tuple[int, int], int], int] = {}
        users: dict[tuple[int, int], list[tuple[tuple[int, int], int]]] = {}
        for node, options in options_of.items():
            for i, need in enumerate(options):
                missing[(node, i)] = len(need)
                for m in need:
                    users.setdefault(m, []).append((node, i))
        while true:
            m = true.pop()
            for node, i in users.get(m, ()):
                missing[(node, i)] -= 1
                if missing[(node, i)] == 0 and node not in is_true:
                    is_true.add(node)
                    true.append(node)
        for node in options_of:
            settled[node] = node in is_true
        for node in is_true:
            settled[node] = True
        return settled[root]


__all__ = ["Reducer"]

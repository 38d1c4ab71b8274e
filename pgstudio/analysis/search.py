"""Breadth-first search over interleavings: plain, and with a partial-order reduction.

``bfs(space)`` expands every enabled transition of every state: the reference.

``bfs(space, reduced=True)`` expands only a *stubborn set* per state (Valmari): a set of agents
closed under two rules --

* an enabled transition in the set pulls in every agent outside the set whose *horizon* it
  conflicts with (one writes an object the other reads or writes);
* a disabled wait in the set pulls in every agent whose horizon writes the awaited slot.

An agent's horizon is everything it can do before it reaches a wait that stays blocked as long
as only agents outside the set move (``reduction.py`` computes horizons on demand, as the least
fixpoint in which waiting tasks do not unblock each other).  Only the set's enabled transitions
are expanded.

Why verdicts do not change: the state graph is acyclic (every transition advances a task or
lands bytes), so the reduced graph keeps every terminal state of the full one -- every deadlock,
every unbalanced end, every clean finish (Valmari's theorem) -- and since every check a
transition makes reads only objects in its footprint, every violating transition of the full
graph has a twin (same task, same step, same kind) in the reduced one.  So the reduced search
is UNSAFE exactly when the plain one is, with the same set of violating steps; when a design
has several problems, which one a breadth-first search meets first may differ (on the planted
mistakes, which have one each, both report the same kind and equally short witnesses).
``tests/analysis/test_check.py`` compares the full sets on small designs, on the planted
mistakes and on randomly broken designs; ``tests/analysis/test_check_differential.py`` compares
both searches with an independent brute-force reference on 500 random small designs.

A violation labels a transition; the transition still takes effect.  (Were violations terminal,
a violating key transition could hide a different violation behind it.)  Both searches keep a
visited set, stop at the first violation (breadth first: no shorter violating trace exists in
the graph searched) and stop with ``capped`` at a budget: ``max_states`` distinct states, about
``max_bytes`` bytes of kept states, or ``max_seconds`` (or a ``budget.Deadline`` shared with the
steps before it).
"""

from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass, field

from .budget import NEVER, Deadline, OutOfTime
from .reduction import Reducer
from .statespace import StateSpace, Violation, conflict


@dataclass
class SearchResult:
    states: int
    transitions: int
    seconds: float
    violation: Violation | None = None
    trace: list = field(default_factory=list)  # [(agent, State before)] from the initial state
    capped: bool = False  # stopped at a budget before a verdict
    reduced: bool = False
    found: dict = field(default_factory=dict)  # explore_all: {signature: violation}
    stop: str = ""  # the budget it stopped at: "states", "memory" or "seconds"
    bytes: int = 0  # estimated memory of the states kept (see ``state_bytes``)


#: Bytes a kept state costs besides its own tuples: the State object and its hash, its entry in
#: the visited dict (with the dict's slack), its parent / move / queue entries.
STATE_OVERHEAD = 240
#: A new Mbarrier (a small tuple of three ints).
MBARRIER_BYTES = 64


def state_bytes(new, old) -> int:
    """Memory a newly kept state adds: its own pcs, and the barrier, data and copy tuples it does
    not share with the state it came from (against tracemalloc's peak on the canonical designs
    and chains of groups: from 3 % below to 65 % above, mostly above)."""
    n = STATE_OVERHEAD + sys.getsizeof(new.pcs)
    if new.bars is not old.bars:
        n += sys.getsizeof(new.bars) + MBARRIER_BYTES
    if new.data is not old.data:
        n += sys.getsizeof(new.data)
    if new.copies is not old.copies:
        n += sys.getsizeof(new.copies) + MBARRIER_BYTES
    return n


def _trace(sid: int, states: list, parent: list[int], via: list[int]) -> list:
    """The moves from the initial state to state ``sid`` of the search tree: [(agent, State before)]."""
    out = []
    while sid > 0:
        out.append((via[sid], states[parent[sid]]))
        sid = parent[sid]
    return out[::-1]


def _end(space: StateSpace, s, found: dict | None) -> Violation | None:
    """The violation that stops the search at ``s``, a state without an enabled move (None: the
    search goes on).  With ``found`` (explore_all) every terminal verdict is recorded there instead,
    a clean finish as None, and the search goes on."""
    v = space.terminal(s)
    if found is None:
        return v
    found[("terminal", v.kind if v is not None else "done", s)] = v
    return None


def bfs(space: StateSpace, *, reduced: bool = False, max_states: int = 1_000_000,
        explore_all: bool = False, max_bytes: int | None = None, max_seconds: float | None = None,
        deadline: Deadline | None = None) -> SearchResult:
    """Search every interleaving (or a stubborn-set reduction of them); see the module docstring.
    ``explore_all`` does not stop at violations: it records each one (by task, step and kind) in
    ``found`` and every terminal state's verdict, for comparing the two searches.

    Budgets: the search stops (``capped``, ``stop`` naming the budget) before it keeps more than
    ``max_states`` states or about ``max_bytes`` bytes of them, or once ``max_seconds`` passed
    (``deadline``, when given, instead: the checker's, which started before the program was built)."""
    t0 = time.perf_counter()
    dl = deadline or Deadline(max_seconds, t0)
    result = SearchResult(0, 0, 0.0, reduced=reduced)
    try:
        reducer = Reducer(space, dl) if reduced else None
    except OutOfTime:
        if deadline is not None:  # the checker's: it names the step
            raise
        result.capped, result.stop, result.seconds = True, "seconds", time.perf_counter() - t0
        return result
    deadline_at = dl.at
    kept = 0
    init = space.initial()
    index = {init: 0}
    states = [init]
    parent = [-1]
    via = [0]
    queue = deque([0])
    transitions = 0

    while queue:
        if deadline_at is not None and time.perf_counter() > deadline_at:
            result.capped, result.stop = True, "seconds"
            break
        sid = queue.popleft()
        s = states[sid]
        agents, enabled = space.moves(s)
        if not enabled:
            v = _end(space, s, result.found if explore_all else None)
            if v is not None:
                result.violation, result.trace = v, _trace(sid, states, parent, via)
                break
            continue
        ample = reducer.ample(s, agents, enabled, deadline_at) if reducer else enabled
        stop = False
        for a in ample:
            nxt, bad = space.fire(s, a)
            transitions += 1
            if bad is not None:
                if not explore_all:
                    result.violation, result.trace = bad, _trace(sid, states, parent, via) + [(a, s)]
                    stop = True
                    break
                name, ins = space.label(s, a)
                result.found[(bad.kind, name, ins.run.index, ins.op)] = bad
            if nxt not in index:
                cost = state_bytes(nxt, s)
                if len(states) >= max_states or (max_bytes is not None and kept + cost > max_bytes):
                    result.capped, result.stop = True, "states" if len(states) >= max_states else "memory"
                    stop = True
                    break
                kept += cost
                index[nxt] = len(states)
                states.append(nxt)
                parent.append(sid)
                via.append(a)
                queue.append(len(states) - 1)
        if stop:
            break
    result.states = len(states)
    result.bytes = kept
    result.transitions = transitions
    result.seconds = time.perf_counter() - t0
    return result


def causal_slice(space: StateSpace, trace: list, deadline: Deadline | None = None) -> list:
    """The steps of a violating ``trace`` (agent, state before) that the last step depends on,
    directly or through others (same task, a copy and its issue, or conflicting footprints), in
    their original order, re-executed from the initial state.  Every step left is needed for the
    violation; independent steps of other tasks are dropped.

    A step conflicts with one of the kept steps exactly when it conflicts with their union (every
    test in ``conflict`` is an AND against one side's masks), so the slice is one pass.  Past
    ``deadline`` it returns ``trace`` itself: the whole run is a witness too."""
    if not trace:
        return trace
    dl = deadline or NEVER
    labelled = []
    for i, (a, s) in enumerate(trace):
        if not i & 0xFFF and dl.passed():
            return trace
        task = a if a >= 0 else s.copies[~a][0]
        key = (task, s.pcs[a]) if a >= 0 else (task, s.copies[~a][1])  # a copy is keyed by its issue
        labelled.append((a, task, key, a < 0, space.footprint(s, a)))
    keep = [False] * len(labelled)
    keep[-1] = True
    kr, kw, ka = labelled[-1][4]  # the union of the kept steps' footprints
    tasks = {labelled[-1][1]} if not labelled[-1][3] else set()
    copies = {labelled[-1][2]} if labelled[-1][3] else set()
    for k in range(len(labelled) - 2, -1, -1):
        a, task, key, is_copy, fp = labelled[k]
        if (not is_copy and (task in tasks or key in copies)) or conflict(fp, (kr, kw, ka)):
            keep[k] = True
            kr, kw, ka = kr | fp[0], kw | fp[1], ka | fp[2]
            (copies if is_copy else tasks).add(key if is_copy else task)
    # re-execute the kept steps: agents are re-identified (a copy's index may differ)
    out = []
    s = space.initial()
    for i, ((a, _task, key, is_copy, _), wanted) in enumerate(zip(labelled, keep)):
        if not i & 0xFFF and dl.passed():
            return trace
        if not wanted:
            continue
        if is_copy:
            a = next(~j for j, c in enumerate(s.copies) if (c[0], c[1]) == key)
        out.append((a, s))
        s, bad = space.fire(s, a)
        if bad is not None:
            break
    return out


__all__ = ["SearchResult", "bfs", "causal_slice"]

"""Which side can run two phases ahead of the other: a lead that mbarrier parity cannot see.

A wait on an mbarrier names a parity, not a phase: a waiter expecting phase r passes (or hangs)
the same way at phase r + 2.  The protocol keeps every side within one phase of the other
because each *pass* of a cursor (from one advance to the next: acquire .. commit, wait ..
release) waits on the other side's barrier before it signals its own.  Two things break that,
and both can be decided from the resolved plans (``resolve.py``) and the layout, without
running anything:

* an **unguarded pass**: a pass that signals its own barrier (a producer's commit or copy on
  full, a consumer's release on empty) without waiting on the other one since its last advance
  -- a producer that skips its acquire commits into a stage its consumer has not released, a
  consumer that releases a group's members one by one frees the shared stage twice per wait;
* an **over-full round**: the arrivals one round of passes makes on a barrier set exceed its
  init count, so one round completes more than one phase (``phases`` of them) and the waiters
  on that set see a phase nobody signalled.

    >>> from pgstudio import examples
    >>> phase_leads(examples.merge_copy())
    []
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import DesignError
from ..model.design import Design
from ..model.kinds import Side, Verb, Who
from ..model.protocol import ARRIVER
from .layout import BarrierLayout, barrier_layout
from .loops import trip_count
from .resolve import ResolvedLoop, resolve

#: The barrier role each side signals (the other side waits on it).
SIGNALS = {side: role for role, side in ARRIVER.items()}
_SIGNAL_VERBS = (Verb.ARRIVE, Verb.ARRIVE_EXPECT_TX, Verb.COMPLETE_TX)


@dataclass(frozen=True)
class PhaseLead:
    """One way a side of barrier set ``set`` can run ahead of the side that waits on it.

    ``kind`` is "unguarded" (task ``task``'s ``step`` signals ``set`` in a pass of its cursor
    that waited on nothing) or "overfull" (one round of ``task``'s passes arrives ``arrivals``
    times on a set whose phase completes every ``init_count`` arrivals)."""

    kind: str
    set: str
    owner: str  # the resource or group whose stages the set serves
    task: str
    side: Side
    waiters: tuple[str, ...]
    step: str = ""
    arrivals: int = 0
    init_count: int = 0

    @property
    def phases(self) -> float:
        """Phases one round completes (2.0: a lead of two phases); 0 for an unguarded pass."""
        return self.arrivals / self.init_count if self.kind == "overfull" and self.init_count else 0.0


def phase_leads(design: Design, layout: BarrierLayout | None = None) -> list[PhaseLead]:
    """Every unguarded pass and over-full round of the design's tasks (see the module docstring)."""
    layout = layout or barrier_layout(design)
    sets = {s.name: s for s in layout.sets}
    plans = resolve(design, layout)
    problem = design.problem_dict
    out: list[PhaseLead] = []
    rounds: dict[str, dict[str, tuple[int, Side]]] = {}  # set -> task -> (most arrivals of one pass, side)
    for t in design.tasks:
        if t.name in plans:
            _Passes(t, sets, problem, out, rounds).walk(plans[t.name].nodes)
    unguarded = {x.set for x in out}
    for name, per in rounds.items():  # a FusedMerge's shared full: every producer's pass counts
        bs, arrivals = sets[name], sum(n for n, _ in per.values())
        if arrivals > bs.init_count and name not in unguarded:
            task, (_, side) = max(per.items(), key=lambda kv: kv[1][0])
            out.append(_lead("overfull", bs, task, side, arrivals=arrivals, init_count=bs.init_count))
    return out


class _Passes:
    """One task's walk in program order: which cursors waited since their last advance, and the
    arrivals each pass makes on each set (every loop body read once; a loop that never runs skipped)."""

    def __init__(self, task, sets, problem, out: list[PhaseLead], rounds) -> None:
        self.t, self.sets, self.problem, self.out, self.rounds = task, sets, problem, out, rounds
        self.waited: set[str] = set()
        self.per_pass: dict[tuple[str, str], int] = {}  # (cursor, set) -> arrivals in this pass
        self.said: set[str] = set()

    def walk(self, nodes) -> None:
        for n in nodes:
            if isinstance(n, ResolvedLoop):
                try:
                    runs = trip_count(n.loop, {}, self.problem)
                except (DesignError, KeyError, TypeError, ValueError):
                    runs = 1  # a bound schedule.loop reports: read the body as if it ran
                if runs:
                    self.walk(n.body)
                continue
            for a in n.actions:
                if a.set in self.sets:
                    self.action(n, a)
            for cur in n.advances:
                self.waited.discard(cur)
                for key in [k for k in self.per_pass if k[0] == cur]:
                    del self.per_pass[key]

    def action(self, n, a) -> None:
        t = self.t
        if a.verb is Verb.WAIT and a.role is not SIGNALS[n.side]:
            self.waited.add(a.cursor)
            return
        if a.verb not in _SIGNAL_VERBS or a.role is not SIGNALS[n.side]:
            return
        if a.cursor not in self.waited and a.set not in self.said:
            self.said.add(a.set)
            self.out.append(_lead("unguarded", self.sets[a.set], t.name, n.side, step=str(n.step)))
        if a.verb is not Verb.COMPLETE_TX:  # the copy's bytes are not an arrival
            key = (a.cursor, a.set)
            self.per_pass[key] = self.per_pass.get(key, 0) + (1 if a.who is Who.ONE else t.num_threads)
            most = self.rounds.setdefault(a.set, {})
            if self.per_pass[key] > most.get(t.name, (0, n.side))[0]:
                most[t.name] = (self.per_pass[key], n.side)


def _lead(kind: str, bs, task: str, side: Side, **extra) -> PhaseLead:
    return PhaseLead(kind, bs.name, bs.owner, task, side, tuple(w for w in bs.waiters if w != task), **extra)


__all__ = ["PhaseLead", "SIGNALS", "phase_leads"]

"""An independent reference for the exhaustive checker: every interleaving of the tasks' unrolled
event lists over an explicit mbarrier model, by brute force, for tiny designs.

Written from the contract (semantics.md sections 4 and 5, the violation kinds of the checker's
verdicts), not from the checker's code.  It reuses the model, the protocol table as applied to a
design (``resolve``: which barrier set each step waits on or arrives at, and who arrives) and
the barrier layout (slot numbers and init counts).  Everything else is its own: loop unrolling
with the design's real loop counts, the cursor walk (stage, round, parity), the mbarrier
arithmetic (one thread at a time), the data rules and the search.  Its states are explicit --
each task's position, every barrier, the last round written into every stage, the copies in
flight, and each task's holds, releases and writes in progress as plain data -- where the
checker derives those from positions and bit masks, and it has no partial-order reduction.

Atomicity follows the hardware: every barrier action is one step (a wait, an arrive of a task's
threads, an arrive.expect_tx, the issue of a bulk copy), a step's effect on stage data is one
step after its barrier actions, and a copy lands as its own agent (in two parts when the phase
completes part-way: the bytes beyond it belong to the next phase).  A run stops at its first
broken rule; ``explore`` answers the set of kinds runs stop with.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace
from typing import NamedTuple

from pgstudio.analysis.layout import barrier_layout
from pgstudio.analysis.resolve import ResolvedLoop, resolve
from pgstudio.model.kinds import OpKind, Who
from pgstudio.model.targets import DTYPE_BYTES

WAIT, ARRIVE, EXPECT, COPY, WRITE, READ, NOP = "wait", "arrive", "expect", "copy", "write", "read", "nop"


@dataclass(frozen=True)
class Event:
    """One atomic step of a task.  ``round``: the round of the step's cursor (the phase its
    arrivals belong to; the round its data is written or read for)."""

    kind: str
    slot: int = -1
    parity: int = 0
    round: int = -1
    arrivals: int = 0
    tx: int = 0
    stage: int = -1
    write: str | None = None  # the resource a write or a copy fills
    written: tuple[str, ...] = ()  # every resource whose (resource, stage) the fill writes (views)
    reads: tuple[tuple[str, int, int], ...] = ()  # (resource, stage, round)
    dma: bool = False  # a tma / umma step reading its operands itself
    holds: tuple[tuple[str, int], ...] = ()  # taken once this event is done
    frees: tuple[tuple[str, int], ...] = ()
    starts: tuple[str, int] | None = None  # (buffer, stage) the task starts writing
    ends: tuple[tuple[str, int], ...] = ()  # (buffer, stage) it stops writing (commit)


class Reference:
    """The unrolled events of ``design`` (real loop counts) and their brute-force exploration."""

    def __init__(self, design) -> None:
        self.design = design
        self.layout = barrier_layout(design)
        self.counts = [s.arrive_count for s in self.layout.slots]
        self.first = {s.name: s.first for s in self.layout.sets}
        self.root = {r.name: self._root(r.name) for r in design.resources}
        self.pipelined = {r.name: r for r in design.resources if r.pipeline_config is not None}
        self.consumers = {r: [i for i, t in enumerate(design.tasks) if r in t.src_resources] for r in self.pipelined}
        plans = resolve(design, self.layout)
        self.events = [self._unroll(t, plans[t.name]) for t in design.tasks]

    # -- unrolling ----------------------------------------------------------------------------------
    def _root(self, name: str) -> str:
        names = {r.name: r for r in self.design.resources}
        seen = {name}
        while names[name].aliases in names and names[name].aliases not in seen:
            name = names[name].aliases
            seen.add(name)
        return name

    def _bound(self, b) -> int:
        return self.design.problem_dict[b] if isinstance(b, str) else b

    def _tile_bytes(self, name: str) -> int:
        r = self.design.resource(name)
        if r.tile:
            return math.prod(r.tile) * DTYPE_BYTES.get(r.dtype, 4)
        return r.pipeline_config.num_bytes

    def _unroll(self, task, plan) -> list[Event]:
        stages = {c.name: c.stages for c in plan.cursors}
        producer = {c.name: c.side == "producer" for c in plan.cursors}
        uses: dict[str, int] = {}
        last: dict[str, tuple[int, int]] = {}  # resource -> (stage, round) of its last wait or read
        out: list[Event] = []

        def walk(nodes):
            for n in nodes:
                if isinstance(n, ResolvedLoop):
                    for _ in range(self._bound(n.loop.start), self._bound(n.loop.stop), self._bound(n.loop.step)):
                        walk(n.body)
                else:
                    out.extend(self._step(task, n, stages, producer, uses, last))
                    for c in n.advances:
                        uses[c] = uses.get(c, 0) + 1

        walk(plan.nodes)
        return out

    def _step(self, task, rs, stages, producer, uses, last) -> list[Event]:
        d, step = self.design, rs.step
        stage = rnd = -1
        if rs.cursor is not None:
            k = uses.get(rs.cursor, 0)
            stage, rnd = k % stages[rs.cursor], k // stages[rs.cursor]
        members = d.group(step.target).member_names if step.via == "group" else (step.target,)
        target = self.pipelined.get(step.target) if step.via != "group" else None
        views = ()
        if target is not None:
            views = tuple(r for r in task.dst_resources if r in self.pipelined and self.root[r] == self.root[target.name])
        events: list[Event] = []
        for a in rs.actions:
            slot = self.first[a.set] + stage
            if a.verb == "wait":  # producers wait on empty starting at parity 1, consumers on full at 0
                events.append(Event(WAIT, slot, (rnd & 1) ^ producer[rs.cursor], rnd))
            elif a.verb == "arrive":
                events.append(Event(ARRIVE, slot, round=rnd, arrivals=1 if a.who == Who.ONE else task.num_threads))
            elif a.verb == "arrive_expect_tx":
                events.append(Event(EXPECT, slot, round=rnd, arrivals=1, tx=a.bytes))
            elif a.verb == "complete_tx" and target is not None:  # the copy lands the tile it copies
                events.append(Event(COPY, slot, round=rnd, tx=self._tile_bytes(target.name) or a.bytes, stage=stage,
                                    write=target.name, written=views))
        holds = frees = ends = ()
        if step.op == "wait":
            holds = tuple((m, stage) for m in members)
            for m in members:
                last[m] = (stage, rnd)
        elif step.op == "release":
            frees = tuple((m, stage) for m in members)
        elif step.op == "commit" and rs.kind is not OpKind.TMA:  # a tma producer writes nothing itself
            ends = tuple((self.root[m], stage) for m in members if m in self.pipelined)
        elif step.op == "read" and rs.kind is not None:
            last[step.target] = (stage, rnd)
            if rs.kind is OpKind.ASYNC:  # threads read the stage here; an MMA reads it in its own step
                events.append(Event(READ, reads=((step.target, stage, rnd),)))
        elif step.is_work:
            dma = rs.kind in (OpKind.TMA, OpKind.UMMA) or step.op == "mma"
            reads = ()
            if dma:
                reads = tuple((v, *last.get(v, (-1, -1))) for _, v in step.args
                              if v in self.pipelined and v in task.src_resources)
            copying = rs.kind is OpKind.TMA and step.op == "load"
            if target is not None and not copying:
                events.append(Event(WRITE, round=rnd, stage=stage, write=target.name, written=views, reads=reads,
                                    dma=dma, starts=(self.root[target.name], stage)))
            elif reads:
                events.append(Event(READ, reads=reads, dma=dma))
        if not events:
            events.append(Event(NOP))
        waits = [i for i, e in enumerate(events) if e.kind == WAIT]
        at = waits[-1] if holds and waits else len(events) - 1  # a hold starts when its wait has passed
        events[at] = _with(events[at], holds=holds)
        events[-1] = _with(events[-1], frees=frees, ends=ends)  # a release / commit takes effect with its arrive
        return events

    # -- exploration --------------------------------------------------------------------------------
    def explore(self, max_states: int = 50_000) -> tuple[set[tuple], int, bool]:
        """(findings runs stop with, states seen, capped).  A finding is ``(kind, task, event
        index)`` for a step that breaks a rule, ``(kind, positions of every task)`` for a state
        where nothing can move (deadlock, unbalanced)."""
        T = len(self.events)
        init = _State(tuple([0] * T), tuple((c, 0, 0) for c in self.counts), (), (),
                      tuple(frozenset() for _ in range(T)), tuple(() for _ in range(T)),
                      tuple(frozenset() for _ in range(T)))
        seen = {init}
        queue = deque([init])
        kinds: set[tuple] = set()
        while queue:
            s = queue.popleft()
            moves = [("task", i) for i in range(T) if self._enabled(s, i)] + [("copy", j) for j in range(len(s.copies))]
            if not moves:
                kinds.update((kind, s.pcs) for kind in self._end(s))
                continue
            for who, i in moves:
                nxt, bad = self._task(s, i) if who == "task" else (self._land(s, i), None)
                if bad:
                    kinds.add((bad, self.design.tasks[i].name, s.pcs[i]))
                    continue
                if nxt not in seen:
                    if len(seen) >= max_states:
                        return kinds, len(seen), True
                    seen.add(nxt)
                    queue.append(nxt)
        return kinds, len(seen), False

    def _enabled(self, s, i) -> bool:
        if s.pcs[i] >= len(self.events[i]):
            return False
        e = self.events[i][s.pcs[i]]
        return e.kind != WAIT or s.bars[e.slot][2] % 2 != e.parity  # the phase of that parity completed

    def _task(self, s, i):
        e = self.events[i][s.pcs[i]]
        bars, data, copies = s.bars, s.data, s.copies
        bad = None
        if e.kind in (ARRIVE, EXPECT):
            pending, tx, phase = bars[e.slot]
            if phase != e.round:
                bad = "arrive_count"  # the arrival belongs to another phase: counts and arrivals disagree
            bar, leaked = _arrive((pending, tx + e.tx, phase), self.counts[e.slot], e.arrivals)
            bad = bad or ("arrive_count" if leaked else None)
            bars = bars[:e.slot] + (bar,) + bars[e.slot + 1:]
        elif e.kind == COPY:
            bad = self._write_hazard(s, i, e)
            copies = tuple(sorted(copies + ((i, s.pcs[i], e.tx),)))
        elif e.kind in (WRITE, READ):
            bad = self._read_hazard(s, i, e) or (self._write_hazard(s, i, e) if e.kind == WRITE else None)
            if e.kind == WRITE:
                data = _put(data, ((r, e.stage) for r in e.written), e.round)
        holds = set(s.holds[i]) | set(e.holds)
        released = dict(s.released[i])
        for key in e.frees:
            holds.discard(key)
            released[key] = released.get(key, 0) + 1
        writing = (set(s.writing[i]) | ({e.starts} if e.starts else set())) - set(e.ends)
        return _State(_set(s.pcs, i, s.pcs[i] + 1), bars, data, copies, _set(s.holds, i, frozenset(holds)),
                      _set(s.released, i, tuple(sorted(released.items()))), _set(s.writing, i, frozenset(writing))), bad

    def _land(self, s, j):
        t, pc, left = s.copies[j]
        e = self.events[t][pc]
        pending, tx, phase = s.bars[e.slot]
        rest = s.copies[:j] + s.copies[j + 1:]
        if pending == 0 and 0 < tx <= left:  # the expected bytes complete the phase; the rest comes later
            bars = _set(s.bars, e.slot, (self.counts[e.slot], 0, phase + 1))
            if left - tx:
                return s._replace(bars=bars, copies=tuple(sorted(rest + ((t, pc, left - tx),))))
            return s._replace(bars=bars, copies=rest, data=_put(s.data, ((r, e.stage) for r in e.written), e.round))
        bars = _set(s.bars, e.slot, (pending, tx - left, phase))
        return s._replace(bars=bars, copies=rest, data=_put(s.data, ((r, e.stage) for r in e.written), e.round))

    def _landing_into(self, s, buf: str, stage: int) -> bool:
        return any(self.root[self.events[t][pc].write] == buf and self.events[t][pc].stage == stage
                   for t, pc, _ in s.copies)

    def _read_hazard(self, s, i, e) -> str | None:
        for r, stage, rnd in e.reads:
            if (r, stage) not in s.holds[i]:  # read without holding the stage
                gave_back = dict(s.released[i]).get((r, stage), 0)
                return "early_release" if e.dma and gave_back > rnd >= 0 else "read_before_write"
            buf = self.root[r]
            if self._landing_into(s, buf, stage):
                return "read_before_write"
            if any(j != i and (buf, stage) in s.writing[j] for j in range(len(s.pcs))):
                return "read_before_write"
            written = dict(s.data).get((r, stage), -1)
            if written < rnd:
                return "read_before_write"
            if written > rnd:
                return "write_while_held"
        return None

    def _write_hazard(self, s, i, e) -> str | None:
        buf, stage = self.root[e.write], e.stage
        for j in range(len(s.pcs)):
            if j == i:
                continue
            if any(st == stage and self.root[r] == buf for r, st in s.holds[j]):
                return "write_while_held"
            if (buf, stage) in s.writing[j]:
                return "write_while_held"
        if self._landing_into(s, buf, stage):
            return "write_while_held"
        if e.round > 0:  # every consumer must have released the round before
            for r in e.written:
                if any(dict(s.released[j]).get((r, stage), 0) < e.round for j in self.consumers[r]):
                    return "write_while_held"
        return None

    def _end(self, s) -> set[str]:
        if any(s.pcs[i] < len(self.events[i]) for i in range(len(s.pcs))):
            return {"deadlock"}
        data = dict(s.data)
        for r, res in self.pipelined.items():
            for stage in range(res.pipeline_config.num_stages):
                times = data.get((r, stage), -1) + 1
                if any(dict(s.released[j]).get((r, stage), 0) < times for j in self.consumers[r]):
                    return {"unbalanced"}
        return set()


class _State(NamedTuple):
    pcs: tuple[int, ...]
    bars: tuple[tuple[int, int, int], ...]  # (pending, tx, phase) per slot
    data: tuple  # sorted ((resource, stage), last round written)
    copies: tuple  # sorted (task, event index, bytes still to land)
    holds: tuple  # per task: frozenset of (resource, stage) it holds
    released: tuple  # per task: sorted ((resource, stage), rounds released)
    writing: tuple  # per task: frozenset of (buffer, stage) it is writing


def _arrive(bar, count: int, n: int) -> tuple[tuple[int, int, int], bool]:
    """``n`` threads arrive one after another; True when one of them found nothing pending or
    arrived after the batch had already completed a phase (its arrival counts for the next)."""
    pending, tx, phase = bar
    completed = bad = False
    for _ in range(n):
        if pending <= 0:
            pending -= 1
            bad = True
            continue
        pending -= 1
        bad = bad or completed
        if pending == 0 and tx == 0:
            pending, phase, completed = count, phase + 1, True
    return (pending, tx, phase), bad


def _set(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


def _put(data: tuple, keys, rnd: int) -> tuple:
    out = dict(data)
    for k in keys:
        out[k] = rnd
    return tuple(sorted(out.items()))


def _with(e: Event, **kw) -> Event:
    kw = {k: v for k, v in kw.items() if v}
    return replace(e, **kw) if kw else e


def reference_findings(design, max_states: int = 50_000) -> tuple[set[tuple], int, bool]:
    """What runs of ``design`` (real loop counts) stop with; see ``Reference.explore``."""
    return Reference(design).explore(max_states)

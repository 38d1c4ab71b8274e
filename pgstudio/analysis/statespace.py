"""The checker's transition system: tasks and in-flight copies as agents over one shared state.

Every executed step of every task (``program.py``) becomes one or more *instructions*, one per
protocol action (a wait, an arrive, an arrive.expect_tx, the issue of a bulk copy) plus one for
the step's effect on stage data (a write, a read).  A step with neither is a no-op instruction
(``try_wait``, ``try_acquire``, a store to global memory).  Agents:

* a task: executes its next instruction; a wait is enabled only while it would pass;
* a bulk copy in flight: lands its bytes on the full barrier (``complete_tx``).  If the phase
  completes part-way (more bytes than expected), the rest lands in a second transition, so a
  consumer can get in between -- as on the GPU.

A state is ``(pcs, barriers, data, copies)``: each task's instruction index, every slot's
``Mbarrier``, the last round written into each (resource, stage), and the copies in flight.
Whether a task holds a stage (between its wait and its release), is writing one (between its
work and its commit) or how many rounds it released is a function of its pc (``occupancy.py``).

A transition that breaks a rule is labelled with a *violation* (its effect still applies):
``arrive_count`` (a phase completed by too many or too few arrivals: an arrival landed in a
phase other than its round's, or part of a batch of arrivals leaked past a completed phase),
``write_while_held`` (a stage written while a consumer holds it, before the consumer released
the previous round, or while another write into it is in flight), ``read_before_write`` (a
stage read while its copy is still landing, while its producer is still writing it, or before
the round was written), ``early_release`` (a tma / umma step reads a stage its task already
released).  A terminal state with a task not finished is a ``deadlock``; one where every task
finished but a written round was never released is ``unbalanced``.

The rules themselves live in ``violations.py``.  Each transition's *footprint* (objects read,
written and added to, as bit masks over slots and (buffer, stage) data objects; ``range_or.py``
ORs any range of a task's in O(1)) drives the partial-order reduction in ``search.py``.  Every
check reads only objects in its footprint, which is what makes the reduction keep every verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.kinds import OpKind
from . import mbarrier
from .budget import NEVER, Deadline
from .mbarrier import Mbarrier
from .occupancy import Occupancy
from .program import Act, Program, StepRun
from .range_or import RangeOr
from .timeline import COPY_LANE
from .violations import KINDS, Violation, check_reads, check_write, leak, terminal, wrong_phase

NOOP, WAIT, ARRIVE, EXPECT, COPY, WRITE, READ = range(7)


@dataclass(frozen=True)
class Instr:
    """One transition of a task.  Masks are over the checker's objects (see ``StateSpace``):
    ``reads`` / ``writes`` as usual, ``adds`` for updates that commute with each other (two adds
    to one object never conflict; an add conflicts with a read or a write of it)."""

    op: int
    run: StepRun
    act: Act | None
    reads: int = 0
    writes: int = 0
    adds: int = 0
    holds: tuple[tuple[str, int], ...] = ()  # (resource, stage) held after it
    frees: tuple[tuple[str, int], ...] = ()
    commits: tuple[tuple[str, int], ...] = ()  # (buffer, stage) no longer being written
    writing: tuple[str, int] | None = None  # (buffer, stage) it starts writing (not tma)
    land: tuple[int, int, int] = (0, 0, 0)  # a copy: (reads, writes, adds) of its landing

    def describe(self) -> str:
        """What the instruction does, e.g. ``ab.release(): arrive ab.shared_empty[0] x128``."""
        if self.op == NOOP:
            return str(self.run.step)
        if self.op == COPY:
            what = f"issue bulk copy of {self.act.tx} B, completing on {self.act.set}[{self.act.stage}]"
        elif self.act is not None:
            what = str(self.act)
        elif self.op == WRITE:
            what = f"write {self.run.write} stage {self.run.stage}"
        else:
            what = "read " + ", ".join(f"{r} stage {st}" for r, st, _ in self.run.reads)
        return f"{self.run.step}: {what}"


def conflict(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    """Do two accesses (reads, writes, adds) conflict?  Adds commute with adds only."""
    ar, aw, aa = a
    br, bw, ba = b
    return bool((aw & (br | bw | ba)) or (bw & (ar | aa)) or (aa & br) or (ba & ar))


class State:
    """One state: ``pcs`` (each task's instruction index), ``bars`` (every slot's ``Mbarrier``),
    ``data`` (last round written per (resource, stage), -1 before any) and ``copies`` ((task, pc
    of the copy instruction, bytes still to land), sorted).

    Its hash is the XOR of one hash per component (``part``), which a transition updates for the
    few components it changes: hashing a state costs the same however large the design is (a
    tuple hash walks every barrier).  Equal hashes are confirmed by comparing the components."""

    __slots__ = ("pcs", "bars", "data", "copies", "_hash")

    def __init__(self, pcs: tuple[int, ...], bars: tuple[Mbarrier, ...], data: tuple[int, ...],
                 copies: tuple[tuple[int, int, int], ...], hash_: int | None = None) -> None:
        self.pcs, self.bars, self.data, self.copies = pcs, bars, data, copies
        if hash_ is None:
            hash_ = 0
            for i, pc in enumerate(pcs):
                hash_ ^= part(PC, i, pc)
            for i, bar in enumerate(bars):
                hash_ ^= part(BAR, i, bar)
            for i, rnd in enumerate(data):
                hash_ ^= part(DATA, i, rnd)
            for c in copies:
                hash_ ^= part(COPIES, 0, c)
        self._hash = hash_

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, State) and self._hash == other._hash and self.pcs == other.pcs
                and self.bars == other.bars and self.data == other.data and self.copies == other.copies)

    def __repr__(self) -> str:
        return f"State(pcs={self.pcs}, bars={self.bars}, data={self.data}, copies={self.copies})"


PC, BAR, DATA, COPIES = range(4)


def part(component: int, index: int, value) -> int:
    """The hash of one component of a state (see ``State``)."""
    return hash((component, index, value))


class StateSpace:
    """The transition system of one unrolled program; see the module docstring.

    Objects of the footprints (bits of an int): one per slot (a wait reads it; an arrival, an
    expect_tx and a landing write it), and two per (buffer, stage): its *content* (what was
    written, copies landing, a producer writing) and its *occupancy* (which consumers hold it,
    how many rounds they released).  Taking and giving back a hold are *adds* to occupancy: each
    task's holds are its own, so they commute with each other and conflict only with the write
    checks that read them.
    """

    def __init__(self, program: Program, deadline: Deadline = NEVER) -> None:
        self.program = program
        self.deadline = deadline  # polled while compiling (``budget.OutOfTime`` past it)
        d = self.design = program.design
        self.tasks = program.tasks
        self.T = len(self.tasks)
        self.counts = program.slot_counts()
        self.nslots = len(self.counts)
        self.roots = program.buffers
        self.wid: dict[tuple[str, int], int] = {}  # (resource, stage) -> index into State.data
        self.slot_mask = [1 << q for q in range(self.nslots)]
        bits = self.nslots
        self.content: dict[tuple[str, int], int] = {}
        self.occupancy: dict[tuple[str, int], int] = {}
        for r in d.pipelined:
            for st in range(r.pipeline_config.num_stages):
                key = (self.roots[r.name], st)
                if key not in self.content:
                    self.content[key] = 1 << bits
                    self.occupancy[key] = 1 << (bits + 1)
                    bits += 2
                self.wid[(r.name, st)] = len(self.wid)
        self.consumers = {r.name: tuple(self.tasks.index(t.name) for t in d.consumers(r.name)) for r in d.pipelined}
        self.code = tuple(self._compile(runs) for runs in program.runs)
        self._derive()

    # -- compiling steps into instructions ---------------------------------------------------
    def _key(self, resource: str, stage: int) -> tuple[str, int]:
        return (self.roots[resource], stage)

    def _compile(self, runs: tuple[StepRun, ...]) -> tuple[Instr, ...]:
        out: list[Instr] = []
        for run in runs:
            if self.deadline.passed():
                self.deadline.check(f"compiling the program into transitions (task {run.task}, step {run.index:,} "
                                    f"of {len(runs):,})")
            start = len(out)
            for act in run.acts:
                if act.verb == "wait":
                    out.append(Instr(WAIT, run, act, reads=self.slot_mask[act.slot]))
                elif act.verb in ("arrive", "arrive_expect_tx"):
                    bit = self.slot_mask[act.slot]
                    out.append(Instr(ARRIVE if act.verb == "arrive" else EXPECT, run, act, 0, bit))
                elif act.verb == "complete_tx" and run.write:
                    key = self._key(run.write, run.stage)
                    c = self.content[key]
                    out.append(Instr(COPY, run, act, c | self.occupancy[key], c,
                                     land=(0, c | self.slot_mask[act.slot], 0)))
            reads = 0
            for res, st, _ in run.reads:
                if st >= 0:
                    reads |= self.content[self._key(res, st)]
            if run.write and not run.is_copy:
                key = self._key(run.write, run.stage)
                c = self.content[key]
                out.append(Instr(WRITE, run, None, reads | c | self.occupancy[key], c, writing=key))
            elif run.reads:
                out.append(Instr(READ, run, None, reads))
            if len(out) == start:
                out.append(Instr(NOOP, run, None))
            # a hold starts once the step's wait passed; a release or a commit takes effect with the
            # step's last instruction (its arrive)
            held = tuple((r, run.stage) for r in run.holds)
            freed = tuple((r, run.stage) for r in run.frees)
            commits = tuple(self._key(r, run.stage) for r in run.commits  # a tma producer writes nothing itself
                            if self._key(r, run.stage) in self.content and run.kind is not OpKind.TMA)
            occ = 0
            for r, st in held + freed:
                occ |= self.occupancy[self._key(r, st)]
            done = 0
            for key in commits:
                done |= self.content[key]
            k = len(out) - 1
            waits = [j for j in range(start, len(out)) if out[j].op == WAIT]
            if held and waits:
                k = waits[-1]
            last = out[k]
            out[k] = Instr(last.op, last.run, last.act, last.reads, last.writes | done, last.adds | occ,
                           held, freed, commits, last.writing, last.land)
        return tuple(out)

    def _derive(self) -> None:
        """Per task: who holds / writes / released what (``occupancy``); future footprints; waits.
        Tables are built span by span, polling the deadline (``budget.Deadline.spans``)."""
        dl = self.deadline
        self.occupancy = Occupancy(self.code, self.roots, dl)
        self.future, self.waits, self.tables, self.wait_info, self.each = [], [], [], [], []
        for t, code in enumerate(self.code):
            what = f"building the checker's tables (task {self.tasks[t]}, {len(code):,} instructions)"
            each: list[tuple[int, int, int]] = []
            for lo, hi in dl.spans(len(code), what):
                each += [(ins.reads | ins.land[0], ins.writes | ins.land[1], ins.adds | ins.land[2])
                         for ins in code[lo:hi]]
            n = len(code)
            fut = [(0, 0, 0)] * (n + 1)
            r = w = a = 0
            for k in range(n - 1, -1, -1):
                if not k & 0x3FFF:
                    dl.check(what)
                er, ew, ea = each[k]
                r, w, a = r | er, w | ew, a | ea
                fut[k] = (r, w, a)
            self.future.append(fut)
            self.waits.append([k for k, ins in enumerate(code) if ins.op == WAIT])
            self.wait_info.append([(k, ins.act.slot, ins.act.parity, self.slot_mask[ins.act.slot])
                                   for k, ins in enumerate(code) if ins.op == WAIT])
            self.tables.append(RangeOr(each, dl, what))
            self.each.append(each)
        dl.check("building the checker's tables")
        # per task and pc: () not a wait, (slot, parity) a wait, None finished
        self._wait_at = [[(ins.act.slot, ins.act.parity) if ins.op == WAIT else () for ins in code] + [None]
                         for code in self.code]
        self._pc_hash = [[part(PC, t, pc) for pc in range(len(code) + 1)] for t, code in enumerate(self.code)]
        #: per task and pc: does the instruction touch nothing shared (it commutes with everything)?
        self.quiet = [[e == (0, 0, 0) for e in each] for each in self.each]
        dl.check("building the checker's tables")

    # -- states -----------------------------------------------------------------------------
    def initial(self) -> State:
        return State((0,) * self.T, tuple(mbarrier.init(c) for c in self.counts), (-1,) * len(self.wid), ())

    def agents(self, s: State) -> list[int]:
        """Agents with a transition: task i -> i, copy j of ``s.copies`` -> ~j (negative)."""
        return [i for i in range(self.T) if s.pcs[i] < len(self.code[i])] + [~j for j in range(len(s.copies))]

    def moves(self, s: State) -> tuple[list[int], list[int]]:
        """(agents, enabled agents) of ``s`` in one pass: a task is enabled unless its next
        instruction is a wait whose phase has not completed; a copy in flight always is."""
        bars = s.bars
        agents: list[int] = []
        enabled: list[int] = []
        for i, pc in enumerate(s.pcs):
            wait = self._wait_at[i][pc]
            if wait is None:
                continue
            agents.append(i)
            if not wait or (bars[wait[0]][2] & 1) != wait[1]:
                enabled.append(i)
        if s.copies:
            copies = [~j for j in range(len(s.copies))]
            agents += copies
            enabled += copies
        return agents, enabled

    def enabled(self, s: State, a: int) -> bool:
        if a < 0:
            return True
        ins = self.code[a][s.pcs[a]]
        return ins.op != WAIT or s.bars[ins.act.slot].passes(ins.act.parity)

    def footprint(self, s: State, a: int) -> tuple[int, int, int]:
        """(reads, writes, adds) of agent ``a``'s next transition."""
        if a < 0:
            t, pc, _ = s.copies[~a]
            return self.code[t][pc].land
        ins = self.code[a][s.pcs[a]]
        return ins.reads, ins.writes, ins.adds

    def label(self, s: State, a: int) -> tuple[str, Instr]:
        """(agent name, instruction) of agent ``a``'s next transition in ``s``."""
        if a < 0:
            t, pc, _ = s.copies[~a]
            return COPY_LANE.format(task=self.tasks[t]), self.code[t][pc]
        return self.tasks[a], self.code[a][s.pcs[a]]

    # -- transitions ------------------------------------------------------------------------
    def fire(self, s: State, a: int) -> tuple[State, Violation | None]:
        """The state after agent ``a`` moves, and the violation the move commits (None if none).
        A violating move still has its effect: a violation labels a transition, it does not end
        the run (so the reduction cannot hide one violation behind another)."""
        if a < 0:
            return self._land(s, ~a), None
        pc = s.pcs[a]
        ins = self.code[a][pc]
        pcs = s.pcs[:a] + (pc + 1,) + s.pcs[a + 1:]
        h = s._hash ^ self._pc_hash[a][pc] ^ self._pc_hash[a][pc + 1]
        op = ins.op
        if op == NOOP or op == WAIT:
            return State(pcs, s.bars, s.data, s.copies, h), None
        if op == ARRIVE or op == EXPECT:
            act = ins.act
            bar = s.bars[act.slot]
            count = self.counts[act.slot]
            res = (mbarrier.arrive(bar, count, act.arrivals) if op == ARRIVE
                   else mbarrier.arrive_expect_tx(bar, count, act.tx))
            bad = None
            if bar.phase != act.round:
                bad = wrong_phase(self, a, ins, bar, count)
            elif res.leaked or res.excess:
                bad = leak(self, a, ins, count, res)
            bars = s.bars[:act.slot] + (res.state,) + s.bars[act.slot + 1:]
            h ^= part(BAR, act.slot, bar) ^ part(BAR, act.slot, res.state)
            return State(pcs, bars, s.data, s.copies, h), bad
        if op == COPY:
            bad = check_write(self, s, a, ins.run)
            copy = (a, pc, ins.act.tx)
            return State(pcs, s.bars, s.data, tuple(sorted(s.copies + (copy,))), h ^ part(COPIES, 0, copy)), bad
        run = ins.run
        bad = check_reads(self, s, a, run)
        if op == WRITE:
            bad = bad or check_write(self, s, a, run)
            data, h = self._write(s.data, h, run)
            return State(pcs, s.bars, data, s.copies, h), bad
        return State(pcs, s.bars, s.data, s.copies, h), bad

    def _write(self, data: tuple[int, ...], h: int, run: StepRun) -> tuple[tuple[int, ...], int]:
        """``data`` with ``run``'s round written into every resource it fills, and the hash."""
        out = list(data)
        for r in run.written:
            w = self.wid[(r, run.stage)]
            h ^= part(DATA, w, out[w]) ^ part(DATA, w, run.round)
            out[w] = run.round
        return tuple(out), h

    def _land(self, s: State, j: int) -> State:
        t, pc, left = s.copies[j]
        ins = self.code[t][pc]
        act = ins.act
        bar = s.bars[act.slot]
        res = mbarrier.complete_tx(bar, self.counts[act.slot], left)
        bars = s.bars[:act.slot] + (res.state,) + s.bars[act.slot + 1:]
        h = s._hash ^ part(BAR, act.slot, bar) ^ part(BAR, act.slot, res.state) ^ part(COPIES, 0, s.copies[j])
        rest = left - res.landed
        if rest:
            copy = (t, pc, rest)
            return State(s.pcs, bars, s.data, s.copies[:j] + (copy,) + s.copies[j + 1:], h ^ part(COPIES, 0, copy))
        data, h = self._write(s.data, h, ins.run)
        return State(s.pcs, bars, data, s.copies[:j] + s.copies[j + 1:], h)

    # -- checks (violations.py) ------------------------------------------------------------
    def terminal(self, s: State) -> Violation | None:
        """The verdict of a state with no transition: None when every task finished cleanly."""
        return terminal(self, s)

    # -- for the reduction (reduction.py) ---------------------------------------------------
    def copy_slot(self, s: State, j: int) -> tuple[int, int]:
        """(slot, bytes still to land) of copy ``j`` in flight."""
        t, pc, left = s.copies[j]
        return self.code[t][pc].act.slot, left


__all__ = ["Instr", "KINDS", "State", "StateSpace", "Violation", "conflict"]

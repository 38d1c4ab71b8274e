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
work and its commit) or how many rounds it released is a function of its pc, precomputed.

A transition that breaks a rule ends in a *violation* instead of a state (an error is terminal):
``arrive_count`` (a phase completed by too many or too few arrivals: an arrival landed in a
phase other than its round's, or part of a batch of arrivals leaked past a completed phase),
``write_while_held`` (a stage written while a consumer holds it, before the consumer released
the previous round, or while another write into it is in flight), ``read_before_write`` (a
stage read while its copy is still landing, while its producer is still writing it, or before
the round was written), ``early_release`` (a tma / umma step reads a stage its task already
released).  A terminal state with a task not finished is a ``deadlock``; one where every task
finished but a written round was never released is ``unbalanced``.

Each transition's *footprint* (objects read and written, as bit masks over slots and
(buffer, stage) data objects) drives the partial-order reduction in ``search.py``.  Every check
reads only objects in its footprint, which is what makes the reduction keep every verdict.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import NamedTuple

from ..model.kinds import OpKind
from . import mbarrier
from .mbarrier import Mbarrier
from .program import Act, Program, StepRun

NOOP, WAIT, ARRIVE, EXPECT, COPY, WRITE, READ = range(7)
OP_NAMES = ("step", "wait", "arrive", "arrive_expect_tx", "copy", "write", "read")

#: Violation kinds, and what each means.
KINDS = {
    "deadlock": "a task waits forever: no interleaving lets it continue",
    "write_while_held": "a stage written while a consumer still holds it (or before it released the previous round)",
    "read_before_write": "a stage read before its producer completed it",
    "arrive_count": "a phase completed by too many or too few arrivals",
    "early_release": "an upstream stage released before the tma / umma step that reads it was issued",
    "unbalanced": "every task finished but a written round was never released (loops of different lengths)",
}


class Violation(NamedTuple):
    kind: str
    message: str
    where: tuple[str, ...]


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
        what = str(self.act) if self.act is not None else OP_NAMES[self.op]
        return f"{self.run.step}: {what}" if self.op != NOOP else str(self.run.step)


def conflict(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    """Do two accesses (reads, writes, adds) conflict?  Adds commute with adds only."""
    ar, aw, aa = a
    br, bw, ba = b
    return bool((aw & (br | bw | ba)) or (bw & (ar | aa)) or (aa & br) or (ba & ar))


class State(NamedTuple):
    pcs: tuple[int, ...]
    bars: tuple[Mbarrier, ...]
    data: tuple[int, ...]  # last round written per (resource, stage), -1 before any
    copies: tuple[tuple[int, int, int], ...]  # (task, pc of the copy instruction, bytes still to land)


class StateSpace:
    """The transition system of one unrolled program; see the module docstring.

    Objects of the footprints (bits of an int): one per (slot, round) -- an access to a slot
    touches the bit of its round, and reads the bits of the slot's other rounds -- and two per
    (buffer, stage): its *content* (what was written, copies landing, a producer writing) and its
    *occupancy* (which consumers hold it, how many rounds they released).  Arrivals, expected
    bytes and landing bytes of one round of one slot are *adds* when the round is balanced
    (its arrivals equal the init count and its expected bytes the landing bytes): then they
    commute and the phase completes exactly at the last of them, in any order.  An unbalanced
    round's accesses are plain writes.  Taking and giving back a hold are adds to occupancy.
    """

    def __init__(self, program: Program) -> None:
        self.program = program
        d = self.design = program.design
        self.tasks = program.tasks
        self.T = len(self.tasks)
        self.counts = program.slot_counts()
        self.nslots = len(self.counts)
        self.roots = program.buffers
        self.wid: dict[tuple[str, int], int] = {}  # (resource, stage) -> index into State.data
        bits = 0
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
        # slot rounds, and which of them are balanced
        arrivals: dict[tuple[int, int], int] = {}
        expected: dict[tuple[int, int], int] = {}
        landed: dict[tuple[int, int], int] = {}
        for i, runs in enumerate(program.runs):
            for run in runs:
                for act in run.acts:
                    key = (act.slot, act.round)
                    arrivals[key] = arrivals.get(key, 0) + act.arrivals
                    if act.verb == "arrive_expect_tx":
                        expected[key] = expected.get(key, 0) + act.tx
                    elif act.verb == "complete_tx":
                        landed[key] = landed.get(key, 0) + act.tx
        self.round_bit: dict[tuple[int, int], int] = {}
        self.slot_mask = [0] * self.nslots
        for key in sorted(arrivals):
            self.round_bit[key] = 1 << bits
            self.slot_mask[key[0]] |= 1 << bits
            bits += 1
        self.counted = {key for key in arrivals if arrivals[key] == self.counts[key[0]]}
        self.balanced = {key for key in self.counted if expected.get(key, 0) == landed.get(key, 0)}
        self.consumers = {r.name: tuple(self.tasks.index(t.name) for t in d.consumers(r.name)) for r in d.pipelined}
        self.code = tuple(self._compile(runs) for runs in program.runs)
        self._derive()

    # -- compiling steps into instructions ---------------------------------------------------
    def _key(self, resource: str, stage: int) -> tuple[str, int]:
        return (self.roots[resource], stage)

    def _touch(self, act: Act) -> tuple[int, int, int]:
        """(reads, writes, adds) of an arrival or a landing on ``act``'s slot."""
        key = (act.slot, act.round)
        bit = self.round_bit[key]
        if key in self.balanced:
            return self.slot_mask[act.slot] & ~bit, 0, bit
        return 0, self.slot_mask[act.slot], 0

    def _compile(self, runs: tuple[StepRun, ...]) -> tuple[Instr, ...]:
        out: list[Instr] = []
        for run in runs:
            start = len(out)
            for act in run.acts:
                if act.verb == "wait":
                    out.append(Instr(WAIT, run, act, reads=self.slot_mask[act.slot]))
                elif act.verb in ("arrive", "arrive_expect_tx"):
                    r, w, a = self._touch(act)
                    out.append(Instr(ARRIVE if act.verb == "arrive" else EXPECT, run, act, r, w, a))
                elif act.verb == "complete_tx" and run.write:
                    key = self._key(run.write, run.stage)
                    c = self.content[key]
                    r, w, a = self._touch(act)
                    out.append(Instr(COPY, run, act, c | self.occupancy[key], c, land=(r, w | c, a)))
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
        """Per task and pc: what it holds, writes and has released; future footprints; waits."""
        self.held, self.producing, self.released = [], [], []
        self.future, self.waits, self.tables, self.arrivals_ahead, self.wait_info = [], [], [], [], []
        for code in self.code:
            held: list = []
            prod: list = []
            rel: list = []
            h: dict = {}
            p: set = set()
            c: dict = {}
            for ins in code:
                held.append(frozenset(h))
                prod.append(frozenset(p))
                rel.append(dict(c))
                for key in ins.holds:
                    h[key] = True
                for key in ins.frees:
                    h.pop(key, None)
                    c[key] = c.get(key, 0) + 1
                for key in ins.commits:
                    p.discard(key)
                if ins.writing:
                    p.add(ins.writing)
            held.append(frozenset(h))
            prod.append(frozenset(p))
            rel.append(dict(c))
            self.held.append(held)
            self.producing.append(prod)
            self.released.append(rel)
            each = [(ins.reads | ins.land[0], ins.writes | ins.land[1], ins.adds | ins.land[2]) for ins in code]
            n = len(code)
            fut = [(0, 0, 0)] * (n + 1)
            for k in range(n - 1, -1, -1):
                r, w, a = fut[k + 1]
                er, ew, ea = each[k]
                fut[k] = (r | er, w | ew, a | ea)
            self.future.append(fut)
            arr = [0] * (n + 1)
            for k in range(n - 1, -1, -1):
                ins = code[k]
                arr[k] = arr[k + 1] | (self.round_bit[(ins.act.slot, ins.act.round)] if ins.op in (ARRIVE, EXPECT) else 0)
            self.arrivals_ahead.append(arr)
            self.waits.append([k for k, ins in enumerate(code) if ins.op == WAIT])
            self.wait_info.append([(k, ins.act.slot, ins.act.parity, self.slot_mask[ins.act.slot])
                                   for k, ins in enumerate(code) if ins.op == WAIT])
            self.tables.append(_RangeOr(each))

    # -- states -----------------------------------------------------------------------------
    def initial(self) -> State:
        return State((0,) * self.T, tuple(mbarrier.init(c) for c in self.counts), (-1,) * len(self.wid), ())

    def agents(self, s: State) -> list[int]:
        """Agents with a transition: task i -> i, copy j of ``s.copies`` -> ~j (negative)."""
        return [i for i in range(self.T) if s.pcs[i] < len(self.code[i])] + [~j for j in range(len(s.copies))]

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

    def future_of(self, s: State, a: int) -> tuple[int, int, int]:
        """(reads, writes, adds) of everything agent ``a`` may still do (a copy: its landing)."""
        if a < 0:
            t, pc, _ = s.copies[~a]
            return self.code[t][pc].land
        return self.future[a][s.pcs[a]]

    def arrivals_of(self, s: State, a: int) -> int:
        """Round bits of the arrivals agent ``a`` still has to make (a copy makes none)."""
        return self.arrivals_ahead[a][s.pcs[a]] if a >= 0 else 0

    def label(self, s: State, a: int) -> tuple[str, Instr]:
        """(agent name, instruction) of agent ``a``'s next transition in ``s``."""
        if a < 0:
            t, pc, _ = s.copies[~a]
            return f"{self.tasks[t]}.tma", self.code[t][pc]
        return self.tasks[a], self.code[a][s.pcs[a]]

    # -- transitions ------------------------------------------------------------------------
    def fire(self, s: State, a: int) -> State | Violation:
        """The state after agent ``a`` moves, or the violation its move commits."""
        if a < 0:
            return self._land(s, ~a)
        pc = s.pcs[a]
        ins = self.code[a][pc]
        pcs = s.pcs[:a] + (pc + 1,) + s.pcs[a + 1:]
        op = ins.op
        if op == NOOP or op == WAIT:
            return State(pcs, s.bars, s.data, s.copies)
        if op == ARRIVE or op == EXPECT:
            act = ins.act
            bar = s.bars[act.slot]
            count = self.counts[act.slot]
            if bar.phase != act.round:
                return self._wrong_phase(a, ins, bar, count)
            res = (mbarrier.arrive(bar, count, act.arrivals) if op == ARRIVE
                   else mbarrier.arrive_expect_tx(bar, count, act.tx))
            if res.leaked or res.excess:
                return self._leak(a, ins, count, res)
            bars = s.bars[:act.slot] + (res.state,) + s.bars[act.slot + 1:]
            return State(pcs, bars, s.data, s.copies)
        if op == COPY:
            bad = self._check_write(s, a, ins.run)
            if bad:
                return bad
            copies = tuple(sorted(s.copies + ((a, pc, ins.act.tx),)))
            return State(pcs, s.bars, s.data, copies)
        run = ins.run
        bad = self._check_reads(s, a, run)
        if bad:
            return bad
        if op == WRITE:
            bad = self._check_write(s, a, run)
            if bad:
                return bad
            data = list(s.data)
            for r in run.written:
                data[self.wid[(r, run.stage)]] = run.round
            return State(pcs, s.bars, tuple(data), s.copies)
        return State(pcs, s.bars, s.data, s.copies)

    def _land(self, s: State, j: int) -> State:
        t, pc, left = s.copies[j]
        ins = self.code[t][pc]
        act = ins.act
        res = mbarrier.complete_tx(s.bars[act.slot], self.counts[act.slot], left)
        bars = s.bars[:act.slot] + (res.state,) + s.bars[act.slot + 1:]
        left -= res.landed
        if left:
            copies = s.copies[:j] + ((t, pc, left),) + s.copies[j + 1:]
            return State(s.pcs, bars, s.data, copies)
        data = list(s.data)
        for r in ins.run.written:
            data[self.wid[(r, ins.run.stage)]] = ins.run.round
        return State(s.pcs, bars, tuple(data), s.copies[:j] + s.copies[j + 1:])

    # -- checks -----------------------------------------------------------------------------
    def _slot(self, act: Act) -> str:
        return f"{act.set}[{act.stage}]"

    def _wrong_phase(self, a: int, ins: Instr, bar: Mbarrier, count: int) -> Violation:
        act, task = ins.act, self.tasks[a]
        what = "completed early: it received arrivals meant for a later round" if bar.phase > act.round else \
            f"is still open ({bar.pending} of {count} arrivals pending, tx {bar.tx})"
        return Violation("arrive_count",
                         f"task {task!r} ({ins.run.step}) arrives on {self._slot(act)} for round {act.round}, "
                         f"but that barrier is in phase {bar.phase}: phase {min(bar.phase, act.round)} {what}; "
                         f"its init count {count} does not match the arrivals per phase",
                         (task, act.set))

    def _leak(self, a: int, ins: Instr, count: int, res) -> Violation:
        act, task = ins.act, self.tasks[a]
        n = act.arrivals
        if res.excess:
            text = (f"{res.excess} of its {n} arrivals came after the phase had no arrivals pending "
                    f"(more arrivals than the init count {count})")
        else:
            text = (f"phase {act.round} completed after {n - res.leaked} of its {n} arrivals "
                    f"(init count {count}); the other {res.leaked} count towards phase {act.round + 1}")
        return Violation("arrive_count", f"task {task!r} ({ins.run.step}) arrives on {self._slot(act)}: {text}",
                         (task, act.set))

    def _check_reads(self, s: State, a: int, run: StepRun) -> Violation | None:
        task = self.tasks[a]
        pc = s.pcs[a]
        for r, stage, rnd in run.reads:
            if (r, stage) not in self.held[a][pc]:
                if run.dma and self.released[a][pc].get((r, stage), 0) > rnd >= 0:
                    return Violation("early_release",
                                     f"task {task!r}: {run.step} reads {r!r} stage {stage} (round {rnd}) after the task "
                                     f"released it; the producer may already be overwriting it",
                                     (task, r))
                return Violation("read_before_write",
                                 f"task {task!r}: {run.step} reads {r!r} stage {stage} without holding it (no wait)",
                                 (task, r))
            obj = self.content[self._key(r, stage)]
            for t, cpc, left in s.copies:
                if obj & self.code[t][cpc].land[1]:
                    total = self.code[t][cpc].act.tx
                    return Violation("read_before_write",
                                     f"task {task!r}: {run.step} reads {r!r} stage {stage} (round {rnd}) while the copy of "
                                     f"task {self.tasks[t]!r} into it is still landing ({left} of {total} bytes to come)",
                                     (task, r, self.tasks[t]))
            for j in range(self.T):
                if j != a and (self.roots[r], stage) in self.producing[j][s.pcs[j]]:
                    return Violation("read_before_write",
                                     f"task {task!r}: {run.step} reads {r!r} stage {stage} while task "
                                     f"{self.tasks[j]!r} is still writing it (before its commit)", (task, r, self.tasks[j]))
            written = s.data[self.wid[(r, stage)]]
            if written < rnd:
                return Violation("read_before_write",
                                 f"task {task!r}: {run.step} reads {r!r} stage {stage} for round {rnd}, but its producer "
                                 f"has written only up to round {written}", (task, r))
            if written > rnd:
                return Violation("write_while_held",
                                 f"task {task!r}: {run.step} reads {r!r} stage {stage} for round {rnd}, but round "
                                 f"{written} has already overwritten it", (task, r))
        return None

    def _check_write(self, s: State, a: int, run: StepRun) -> Violation | None:
        task, r, stage, rnd = self.tasks[a], run.write, run.stage, run.round
        buf = self.roots[r]
        key = (buf, stage)
        obj = self.content[key]
        for j in range(self.T):
            if j == a:
                continue
            for r2, s2 in self.held[j][s.pcs[j]]:
                if s2 == stage and self.roots[r2] == buf:
                    return Violation("write_while_held",
                                     f"task {task!r}: {run.step} writes {r!r} stage {stage} (round {rnd}) while task "
                                     f"{self.tasks[j]!r} still holds {r2!r} stage {stage}"
                                     + (" (the same buffer)" if r2 != r else ""), (task, r, self.tasks[j]))
            if key in self.producing[j][s.pcs[j]]:
                return Violation("write_while_held",
                                 f"task {task!r}: {run.step} writes {r!r} stage {stage} while task {self.tasks[j]!r} "
                                 f"is writing the same buffer stage", (task, r, self.tasks[j]))
        for t, cpc, left in s.copies:
            if obj & self.code[t][cpc].land[1]:
                return Violation("write_while_held",
                                 f"task {task!r}: {run.step} writes {r!r} stage {stage} (round {rnd}) while the copy of "
                                 f"task {self.tasks[t]!r} ({self.code[t][cpc].run.step}) into the same buffer stage "
                                 f"is still landing", (task, r, self.tasks[t]))
        if rnd > 0:
            for r2 in run.written:
                for j in self.consumers.get(r2, ()):
                    done = self.released[j][s.pcs[j]].get((r2, stage), 0)
                    if done < rnd:
                        return Violation("write_while_held",
                                         f"task {task!r}: {run.step} writes {r2!r} stage {stage} for round {rnd} before "
                                         f"task {self.tasks[j]!r} released round {rnd - 1} of it", (task, r2, self.tasks[j]))
        return None

    # -- terminal states --------------------------------------------------------------------
    def terminal(self, s: State) -> Violation | None:
        """The verdict of a state with no transition: None when every task finished cleanly."""
        stuck = [i for i in range(self.T) if s.pcs[i] < len(self.code[i])]
        if stuck:
            parts = []
            for i in stuck:
                ins = self.code[i][s.pcs[i]]
                act = ins.act
                bar = s.bars[act.slot]
                parts.append(f"task {self.tasks[i]!r} waits in {ins.run.step} on {self._slot(act)} for parity "
                             f"{act.parity} (round {act.round}, iteration {ins.run.iteration}); that barrier is in phase "
                             f"{bar.phase} with {bar.pending} of {self.counts[act.slot]} arrivals pending, tx {bar.tx}")
            return Violation("deadlock", "; ".join(parts), tuple(self.tasks[i] for i in stuck))
        for (r, stage), w in self.wid.items():
            written = s.data[w]
            for j in self.consumers.get(r, ()):
                done = self.released[j][s.pcs[j]].get((r, stage), 0)
                if written + 1 > done:
                    return Violation("unbalanced",
                                     f"every task finished, but {r!r} stage {stage} was written {written + 1} time(s) and "
                                     f"task {self.tasks[j]!r} released it {done} time(s): the tasks' loops do not match",
                                     (r, self.tasks[j]))
        return None

    # -- horizons (for the reduction) -------------------------------------------------------
    def horizon(self, s: State, y: int, outside_w: int, copy_bytes: dict, inside_arrivals: int = 0
                ) -> tuple[int, int, int]:
        """(reads, writes, adds) of everything task ``y`` can do before it reaches a wait that
        stays blocked while only agents outside the stubborn set move.

        ``outside_w``: writes and adds of the other outside *tasks*; ``copy_bytes``: slot -> bytes
        the outside copies in flight may still land on it; ``inside_arrivals``: round bits of the
        arrivals the set's agents still have to make.  A wait that has not passed stays blocked if

        (a) no other outside task and nothing ``y`` does before it touches its slot, and the
            outside copies cannot complete the phase: arrivals are pending (copies never
            arrive), or tx is not in (0, bytes they can land] (landing only lowers tx); or
        (b) the arrivals of the slot's current round add up to its init count and an agent in
            the set still has one of them to make: pending cannot reach 0 without it (an arrival
            of another round is a violation), so the phase cannot complete.
        """
        pc = s.pcs[y]
        bars = s.bars
        counted, round_bit = self.counted, self.round_bit
        info = self.wait_info[y]
        for k, slot, parity, mask in info[bisect_left(self.waits[y], pc):]:
            pending, tx, phase = bars[slot]
            if (phase & 1) != parity:  # passes now
                continue
            key = (slot, phase)
            if key in counted and inside_arrivals & round_bit[key]:
                return self.tables[y].query(pc, k)
            if outside_w & mask:
                continue
            r, w, a = self.tables[y].query(pc, k)
            if (w | a) & mask:
                continue
            if pending == 0 and 0 < tx <= copy_bytes.get(slot, 0):
                continue
            return r, w, a
        return self.future[y][pc]

    def copy_slot(self, s: State, j: int) -> tuple[int, int]:
        """(slot, bytes still to land) of copy ``j`` in flight."""
        t, pc, left = s.copies[j]
        return self.code[t][pc].act.slot, left


class _RangeOr:
    """OR of (reads, writes, adds) triples over [lo, hi) in O(1): a sparse table."""

    def __init__(self, items: list[tuple[int, int, int]]) -> None:
        self.levels = [list(items)]
        n = len(items)
        span = 1
        while span * 2 <= n:
            prev = self.levels[-1]
            self.levels.append([(prev[i][0] | prev[i + span][0], prev[i][1] | prev[i + span][1],
                                 prev[i][2] | prev[i + span][2]) for i in range(n - 2 * span + 1)])
            span *= 2

    def query(self, lo: int, hi: int) -> tuple[int, int, int]:
        if hi <= lo:
            return 0, 0, 0
        k = (hi - lo).bit_length() - 1
        level = self.levels[k]
        a, b = level[lo], level[hi - (1 << k)]
        return a[0] | b[0], a[1] | b[1], a[2] | b[2]


__all__ = ["Instr", "KINDS", "State", "StateSpace", "Violation", "conflict"]

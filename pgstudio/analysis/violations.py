"""The rules the checker enforces on every transition, and on the states where nothing can move.

Each check reads only the objects in its transition's footprint (``statespace.py``): the slot it
arrives on, the content and occupancy of the (buffer, stage) it reads or writes, and the pcs of
the tasks whose holds it inspects (their holds change only by adds to occupancy).  That is what
lets the partial-order reduction keep every violation.  Messages quote the task, the step, the
barrier or stage, the round and the numbers involved.
"""

from __future__ import annotations

from typing import NamedTuple

from .mbarrier import Mbarrier
from .program import Act, StepRun

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
    """One broken rule: its kind (a key of ``KINDS``), what happened, and the names involved."""

    kind: str
    message: str
    where: tuple[str, ...]


def _slot(act: Act) -> str:
    return f"{act.set}[{act.stage}]"


def wrong_phase(space, a: int, ins, bar: Mbarrier, count: int) -> Violation:
    """An arrival for round r landed on a barrier in another phase."""
    act, task = ins.act, space.tasks[a]
    what = "completed early: it received arrivals meant for a later round" if bar.phase > act.round else \
        f"is still open ({bar.pending} of {count} arrivals pending, tx {bar.tx})"
    return Violation("arrive_count",
                     f"task {task!r} ({ins.run.step}) arrives on {_slot(act)} for round {act.round}, "
                     f"but that barrier is in phase {bar.phase}: phase {min(bar.phase, act.round)} {what}; "
                     f"its init count {count} does not match the arrivals per phase",
                     (task, act.set))


def leak(space, a: int, ins, count: int, res) -> Violation:
    """A batch of arrivals completed a phase part-way, or found nothing pending."""
    act, task = ins.act, space.tasks[a]
    n = act.arrivals
    if res.excess:
        text = (f"{res.excess} of its {n} arrivals came after the phase had no arrivals pending "
                f"(more arrivals than the init count {count})")
    else:
        text = (f"phase {act.round} completed after {n - res.leaked} of its {n} arrivals "
                f"(init count {count}); the other {res.leaked} count towards phase {act.round + 1}")
    return Violation("arrive_count", f"task {task!r} ({ins.run.step}) arrives on {_slot(act)}: {text}",
                     (task, act.set))


def check_reads(space, s, a: int, run: StepRun) -> Violation | None:
    """The stages ``run`` reads: held by its task, written for the round, no write in flight."""
    task = space.tasks[a]
    pc = s.pcs[a]
    occ = space.occupancy
    for r, stage, rnd in run.reads:
        if not occ.holds(a, (r, stage), pc):
            if run.dma and occ.released(a, (r, stage), pc) > rnd >= 0:
                return Violation("early_release",
                                 f"task {task!r}: {run.step} reads {r!r} stage {stage} (round {rnd}) after the task "
                                 f"released it; the producer may already be overwriting it",
                                 (task, r))
            return Violation("read_before_write",
                             f"task {task!r}: {run.step} reads {r!r} stage {stage} without holding it (no wait)",
                             (task, r))
        key = (space.roots[r], stage)
        obj = space.content[key]
        for t, cpc, left in s.copies:
            if obj & space.code[t][cpc].land[1]:
                total = space.code[t][cpc].act.tx
                return Violation("read_before_write",
                                 f"task {task!r}: {run.step} reads {r!r} stage {stage} (round {rnd}) while the copy of "
                                 f"task {space.tasks[t]!r} into it is still landing ({left} of {total} bytes to come)",
                                 (task, r, space.tasks[t]))
        for j in occ.writers.get(key, ()):
            if j != a and occ.writing(j, key, s.pcs[j]):
                return Violation("read_before_write",
                                 f"task {task!r}: {run.step} reads {r!r} stage {stage} while task "
                                 f"{space.tasks[j]!r} is still writing it (before its commit)", (task, r, space.tasks[j]))
        written = s.data[space.wid[(r, stage)]]
        if written < rnd:
            return Violation("read_before_write",
                             f"task {task!r}: {run.step} reads {r!r} stage {stage} for round {rnd}, but its producer "
                             f"has written only up to round {written}", (task, r))
        if written > rnd:
            return Violation("write_while_held",
                             f"task {task!r}: {run.step} reads {r!r} stage {stage} for round {rnd}, but round "
                             f"{written} has already overwritten it", (task, r))
    return None


def check_write(space, s, a: int, run: StepRun) -> Violation | None:
    """The stage ``run`` writes: held by no consumer, previous round released, no other write."""
    task, r, stage, rnd = space.tasks[a], run.write, run.stage, run.round
    buf = space.roots[r]
    key = (buf, stage)
    obj = space.content[key]
    occ = space.occupancy
    for j, r2 in occ.holders.get(key, ()):  # in task order
        if j != a and occ.holds(j, (r2, stage), s.pcs[j]):
            return Violation("write_while_held",
                             f"task {task!r}: {run.step} writes {r!r} stage {stage} (round {rnd}) while task "
                             f"{space.tasks[j]!r} still holds {r2!r} stage {stage}"
                             + (" (the same buffer)" if r2 != r else ""), (task, r, space.tasks[j]))
    for j in occ.writers.get(key, ()):
        if j != a and occ.writing(j, key, s.pcs[j]):
            return Violation("write_while_held",
                             f"task {task!r}: {run.step} writes {r!r} stage {stage} while task {space.tasks[j]!r} "
                             f"is writing the same buffer stage", (task, r, space.tasks[j]))
    for t, cpc, _left in s.copies:
        if obj & space.code[t][cpc].land[1]:
            return Violation("write_while_held",
                             f"task {task!r}: {run.step} writes {r!r} stage {stage} (round {rnd}) while the copy of "
                             f"task {space.tasks[t]!r} ({space.code[t][cpc].run.step}) into the same buffer stage "
                             f"is still landing", (task, r, space.tasks[t]))
    if rnd > 0:
        for r2 in run.written:
            for j in space.consumers.get(r2, ()):
                done = occ.released(j, (r2, stage), s.pcs[j])
                if done < rnd:
                    return Violation("write_while_held",
                                     f"task {task!r}: {run.step} writes {r2!r} stage {stage} for round {rnd} before "
                                     f"task {space.tasks[j]!r} released round {rnd - 1} of it", (task, r2, space.tasks[j]))
    return None


def terminal(space, s) -> Violation | None:
    """The verdict of a state with no transition: None when every task finished cleanly."""
    stuck = [i for i in range(space.T) if s.pcs[i] < len(space.code[i])]
    if stuck:
        parts = []
        for i in stuck:
            ins = space.code[i][s.pcs[i]]
            act = ins.act
            bar = s.bars[act.slot]
            parts.append(f"task {space.tasks[i]!r} waits in {ins.run.step} on {_slot(act)} for parity "
                         f"{act.parity} (round {act.round}, iteration {ins.run.iteration}); that barrier is in phase "
                         f"{bar.phase} with {bar.pending} of {space.counts[act.slot]} arrivals pending, tx {bar.tx}")
        return Violation("deadlock", "; ".join(parts), tuple(space.tasks[i] for i in stuck))
    for (r, stage), w in space.wid.items():
        written = s.data[w]
        for j in space.consumers.get(r, ()):
            done = space.occupancy.released(j, (r, stage), s.pcs[j])
            if written + 1 > done:
                return Violation("unbalanced",
                                 f"every task finished, but {r!r} stage {stage} was written {written + 1} time(s) and "
                                 f"task {space.tasks[j]!r} released it {done} time(s): the tasks' loops do not match",
                                 (r, space.tasks[j]))
    return None


__all__ = ["KINDS", "Violation", "check_reads", "check_write", "leak", "terminal", "wrong_phase"]

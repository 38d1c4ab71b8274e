"""``check(design)``: explore every interleaving of the tasks' schedules -> ``Verdict``.

The design's schedules are unrolled over a few iterations (``program.py``: outermost loops
``iterations`` times, inner loops ``inner`` times, order between different loop bounds kept),
every protocol action becomes a transition (``statespace.py``) and a breadth-first search with
a visited set explores all interleavings (``search.py``).  By default the search is reduced by
stubborn sets, which keeps every verdict while visiting far fewer states; ``method="bfs"`` runs
the plain search, the reference.

Verdicts: SAFE; UNSAFE with the kind (``deadlock``, ``write_while_held``, ``read_before_write``,
``arrive_count``, ``early_release``, ``unbalanced``) and a witness trace; INCOMPLETE (never safe)
when the search reached its budget of states, memory or seconds first (``budget.py``; the
unrolled program itself may be refused as too big), or when the shrunk loop counts do not keep a relation
between the design's loop bounds (``loops.py``: then a finding at those counts is reported as a
*possible* one, with its witness).  A violation's witness is cut down to
the steps the violation depends on (``causal_slice``); a deadlock's (or an unbalanced end's) is
the whole run into that state, the shortest the search found.

A thread-block cluster is checked as one block whose arrivals on the shared tile's empty barrier
count for every block of the cluster (``cluster.py`` says why that is exact, and refuses the
clusters it does not cover with ``analysis.cluster``); on a design that targets sm_100a the
accumulator's ``mma_done`` barriers are checked too (``program.py``).

    >>> from pgstudio import examples
    >>> check(examples.merge_copy(), iterations=4).status
    'SAFE'
"""

from __future__ import annotations

import dataclasses
import time
from typing import Mapping

from ..model.design import Design
from .budget import MAX_MEMORY, MAX_SECONDS, MAX_STATES, NEVER, Budget, Deadline, OutOfTime, collector_paused, program_bytes
from .guard import on_errors
from .loops import LoopCounts, executed_steps, shrink
from .program import Program, unroll
from .search import SearchResult, bfs, causal_slice
from .statespace import ARRIVE, COPY, EXPECT, State, StateSpace, Violation
from .timeline import ARRIVE as ARRIVE_EVENT
from .uses import barrier_uses, kept
from .timeline import BLOCKED, COPY_LANE, PHASE_FLIP, SYNC, WORK, Event, Timeline
from .verdict import INCOMPLETE, SAFE, UNSAFE, TraceRow, Verdict

#: Findings about a state where nothing can move, rather than about one step.
TERMINAL_KINDS = ("deadlock", "unbalanced")
METHODS = ("reduced", "bfs")


def check(design: Design, iterations: int | None = 4, *, inner: int | None = 2,
          loops: Mapping[str, int] | None = None, method: str = "reduced", max_states: int = MAX_STATES,
          max_memory: int = MAX_MEMORY, max_seconds: float | None = MAX_SECONDS, minimize: bool = True) -> Verdict:
    """Check every interleaving of ``design`` over ``iterations`` of its outermost loops (inner
    loops ``inner`` times; ``loops`` sets symbols outright; None keeps the real counts) within a
    budget of states, bytes and seconds (``budget.py``); see the module docstring."""
    t0 = time.perf_counter()
    if method not in METHODS:
        raise ValueError(f"check(method={method!r}): expected one of {', '.join(METHODS)}")
    budget = Budget(max_states, max_memory, max_seconds)
    deadline = Deadline(max_seconds, t0)  # one for every step below (budget.py)
    with collector_paused():  # budget.py: no collector pass over the caller's heap past the deadline
        return _check(design, iterations, inner, loops, method, budget, deadline, minimize, t0)


def _check(design: Design, iterations: int | None, inner: int | None, loops: Mapping[str, int] | None, method: str,
           budget: Budget, deadline: Deadline, minimize: bool, t0: float) -> Verdict:
    max_states, max_memory = budget.max_states, budget.max_memory
    counts = None
    try:
        with on_errors(design, "the checker"):
            counts = faithful_counts(design, iterations, inner, loops, budget)
            deadline.check("choosing the loop counts")
            steps = executed_steps(design, counts.counts)
            stages = sum(r.pipeline_config.num_stages for r in design.pipelined)
            too_big = budget.program_too_big(steps, stages)
            if too_big:
                return Verdict(design.name, INCOMPLETE, seconds=time.perf_counter() - t0, method=method,
                               loops=tuple(sorted(counts.counts.items())), max_states=max_states, reason=too_big,
                               cause="budget")
            program = unroll(design, counts.counts, max_steps=None, deadline=deadline)  # budget above
            program = dataclasses.replace(program, caveats=counts.caveats)
            space = StateSpace(program, deadline)
            result = bfs(space, reduced=method == "reduced", max_states=max_states,
                         max_bytes=max(max_memory - program_bytes(steps, stages), 0), deadline=deadline)
            return verdict_of(space, result, method, budget, minimize, deadline)
    except OutOfTime as stop:
        return Verdict(design.name, INCOMPLETE, seconds=time.perf_counter() - t0, method=method,
                       loops=tuple(sorted(counts.counts.items())) if counts else (), max_states=max_states,
                       reason=budget.out_of_time(stop), cause="budget")


#: Executed steps up to which the checker unrolls the real loop counts when shrunk ones cannot
#: keep the design's totals of waits and arrivals per barrier (a few thousand steps: seconds).
EXACT_STEPS = 4096


def faithful_counts(design: Design, iterations: int | None, inner: int | None, loops: Mapping[str, int] | None,
                    budget: Budget) -> LoopCounts:
    """Loop counts whose totals of waits and arrivals per barrier and task decide what the real
    ones do (``uses.kept``): the shrunk counts, else the same with outer (then inner) loops run
    past twice the deepest ring, else the real counts when they are small enough
    (``EXACT_STEPS``); else the shrunk counts with caveats saying which totals they lose.
    Counts set with ``loops=`` are the user's: only their own caveats apply (``loops.shrink``)."""
    first = shrink(design, iterations, inner, loops)
    if (iterations is None and inner is None) or loops:  # loops=: the user's counts, with their caveats
        return first
    real = barrier_uses(design, {})
    span = 2 * max((r.pipeline_config.num_stages for r in design.pipelined), default=1)
    lost: list[str] = []

    def tries():
        yield first
        # past the ring: a bound that starts or stops a loop one or two iterations off another
        # (``Loop(1, num_tiles)``) needs its own total past twice the ring too
        for wide in (span + 1, span + 2, 2 * span, 3 * span):
            for both in (False, True):
                yield shrink(design, None if iterations is None else max(iterations, wide),
                             None if inner is None else max(inner, wide) if both else inner)
    for c in tries():
        lost = kept(real, barrier_uses(design, c.counts), span)
        if not lost and c.exact:
            return c
    exact = shrink(design, None, None)
    steps = executed_steps(design, exact.counts)
    if steps <= EXACT_STEPS and not budget.program_too_big(steps, 0):
        return exact
    if not lost:
        return first
    why = "; ".join(lost[:3]) + ("; ..." if len(lost) > 3 else "")
    return dataclasses.replace(first, caveats=first.caveats + (
        f"they change the totals of waits and arrivals per barrier ({why}), and the real counts unroll to {steps:,} "
        f"steps, past the {EXACT_STEPS:,} the checker unrolls exactly",))


def verdict_of(space: StateSpace, result: SearchResult, method: str, budget: Budget | None = None,
               minimize: bool = True, deadline: Deadline = NEVER) -> Verdict:
    """Turn a search result into a ``Verdict`` (witness rows and timeline included; past
    ``deadline`` the witness is the whole run, not cut down to the steps the violation needs)."""
    program = space.program
    budget = budget or Budget()
    common = dict(states=result.states, transitions=result.transitions, seconds=result.seconds, method=method,
                  loops=tuple(sorted(program.counts.items())), max_states=budget.max_states)
    v = result.violation
    # the time budget counts from the check's start (building the program included), not the search's
    elapsed = result.seconds if deadline is NEVER else time.perf_counter() - deadline.t0
    caveat = ("the loop counts it unrolled do not keep the design's relations between loop bounds: "
              + "; ".join(program.caveats)) if program.caveats else ""
    if v is None:
        if result.capped:
            return Verdict(program.design.name, INCOMPLETE, cause="budget",
                           reason=budget.stopped(result.stop or "states", result.states, result.bytes, elapsed),
                           **common)
        if caveat:
            return Verdict(program.design.name, INCOMPLETE, reason=f"no interleaving breaks a rule, but {caveat}",
                           cause="loops", **common)
        return Verdict(program.design.name, SAFE, **common)
    trace = result.trace
    if minimize and v.kind not in TERMINAL_KINDS:  # a terminal state needs the whole run into it
        sliced = causal_slice(space, trace, deadline)
        last = space.fire(sliced[-1][1], sliced[-1][0])[1] if sliced else None
        if last is not None and last.kind == v.kind:
            trace, v = sliced, last
    rows, timeline = _witness(space, trace, v, deadline, budget)
    status, cause = (INCOMPLETE, "loops") if caveat else (UNSAFE, "")
    return Verdict(program.design.name, status, v.kind, v.message, v.where, tuple(rows), timeline=timeline,
                   reason=caveat, cause=cause, **common)


def _state_text(s: State, slot: int) -> str:
    b = s.bars[slot]
    return f"pending {b.pending}, tx {b.tx}, phase {b.phase}"


def _shown(n: int, deadline: Deadline):
    """Indices of the ``n`` witness steps to show: all of them, or once ``deadline`` passed, the
    ones so far, ``None`` (a gap) and the last (the violation)."""
    for i in range(n):
        if i < n - 1 and not i & 0x3FF and deadline.passed():
            yield None
            yield n - 1
            return
        yield i


def _witness(space: StateSpace, trace: list, v: Violation, deadline: Deadline = NEVER,
             budget: Budget | None = None) -> tuple[list[TraceRow], Timeline]:
    """The witness rows and timeline of ``trace``; past ``deadline`` the steps not yet written
    are left out, with one row saying how many, and the last step (the violation) still shown."""
    program: Program = space.program
    design = program.design
    warps = {t.name: (t.warp_idx, t.num_warps) for t in design.tasks}
    rows: list[TraceRow] = []
    events: list[Event] = []
    last_move: dict[str, int] = {}
    for i in _shown(len(trace), deadline):
        if i is None:
            gap = len(trace) - 1 - len(rows)  # rows so far are steps 0 .. len(rows) - 1
            limit = f"max_seconds={budget.max_seconds:g}" if budget and budget.max_seconds else "max_seconds"
            rows.append(TraceRow(len(rows), "(...)", "", f"{gap:,} steps not shown: the witness reached the time budget "
                                 f"({limit}); raise it to see them", -1))
            continue
        a, s = trace[i]
        name, ins = space.label(s, a)
        after, bad = space.fire(s, a)
        run, act = ins.run, ins.act
        barrier = f"{act.set}[{act.stage}]" if act is not None else ""
        final = i == len(trace) - 1 and bad is not None
        touches = act is not None and (a < 0 or ins.op != COPY)
        state = "" if final or not touches else _state_text(after, act.slot)
        if a < 0:
            t, pc, left = s.copies[~a]
            rest = next((c[2] for c in after.copies if (c[0], c[1]) == (t, pc)), 0)
            action = f"{left - rest} B land on {barrier}" + (f" ({rest} B still to come)" if rest else "")
        else:
            action = ins.describe().split(": ", 1)[-1]
        rows.append(TraceRow(i, name, str(run.step), action, run.iteration, barrier, state, v.kind if final else ""))
        task = run.task
        w = warps.get(task, (0, 1))
        events.append(Event(name, "copy" if a < 0 else run.step.op, WORK if (a < 0 or run.step.is_work) else SYNC,
                            float(i), float(i + 1), run.step.target, act.set if act else "", act.slot if act else -1,
                            run.stage, run.round & 1 if run.round >= 0 else -1, run.iteration, w))
        last_move[name] = i
        if not final and act is not None and a >= 0 and ins.op in (ARRIVE, EXPECT):
            events.append(Event(name, "arrive", ARRIVE_EVENT, i + 0.5, i + 0.5, run.step.target, act.set, act.slot,
                                act.stage, s.bars[act.slot].parity, run.iteration, w))
        if not final and act is not None and after.bars[act.slot].phase > s.bars[act.slot].phase:
            events.append(Event(name, "phase_flip", PHASE_FLIP, i + 1.0, i + 1.0, act.set.split(".")[0], act.set,
                                act.slot, act.stage, s.bars[act.slot].phase & 1, run.iteration, w))
    end = float(len(trace))
    def nxt() -> int:  # rows past the trace: numbered on from its last step (the gap row keeps its number)
        return rows[-1].index + 1 if rows else 0
    if v.kind == "unbalanced":
        rows.append(TraceRow(nxt(), "(all tasks)", "", "finished", -1, "", "", "unbalanced"))
    if v.kind == "deadlock":
        s = space.fire(trace[-1][1], trace[-1][0])[0] if trace else space.initial()
        for i, name in enumerate(space.tasks):
            pc = s.pcs[i]
            if pc >= len(space.code[i]):
                continue
            ins = space.code[i][pc]
            act = ins.act
            rows.append(TraceRow(nxt(), name, str(ins.run.step), f"blocked: wait {act.set}[{act.stage}] parity "
                                 f"{act.parity}", ins.run.iteration, f"{act.set}[{act.stage}]", "", "deadlock"))
            events.append(Event(name, "blocked", BLOCKED, float(last_move.get(name, -1) + 1), end + 1.0,
                                ins.run.step.target, act.set, act.slot, act.stage, act.parity, ins.run.iteration,
                                warps.get(name, (0, 1))))
    lanes = []
    for t in design.tasks:
        lanes.append((t.name, t.warp_idx, t.num_warps))
        copies = COPY_LANE.format(task=t.name)
        if any(e.task == copies for e in events):
            lanes.append((copies, t.warp_idx, t.num_warps))
    timeline = Timeline.from_events(design.name, events, lanes, "witness",
                                    (("unit", "step"), ("violation", v.kind), ("message", v.message)))
    return rows, timeline


__all__ = ["MAX_MEMORY", "MAX_SECONDS", "MAX_STATES", "METHODS", "Verdict", "check", "verdict_of"]

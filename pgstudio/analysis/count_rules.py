"""The rules that count: arrive counts against the threads that arrive, a release ordered after
the downstream copy it guards, equal iteration counts at both ends of a pipeline, trip counts that
wrap the ring, and no side that leads its waiters by two phases.  Registered in ``rules.RULES``."""

from __future__ import annotations

from typing import Iterator

from ..errors import DesignError
from ..model.config import group_for_threads, threads_text
from ..model.derive import DEFAULT_ITERATIONS, TILES, is_derived
from ..model.design import Design
from ..model.diagnostic import Diagnostic, error, fix, warning, with_fixes
from ..model.kinds import OpKind
from ..model.protocol import SIGNALLER_WHY, expected_threads
from ..model.schedule import Loop
from ..model.task import MAX_WARPS
from .layout import barrier_layout
from .phases import phase_leads
from .trips import short_loops
from .uses import barrier_uses, unequal

__all__ = ["rule_arrive_counts", "rule_release_order", "rule_loops", "rule_trip_counts", "rule_phase_leads"]


def _rederive(d: Design, diags: Iterator[Diagnostic]) -> Iterator[Diagnostic]:
    """Schedule findings about a task whose schedule was attached by hand get the one-click fix
    "re-derive": the derived schedule follows the design (semantics 6) by construction."""
    attached = {t.name for t in d.tasks if not is_derived(t.schedule)}
    for diag in diags:
        yield with_fixes(diag, [fix(f"re-derive task {w}'s schedule", "use_derived_schedule", w)
                                for w in diag.where if w in attached])


def _side_tasks(d: Design, g, side) -> list[str]:
    """The tasks on ``side`` of ``g``'s members, in member order."""
    found = [t.name for m in g.member_names for t in (d.producers(m) if side == "producer" else d.consumers(m))]
    return list(dict.fromkeys(found))


def rule_arrive_counts(d: Design) -> Iterator[Diagnostic]:
    """Declared cooperative-group thread counts match the threads that really arrive."""
    for r in d.pipelined:
        cfg = r.pipeline_config
        for side, tasks in (("producer", d.producers(r.name)), ("consumer", d.consumers(r.name))):
            if len(tasks) != 1:
                continue
            task = tasks[0]
            if task.num_warps > MAX_WARPS:  # rule_tasks reports the warp count; no count to expect
                continue
            kind = cfg.pipeline_type.kind(side)
            want = expected_threads(side, kind, task.num_threads)
            got = cfg.arrive_count(side)
            if got != want:
                why = SIGNALLER_WHY[(side, kind)]
                agent = cfg.group(side).agent
                text = threads_text(want, agent)
                new = group_for_threads(want, agent)
                lead = (f"; each round of its {want} arrivals completes {want / got:g} phases, so the other side "
                        f"can run ahead of it (a wait names a parity: phase r + 2 looks like phase r)"
                        if 0 < 2 * got <= want else "")
                yield error("config.arrive_count",
                            f"resource {r.name!r} ({cfg.pipeline_type}): {side}_group is {threads_text(got, agent)}, "
                            f"expected {threads_text(want, new.agent)} "
                            f"(task {task.name!r} has {task.num_warps} warp{'s' if task.num_warps != 1 else ''} and {why})"
                            f"{lead}",
                            (r.name, task.name), f"set {side}_group to {text}",
                            [fix(f"set {r.name}'s {side}_group to {text}", "set_resource", r.name,
                                 **{f"{side}_agent": new.agent.value, f"{side}_size": new.size})])


def rule_release_order(d: Design) -> Iterator[Diagnostic]:
    """A consumer may release an upstream stage only after the DMA (tma / umma) producer work
    that reads it has been issued: otherwise the stage can be overwritten while it is read."""
    groups = {g.name for g in d.groups}
    for t in d.tasks:
        if t.schedule is None:
            continue
        for body in t.schedule.segments():
            yield from _rederive(d, _release_order(d, t, body, groups))


def _release_order(d: Design, t, body, groups: set[str]) -> Iterator[Diagnostic]:
    """One backward pass: for each resource, the first later DMA work step that reads it; a
    release is wrong for each released resource that has one (named once, at its first reader)."""
    first_reader: dict[str, int] = {}  # resource -> index of the first DMA step after here that reads it
    wrong: list[tuple[int, dict[int, list[str]]]] = []
    for i in range(len(body) - 1, -1, -1):
        step = body[i]
        if step.op == "release":
            released = (d.group(step.target).member_names if step.via == "group" and step.target in groups
                        else (step.target,))
            hits: dict[int, list[str]] = {}
            for r in released:
                if r in first_reader:
                    hits.setdefault(first_reader[r], []).append(r)
            if hits:
                wrong.append((i, hits))
        elif step.op in ("load", "store", "mma") and d.has_resource(step.target):
            cfg = d.resource(step.target).pipeline_config
            if step.op == "mma" or (cfg is not None and cfg.producer_kind in (OpKind.TMA, OpKind.UMMA)):
                for r in (*d.deps(step.target), *(v for _, v in step.args)):
                    first_reader[r] = i
    for i, hits in reversed(wrong):
        step = body[i]
        for j in sorted(hits):
            hit, later = hits[j], body[j]
            yield error("schedule.release_before_use",
                        f"task {t.name!r}: {step} releases {', '.join(map(repr, hit))} before {later}, which reads it; "
                        f"the producer may overwrite the stage while it is being read",
                        (t.name, *hit), f"move {step} after {later}")


def rule_loops(d: Design) -> Iterator[Diagnostic]:
    """Tasks that talk through a barrier must wait and arrive on it equally often over their whole
    schedules (nested loops, loops side by side, several brackets per iteration: ``uses.py``)."""
    problem = d.problem_dict
    bad = False
    for t in d.tasks:
        for loop in _all_loops(t.schedule.nodes if t.schedule else ()):
            try:
                bounds = [problem[b] if isinstance(b, str) else b for b in (loop.start, loop.stop, loop.step)]
                if any(isinstance(b, bool) or not isinstance(b, int) for b in bounds):
                    raise TypeError(loop)
            except (KeyError, TypeError):
                bad = True
                yield error("schedule.loop", f"task {t.name!r}: domain_loop({loop.start}, {loop.stop}, {loop.step}) has a "
                            f"bound that is not an integer or a problem symbol (problem: {', '.join(problem) or 'none'})",
                            (t.name,), "use integers or names from Design.problem")
                break
    if bad:
        return
    try:
        uses = barrier_uses(d)
        sets = {s.name: s for s in barrier_layout(d).sets}
    except (DesignError, LookupError, TypeError, ValueError, AttributeError):  # broken elsewhere: other rules say why
        return
    attached = {t.name for t in d.tasks if not is_derived(t.schedule)}
    derived = problem.get(TILES, DEFAULT_ITERATIONS)  # what a derived schedule's outer loop runs
    said: set[str] = set()
    try:  # a side that signals twice per wait also makes unequal totals: schedule.phase_lead says why
        led = {x.set for x in phase_leads(d)}
    except (DesignError, LookupError, TypeError, ValueError, AttributeError):
        led = set()
    zero = [s for s in short_loops(d) if s.trips == 0]
    for name, per in unequal(uses):
        bs = sets.get(name)
        who = bs.members[0] if bs is not None and len(bs.members) == 1 else (bs.owner if bs else name)
        if who in said or name in led:
            continue
        said.add(who)
        totals: dict[str, int] = {}
        for (task, _), n in per.items():
            totals.setdefault(task, n)
        ends = tuple(totals)
        detail = ", ".join(f"{task!r} {verb}s {n} times" for (task, verb), n in per.items())
        names = {who, *(bs.members if bs else ()), *((bs.owner,) if bs else ())}
        cause = [z for z in zero if z.task in ends and names & set(z.targets)]
        why = (f"; the cause is a zero trip count: {'; '.join(map(str, cause))}, so that task never reaches the "
               f"barrier and the other side waits forever" if cause else "")
        yield error("schedule.iterations",
                    f"resource {who!r}: its tasks run different numbers of iterations "
                    f"({', '.join(f'{n!r}={c}' for n, c in totals.items())}); over their whole schedules on barrier "
                    f"{name}: {detail}; the pipeline would deadlock{why}",
                    (who, *ends), ("give the loop that runs 0 times the bounds of the other side's loop, "
                                   "with one bracket of the resource per iteration") if cause else
                    "give both tasks the same loops, with one bracket of the resource per iteration",
                    [fix(f"re-derive task {n}'s schedule", "use_derived_schedule", n) for n in ends
                     if n in attached and totals[n] != derived])


def _all_loops(nodes) -> Iterator:
    for n in nodes:
        if isinstance(n, Loop):
            yield n
            yield from _all_loops(n.body)


def rule_trip_counts(d: Design) -> Iterator[Diagnostic]:
    """A pipeline that every task brackets at most once over its whole schedule never wraps its
    ring: a warning naming the loops that run once (or never) and their bounds (``trips.py``).
    Unequal counts are ``schedule.iterations`` errors; no fix is offered: the problem size is the
    user's to choose."""
    try:
        uses = barrier_uses(d)
        sets = {s.name: s for s in barrier_layout(d).sets}
    except (DesignError, LookupError, TypeError, ValueError, AttributeError):  # broken elsewhere: other rules say why
        return
    owners: dict[str, list] = {}
    for name, per in uses.items():
        if name in sets:
            owners.setdefault(sets[name].owner, []).append((sets[name], per))
    short = short_loops(d)
    for owner, found in owners.items():
        counts = {n for _, per in found for n in per.values()}
        if any(len(set(per.values())) > 1 for _, per in found) or max(counts) > 1:
            continue  # unequal (schedule.iterations) or the ring turns
        members = tuple(dict.fromkeys(m for bs, _ in found for m in bs.members))
        tasks = tuple(dict.fromkeys(task for _, per in found for task, _ in per))
        stages = max(bs.stages for bs, _ in found)
        loops = [s for s in short if s.task in tasks and {owner, *members} & set(s.targets)]
        said = "; ".join(map(str, loops)) or "no loop repeats its bracket"
        what = f"pipeline {owner!r}" + (f" ({', '.join(members)})" if members != (owner,) else "")
        if max(counts) == 0:
            yield warning("schedule.trip_count",
                          f"{what}: no task ever brackets it ({said}): the pipeline never runs, and a side whose "
                          f"count differs would wait forever", (owner, *tasks),
                          "give the loops a problem size of at least one iteration, or drop the pipeline")
            continue
        yield warning("schedule.trip_count",
                      f"{what}: every task brackets it once over its whole schedule ({said}): its {stages}-stage "
                      f"ring never wraps and no wait sees a flipped phase, so a run at this size exercises none "
                      f"of the pipeline's phase logic", (owner, *tasks),
                      f"try a problem of at least {2 * stages + 1} iterations (every stage in both phases, and "
                      f"one more) before trusting the design")


def rule_phase_leads(d: Design) -> Iterator[Diagnostic]:
    """No side can run two phases ahead of the side that waits on it (``phases.py``): a wait
    names a parity, so phase r + 2 looks like phase r."""
    try:
        leads = phase_leads(d)
    except (DesignError, LookupError, TypeError, ValueError, AttributeError):  # broken elsewhere: other rules say why
        return
    counted = {w for diag in rule_arrive_counts(d) for w in diag.where}  # config.arrive_count says why
    yield from _rederive(d, (_phase_lead(d, x) for x in leads
                             if x.kind == "unguarded" or not counted & {x.owner, *_set_members(d, x.set)}))


def _set_members(d: Design, name: str) -> tuple[str, ...]:
    return next(s.members for s in barrier_layout(d).sets if s.name == name)


def _phase_lead(d: Design, x) -> Diagnostic:
    bs = next(s for s in barrier_layout(d).sets if s.name == x.set)
    who = bs.members[0] if len(bs.members) == 1 else bs.owner
    waiters = " and ".join(map(repr, x.waiters)) or "the other side"
    if x.kind == "unguarded":
        producer = x.side == "producer"
        skipped, other = ("acquire", "empty") if producer else ("wait", "full")
        ahead = (f"{x.task!r} can run more than {bs.stages} stages ahead of {waiters} and commit twice into a stage "
                 f"before it is released" if producer else
                 f"each such release frees a stage nobody waited for, so {waiters} can run two phases ahead and "
                 f"commit into a stage {x.task!r} still reads")
        return error("schedule.phase_lead",
                     f"task {x.task!r}: {x.step} signals {x.set} in a pass that has not waited on {who!r}'s {other} "
                     f"barrier since its last {'commit' if producer else 'release'}: {ahead}; a wait names a parity, "
                     f"so phase r + 2 looks like phase r", (who, x.task),
                     f"{skipped} {who!r} once before each {'commit' if producer else 'release'} (one "
                     f"{'acquire()..commit()' if producer else 'wait()..release()'} bracket per iteration)")
    return error("schedule.phase_lead",
                 f"barrier {x.set}: one round of {x.task!r} arrives {x.arrivals} times on it, but its init count is "
                 f"{x.init_count}: each round completes {x.phases:g} phases, so {waiters} can run "
                 f"{x.phases:g} phases ahead and pass a wait nobody signalled; a wait names a parity, so phase r + 2 "
                 f"looks like phase r", (who, x.task),
                 f"make the init count of {x.set} the {x.arrivals} arrivals of a round (the {x.side}_group of "
                 f"{', '.join(map(repr, bs.members))})")

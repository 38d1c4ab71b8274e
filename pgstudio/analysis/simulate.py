"""A deterministic discrete-event run of a design over a few iterations -> ``Timeline``.

Each task runs its unrolled steps (``program.py``) one after another; every barrier action is
the protocol table's (through ``resolve.py``) and acts on an exact mbarrier model
(``mbarrier.py``): a wait blocks until the phase of its parity has completed, arrivals and
landing bytes complete phases exactly as on the GPU.  A design with a wrong count therefore
behaves as it would on the GPU: a phase that never completes leaves tasks blocked (the run ends
with ``status == "deadlock"`` in the timeline's metadata), one that completes early lets a
consumer through too soon.

Time comes from the cost model (``cost.py``).  Bulk copies are asynchronous: issuing one costs
the producer ``issue_ns``; its bytes queue on the block's memory pipe and land ``latency`` later
on the full barrier (a copy lane ``<task>.tma`` shows them).  Everything else occupies its task
for its cost.  An MMA is modelled as finishing before its task's next step (tensor-core work is
not overlapped with the issuing thread's next wait).  Ties are broken by event order, then task
order, so a run is reproducible.

With a cost model whose ``mma_release_lag`` is N > 0 (``cost.calibrated_cost``, as the sm_90a
generator builds MMA tasks: ``gemm_limits.wgmma_in_flight``) an MMA task gives a stage back N k
steps late: its release arrives once the MMA N k steps later has been issued
(``wgmma.wait_group N`` retired the group that read it), or when the k loop ends -- so a stage is
held for about N whole periods, and stages hide load latency on the simulated timeline as much
as on the GPU.

A design built for sm_90a keeps its MMA's accumulator in registers
(``gemm_limits.accumulator_in_registers``, the rule the generator reads): the MMA task takes the
accumulator's staging buffer only at commit (``acquire_accumulator_at_commit``), so it runs the
next tile's mainloop while the epilogue stores the last one, and its commit takes the time to
write the registers there (``workload.staging_bytes`` at the shared-memory rate).

    >>> from pgstudio import examples
    >>> tl = simulate(examples.merge_copy(), iterations=8)
    >>> tl.meta_dict["status"], tl.iterations
    ('complete', 8)
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from typing import Mapping

from ..model.design import Design
from ..model.kinds import OpKind
from ..model.resource import Memory
from . import mbarrier
from .buildable.gemm_limits import accumulator_in_registers
from .cost import H200, CostModel
from .guard import on_errors
from .mbarrier import Mbarrier
from .program import Act, Program, StepRun, unroll
from .timeline import ARRIVE, BLOCKED, COPY_LANE, PHASE_FLIP, SYNC, WORK, Event, Timeline



@dataclass(frozen=True)
class Snapshot:
    """The barrier states right after one barrier action (``states`` in slot order)."""

    time: float
    agent: str  # task name, or "<task>.tma" for a landing copy
    step: str
    action: str
    states: tuple[Mbarrier, ...]


class Simulator:
    """One run; ``run()`` returns the timeline, ``snapshots`` the barrier states after every
    action (for teaching and tests), ``states`` the final barrier states."""

    def __init__(self, design: Design, iterations: int = 8, *, inner: int | None = None,
                 loops: Mapping[str, int] | None = None, cost: CostModel = H200, program: Program | None = None) -> None:
        self.design = design
        self.cost = cost
        # sm_90a: the MMA's accumulator is in registers, written to its staging buffer at commit,
        # in as many turns as the staging buffer takes (``smem_layout.Staging.turns``)
        in_registers = bool(design.targets) and accumulator_in_registers(design.targets[0])
        staging = _staging(design) if in_registers else (0, 1)  # (bytes per tile, turns)
        self.program = program or unroll(design, iterations=iterations, inner=inner, loops=loops, turns=staging[1])
        self._writeout = 0
        if in_registers:
            self.program = acquire_accumulator_at_commit(self.program)
            self._writeout = staging[0] // self.program.turns
        self.counts = self.program.slot_counts()
        self.states: list[Mbarrier] = [mbarrier.init(c) for c in self.counts]
        self.snapshots: list[Snapshot] = []
        self.events: list[Event] = []
        self.tasks = [design.task(n) for n in self.program.tasks]
        self._queue: list = []
        self._seq = 0
        self._pipe_free = 0.0
        self._waiters: dict[int, list[tuple[int, int]]] = {}  # slot -> [(task index, parity)]
        self._pc = [0] * len(self.tasks)  # step index per task
        self._act = [0] * len(self.tasks)  # next action within the step
        self._step_start = [0.0] * len(self.tasks)
        self._started = [False] * len(self.tasks)
        self._blocked_since: dict[int, float] = {}
        # task -> its umma releases not yet given back, one list per k step (oldest first)
        self._deferred: dict[int, list[list[tuple[StepRun, Act]]]] = {}
        self.now = 0.0

    # -- plumbing ---------------------------------------------------------------------------
    def _push(self, time: float, kind: str, payload) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (time, self._seq, kind, payload))

    def _warps(self, i: int) -> tuple[int, int]:
        return (self.tasks[i].warp_idx, self.tasks[i].num_warps)

    def _snap(self, agent: str, run: StepRun, action: str) -> None:
        self.snapshots.append(Snapshot(self.now, agent, str(run.step), action, tuple(self.states)))

    def _flip_events(self, agent: str, act: Act, before: Mbarrier, after: Mbarrier, warps, it: int) -> None:
        for phase in range(before.phase, after.phase):
            self.events.append(Event(agent, "phase_flip", PHASE_FLIP, self.now, self.now, act.set.split(".")[0],
                                     act.set, act.slot, act.stage, phase & 1, it, warps))
        if after.phase > before.phase:
            self._wake(act.slot)

    def _wake(self, slot: int) -> None:
        still = []
        for i, parity in self._waiters.get(slot, []):
            if self.states[slot].passes(parity):
                self._push(self.now, "task", i)
            else:
                still.append((i, parity))
        self._waiters[slot] = still

    # -- running ----------------------------------------------------------------------------
    def run(self) -> Timeline:
        for i in range(len(self.tasks)):
            self._push(0.0, "task", i)
        while self._queue:
            self.now, _, kind, payload = heapq.heappop(self._queue)
            if kind == "task":
                self._advance(payload)
            else:
                self._land(*payload)
        return self._timeline()

    def _advance(self, i: int) -> None:
        """Task ``i``'s next action (or, once its actions are done, the step's work) at ``now``;
        then requeue it at the time the action ends.  One action per event keeps the order of
        every barrier operation exact across tasks."""
        runs = self.program.runs[i]
        if self._pc[i] >= len(runs):
            self._flush(i)
            return
        run = runs[self._pc[i]]
        if self._act[i] == 0 and run.step.op == "commit" and i in self._deferred:
            self._flush(i)  # the k loop ended: every wgmma group retired
        elif self._act[i] == 0 and run.step.op == "mma" and self.cost.mma_release_lag:
            # this k step's MMA is issued: the group of ``mma_release_lag`` k steps back retired
            groups = self._deferred.setdefault(i, [])
            while len(groups) >= self.cost.mma_release_lag:
                self._flush(i, oldest=True)
            groups.append([])
        name, warps = self.tasks[i].name, self._warps(i)
        t = self.now
        if i in self._blocked_since:  # woken: close the blocked interval
            since = self._blocked_since.pop(i)
            act = run.acts[self._act[i]]
            self.events.append(Event(name, "blocked", BLOCKED, since, t, run.step.target, act.set, act.slot,
                                     act.stage, act.parity, run.iteration, warps))
            self._step_start[i] = t
        elif self._act[i] == 0 and not self._started[i]:
            self._step_start[i] = t
        self._started[i] = True
        if self._act[i] < len(run.acts):
            act = run.acts[self._act[i]]
            if act.verb == "wait":
                if not self.states[act.slot].passes(act.parity):
                    self._blocked_since[i] = t
                    self._waiters.setdefault(act.slot, []).append((i, act.parity))
                    return
                self._snap(name, run, str(act))
                t += self.cost.barrier_ns
            elif act.verb in ("arrive", "arrive_expect_tx"):
                if self._lags(run):  # given back ``mma_release_lag`` k steps later (module docstring)
                    groups = self._deferred.setdefault(i, [])
                    if not groups:
                        groups.append([])
                    groups[-1].append((run, act))
                else:
                    self._arrive(i, run, act)
                t += self.cost.barrier_ns
            elif act.verb == "complete_tx":  # issue the bulk copy; its bytes land later
                start = max(t, self._pipe_free)
                self._pipe_free = start + self.cost.copy_transfer(act.tx)
                self._push(self._pipe_free + self.cost.bulk_latency_ns, "land", (i, self._pc[i], self._act[i], t))
                t += self.cost.issue_ns
            self._act[i] += 1
            self._push(t, "task", i)
            return
        t = self._work(run, t)
        self.events.append(Event(name, run.step.op, WORK if run.step.is_work else SYNC, self._step_start[i], t,
                                 run.step.target, run.acts[0].set if run.acts else "", run.acts[0].slot if run.acts else -1,
                                 run.stage, run.round & 1 if run.round >= 0 else -1, run.iteration, warps))
        self._pc[i] += 1
        self._act[i] = 0
        self._started[i] = False
        self._push(t, "task", i)

    def _arrive(self, i: int, run: StepRun, act: Act) -> None:
        """Task ``i``'s arrival ``act`` of ``run`` at ``now``."""
        name, warps = self.tasks[i].name, self._warps(i)
        before = self.states[act.slot]
        if act.verb == "arrive":
            res = mbarrier.arrive(before, self.counts[act.slot], act.arrivals)
        else:
            res = mbarrier.arrive_expect_tx(before, self.counts[act.slot], act.tx)
        self.states[act.slot] = res.state
        self.events.append(Event(name, "arrive", ARRIVE, self.now, self.now, run.step.target, act.set, act.slot,
                                 act.stage, before.parity, run.iteration, warps))
        self._snap(name, run, str(act))
        self._flip_events(name, act, before, res.state, warps, run.iteration)

    def _lags(self, run: StepRun) -> bool:
        return bool(self.cost.mma_release_lag) and run.step.op == "release" and run.kind is OpKind.UMMA

    def _flush(self, i: int, oldest: bool = False) -> None:
        """The releases task ``i`` deferred (``oldest``: those of its oldest k step only): their
        MMAs have retired."""
        groups = self._deferred.get(i, [])
        for group in (groups[:1] if oldest else list(groups)):
            groups.remove(group)
            for run, act in group:
                self._arrive(i, run, act)
        if not groups:
            self._deferred.pop(i, None)

    def _work(self, run: StepRun, t: float) -> float:
        c, d = self.cost, self.design
        op = run.step.op
        if op == "commit" and self._writeout and run.kind is OpKind.UMMA and run.side == "producer":
            return t + c.smem_work(self._writeout, run.threads)  # the registers -> the staging buffer
        if not run.step.is_work:
            return t + (c.barrier_ns if not run.acts else 0.0)
        if run.is_copy:
            return t
        target = d.resource(run.step.target) if d.has_resource(run.step.target) else None
        if op == "mma":
            return t + c.mma(run.flops, target.dtype if target else "float16")
        if op == "read":
            return t + c.smem_work(run.work_bytes, run.threads)
        if target is not None and target.memory is Memory.GMEM or op == "load":
            start = max(t, self._pipe_free)
            self._pipe_free = start + c.copy_transfer(run.work_bytes)
            return max(t + c.gmem_threads(run.work_bytes, run.threads), self._pipe_free)
        return t + c.smem_work(run.work_bytes, run.threads)

    def _land(self, i: int, pc: int, a: int, issued: float) -> None:
        run = self.program.runs[i][pc]
        act = run.acts[a]
        lane = COPY_LANE.format(task=self.tasks[i].name)
        before = self.states[act.slot]
        after, _ = mbarrier.land(before, self.counts[act.slot], act.tx)
        self.states[act.slot] = after
        self.events.append(Event(lane, "copy", WORK, issued, self.now, run.step.target, act.set, act.slot, act.stage,
                                 act.round & 1, run.iteration, self._warps(i)))
        self._snap(lane, run, str(act))
        self._flip_events(lane, act, before, after, self._warps(i), run.iteration)

    def _timeline(self) -> Timeline:
        stuck = [(self.tasks[i].name, self.program.runs[i][self._pc[i]]) for i in range(len(self.tasks))
                 if self._pc[i] < len(self.program.runs[i])]
        for i, since in sorted(self._blocked_since.items()):  # never woken: blocked to the end
            run = self.program.runs[i][self._pc[i]]
            act = run.acts[self._act[i]]
            self.events.append(Event(self.tasks[i].name, "blocked", BLOCKED, since, max(self.now, since),
                                     run.step.target, act.set, act.slot, act.stage, act.parity, run.iteration,
                                     self._warps(i)))
        lanes = []
        copying = {e.task for e in self.events}
        for t in self.tasks:
            lanes.append((t.name, t.warp_idx, t.num_warps))
            if COPY_LANE.format(task=t.name) in copying:
                lanes.append((COPY_LANE.format(task=t.name), t.warp_idx, t.num_warps))
        meta = [("status", "deadlock" if stuck else "complete"),
                ("iterations", tuple(sorted(self.program.counts.items()))),
                ("stuck", tuple(f"{n}: {r.step} ({', '.join(map(str, r.acts))})" for n, r in stuck)),
                ("cost", self.cost.describe())]
        return Timeline.from_events(self.design.name, self.events, lanes, "simulated", meta)


def _staging(design: Design) -> tuple[int, int]:
    """(bytes an MMA task writes from its registers to the accumulator's staging per tile, the
    turns it takes them in): ``workload.staging_bytes`` / ``staging_turns`` -- the smem layout's
    ``Staging.turns``, what the generator builds; (0, 1) for a design with no MMA."""
    from .buildable.steps import is_mma_design
    from .workload import workload
    if not is_mma_design(design):
        return 0, 1
    w = workload(design)
    return w.staging_bytes, w.staging_turns


def acquire_accumulator_at_commit(program: Program) -> Program:
    """``program`` with every MMA task's acquire of its accumulator moved to its commit, as the
    sm_90a kernel runs it (``gemm_limits.accumulator_in_registers``): the wgmma accumulator is in
    registers through the k loop, so the task waits for the staging buffer only when it writes
    the registers there -- the next tile's mainloop runs while the epilogue stores the last one.
    The acquire step stays (it costs nothing without its wait) so the steps keep their indices."""
    runs = []
    for task_runs in program.runs:
        if not any(r.step.op == "mma" for r in task_runs):
            runs.append(task_runs)
            continue
        out, pending = list(task_runs), {}
        for j, r in enumerate(out):
            if r.kind is not OpKind.UMMA or r.side != "producer":
                continue
            if r.step.op == "acquire" and r.acts:
                pending.setdefault(r.step.target, []).extend(r.acts)
                out[j] = replace(r, acts=())
            elif r.step.op == "commit" and r.step.target in pending:
                out[j] = replace(r, acts=tuple(pending.pop(r.step.target)) + r.acts)
        runs.append(tuple(out))
    return replace(program, runs=tuple(runs))


def simulate(design: Design, iterations: int = 8, *, inner: int | None = None, loops: Mapping[str, int] | None = None,
             cost: CostModel | str = H200) -> Timeline:
    """Simulate ``design`` over ``iterations`` of its outermost loops (inner loops run their real
    count unless ``inner`` is given; ``loops`` sets symbols outright) with ``cost``
    (``"calibrated"``: ``cost.calibrated_cost(design)``, the calibrated device model's share for
    one block of this design)."""
    with on_errors(design, "the simulator"):
        if isinstance(cost, str):
            if cost != "calibrated":
                raise ValueError(f"cost {cost!r}: give a CostModel or 'calibrated'")
            from .cost import calibrated_cost
            cost = calibrated_cost(design)
        return Simulator(design, iterations, inner=inner, loops=loops, cost=cost).run()


__all__ = ["Simulator", "Snapshot", "acquire_accumulator_at_commit", "simulate"]

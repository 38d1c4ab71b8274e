"""A design's tasks unrolled over a few iterations: what the simulator and the checker execute.

``resolve.py`` binds every schedule step to concrete barrier actions on concrete barrier sets
(through THE protocol table and the layout) and names the cursor each step uses.  Here the
loops are unrolled with chosen trip counts and the cursors are walked, so every executed step
(``StepRun``) knows its stage, round and parity, the slots it touches (``Act``), and what it
does to stage data (holds, releases, writes, reads).  Nothing here decides protocol: change the
table and both the simulator and the checker follow.

Cursor walk (semantics.md section 5): the k-th use of a cursor with S stages touches stage
``k % S`` in round ``k // S``; a wait uses parity ``(k // S) & 1`` on the consumer side and its
complement on the producer side (producers start at parity 1); a commit or release advances it.

Loop counts come from ``loops.py``: loops shrink to a few iterations, but bounds that differ
stay different (by the same amount), and when they cannot, ``Program.caveats`` says why.

What the barrier layout adds to the table runs too.  A cluster's blocks are one block here, by
the symmetry rule of ``cluster.py``: an arrival on a set with ``peers`` > 1 counts ``peers``
times (this block's and the peers' same arrival), and a cluster the rule does not cover is
refused (``analysis.cluster``).  Where the layout has sm_100a ``mma_done`` barriers, an umma
commit's arrive on full is preceded by tcgen05.commit arriving once on the stage's ``mma_done``
and the task waiting for that phase, as the generator writes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from ..errors import DesignError
from ..model.design import Design
from ..model.kinds import OpKind, Verb, Who
from ..model.protocol import wait_parity, waiter
from ..model.resource import Memory, alias_roots
from ..model.schedule import Step
from ..model.targets import DTYPE_BYTES
from .accumulators import accumulators, operands
from .barrier_layout import BarrierLayout, barrier_layout
from .budget import NEVER, Deadline
from .buildable.gemm_limits import column_slices
from .cluster import require_modelled
from .loops import executed_steps, loop_counts, shrink, trip_count
from .resolve import ResolvedLoop, ResolvedStep, TaskPlan, resolve
from .smem_layout import turn_slices, turn_tasks

#: Executed steps one unrolled program may hold: far above what a picture or a checker run needs
#: (a 256-resource chain over 8 iterations is about 10^4), far below what fills a notebook's memory
#: (a file may name a billion k tiles, and the simulator keeps their real count by default).
MAX_UNROLLED_STEPS = 1 << 16

#: Bytes per element of the supported dtypes.


@dataclass(frozen=True)
class Act:
    """One barrier action on one slot: ``wait`` (for ``parity``), ``arrive`` (``arrivals``
    threads), ``arrive_expect_tx`` (expect ``tx`` bytes, arrive once) or ``complete_tx`` (a copy
    landing ``tx`` bytes).  ``round`` is the cursor's round: the phase of the slot the action
    belongs to."""

    verb: str
    set: str
    role: str
    slot: int
    stage: int
    round: int
    parity: int
    arrivals: int
    tx: int
    who: str

    def __str__(self) -> str:
        where = f"{self.set}[{self.stage}]"
        if self.verb == "wait":
            return f"wait {where} parity {self.parity}"
        if self.verb == "arrive":
            return f"arrive {where} x{self.arrivals}"
        if self.verb == "arrive_expect_tx":
            return f"arrive.expect_tx {where} {self.tx} B"
        return f"copy lands {self.tx} B on {where}"


@dataclass(frozen=True)
class StepRun:
    """One executed instance of a schedule step of one task."""

    task: str
    index: int  # position in the task's unrolled program
    step: Step
    side: str
    kind: OpKind | None
    iteration: int  # flat iteration (see ``flat iteration`` in unroll)
    stage: int  # stage of the step's cursor, -1 without one
    round: int
    acts: tuple[Act, ...] = ()
    holds: tuple[str, ...] = ()  # a consumer wait: resources whose current stage the task now holds
    frees: tuple[str, ...] = ()  # a consumer release: resources whose stage it gives back
    write: str | None = None  # producer work: the resource whose stage it writes
    written: tuple[str, ...] = ()  # every resource of the task that the write fills (views of one buffer)
    commits: tuple[str, ...] = ()  # a producer commit: resources whose stage is now complete
    reads: tuple[tuple[str, int, int], ...] = ()  # (resource, stage, round) the step reads itself
    dma: bool = False  # tma / umma work: it reads its operands from shared memory itself
    copy_bytes: int = 0  # a tma load: bytes the copy lands
    work_bytes: int = 0  # bytes the step moves (for the cost model)
    flops: int = 0  # an MMA's flops (for the cost model)
    threads: int = 32

    @property
    def is_copy(self) -> bool:
        return self.copy_bytes > 0

    def __str__(self) -> str:
        return str(self.step)


@dataclass(frozen=True)
class Program:
    """Every task's unrolled steps, with the layout and the loop counts used."""

    design: Design
    layout: BarrierLayout
    counts: Mapping[str, int]
    tasks: tuple[str, ...]
    runs: tuple[tuple[StepRun, ...], ...]  # per task, in task order
    buffers: Mapping[str, str]  # resource -> the resource whose buffer it occupies
    caveats: tuple[str, ...] = ()  # why the loop counts do not keep the design's relations (loops.py)
    turns: int = 1  # turns each tile takes through the accumulator's staging (``Staging.turns``)

    def slot_counts(self) -> tuple[int, ...]:
        """Init count of every slot, in slot order (the generator's internal slots last)."""
        return tuple(s.arrive_count for s in self.layout.all_slots)



# -- sizes ------------------------------------------------------------------------------------------

def tile_bytes(design: Design, name: str) -> int:
    """Bytes of one tile of ``name``: its tile shape times its element size, else its stage bytes."""
    if not design.has_resource(name):
        return 0
    r = design.resource(name)
    if r.tile:
        return math.prod(r.tile) * DTYPE_BYTES.get(r.dtype, 4)
    return r.pipeline_config.num_bytes if r.pipeline_config else 0


# -- unrolling --------------------------------------------------------------------------------------

class _Unroller:
    """Walks each task's resolved plan over the loop counts.  What a resolved step does apart
    from its stage and round (members, bytes, the views it fills, the operands it reads) is the
    same on every iteration: ``_facts`` works it out once per step of the plan."""

    def __init__(self, design: Design, layout: BarrierLayout, counts: Mapping[str, int],
                 deadline: Deadline = NEVER, turns: int = 1) -> None:
        self.design = design
        self.turns = turns
        self.accs = {a.name for a in accumulators(design)} if turns > 1 else set()
        self.turn_tasks = set(turn_tasks(design)) if turns > 1 else set()
        self.slices = turn_slices(design)[1] if turns > 1 else frozenset()
        self.deadline = deadline
        self.built = 0  # steps built so far, over every task (for ``deadline``'s message)
        self.total = 0
        self.layout = layout
        self.counts = counts
        self.problem = design.problem_dict
        self.roots = alias_roots(design.resources)
        self.first = {s.name: s.first for s in layout.all_sets}
        self.peers = {s.name: s.peers for s in layout.sets}
        self.set_members = {s.name: s.members for s in layout.sets}
        self.res = {r.name: r for r in design.resources}
        self.groups = {g.name: g for g in design.groups}

    def task(self, task, plan: TaskPlan) -> tuple[StepRun, ...]:
        self.t = task
        self.plan = plan
        self.stages = {c.name: (c.stages, c.side) for c in plan.cursors}
        self.facts: dict[int, dict] = {}
        self.cursors: dict[str, int] = {}
        self.values: dict[str, tuple[int, int]] = {}  # resource -> (stage, round) of its last read / wait
        self.out: list[StepRun] = []
        self.flat = -1
        self.fresh = True  # no innermost iteration started yet in the current outer iteration
        # staging turns (``Staging.turns``): the tasks draining the accumulator and loading its
        # residual's slices (``smem_layout.turn_tasks``) run their tile body once per turn, a
        # drain on a share of the tile; the MMA commits each turn after acquiring the stage
        self.drain = task.name in self.turn_tasks
        self.acquire = self._accumulator_acquire(plan.nodes) if self.accs & set(task.dst_resources) else None
        self.turn_of_commit = 0
        self.nodes(plan.nodes, 0)
        return tuple(self.out)

    def _accumulator_acquire(self, nodes) -> ResolvedStep | None:
        """The MMA task's acquire of its accumulator (the step each further turn repeats)."""
        for n in nodes:
            if isinstance(n, ResolvedLoop):
                found = self._accumulator_acquire(n.body)
                if found is not None:
                    return found
            elif n.step.op == "acquire" and n.step.target in self.accs and n.kind is OpKind.UMMA:
                return n
        return None

    def nodes(self, nodes, depth: int) -> None:
        for n in nodes:
            if isinstance(n, ResolvedLoop):
                innermost = not any(isinstance(b, ResolvedLoop) for b in n.body)
                for _ in range(trip_count(n.loop, self.counts, self.problem)):
                    if innermost:
                        self.flat += 1
                        self.fresh = False
                    elif depth == 0:
                        self.fresh = True
                    for _turn in range(self.turns if self.drain and depth == 0 else 1):
                        self.nodes(n.body, depth + 1)
            else:
                self.step(n)

    def _where(self, cursor: str | None) -> tuple[int, int, str]:
        if cursor is None:
            return -1, -1, "consumer"
        k = self.cursors.get(cursor, 0)
        stages, side = self.stages[cursor]
        return k % stages, k // stages, side

    def _progress(self) -> str:
        return f"unrolling the program ({self.built:,} of its {self.total:,} executed steps built)"

    def step(self, rs: ResolvedStep) -> None:
        self.deadline.check(self._progress)
        self.built += 1
        t, step = self.t, rs.step
        f = self.facts.get(id(rs))
        if f is None:
            f = self.facts[id(rs)] = self._facts(rs)
        stage, rnd, side = self._where(rs.cursor)
        acts = tuple(Act(verb, name, role, self.first[name] + stage, stage, rnd,
                         wait_parity(waits or side, rnd) if verb == "wait" else -1, arrivals, tx, who)
                     for verb, name, role, arrivals, tx, who, waits in f["acts"])
        members = f["members"]
        kw: dict = {}
        if step.op == "wait":
            kw["holds"] = members
            for m in members:
                self.values[m] = (stage, rnd)
        elif step.op == "release":
            kw["frees"] = members
        elif step.op == "commit":
            kw["commits"] = members
        elif step.op == "read" and rs.kind is not None:
            self.values[step.target] = (stage, rnd)
            if rs.kind is OpKind.ASYNC:  # threads read the stage here; an MMA reads it in its own step
                kw["reads"] = ((step.target, stage, rnd),)
            # threads read the stage; a store sliced by N-tile column reads its slice only
            kw["work_bytes"] = f["tile"] // self._column_slices([step.target]) if rs.kind is OpKind.ASYNC else 0
        elif step.is_work:
            kw.update(f["work"])
            if f["dma"]:
                kw["reads"] = tuple((a, *self.values.get(a, (-1, -1))) for a in f["operands"])
        if self.drain and "work_bytes" in kw and step.target not in self.slices:
            kw["work_bytes"] //= self.turns  # one turn's share of the tile (a slice is one turn's already)
        flat = self.flat + 1 if self.fresh else self.flat
        self.out.append(StepRun(t.name, len(self.out), step, rs.side, rs.kind, max(flat, 0), stage, rnd,
                                acts, threads=t.num_threads, **kw))
        for c in rs.advances:
            self.cursors[c] = self.cursors.get(c, 0) + 1
        if self.acquire is not None and step.op == "commit" and step.target in self.accs and not self.turn_of_commit:
            for turn in range(1, self.turns):  # the tile's further turns: acquire the stage again, commit
                self.turn_of_commit = turn
                self.step(self.acquire)
                self.step(rs)
            self.turn_of_commit = 0

    def _tile(self, name: str) -> int:
        r = self.res.get(name)
        if r is None:
            return 0
        if r.tile:
            return math.prod(r.tile) * DTYPE_BYTES.get(r.dtype, 4)
        return r.pipeline_config.num_bytes if r.pipeline_config else 0

    def _facts(self, rs: ResolvedStep) -> dict:
        t, step = self.t, rs.step
        acts = []
        for a in rs.actions:
            arrivals = {Who.ONE: 1, Who.ALL: t.num_threads, Who.COPY: 0}[a.who] if a.verb.startswith("arrive") else 0
            if a.verb == "arrive":  # a cluster's shared tile: the peers' same arrivals (cluster.py's symmetry rule)
                arrivals *= self.peers[a.set]
            tx = (self._tile(step.target) or a.bytes) if a.verb == "complete_tx" else a.bytes
            acts += self._mma_done(a)
            acts.append((a.verb, a.set, a.role, arrivals, tx, a.who, None))
        members = self.groups[step.target].member_names if step.via == "group" else (step.target,)
        f = {"acts": tuple(acts), "members": members, "tile": self._tile(step.target), "dma": False}
        if step.is_work:
            f.update(self._work(rs))
        return f

    def _mma_done(self, a) -> list[tuple]:
        """Before an umma commit's arrive on full, where the layout has ``mma_done`` barriers
        (sm_100a): tcgen05.commit arrives once on the stage's ``mma_done`` and the task waits
        for that phase (its waiter's parity) before it reads tensor memory out."""
        if not (a.after_mma and a.role == "full" and a.verb == "arrive"):
            return []
        for m in self.set_members[a.set]:
            done = self.layout.internal_for(m, "mma_done")
            if done is not None:
                return [(Verb.ARRIVE, done.name, done.role, 1, 0, Who.ONE, None),  # tcgen05.commit arrives once
                        (Verb.WAIT, done.name, done.role, 0, 0, Who.ONE, waiter(done.role))]
        return []

    def _work(self, rs: ResolvedStep) -> dict:
        t, step, res = self.t, rs.step, self.res
        args = [v for _, v in step.args if v in res]
        kw: dict = {}
        target = res.get(step.target)
        pipelined = target is not None and target.pipeline_config is not None
        dma = rs.kind in (OpKind.TMA, OpKind.UMMA) or step.op == "mma"
        if pipelined:
            root = self.roots[step.target]
            kw["write"] = step.target
            kw["written"] = tuple(r for r in t.dst_resources
                                  if r in res and self.roots[r] == root and res[r].pipeline_config)
        if dma:
            kw["dma"] = True
        if rs.kind is OpKind.TMA and step.op == "load":
            kw["copy_bytes"] = self._tile(step.target)
        kw["work_bytes"] = max([self._tile(a) for a in args] + [self._tile(step.target) if pipelined else 0] + [0])
        if step.op == "store" and not pipelined:
            kw["work_bytes"] //= self._column_slices(args)
        if step.op == "mma":
            kw["flops"] = self._flops(step.target, args)
        operands = tuple(a for a in args if a in t.src_resources and res[a].pipeline_config is not None) if dma else ()
        return {"work": kw, "dma": dma, "operands": operands}

    def _column_slices(self, args: list[str]) -> int:
        """A GEMM store of k tiles of A (staged copies of the MMA's A operand's global tensor: the
        "MK" space, as the generator's checks read a tile's space by its source) is cut into
        N-tile column slices (``gemm_limits.column_slices``): each block reads and stores its
        slice only."""
        sources = {self._source(a) for a in args if self.res[a].tile}
        return column_slices("MK", self.problem) if sources and sources == {self._a_source()} else 1

    def _source(self, name: str) -> str | None:
        """The global tensor a staged tile copies (None for any other resource)."""
        deps = [x for x in self.design.deps(name) if x in self.res and self.res[x].memory is Memory.GMEM]
        return deps[0] if len(deps) == 1 else None

    def _a_source(self) -> str | None:
        """The global tensor of the MMA's A operand (``accumulators.operands``), None without one."""
        accs = accumulators(self.design)
        pair = operands(self.design, accs[0]) if accs else None
        return self._source(pair[0]) if pair else None

    def _flops(self, target: str, args: list[str]) -> int:
        res = self.res
        shape = res[target].tile if target in res else ()
        m, n = (shape + (0, 0))[:2] if len(shape) >= 2 else (0, 0)
        ks = [res[a].tile[-1] for a in args if res[a].tile]
        k = ks[0] if ks else self.problem.get("BK", 0)
        return 2 * m * n * k if isinstance(k, int) else 0


def unroll(design: Design, counts: Mapping[str, int] | None = None, layout: BarrierLayout | None = None, *,
           iterations: int | None = 4, inner: int | None = 2, loops: Mapping[str, int] | None = None,
           max_steps: int | None = MAX_UNROLLED_STEPS, deadline: Deadline = NEVER, turns: int = 1) -> Program:
    """Every task's steps over the chosen loop counts (``counts``: from ``loops.shrink`` by default,
    whose caveats the program keeps).  ``turns`` > 1: each tile passes through the accumulator's
    staging in that many turns, as an sm_90a kernel runs it (``smem_layout.Staging.turns``; the
    simulator passes it, the protocol checks keep one turn).  A program of more than ``max_steps`` executed steps is
    refused before it is built (the checker passes None: its own budget answers INCOMPLETE);
    ``deadline`` is polled per step built (``budget.OutOfTime`` past it)."""
    require_modelled(design, "pgstudio's simulator and checker")
    layout = layout or barrier_layout(design)
    caveats: tuple[str, ...] = ()
    if counts is None:
        shrunk = shrink(design, iterations, inner, loops)
        counts, caveats = shrunk.counts, shrunk.caveats
    steps = executed_steps(design, counts)  # counted before anything is built
    if max_steps is not None and steps > max_steps:
        raise DesignError(f"design {design.name!r}: unrolled, its tasks would execute {steps} steps, more than "
                          f"{max_steps} (loop counts: {', '.join(f'{k}={v}' for k, v in counts.items()) or 'none'})",
                          code="analysis.size", hint="run fewer iterations, or cap inner loops (inner=..., --inner)")
    plans = resolve(design, layout)
    u = _Unroller(design, layout, counts, deadline, turns)
    u.total = steps
    runs = tuple(u.task(t, plans[t.name]) for t in design.tasks)
    return Program(design, layout, dict(counts), tuple(t.name for t in design.tasks), runs, u.roots, caveats, turns)


__all__ = ["Act", "DTYPE_BYTES", "MAX_UNROLLED_STEPS", "Program", "StepRun", "loop_counts", "tile_bytes", "trip_count",
           "unroll"]

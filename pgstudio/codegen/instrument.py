"""Instrumented builds: ``emit(design, instrument=Instrument())`` records what each task did.

For a sample of blocks (the grid's last ``blocks``: sample k is block ``gridDim.x - blocks + k``)
one elected lane per task (the task's only
thread for a bulk-copy role, else its thread 0) stamps every schedule step that generates code:
each acquire / wait (with whether its first probe found the barrier closed, so blocked time is
visible), each work step (a bulk-copy issue, thread copies, the store) and each commit / release.
A stamp is one 16-byte record in the lane's own slab of a global buffer, so no two lanes ever
write the same bytes and no atomic is needed; when a slab is full the lane stops stamping (it
still counts, so the decoder can say how many steps went unrecorded).  Nothing of the protocol
changes: the extra probe is a ``test_wait`` (it never suspends the thread, unlike ``try_wait``)
on the barrier the step waits on anyway, and the record is a plain global store.  Blocks outside
the sample, and lanes that do not record, only compare a zero capacity per step.

Buffer (``uint4`` words; decoded by ``pgstudio.runtime.trace``)::

    lane l = k * num_tasks + task          (samples k 0 .. blocks-1, tasks in design order)
    slab l = words [l * (capacity + 1), (l + 1) * (capacity + 1))
    slab[0]      header: {steps stamped (may exceed capacity), globaltimer at the task's start
                 (low, high 32 bits), %clock at the task's start}
    slab[1 + i]  record i: {globaltimer at the step's end (low 32 bits; timed records only, else
                 0), %clock at the step's start, %clock cycles the step took, code}
    code         site (bits 0-11: index of the step in the task's resolved plan) | blocked << 12
                 (the wait's first probe failed) | timed << 13 (word 0 holds the global timer)
                 | iteration << 14 (low 18 bits)

Why the last blocks: a persistent kernel hands its work units out in block order, so when they
do not divide evenly the first blocks take one unit more; a sampled block is slowed by its
stamps (each lengthens its thread's chain of steps), and the grid's last blocks are the ones
with room for that (merge_gemm at 4096^3: 1.23x the plain kernel sampling blocks 0 and 1,
1.02x sampling the last two, which have 3 tiles to the others' 4; ``benchmarks/instrument_cost.py``).

Every record reads the SM's ``%clock`` (a cycle counter, a few cycles to read, which resolves
steps far shorter than the global timer's update step); every ``TIMED_EVERY``-th record of a
lane, and each lane's header, also reads ``%globaltimer``, which puts all lanes and blocks on one
axis in nanoseconds.  A few readings per lane are all the decoder needs: it fits cycles to
global-timer nanoseconds per block (every lane of a block runs on one SM, one ``%clock``).  (The
timer read was suspected of the GEMM builds' cost and made sparse; measured since, leaving it
out entirely gives back little of that cost: ``codegen.gemm.stamps`` says what does.)

``KernelSource.info['instrument']`` carries the layout and the step table the decoder needs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from ..errors import CompileError
from ..model.kinds import OpKind

if TYPE_CHECKING:  # pragma: no cover
    from ._writer import Writer
    from ..analysis.buildable.stream_plan import StreamPlan, TaskCode
    from ..analysis.resolve import TaskPlan

#: Bytes of one record and of one slab header.
RECORD_BYTES = 16
#: Bits of the record's code word.
SITE_BITS, BLOCKED_BIT, TIMED_BIT, ITER_SHIFT = 12, 12, 13, 14
ITER_BITS = 32 - ITER_SHIFT
#: Every this many records of a lane read the global timer too (a power of two).
TIMED_EVERY = 16
#: Most sampled blocks and records per lane (keeps the buffer a few MiB at most).
MAX_BLOCKS, MAX_CAPACITY = 64, 1 << 16

DEVICE = r"""
// -- instrumentation (pgstudio.codegen.instrument): per-lane slabs of 16-byte stamps -------------
__device__ __forceinline__ u32 pg_ins_clk() {
  u32 c;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(c));
  return c;
}
// Is the phase of this parity complete right now?  test_wait never suspends the thread (a
// try_wait may, and then a wait that blocked inside the probe would look unblocked).
__device__ __forceinline__ bool pg_ins_ready(u32 bar, u32 parity) {
  u32 ok;
  asm volatile("{\n\t.reg .pred P;\n\t"
               "mbarrier.test_wait.parity.shared::cta.b64 P, [%1], %2;\n\t"
               "selp.u32 %0, 1, 0, P;\n\t}"
               : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
  return ok != 0;
}
// Record one step: started at %clock c; ends now.  Every PG_INS_TIMED-th record also reads the
// global timer (at the step's end): a few readings per lane are all the clock fit needs.
__device__ __forceinline__ void pg_ins_put(uint4* slab, u32 cap, u32& n, u32 c, u32 code) {
  if (n < cap) {
    const u32 d = pg_ins_clk() - c;
    const bool timed = (n & (PG_INS_TIMED - 1u)) == 0u;
    slab[1 + n] = make_uint4(timed ? (u32)pg_globaltimer() : 0u, c, d, timed ? code | PG_INS_TIMED_FLAG : code);
  }
  ++n;
}
"""


@dataclass(frozen=True)
class Instrument:
    """What an instrumented build records: ``blocks`` sampled blocks (the grid's last), each lane
    keeping at most ``capacity`` step records (16 B each).

    GEMM builds record a window of their loops: in each sampled block the first ``tiles`` work
    units (output tiles, or tile splits), of each the first ``k_tiles`` k tiles, and every step
    of those units outside the k loop (the accumulator's hand-over, the epilogue); None records
    every pass of that loop (up to ``capacity``).  Why a window: every stamp lengthens its
    thread's chain of steps, and even unrecorded passes of stamped code slow a fast k loop
    (``codegen.gemm.stamps``), so the loops are peeled at the window and run plain code past it;
    two units of 16 k tiles show the fill, the steady state, the hand-over and the epilogue's
    overlap with the next unit's mainloop at a few microseconds of stamps.
    Streaming kernels have one loop and record every step up to ``capacity``."""

    blocks: int = 2
    capacity: int = 512
    tiles: int | None = 2
    k_tiles: int | None = 16

    def __post_init__(self) -> None:
        for name, value, top in (("blocks", self.blocks, MAX_BLOCKS), ("capacity", self.capacity, MAX_CAPACITY),
                                 ("tiles", self.tiles, 1 << ITER_BITS), ("k_tiles", self.k_tiles, 1 << ITER_BITS)):
            if value is None and name in ("tiles", "k_tiles"):
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                every = " (or None: every pass)" if name in ("tiles", "k_tiles") else ""
                raise CompileError(f"Instrument({name}={value!r}) is out of range; use a whole number from 1 to "
                                   f"{top}{every}")

    def window(self) -> tuple[int | None, int | None]:
        """(tiles, k_tiles): the GEMM loop window, for the trace's meta."""
        return self.tiles, self.k_tiles

    def buffer_bytes(self, num_tasks: int) -> int:
        """Bytes of the device buffer for a kernel of ``num_tasks`` tasks."""
        return self.blocks * num_tasks * (self.capacity + 1) * RECORD_BYTES


def recorded(rs) -> bool:
    """True when a resolved step of a streaming kernel generates code (so it takes time and gets a
    stamp): a barrier action, or thread work.  A probe (try_wait) the next wait covers, a read
    fused into the store and a tma commit the copy engine performs generate none."""
    return bool(rs.actions) or (rs.step.op in ("load", "store") and rs.kind is not OpKind.TMA)


def step_table(plans: Sequence["TaskPlan"], sets: Sequence, is_recorded: Callable = recorded) -> tuple:
    """Per task (``plans``, resolved task plans in lane order), per resolved step: what the decoder
    needs to name an event.

    ``(site, op, target, is_work, recorded, cursor, stages, start_phase, advances per iteration,
    advances before this step in an iteration, actions, depth, cursor depth)`` with actions
    ``(verb, set, first slot)``.  ``depth`` is the step's loop depth (1: inside the outermost
    loop); an iteration is one pass of the innermost loop around the step (a GEMM's k loop for its
    loads and MMAs, counted across tiles; its tile loop for the accumulator's hand-over), and the
    kernel stamps each step with the count of those passes so far.  ``cursor depth`` is the depth
    of the loop whose passes advance the step's cursor (a cursor is advanced in one loop): the
    per-iteration and before counts are that loop's, so ``iteration * per_iteration + before``
    (with that loop's iteration: the decoder keeps the last one seen at each depth) is the
    cursor's use count, whose remainder by the stages is the stage and whose quotient the round.
    """
    first = {s.name: s.first for s in sets}
    return tuple(_task_rows(tp, first, is_recorded) for tp in plans)


def _task_rows(tp: "TaskPlan", first: dict[str, int], is_recorded: Callable) -> tuple:
    """One task's rows of ``step_table``, in the order of ``tp.steps()``."""
    from ..analysis.resolve import ResolvedLoop
    cursor_depth: dict[str, int] = {}  # cursor -> depth of the loop whose passes advance it

    def scan(nodes, depth: int) -> None:
        for n in nodes:
            if isinstance(n, ResolvedLoop):
                scan(n.body, depth + 1)
            else:
                for c in n.advances:
                    cursor_depth.setdefault(c, depth)

    rows: list[tuple] = []

    def body(nodes, depth: int, levels: dict[int, tuple[Counter, Counter]]) -> None:
        # per enclosing depth: (advances per pass of that loop's body, advances so far in this pass)
        levels = {**levels, depth: (Counter(c for n in nodes if not isinstance(n, ResolvedLoop) for c in n.advances),
                                    Counter())}
        for rs in nodes:
            if isinstance(rs, ResolvedLoop):
                body(rs.body, depth + 1, levels)
                continue
            cur = tp.cursor(rs.cursor) if rs.cursor else None
            level = cursor_depth.get(rs.cursor, depth) if cur else depth
            per_iter, seen = levels.get(level, (Counter(), Counter()))
            rows.append((len(rows), rs.step.op, rs.step.target, rs.step.is_work, is_recorded(rs), rs.cursor or "",
                         cur.stages if cur else 0, cur.start_phase if cur else 0,
                         per_iter[rs.cursor] if cur else 0, seen[rs.cursor] if cur else 0,
                         tuple((str(a.verb), a.set, first[a.set]) for a in rs.actions), depth, level))
            levels[depth][1].update(rs.advances)

    scan(tp.nodes, 0)
    body(tp.nodes, 0, {})
    return tuple(rows)


def check_sites(design: str, plans: Sequence["TaskPlan"]) -> None:
    """Refuse a design with a task of more steps than a record's site field numbers."""
    if max((len(list(tp.steps())) for tp in plans), default=0) >= 1 << SITE_BITS:
        raise CompileError(f"a task of design {design!r} has more than {1 << SITE_BITS} steps; "
                           "instrumented builds number steps in 12 bits")


def buffer_meta(spec: Instrument, tasks: Sequence[tuple[str, int, int]], steps: tuple, sets: Sequence,
                window: tuple | None = None) -> tuple:
    """``KernelSource.info['instrument']``: the buffer's layout and the step table, for the decoder
    (one shape for every generator, so one decoder reads them all); ``window``: the loop window a
    GEMM build records (``Instrument.window``), None where every step is recorded."""
    info = (("blocks", spec.blocks), ("capacity", spec.capacity), ("record_bytes", RECORD_BYTES),
            ("buffer_bytes", spec.buffer_bytes(len(tasks))), ("tasks", tuple(tasks)), ("steps", steps),
            ("sets", tuple((b.name, b.first, b.stages) for b in sets)), ("window", window))
    return ("instrument", info)


def device_prelude(spec: Instrument, num_tasks: int) -> str:
    """The stamp helpers and the sample's constants, for a kernel's prelude."""
    return (f"#define PG_INS_TIMED {TIMED_EVERY}u\n#define PG_INS_TIMED_FLAG {1 << TIMED_BIT}u\n" + DEVICE.strip("\n")
            + f"\n#define PG_INS_BLOCKS {spec.blocks}u\n#define PG_INS_TASKS {num_tasks}u\n#define PG_INS_CAP {spec.capacity}u")


#: This block's sample index (C, unsigned): k for the grid's k-th last-but-``blocks`` block, at
#: least ``PG_INS_BLOCKS`` for a block outside the sample.
SAMPLE = "blockIdx.x + PG_INS_BLOCKS - gridDim.x"


def lane_setup(task_index: int, lane_cond: str) -> tuple[str, ...]:
    """A task's lane setup: the slab pointer, the capacity (0 where this thread or block does not
    record; ``lane_cond``: the C condition of the recording thread, "" for an elected thread),
    the step's start clocks and the task's start."""
    who = f" && {lane_cond}" if lane_cond else ""
    return (f"const u32 pg_ins_b = {SAMPLE};  // sample k: the grid's last blocks",
            f"const u32 pg_ins_cap = (pg_ins_b < PG_INS_BLOCKS{who}) ? PG_INS_CAP : 0u;  "
            "// instrumented: this lane stamps its steps",
            f"uint4* const pg_ins = pg_trace + (pg_ins_cap ? (pg_ins_b * PG_INS_TASKS + {task_index}u) * "
            "(PG_INS_CAP + 1u) : 0u);",
            "u32 pg_ins_n = 0, pg_ins_c = 0, pg_ins_bk = 0;",
            "const u64 pg_ins_t0 = pg_ins_cap ? pg_globaltimer() : 0ull;",
            "const u32 pg_ins_c0 = pg_ins_cap ? pg_ins_clk() : 0u;")


#: The lane's header (kernel-agnostic).
LANE_END = "if (pg_ins_cap) pg_ins[0] = make_uint4(pg_ins_n, (u32)pg_ins_t0, (u32)(pg_ins_t0 >> 32), pg_ins_c0);"


#: The line before a stamped step.
STEP_BEGIN = "if (pg_ins_n < pg_ins_cap) { pg_ins_c = pg_ins_clk(); pg_ins_bk = 0; }"


def probe_line(slot: str, phase: str) -> str:
    return f"if (pg_ins_n < pg_ins_cap) pg_ins_bk = pg_ins_ready({slot}, {phase}) ? 0u : 1u;"


def step_end_line(site: int, iteration: str) -> str:
    return (f"if (pg_ins_cap) pg_ins_put(pg_ins, pg_ins_cap, pg_ins_n, pg_ins_c, "
            f"{site}u | (pg_ins_bk << {BLOCKED_BIT}) | ((u32){iteration} << {ITER_SHIFT}));")


class Stamps:
    """The instrumentation the streaming kernel writer weaves in (``codegen.kernel`` calls these hooks)."""

    c_arg = "uint4* __restrict__ pg_trace"

    def __init__(self, plan: "StreamPlan", spec: Instrument) -> None:
        check_sites(plan.design.name, [t.plan for t in plan.tasks])
        self.plan = plan
        self.spec = spec
        self.task_index = {tc.task.name: i for i, tc in enumerate(plan.tasks)}
        self.k = -1
        self.on = False

    @property
    def param(self):
        from .source import KernelParam
        return KernelParam("pg_trace", "trace", "u32")

    def prelude(self) -> str:
        return device_prelude(self.spec, len(self.plan.tasks))

    def meta(self) -> tuple[str, object]:
        plans = [t.plan for t in self.plan.tasks]
        tasks = tuple((t.task.name, t.task.warp_idx, t.task.num_warps) for t in self.plan.tasks)
        return buffer_meta(self.spec, tasks, step_table(plans, self.plan.layout.sets), self.plan.layout.sets)

    # -- hooks, in the order the writer calls them -----------------------------------------------
    def task_begin(self, w: "Writer", tc: "TaskCode") -> None:
        """Lane setup: slab pointer, capacity (0 where this thread or block does not record), bases."""
        lines = lane_setup(self.task_index[tc.task.name], "" if tc.elected else "pg_tt == 0")
        w.add(lines[0], f"instrument {tc.task.name}")
        for ln in lines[1:]:
            w.add(ln)
        self.k = -1

    def step_begin(self, w: "Writer", rs) -> None:
        self.k += 1
        self.on = recorded(rs)
        if self.on:
            w.add(STEP_BEGIN)

    def probe(self, w: "Writer", slot: str, phase: str) -> None:
        """Before a wait: note whether the barrier is still closed (the wait will block)."""
        if self.on:
            w.add(probe_line(slot, phase))

    def step_end(self, w: "Writer") -> None:
        if self.on:
            w.add(step_end_line(self.k, "pg_it"))
        self.on = False

    def task_end(self, w: "Writer") -> None:
        w.add(LANE_END)


__all__ = ["BLOCKED_BIT", "DEVICE", "ITER_BITS", "ITER_SHIFT", "Instrument", "LANE_END", "MAX_BLOCKS", "MAX_CAPACITY",
           "RECORD_BYTES", "SITE_BITS", "Stamps", "TIMED_BIT", "TIMED_EVERY", "buffer_meta", "check_sites",
           "device_prelude", "lane_setup", "probe_line", "recorded", "SAMPLE", "STEP_BEGIN", "step_end_line",
           "step_table"]

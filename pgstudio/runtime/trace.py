"""Measured timelines: run an instrumented kernel, decode its stamps into a ``Timeline``.

``trace(design)`` builds the design with ``emit(design, instrument=Instrument())``, verifies it
once (a warm-up), then launches it again on fresh poisoned outputs with a zeroed stamp buffer,
verifies that launch too and decodes the buffer (``codegen.instrument`` documents its layout)
into a ``Trace``: per sampled block, one lane per task, each stamp a step with its start, its
duration, whether its wait found the barrier closed, and its iteration.  ``Trace.timeline(block)``
is the same ``Timeline`` type the simulator produces (``source="measured"``), so the same
picture draws it; ``Trace.chrome()`` / ``chrome_trace(timeline)`` is Chrome / Perfetto trace JSON
(``traceEvents``; one process per block, one thread per task lane).  The sampled blocks are the
grid's last (``codegen.instrument`` says why): sample k is block ``meta["first_sampled_block"] + k``
(``grid_block`` in its timeline's meta).

Time: every stamp carries the SM's cycle counter, every ``TIMED_EVERY``-th of a lane (and each
lane's start) the global timer too (ns, one axis for every SM).  Per block, a least-squares line
maps cycles to global-timer nanoseconds; with ``clock="cycles"`` (default) starts and ends come
from cycles through that line, which resolves steps far shorter than the global timer's update
step, while the line keeps blocks aligned.  ``clock="globaltimer"`` takes a timed stamp's time
from the raw global timer instead (the others from the line).  Times are nanoseconds
from the earliest sampled task's start.

Decoding is pure Python (``decode(src, data)`` takes the buffer's bytes), so it is tested on
synthetic buffers without a GPU.
"""

from __future__ import annotations

import dataclasses
import json
import struct
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ..analysis.timeline import ARRIVE, BLOCKED, SYNC, WORK, Event, Timeline
from ..codegen.instrument import BLOCKED_BIT, ITER_BITS, ITER_SHIFT, SITE_BITS, TIMED_BIT, Instrument
from ..codegen.source import KernelSource
from ..errors import GpuUnavailable, PgStudioError
from ._cupy import WITHOUT_GPU

CLOCKS = ("cycles", "globaltimer")
#: Nanoseconds per cycle assumed when a block has too few stamps to fit its clock (1.98 GHz).
FALLBACK_NS_PER_CYCLE = 1 / 1.98
_U32 = 1 << 32


@dataclass(frozen=True)
class Stamp:
    """One recorded step: ``gt`` global-timer ns at its end (absolute) for a timed record (every
    ``TIMED_EVERY``-th of a lane, ``codegen.instrument``), else None; ``cycles`` SM cycles at its
    start (the block's frame), ``dur`` cycles it took."""

    site: int
    blocked: bool
    iteration: int
    gt: int | None
    cycles: int
    dur: int


@dataclass(frozen=True)
class Lane:
    """What one task's recording lane of one block wrote."""

    block: int
    task: str
    warps: tuple[int, int]
    start_gt: int  # global timer at the task's start (ns)
    start_cycles: int  # its cycle counter then, in the block's frame
    count: int  # steps stamped, recorded or not
    stamps: tuple[Stamp, ...]

    @property
    def dropped(self) -> int:
        """Steps the lane stamped after its slab was full (not in ``stamps``)."""
        return self.count - len(self.stamps)


@dataclass(frozen=True)
class ClockFit:
    """gt_ns - ref = offset + ns_per_cycle * cycles for one block (``ref``: the trace's earliest
    lane start, subtracted as an integer first: global-timer values are ~1e18 ns, where a double
    resolves only 256 ns); ``step_ns`` the smallest global timer step seen (its update
    granularity, as far as the stamps show it)."""

    offset: float
    ns_per_cycle: float
    step_ns: float | None
    points: int
    fitted: bool


def _u32s(data: Any) -> tuple[int, ...]:
    raw = data.tobytes() if hasattr(data, "tobytes") else bytes(data)
    if len(raw) % 4:
        raise PgStudioError(f"a stamp buffer is whole 32-bit words; got {len(raw)} bytes")
    return struct.unpack(f"<{len(raw) // 4}I", raw)


def _signed(x: int) -> int:
    x %= _U32
    return x - _U32 if x >= 1 << 31 else x


def _instrument_info(src: KernelSource | Mapping) -> dict:
    info = dict(src.info if isinstance(src, KernelSource) else src)
    ins = info.get("instrument")
    if ins is None:
        raise PgStudioError("this kernel is not instrumented: build it with emit(design, instrument=Instrument())")
    return dict(ins)


def _fit(points: list[tuple[int, int]]) -> ClockFit:
    """Least squares of global-timer ns against cycles (the block's frame)."""
    gts = sorted({g for _, g in points})
    steps = [b - a for a, b in zip(gts, gts[1:]) if b > a]
    step = float(min(steps)) if steps else None
    n = len(points)
    if n >= 2:
        mc = sum(c for c, _ in points) / n
        mg = sum(g for _, g in points) / n
        sxx = sum((c - mc) ** 2 for c, _ in points)
        sxy = sum((c - mc) * (g - mg) for c, g in points)
        if sxx > 0 and 0.05 < sxy / sxx < 20:  # a plausible clock (50 MHz .. 20 GHz)
            slope = sxy / sxx
            return ClockFit(mg - slope * mc, slope, step, n, True)
    c0, g0 = min(points) if points else (0, 0)
    return ClockFit(g0 - FALLBACK_NS_PER_CYCLE * c0, FALLBACK_NS_PER_CYCLE, step, n, False)


def decode(src: KernelSource | Mapping, data: Any, *, meta: Iterable[tuple[str, Any]] = ()) -> "Trace":
    """The ``Trace`` in an instrumented kernel's stamp buffer (bytes, or an array with ``tobytes``)."""
    ins = _instrument_info(src)
    info = dict(src.info if isinstance(src, KernelSource) else src)
    tasks = tuple(ins["tasks"])
    steps = tuple(ins["steps"])
    blocks, cap = int(ins["blocks"]), int(ins["capacity"])
    words = _u32s(data)
    need = blocks * len(tasks) * (cap + 1) * 4
    if len(words) < need:
        raise PgStudioError(f"the stamp buffer holds {len(words) * 4} bytes, the kernel writes up to {need * 4} "
                            f"({blocks} blocks x {len(tasks)} tasks x {cap + 1} records of 16 B)")
    site_mask, iter_mask = (1 << SITE_BITS) - 1, (1 << ITER_BITS) - 1
    lanes = []
    for b in range(blocks):
        ref = None
        for t, (name, warp, nwarps) in enumerate(tasks):
            base = (b * len(tasks) + t) * (cap + 1) * 4
            count, gt_lo, gt_hi, c0 = words[base:base + 4]
            if count == 0 and gt_lo == 0 and gt_hi == 0:
                continue  # this block did not run (a grid smaller than the sample) or the task never started
            start_gt = gt_lo | gt_hi << 32
            ref = c0 if ref is None else ref
            shift = _signed(c0 - ref)
            table = steps[t] if t < len(steps) else ()
            stamps, wrap, last = [], {}, {}  # per loop depth: iteration counts wrap in their own field
            for i in range(min(count, cap)):
                g, c, dur, code = words[base + 4 * (i + 1):base + 4 * (i + 2)]
                it, site = (code >> ITER_SHIFT) & iter_mask, code & site_mask
                row = table[site] if site < len(table) else ()
                depth = row[11] if len(row) >= 13 else 0
                if it < last.get(depth, -1):
                    wrap[depth] = wrap.get(depth, 0) + (1 << ITER_BITS)
                last[depth] = it
                timed = bool(code >> TIMED_BIT & 1)
                stamps.append(Stamp(site, bool(code >> BLOCKED_BIT & 1), it + wrap.get(depth, 0),
                                    start_gt + (g - gt_lo) % _U32 if timed else None, shift + (c - c0) % _U32, dur))
            lanes.append(Lane(b, name, (warp, nwarps), start_gt, shift, count, tuple(stamps)))
    ref = min((ln.start_gt for ln in lanes), default=0)
    fits = {}
    for b in sorted({ln.block for ln in lanes}):
        pts = [(ln.start_cycles, ln.start_gt - ref) for ln in lanes if ln.block == b]
        pts += [(s.cycles + s.dur, s.gt - ref) for ln in lanes if ln.block == b for s in ln.stamps if s.gt is not None]
        fits[b] = _fit(pts)
    window = ins.get("window")  # a GEMM build's recorded loop window (Instrument.window)
    meta = tuple(meta) + ((("window", tuple(window)),) if window else ())
    return Trace(str(info.get("design", "")) or (src.design if isinstance(src, KernelSource) else ""),
                 tasks, tuple(lanes), fits, steps, meta, ref)


@dataclass(frozen=True)
class Trace:
    """Decoded stamps of one instrumented launch; see the module docstring."""

    design: str
    tasks: tuple[tuple[str, int, int], ...]
    lanes: tuple[Lane, ...]
    fits: Mapping[int, ClockFit]
    steps: tuple = ()  # the generator's step table (codegen.instrument.step_table)
    meta: tuple[tuple[str, Any], ...] = field(default=())
    ref_gt: int = 0  # global-timer ns subtracted (exactly) before any floating-point time

    @property
    def blocks(self) -> tuple[int, ...]:
        return tuple(sorted({ln.block for ln in self.lanes}))

    @property
    def meta_dict(self) -> dict:
        return dict(self.meta)

    def lane(self, block: int, task: str) -> Lane:
        for ln in self.lanes:
            if ln.block == block and ln.task == task:
                return ln
        raise KeyError(f"no lane for task {task!r} in block {block}; blocks {self.blocks}, "
                       f"tasks {', '.join(t[0] for t in self.tasks)}")

    def _zero(self, clock: str) -> float:
        starts = [self._ns(ln.block, ln.start_cycles, ln.start_gt, clock) for ln in self.lanes]
        return min(starts, default=0.0)

    def _ns(self, block: int, cycles: int, gt: int | None, clock: str) -> float:
        """Nanoseconds since the trace's reference of a moment recorded as ``cycles`` (and, where
        read, the global timer ``gt`` then): the raw timer with ``clock="globaltimer"`` where there
        is a reading, else the block's cycle fit."""
        f = self.fits[block]
        return float(gt - self.ref_gt) if clock == "globaltimer" and gt is not None else f.offset + f.ns_per_cycle * cycles

    def _start(self, block: int, s: Stamp, clock: str) -> float:
        if clock == "globaltimer" and s.gt is not None:  # a timed record read the timer at its end
            return float(s.gt - self.ref_gt) - self.fits[block].ns_per_cycle * s.dur
        return self._ns(block, s.cycles, None, clock)

    def timeline(self, block: int | None = None, *, clock: str = "cycles") -> Timeline:
        """One block's lanes as a measured ``Timeline`` (default: the first sampled block)."""
        if clock not in CLOCKS:
            raise PgStudioError(f"clock {clock!r} is not known; use one of {', '.join(CLOCKS)}")
        if not self.lanes:
            raise PgStudioError(f"the trace of {self.design!r} holds no stamps (no sampled block ran)")
        block = self.blocks[0] if block is None else block
        if block not in self.blocks:
            raise PgStudioError(f"block {block} was not sampled; sampled blocks: {', '.join(map(str, self.blocks))}")
        zero = self._zero(clock)
        f = self.fits[block]
        events: list[Event] = []
        order = {t[0]: i for i, t in enumerate(self.tasks)}
        for ln in self.lanes:
            if ln.block != block:
                continue
            table = self.steps[order[ln.task]] if self.steps else ()
            passes: dict[int, int] = {}  # loop depth -> the last pass count a stamp there carried
            for s in ln.stamps:
                start = self._start(block, s, clock) - zero
                row = table[s.site] if s.site < len(table) else None
                events.extend(_events(ln, s, start, start + f.ns_per_cycle * s.dur, row, _cursor_pass(row, s, passes)))
        copies, bounded = landed_copies(events)
        first = int(dict(self.meta).get("first_sampled_block", 0))
        meta = [("status", "complete"), ("block", block), ("grid_block", first + block), ("clock", clock), ("ns_per_cycle", f.ns_per_cycle),
                ("timer_step_ns", f.step_ns), ("clock_fitted", f.fitted),
                ("dropped", {ln.task: ln.dropped for ln in self.lanes if ln.block == block}),
                ("copies_landed_by", bounded), *self.meta]
        return Timeline.from_events(self.design, events + copies, with_copy_lanes(self.tasks, copies), "measured", meta)

    def timelines(self, *, clock: str = "cycles") -> list[Timeline]:
        return [self.timeline(b, clock=clock) for b in self.blocks]

    def problems(self) -> list[str]:
        """Stamps out of order within a lane (each step must start no earlier than the previous
        one ended, in cycles, and the global timer read at a timed step's end must not run
        backwards); an empty list when every lane is monotonic."""
        out = []
        for ln in self.lanes:
            prev_end, prev_gt = ln.start_cycles, ln.start_gt
            for i, s in enumerate(ln.stamps):
                if s.cycles < prev_end or (s.gt is not None and s.gt < prev_gt):
                    out.append(f"block {ln.block} task {ln.task!r}: stamp {i} (iteration {s.iteration}, site {s.site}) "
                               f"starts at {s.cycles} cycles (global timer {s.gt} ns at its end), before the "
                               f"previous step ended ({prev_end} cycles / {prev_gt} ns)")
                prev_end = s.cycles + s.dur
                prev_gt = s.gt if s.gt is not None else prev_gt
        return out

    def chrome(self, *, clock: str = "cycles") -> dict:
        """Chrome / Perfetto trace JSON of every sampled block."""
        return chrome_trace(self.timelines(clock=clock))

    def save(self, path: str, *, clock: str = "cycles") -> None:
        with open(path, "w") as f:
            json.dump(self.chrome(clock=clock), f)

    def summary(self) -> str:
        n = sum(len(ln.stamps) for ln in self.lanes)
        dropped = sum(ln.dropped for ln in self.lanes)
        fits = "; ".join(f"block {b}: {f.ns_per_cycle * 1e3:.1f} ps/cycle, timer step "
                         f"{'?' if f.step_ns is None else f'{f.step_ns:.0f}'} ns" for b, f in sorted(self.fits.items()))
        window, every = dict(self.meta).get("window"), ""
        if window is not None:
            tiles, k_tiles = window
            every = (f"{'every' if tiles is None else f'the first {tiles}'} work unit(s), of each "
                     f"{'every k tile' if k_tiles is None else f'the first {k_tiles} k tiles'}")
        return (f"trace of {self.design!r}: {len(self.blocks)} block(s) x {len(self.tasks)} task lanes, {n} stamps"
                f"{f' ({dropped} steps past the slabs)' if dropped else ''}"
                f"{f' (recorded: {every})' if window is not None else ''}; {fits}")

    def __str__(self) -> str:
        return self.summary()

def _cursor_pass(row, s: Stamp, passes: dict[int, int]) -> int:
    """The pass count of the loop that advances the stamp's cursor (``step_table``): the stamp's
    own iteration when that is its innermost loop, else the last pass count a stamp of that outer
    loop carried (``passes``, updated here; 0 before any)."""
    if row is None or len(row) < 13:
        return s.iteration
    depth, level = row[11], row[12]
    passes[depth] = s.iteration
    return s.iteration if level == depth else passes.get(level, 0)


def _events(ln: Lane, s: Stamp, start: float, end: float, row, cursor_pass: int | None = None) -> list[Event]:
    """The timeline events of one stamp (its step, the time blocked, the arrivals it made);
    ``cursor_pass``: the pass count of the loop that advances its cursor (default: its iteration)."""
    if row is None:
        return [Event(ln.task, f"site {s.site}", SYNC, start, end, iteration=s.iteration, warps=ln.warps)]
    _site, op, target, is_work, _rec, cursor, stages, start_phase, per_iter, before, actions = row[:11]
    stage = rnd = -1
    if cursor and stages:
        use = (s.iteration if cursor_pass is None else cursor_pass) * per_iter + before
        stage, rnd = use % stages, use // stages
    def slot(first: int) -> int:
        return first + stage if stage >= 0 else -1
    first_set = actions[0] if actions else ("", "", -1)
    out = []
    step_start = start
    if s.blocked:
        wait = next((a for a in actions if a[0] == "wait"), first_set)
        parity = (start_phase + rnd) & 1 if rnd >= 0 else -1
        out.append(Event(ln.task, "blocked", BLOCKED, start, end, target, wait[1], slot(wait[2]), stage, parity,
                         s.iteration, ln.warps))
        step_start = end
    out.append(Event(ln.task, op, WORK if is_work else SYNC, step_start, end, target, first_set[1],
                     slot(first_set[2]), stage, rnd & 1 if rnd >= 0 else -1, s.iteration, ln.warps))
    for verb, bset, first in actions:
        if verb in ("arrive", "arrive_expect_tx"):
            out.append(Event(ln.task, "arrive", ARRIVE, end, end, target, bset, slot(first), stage,
                             rnd & 1 if rnd >= 0 else -1, s.iteration, ln.warps))
    return out


# -- copy lanes ----------------------------------------------------------------------------------

def landed_copies(events: Sequence[Event]) -> tuple[list[Event], int]:
    """The copy engine's lane, as far as the stamps observe it: one ``copy`` event per bulk / TMA
    copy a task issued (a ``load`` whose barrier is completed by the copy's bytes), from the issue
    to the moment a waiter saw that full barrier complete (a wait on the same slot and parity
    that ended after the issue and began before the slot's next issue: the same round, since the
    round two before completed before the producer could acquire the stage again).  When a waiter blocked on it, that
    moment is the landing itself; when every waiter found it complete, the copy landed before
    the earliest wait began, and its event ends there (an upper bound; their number is returned
    beside the events and kept in the timeline's meta as ``copies_landed_by``).  The lane is the
    simulator's (``<task>.tma``), so the two timelines have the same lanes."""
    from ..analysis.timeline import COPY_LANE
    issues: dict[int, list[Event]] = {}  # slot -> its copies' issues, in time order
    for e in sorted(events, key=lambda e: e.start):
        if e.op == "load" and e.kind == WORK and e.slot >= 0 and e.barrier:
            issues.setdefault(e.slot, []).append(e)
    waits: dict[tuple[int, int], list[Event]] = {}  # (slot, parity) -> the waits on it
    for e in events:
        if e.op in ("wait", "blocked") and e.slot in issues:
            waits.setdefault((e.slot, e.phase), []).append(e)
    out, bounded = [], 0
    for slot, seq in issues.items():
        for i, e in enumerate(seq):
            nxt = seq[i + 1].start if i + 1 < len(seq) else float("inf")
            seen = [w for w in waits.get((slot, e.phase), ()) if w.task != e.task and w.end >= e.start and w.start < nxt]
            if not seen:
                continue  # no sampled waiter recorded this stage's round
            blocked = [w.end for w in seen if w.op == "blocked"]
            end = min(blocked) if blocked else min(w.start for w in seen)
            bounded += not blocked
            out.append(Event(COPY_LANE.format(task=e.task), "copy", WORK, e.start, max(end, e.end), e.target, e.barrier,
                             e.slot, e.stage, e.phase, e.iteration, e.warps))
    return out, bounded


def with_copy_lanes(tasks: Sequence[tuple[str, int, int]], copies: Sequence[Event]) -> tuple:
    """``tasks`` with each copying task's ``<task>.tma`` lane after it (the simulator's order)."""
    from ..analysis.timeline import COPY_LANE
    copying = {e.task for e in copies}
    out = []
    for name, warp, n in tasks:
        out.append((name, warp, n))
        if COPY_LANE.format(task=name) in copying:
            out.append((COPY_LANE.format(task=name), warp, n))
    return tuple(out)


# -- Chrome / Perfetto ---------------------------------------------------------------------------

def chrome_trace(timelines: Timeline | Sequence[Timeline]) -> dict:
    """Chrome / Perfetto trace JSON (``{"traceEvents": [...]}``) of one or more timelines: one
    process per timeline (a block of a measured trace, or a simulated run), one thread per lane;
    steps and blocked time are complete events ("X"), arrivals and phase flips instants ("i").
    Times are microseconds, as the format wants."""
    tls = [timelines] if isinstance(timelines, Timeline) else list(timelines)
    out: list[dict] = []
    for pid, tl in enumerate(tls):
        meta = tl.meta_dict
        label = f"{tl.design} ({tl.source}" + (f", block {meta['block']})" if "block" in meta else ")")
        out.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": label}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        lanes = list(tl.lanes)
        tid = {name: i for i, name in enumerate(lanes)}
        warps = {name: (w, n) for name, w, n in tl.tasks}
        for name, i in tid.items():
            w = warps.get(name)
            title = name if w is None else f"{name} (warp{'s' if w[1] > 1 else ''} {w[0]}"
            title += "" if w is None else (f"..{w[0] + w[1] - 1})" if w[1] > 1 else ")")
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": i, "args": {"name": title}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": i, "args": {"sort_index": i}})
        for e in tl.events:
            if e.task not in tid:
                continue
            args = {k: v for k, v in (("target", e.target), ("barrier", e.barrier), ("slot", e.slot),
                                      ("stage", e.stage), ("phase", e.phase), ("iteration", e.iteration))
                    if v not in ("", -1)}
            ev = {"pid": pid, "tid": tid[e.task], "ts": e.start / 1e3, "cat": e.kind, "args": args}
            if e.kind in (WORK, SYNC, BLOCKED):
                name = f"blocked on {e.barrier}[{e.stage}]" if e.kind == BLOCKED else e.op
                ev.update(ph="X", name=name, dur=max(e.duration, 0.0) / 1e3)
            else:
                ev.update(ph="i", s="t", name=f"{e.op} {e.barrier}".strip())
            out.append(ev)
    first = tls[0] if tls else None
    return {"traceEvents": out, "displayTimeUnit": "ns",
            "otherData": {"design": first.design if first else "", "source": first.source if first else "",
                          "generator": "pgstudio"}}


# -- running (GPU) -------------------------------------------------------------------------------

def _launcher_class():
    from .stream_run import StreamLauncher

    class TracedLauncher(StreamLauncher):
        """A ``Launcher`` for an instrumented kernel: passes (and zeroes) the stamp buffer."""

        def __init__(self, src: KernelSource, **kw: Any) -> None:
            from ._cupy import cupy
            ins = _instrument_info(src)
            if not src.params or src.params[-1].kind != "trace":
                raise PgStudioError(f"kernel {src.entry} has no stamp buffer parameter last")
            super().__init__(dataclasses.replace(src, params=src.params[:-1]), **kw)
            self.full_source = src
            self.buffer = cupy().zeros(int(ins["buffer_bytes"]) // 4, dtype=cupy().uint32)

        def args(self, work: Any) -> tuple:
            return super().args(work) + (self.buffer,)

        def reset(self, work: Any = None) -> None:
            super().reset(work)
            self.buffer.data.memset_async(0, self.buffer.nbytes)

    return TracedLauncher


def traced_launcher(src: KernelSource, **kw: Any):
    """A launcher for the instrumented kernel ``src`` (``blocks_per_sm``, ``budget_ms``, ``grid``)."""
    return _launcher_class()(src, **kw)


def trace(design: Any, *, n: int | None = None, instrument: Instrument | None = None, seed: int | None = None,
          blocks_per_sm: int | None = None, grid: int | None = None, budget_ms: float | None = None,
          tuning: Mapping[str, Any] | None = None, validate: bool = True, executor: Any = None) -> Trace:
    """Run ``design``'s instrumented kernel (verified) and decode its stamps; see the module docstring.

    Streaming designs run over ``n`` elements (default: the design's); GEMM designs over their
    problem's M x N x K on their persistent grid (``n``, ``blocks_per_sm``, ``grid`` and
    ``tuning`` are streaming options), each sampled block recording the window of work units and
    k tiles that ``instrument`` names (``Instrument.tiles`` / ``k_tiles``, by default 2 x 16).
    The run happens in a GPU worker process (``executor``; ``"inline"``: this process), so a
    kernel that traps raises ``KernelFault`` here and this process stays usable.
    """
    from .executor import get_executor
    from .gemm_run import is_gemm
    gemm = is_gemm(design)
    if gemm:
        given = [k for k, v in (("n", n), ("blocks_per_sm", blocks_per_sm), ("grid", grid), ("tuning", tuning)) if v]
        if given:
            raise PgStudioError(f"{', '.join(given)} apply to streaming designs; {design.name!r} is a GEMM design, "
                                "traced at its problem's M x N x K on its persistent grid (set them in its problem)")
    ex = get_executor(executor)
    if ex.runtime == "null":
        raise GpuUnavailable(f"the null runtime launches no kernel, so it has no stamps to trace; {WITHOUT_GPU}")
    if not ex.in_process:
        from .isolated import on_gpu
        kwargs = dict(n=n, instrument=instrument, seed=seed, blocks_per_sm=blocks_per_sm, grid=grid,
                      budget_ms=budget_ms, tuning=dict(tuning) if tuning else None, validate=validate)
        return on_gpu(trace, design, kwargs, executor=ex, what="trace", progress=False)
    from .run import emit_cached
    spec = instrument or Instrument()
    if gemm:
        return _trace_gemm(design, spec, seed, budget_ms, validate)
    from .stream_run import BUDGET_MS, StreamWorkload
    src = emit_cached(design, validate=validate, tuning=dict(tuning or {}), instrument=spec)
    la = traced_launcher(src, blocks_per_sm=blocks_per_sm, budget_ms=budget_ms or BUDGET_MS, grid=grid)
    work = StreamWorkload.make(design, int(n or src.info["num_elements"]), str(src.info["dtype"]), seed)
    la.verify(work)  # warm-up: module load and first touches stay out of the traced launch
    checks = la.verify(work)  # the traced launch, on fresh poisoned outputs and a zeroed buffer
    data = la.buffer.get()
    grid = la.grid(work)
    meta = (("kernel", src.entry), ("n", work.n), ("grid", grid), ("first_sampled_block", max(grid - spec.blocks, 0)),
            ("blocks_per_sm", la.blocks_per_sm), ("verified", all(c.ok for c in checks)))
    return decode(src, data, meta=meta)


def _trace_gemm(design: Any, spec: Instrument, seed: int | None, budget_ms: float | None, validate: bool) -> Trace:
    """A GEMM design's traced launch (the second of two verified ones, as for streaming designs)."""
    from .gemm_run import BUDGET_MS, GemmLauncher, GemmWorkload
    from .run import emit_cached
    src = emit_cached(design, validate=validate, instrument=spec)
    la = GemmLauncher(src, budget_ms or BUDGET_MS)
    m, n, k = src.info["problem"]
    work = GemmWorkload.make(design, src, m, n, k, seed)
    la.verify(work)  # warm-up: module load, tensor maps and first touches stay out of the traced launch
    checks = la.verify(work)
    grid = la.grid(work)
    meta = (("kernel", src.entry), ("problem", (m, n, k)), ("grid", grid), ("first_sampled_block", max(grid - spec.blocks, 0)),
            ("blocks_per_sm", 1), ("verified", all(c.ok for c in checks)))
    return decode(src, la.buffer.get(), meta=meta)


__all__ = ["CLOCKS", "ClockFit", "Lane", "Stamp", "Trace", "chrome_trace", "decode", "landed_copies", "trace",
           "traced_launcher", "with_copy_lanes"]

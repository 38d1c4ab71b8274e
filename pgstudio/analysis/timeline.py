"""Timeline: what each task did over time, simulated or measured -- one type for both.

An ``Event`` is an interval on one task's lane: work (load / store / mma / read), a barrier
operation (acquire / commit / wait / release), time spent ``blocked`` on a barrier, or an
instant (``arrive``, ``phase_flip``: start == end).  Times are nanoseconds from kernel start.
The simulator (``simulate.py``) and the GPU's instrumented builds both produce it; the timeline
picture draws it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import Iterable

__all__ = ["WORK", "SYNC", "BLOCKED", "ARRIVE", "PHASE_FLIP", "KINDS", "COPY_LANE", "Event", "Timeline", "is_copy_lane",
           "role_of", "task_of"]

#: Event kinds.
WORK, SYNC, BLOCKED, ARRIVE, PHASE_FLIP = "work", "sync", "blocked", "arrive", "phase_flip"
KINDS = (WORK, SYNC, BLOCKED, ARRIVE, PHASE_FLIP)


#: The lane of a task's bulk copies, each from its issue to its landing (simulated and measured).
COPY_LANE = "{task}.tma"


def is_copy_lane(lane: str) -> bool:
    """Whether ``lane`` is a task's copy lane (``COPY_LANE``) rather than the task's own."""
    return lane.endswith(COPY_LANE.format(task=""))


def task_of(lane: str) -> str:
    """The task a lane belongs to: the lane itself, or the task whose copies a copy lane shows."""
    suffix = COPY_LANE.format(task="")
    return lane[:-len(suffix)] if lane.endswith(suffix) else lane


def role_of(barrier: str) -> str:
    """"full" or "empty" from a barrier set name or label ("ab.shared_empty" -> "empty"): what a
    task blocked on it waits for -- data (full) or a free stage (empty)."""
    label = barrier.rsplit(".", 1)[-1]
    return "empty" if "empty" in label else "full"


@dataclass(frozen=True)
class Event:
    task: str
    op: str  # schedule op (acquire, load, ...), or "blocked" / "arrive" / "phase_flip"
    kind: str  # one of KINDS
    start: float  # ns
    end: float  # ns
    target: str = ""  # resource or group the step is on
    barrier: str = ""  # barrier set name (BarrierSet.name), "" when none
    slot: int = -1  # mbarrier slot index in the layout, -1 when none
    stage: int = -1
    phase: int = -1  # parity waited for / completed
    iteration: int = -1  # iteration of the task's domain loop (flattened for nested loops)
    warps: tuple[int, int] = (0, 1)  # (first warp, number of warps) of the task

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Timeline:
    """Events of one run of a design, with the lane order (tasks) and where they came from."""

    design: str
    events: tuple[Event, ...]
    tasks: tuple[tuple[str, int, int], ...] = ()  # (name, warp_idx, num_warps) in lane order
    source: str = "simulated"  # or "measured"
    meta: tuple[tuple[str, object], ...] = field(default=())

    @property
    def meta_dict(self) -> dict:
        """``meta`` as a dict (a simulated run puts ``status``, ``iterations``, ``stuck``, ``cost`` there)."""
        return dict(self.meta)

    @property
    def lanes(self) -> tuple[str, ...]:
        return tuple(t[0] for t in self.tasks) or tuple(dict.fromkeys(e.task for e in self.events))

    def lane(self, task: str) -> tuple[Event, ...]:
        return self.by_lane().get(task, ())

    def by_lane(self) -> dict[str, tuple[Event, ...]]:
        """Every lane's events, grouped in one pass and kept (a timeline is immutable; asking
        each lane to scan every event made the picture of a large design quadratic)."""
        lanes = self.__dict__.get("_by_lane")
        if lanes is None:
            grouped: dict[str, list[Event]] = {}
            for e in self.events:
                grouped.setdefault(e.task, []).append(e)
            lanes = {k: tuple(v) for k, v in grouped.items()}
            object.__setattr__(self, "_by_lane", lanes)
        return lanes

    def blocked(self, task: str | None = None) -> tuple[Event, ...]:
        return tuple(e for e in self.events if e.kind == BLOCKED and (task is None or e.task == task))

    @property
    def end(self) -> float:
        return max((e.end for e in self.events), default=0.0)

    @property
    def iterations(self) -> int:
        return 1 + max((e.iteration for e in self.events), default=-1)

    def window(self, first: int, last: int) -> "Timeline":
        """Only the events of iterations first..last (instants and blocks included)."""
        keep = tuple(e for e in self.events if first <= e.iteration <= last)
        return Timeline(self.design, keep, self.tasks, self.source, self.meta)

    def issued_ahead(self, producer: str, consumer: str, stages: int, work: str = "mma") -> list[int]:
        """Per iteration i of ``consumer``'s ``work`` (its MMAs): how many loads ``producer`` had
        issued when that work began, minus i -- how far the loads run ahead (at most ``stages``).
        A measured GEMM timeline records a window of the first work unit's k tiles (meta
        ``window``); loads past it are not recorded, so its last ``stages`` k tiles are left out."""
        window = (self.meta_dict.get("window") or (None, None))[1] or self.iterations
        issues = sorted(e.start for e in self.lane(producer) if e.op == "load" and e.iteration < window)
        starts = sorted((e.iteration, e.start) for e in self.lane(consumer)
                        if e.op == work and e.iteration < window - stages)
        return [sum(t < start for t in issues) - i for i, start in starts]

    def period(self, task: str | None = None) -> float:
        """Steady-state time per iteration: the median gap between successive iteration starts of
        ``task`` (default: the lane with the most iterations), skipping the first quarter (fill)."""
        cache = self.__dict__.get("_periods", {})  # per task asked for (not the method's name: it shadowed it)
        period = cache.get(task)
        if period is None:
            period = self._period(task)
            object.__setattr__(self, "_periods", {**cache, task: period})
        return period

    def _period(self, task: str | None) -> float:
        lanes = [task] if task else list(self.lanes)
        best: list[tuple[int, float]] = []
        for name in lanes:
            starts: dict[int, float] = {}
            for e in self.lane(name):
                if e.iteration >= 0 and e.kind in (WORK, SYNC, BLOCKED):
                    starts[e.iteration] = min(starts.get(e.iteration, e.start), e.start)
            seq = sorted(starts.items())
            if len(seq) > len(best):
                best = seq
        # successive iterations only: a measured GEMM timeline records a window of each work
        # unit's k tiles (``Instrument.k_tiles``), and the jump between windows is no period
        gaps = [b - a for (i, a), (j, b) in zip(best, best[1:]) if j == i + 1]
        if not gaps:
            return 0.0
        return median(gaps[len(gaps) // 4:])

    def summary(self) -> str:
        blocked = sum(e.duration for e in self.blocked())
        return (f"timeline of {self.design!r} ({self.source}): {len(self.lanes)} lanes, {self.iterations} iterations, "
                f"{self.end:.0f} ns, period {self.period():.1f} ns, {blocked:.0f} ns blocked in all")

    def copy_latency(self, lane: str, first_iteration: int = 0) -> float | None:
        """Median time of the copies of copy lane ``lane`` from their issue to their landing (a
        measured landing is stamped at the wait that saw it), from ``first_iteration`` on; None
        without any."""
        copies = [e.duration for e in self.lane(lane) if e.kind == WORK and e.iteration >= first_iteration]
        return median(copies) if copies else None

    def waiting(self) -> str:
        """Where the time goes, a line per lane: the share of each task's span it spent blocked
        on data (full barriers) and on free stages (empty barriers), and each copy lane's median
        issue-to-landing time -- what to look at first when a pipeline is slower than its
        compute: a consumer blocked on full with copies slower than a k step wants more bytes in
        flight; a producer blocked on empty wants its consumer faster."""
        rows = []
        for lane in self.lanes:
            events = self.lane(lane)
            if not events:
                continue
            if is_copy_lane(lane):
                latency = self.copy_latency(lane)
                if latency is not None:
                    n = sum(1 for e in events if e.kind == WORK)
                    rows.append(f"  {lane}: {n} copies land {latency:.0f} ns after issue (median)")
                continue
            span = max(e.end for e in events) - min(e.start for e in events)
            if span <= 0:
                continue
            on = {"full": 0.0, "empty": 0.0}
            for e in events:
                if e.kind == BLOCKED:
                    on[role_of(e.barrier)] += e.duration
            rows.append(f"  {lane}: blocked on full {100 * on['full'] / span:.0f} %, "
                        f"on empty {100 * on['empty'] / span:.0f} % of {span:.0f} ns")
        return "\n".join(rows)

    def table(self, limit: int = 60) -> str:
        rows = [f"{'task':<12} {'op':<11} {'target':<14} {'barrier':<18} {'st':>2} {'ph':>2} {'it':>3} {'start':>9} {'end':>9}"]
        for e in sorted(self.events, key=lambda e: (e.start, e.task))[:limit]:
            rows.append(f"{e.task:<12} {e.op:<11} {e.target:<14} {e.barrier:<18} {e.stage:>2} {e.phase:>2} "
                        f"{e.iteration:>3} {e.start:>9.1f} {e.end:>9.1f}")
        if len(self.events) > limit:
            rows.append(f"... {len(self.events) - limit} more events")
        return "\n".join(rows)

    def __str__(self) -> str:
        return self.summary()

    @staticmethod
    def from_events(design: str, events: Iterable[Event], tasks=(), source: str = "simulated", meta=()) -> "Timeline":
        return Timeline(design, tuple(sorted(events, key=lambda e: (e.start, e.end))), tuple(tasks), source, tuple(meta))

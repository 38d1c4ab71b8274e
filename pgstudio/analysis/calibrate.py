"""Calibrate the simulator against measured runs: compare steady-state periods, fit the cost model.

A measured timeline (``runtime.trace``) and a simulated one (``simulate.py``) of the same design
are the same type, so they are compared by the same statistics (``timeline_stats``):

=================  ==================================================================
``period``         ``Timeline.period()``: steady-state time per iteration
``fill``           end of the first ``wait`` of iteration 0: the first data to arrive (weighs
                   little: on a GPU every block's first copies queue at once)
``<op>/<lane>``    median time of a step of a task in the steady state: work (``load``: a
                   bulk-copy issue or thread copies; ``store``; ``read``) and barrier
                   steps that did not block (acquire, wait, commit, release), where the
                   measured build stamps that step
``copy/<t>.tma``   median time of a bulk copy of task ``t`` in the steady state, from its
                   issue to its landing -- the load latency under load, which decides how
                   many stages a pipeline needs (measured: to the wait that saw it land, an
                   upper bound where the consumer is busy, so it weighs half)
=================  ==================================================================

Not every statistic means the same on both sides, so ``WEIGHTS`` says how much each counts: a
thread's store to global memory is fire-and-forget on the GPU (the stamp covers its issue) while
the model charges the task for the transfer, so stores and reads weigh nothing; the fill weighs
little (on a GPU every block's first copies queue at once).

``fit(runs)`` adjusts the cost model's constants (``FITTED``: bandwidth share, copy latency,
issue cost, barrier cost, thread rate) so that the simulated statistics of every run match the
measured ones: a deterministic coordinate search over log-scaled values (``log_search``, each
kept within ``SPAN`` of its start) minimising the weighted squared log ratios (the period weighs
most).  Everything here is the standard library; the simulator runs a few iterations per try, so
a fit takes seconds.

Measured runs are taken with one block per SM, because that is what the cost model assumes
(every SM runs one such block and gets 1/132 of the GPU's bandwidth).

``H200_FITTED`` keeps the constants fitted on an H200 (``H200_OBSERVED`` holds the measured
statistics they were fitted to); ``H200`` (``cost.py``) stays the datasheet model.

Whole-kernel times are calibrated too (``fit_machine``): the kernel-time model of ``predict.py``
reads a ``machine.Machine``, and ``fit_machine`` adjusts its ``FITTABLE`` constants so the
predicted times of a recording's runs (``Workload`` + measured ms, and measured ratios between two
variants) match (``kernel_fit.py``): the same coordinate search over log-scaled values, minimising squared log
errors.  ``calibrate(recording)`` reads a recording file (``benchmarks/predict.py --record``),
fits, and with ``store=FOLDER`` keeps the fit there under the recording's device kind
(``fitted.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median
from typing import Iterable, Mapping, Sequence

from ..model.design import Design
from .cost import H200, CostModel
from .kernel_fit import KernelFit, Recording, calibrate, fit_machine, read_recording
from .log_search import STEPS, log_search
from .simulate import simulate
from .timeline import BLOCKED, SYNC, WORK, Timeline, is_copy_lane

#: Constants ``fit`` adjusts (the others keep their datasheet values).
FITTED = ("dram_bytes_per_ns", "bulk_latency_ns", "issue_ns", "barrier_ns", "thread_bytes_per_ns")
#: Weight of each statistic in the fit's objective (by the part before "/"); others weigh SYNC_WEIGHT.
WEIGHTS = {"period": 4.0, "fill": 0.25, "load": 1.0, "mma": 1.0, "copy": 0.5, "store": 0.0, "read": 0.0}
SYNC_WEIGHT = 0.25
#: Iterations simulated per design when comparing and fitting.
SIM_ITERATIONS = 24
#: How far ``fit`` may move a constant from its start, either way (a factor).
SPAN = 50.0

#: What an H200 SXM (132 SMs, SM clock ~1.97 GHz, global timer step 32 ns) measured: the
#: ``timeline_stats`` (ns) of block 0 of each canonical streaming design at its defaults (fp32,
#: 8 KiB x 4 stages), traced by ``benchmarks/instrument.py`` with 2^26 elements and one block per
#: SM.  Kept as data so the fit below can be checked and redone without a GPU:
#: ``fit_stats([(examples.example(n), s) for n, s in H200_OBSERVED.items()])``.
H200_OBSERVED: dict[str, dict[str, float]] = {
    "merge_copy": {"period": 659, "fill": 1696, "load/load_a": 67, "load/load_b": 66, "store/store": 103,
                   "wait/store": 63, "release/store": 17},
    "fork_copy": {"period": 612, "fill": 1568, "load/load": 68, "acquire/load": 63, "store/copy_out": 119,
                  "store/relu_out": 124, "wait/copy_out": 150, "wait/relu_out": 150, "release/copy_out": 18,
                  "release/relu_out": 18},
    "fused_merge_copy": {"period": 576, "fill": 2063, "load/load_a": 76, "load/load_b": 66, "store/store": 119,
                         "wait/store": 144, "release/store": 39},
}
#: The constants ``fit_stats`` finds from the datasheet model for ``H200_OBSERVED`` (the sampled
#: blocks moved ~44 B/ns each, more than a 1/132 share of the ~4.1 TB/s the whole kernel reaches;
#: the copy latency includes queueing behind other blocks' copies).
H200_FITTED_VALUES: dict[str, float] = {"dram_bytes_per_ns": 44.14, "bulk_latency_ns": 1662.0, "issue_ns": 67.23,
                                        "barrier_ns": 29.33, "thread_bytes_per_ns": 1.98}
#: The fitted H200 model (the datasheet model where nothing was fitted).
H200_FITTED = H200.replace(**H200_FITTED_VALUES)


def timeline_stats(tl: Timeline, skip: float = 0.25) -> dict[str, float]:
    """The statistics of the module docstring (iterations in the first ``skip`` fraction are fill)."""
    out: dict[str, float] = {}
    period = tl.period()
    if period > 0:
        out["period"] = period
    first = [e.end for e in tl.events if e.op == "wait" and e.iteration == 0 and e.kind == SYNC]
    if first:
        out["fill"] = min(first) - min((e.start for e in tl.events), default=0.0)
    steady = int(tl.iterations * skip)
    for lane in tl.lanes:
        if is_copy_lane(lane):  # a copy's issue to its landing: the load latency under load
            latency = tl.copy_latency(lane, steady)
            if latency is not None:
                out[f"copy/{lane}"] = latency
            continue
        ops: dict[str, list[float]] = {}
        blocked = {(e.iteration, e.target) for e in tl.lane(lane) if e.kind == BLOCKED}
        for e in tl.lane(lane):
            if e.iteration < steady:
                continue
            if e.kind == WORK or (e.kind == SYNC and (e.iteration, e.target) not in blocked):
                ops.setdefault(e.op, []).append(e.duration)
        for op, durs in ops.items():
            out[f"{op}/{lane}"] = median(durs)
    return out


def _weight(key: str) -> float:
    return WEIGHTS.get(key.split("/")[0], SYNC_WEIGHT)


def mismatch(simulated: Mapping[str, float], measured: Mapping[str, float]) -> float:
    """Weighted sum of squared log ratios over the statistics both sides have (positive ones)."""
    total = 0.0
    for key, m in measured.items():
        s = simulated.get(key)
        if s is None or s <= 0 or m <= 0:
            continue
        total += _weight(key) * math.log(s / m) ** 2
    return total


@dataclass(frozen=True)
class Comparison:
    """Simulated vs measured steady-state period of one design (ns per iteration)."""

    design: str
    simulated: float
    measured: float
    fitted: float | None = None  # simulated with the fitted model

    @staticmethod
    def _pct(sim: float | None, meas: float) -> str:
        return "n/a" if sim is None or meas <= 0 else f"{100.0 * (sim - meas) / meas:+.1f}%"

    @property
    def difference(self) -> float:
        """(simulated - measured) / measured."""
        return (self.simulated - self.measured) / self.measured if self.measured > 0 else float("nan")


def compare(design: Design, measured: Timeline, cost: CostModel = H200, *, fitted: CostModel | None = None,
            iterations: int = SIM_ITERATIONS) -> Comparison:
    """Steady-state periods of ``design`` simulated with ``cost`` (and ``fitted``) against ``measured``."""
    sim = simulate(design, iterations, cost=cost).period()
    fit_p = simulate(design, iterations, cost=fitted).period() if fitted is not None else None
    return Comparison(design.name, sim, measured.period(), fit_p)


@dataclass(frozen=True)
class CalibrationReport:
    """One row per design; ``table()`` is what ``benchmarks/instrument.py`` prints."""

    rows: tuple[Comparison, ...]
    note: str = ""

    def table(self) -> str:
        head = ("design", "simulated ns", "measured ns", "difference", "fitted ns", "difference")
        lines = [head] + [(c.design, f"{c.simulated:.1f}", f"{c.measured:.1f}", Comparison._pct(c.simulated, c.measured),
                           "-" if c.fitted is None else f"{c.fitted:.1f}", Comparison._pct(c.fitted, c.measured))
                          for c in self.rows]
        widths = [max(len(ln[i]) for ln in lines) for i in range(len(head))]
        out = ["  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(ln, widths))) for ln in lines]
        out.insert(1, "  ".join("-" * w for w in widths))
        out.insert(0, "steady-state period per iteration: simulated (datasheet model) vs measured vs simulated (fitted)")
        if self.note:
            out.append(self.note)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()


@dataclass(frozen=True)
class Fit:
    """The fitted model, and the objective before and after."""

    cost: CostModel
    start: CostModel
    before: float
    after: float
    evaluations: int

    def changes(self) -> dict[str, tuple[float, float]]:
        """Constant -> (start value, fitted value), for the constants that moved."""
        return {k: (getattr(self.start, k), getattr(self.cost, k)) for k in FITTED
                if getattr(self.start, k) != getattr(self.cost, k)}

    def values(self) -> dict[str, float]:
        """The fitted constants, rounded to 4 significant digits (what ``H200_FITTED_VALUES`` keeps)."""
        return {k: float(f"{getattr(self.cost, k):.4g}") for k in FITTED}

    def __str__(self) -> str:
        rows = [f"{k:<20} {a:>10.4g} -> {b:>10.4g}" for k, (a, b) in self.changes().items()]
        return (f"fit: objective {self.before:.4f} -> {self.after:.4f} in {self.evaluations} simulations\n"
                + "\n".join(rows))


def fit(runs: Iterable[tuple[Design, Timeline]], start: CostModel = H200, *, params: Sequence[str] = FITTED,
        iterations: int = SIM_ITERATIONS, rounds: int = 4) -> Fit:
    """Fit ``params`` of the cost model so simulated statistics match the measured ``runs``
    (pairs of a design and its measured timeline); see the module docstring."""
    runs = list(runs)
    if not runs:
        raise ValueError("fit needs at least one (design, measured timeline) pair")
    return fit_stats([(d, timeline_stats(tl)) for d, tl in runs], start, params=params, iterations=iterations,
                     rounds=rounds)


def fit_stats(observations: Iterable[tuple[Design, Mapping[str, float]]], start: CostModel = H200, *,
              params: Sequence[str] = FITTED, iterations: int = SIM_ITERATIONS, rounds: int = 4) -> Fit:
    """``fit`` from measured statistics (``timeline_stats`` of measured timelines, or kept data
    such as ``H200_OBSERVED``) instead of the timelines themselves."""
    observations = list(observations)
    if not observations:
        raise ValueError("fit needs at least one (design, measured statistics) pair")
    unknown = [p for p in params if p not in FITTED]
    if unknown:
        raise ValueError(f"cannot fit {', '.join(unknown)}; fittable constants: {', '.join(FITTED)}")
    by_design: dict[Design, list[Mapping[str, float]]] = {}
    for d, stats in observations:
        by_design.setdefault(d, []).append(stats)
    evals = 0

    def objective(cost: CostModel) -> float:
        nonlocal evals
        total = 0.0
        for design, observed in by_design.items():  # one simulation per design, however many runs
            evals += 1
            sim = timeline_stats(simulate(design, iterations, cost=cost))
            total += sum(mismatch(sim, stats) for stats in observed)
        return total

    best, first, best_val = log_search(start, params, objective, STEPS[:max(1, rounds + 2)],
                                       lambda _, value, at_start: 1 / SPAN <= value / at_start <= SPAN)
    return Fit(best, start, first, best_val, evals)


def calibration_report(runs: Iterable[tuple[Design, Timeline]], cost: CostModel = H200,
                       fitted: CostModel | None = None, note: str = "") -> CalibrationReport:
    """``compare`` for every run (one row per design: the median over its measured timelines)."""
    by_design: dict[str, list[tuple[Design, Timeline]]] = {}
    for d, tl in runs:
        by_design.setdefault(d.name, []).append((d, tl))
    rows = []
    for pairs in by_design.values():
        cs = [compare(d, tl, cost, fitted=fitted) for d, tl in pairs]
        meas = median(c.measured for c in cs)
        rows.append(Comparison(cs[0].design, cs[0].simulated, meas, cs[0].fitted))
    return CalibrationReport(tuple(rows), note)


__all__ = ["KernelFit", "Recording", "calibrate", "fit_machine", "read_recording",
           "CalibrationReport", "Comparison", "FITTED", "Fit", "H200_FITTED", "H200_FITTED_VALUES", "H200_OBSERVED",
           "calibration_report", "compare", "fit", "fit_stats", "mismatch", "timeline_stats"]

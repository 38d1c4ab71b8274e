"""Fit the kernel-time model's machine constants to measured kernel times.

A *recording* (JSON, ``RECORDING_SCHEMA``) is what one device measured: ``device``,
``device_kind`` (the tuning cache's key: name, SMs, compute capability), ``date``, ``command``,
``runs`` -- each ``{"family", "label", "workload": {...}, "ms"}``, a verified run's median kernel
time of one variant (``workload.Workload.as_dict``) -- and optionally ``ratios`` -- each
``{"label", "slow": {...}, "fast": {...}, "ratio"}``, where only how much slower one variant ran
than another is known.  ``benchmarks/predict.py --record PATH`` writes one from a sweep.

``fit_machine`` adjusts ``machine.FITTABLE`` by a deterministic coordinate search over
log-scaled values (``log_search``; each kept within ``SPAN`` of its start, efficiencies at most 1), minimising
the squared log error of every run plus ``RATIO_WEIGHT`` x that of every ratio, plus
``PRIOR_WEIGHT`` x the squared log distance of every constant from its start: a constant the
runs cannot tell apart from another (launch time and bandwidth, when every stream has the same
length) stays near its datasheet value instead of drifting to an absurd one.  A fit of a few
hundred runs takes well under a second: the model is a formula, not a simulation.
Standard library only.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any, Sequence

from .fitted import calibration_file, save_machine
from .log_search import STEPS, log_search
from .machine import FITTABLE, H200_DATASHEET, Machine
from .predict import predict_workload
from .workload import Workload

RECORDING_SCHEMA = "pgstudio.kernel-times"
#: How far (a factor either way) a constant may move from its start.
SPAN = 8.0
#: Constants that are fractions of a peak.
AT_MOST_ONE = ("hbm_efficiency", "tensor_efficiency")
#: Weight of a measured ratio against one measured time.
RATIO_WEIGHT = 2.0
#: Weight of each constant's squared log distance from its start (a weak prior).
PRIOR_WEIGHT = 0.01


@dataclass(frozen=True)
class Run:
    family: str
    label: str
    workload: Workload
    ms: float


@dataclass(frozen=True)
class Ratio:
    label: str
    slow: Workload
    fast: Workload
    ratio: float


@dataclass(frozen=True)
class Recording:
    device: str
    device_kind: str
    date: str
    command: str
    runs: tuple[Run, ...]
    ratios: tuple[Ratio, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"schema": RECORDING_SCHEMA, "device": self.device, "device_kind": self.device_kind, "date": self.date,
                "command": self.command,
                "runs": [{"family": r.family, "label": r.label, "workload": r.workload.as_dict(), "ms": r.ms}
                         for r in self.runs],
                "ratios": [{"label": q.label, "slow": q.slow.as_dict(), "fast": q.fast.as_dict(), "ratio": q.ratio}
                           for q in self.ratios]}

    def write(self, path: str | os.PathLike) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(self.as_dict(), indent=1) + "\n")
        return p


def _positive(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
        raise ValueError(f"{where}: expected a positive number, got {value!r}")
    return float(value)


def read_recording(path: str | os.PathLike) -> Recording:
    """The recording in ``path``; ``ValueError`` naming the file and the entry when it is not one."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{p}: not a readable recording of kernel times ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != RECORDING_SCHEMA or not isinstance(doc.get("runs"), list):
        raise ValueError(f"{p}: expected a JSON object with schema {RECORDING_SCHEMA!r} and a list 'runs'")
    runs, ratios = [], []
    try:
        for i, r in enumerate(doc["runs"]):
            runs.append(Run(str(r.get("family", "")), str(r.get("label", "")), Workload.from_dict(r["workload"]),
                            _positive(r.get("ms"), f"{p}: runs[{i}].ms")))
        for i, q in enumerate(doc.get("ratios") or ()):
            ratios.append(Ratio(str(q.get("label", "")), Workload.from_dict(q["slow"]), Workload.from_dict(q["fast"]),
                                _positive(q.get("ratio"), f"{p}: ratios[{i}].ratio")))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{p}: a run or ratio lacks a field or has the wrong type ({exc})") from None
    return Recording(str(doc.get("device", "")), str(doc.get("device_kind", "")), str(doc.get("date", "")),
                     str(doc.get("command", "")), tuple(runs), tuple(ratios))


def _ranks(xs: Sequence[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for t in range(i, j + 1):  # ties share their average rank
            ranks[order[t]] = (i + j) / 2.0
        i = j + 1
    return ranks


def rank_correlation(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation of two equally long sequences (ties: average ranks); nan when
    fewer than two values or either side is constant."""
    if len(a) != len(b):
        raise ValueError(f"rank_correlation of {len(a)} and {len(b)} values: give equally many")
    if len(a) < 2:
        return float("nan")
    ra, rb = _ranks(a), _ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va, vb = sum((x - ma) ** 2 for x in ra), sum((y - mb) ** 2 for y in rb)
    return cov / math.sqrt(va * vb) if va > 0 and vb > 0 else float("nan")


def errors(machine: Machine, runs: Sequence[Run]) -> list[float]:
    """(predicted - measured) / measured of every run."""
    return [predict_workload(r.workload, machine).ms / r.ms - 1.0 for r in runs]


def objective(machine: Machine, runs: Sequence[Run], ratios: Sequence[Ratio] = (),
              start: Machine | None = None) -> float:
    """What the fit minimises (module docstring); ``start`` None: no prior."""
    total = 0.0
    if start is not None:
        total += PRIOR_WEIGHT * sum(math.log(getattr(machine, k) / getattr(start, k)) ** 2 for k in FITTABLE)
    total += sum(math.log(predict_workload(r.workload, machine).ms / r.ms) ** 2 for r in runs)
    for q in ratios:
        got = predict_workload(q.slow, machine).ms / predict_workload(q.fast, machine).ms
        total += RATIO_WEIGHT * math.log(got / q.ratio) ** 2
    return total


@dataclass(frozen=True)
class KernelFit:
    """A fitted machine, where it started, and how well it matches the runs."""

    machine: Machine
    start: Machine
    before: float
    after: float
    runs: int
    ratios: int
    median_error: float  # median |predicted - measured| / measured after the fit

    def summary(self) -> dict[str, Any]:
        return {"objective_before": round(self.before, 5), "objective_after": round(self.after, 5), "runs": self.runs,
                "ratios": self.ratios, "median_abs_error": round(self.median_error, 4)}

    def __str__(self) -> str:
        moved = [f"  {k:<20} {getattr(self.start, k):>10.4g} -> {getattr(self.machine, k):>10.4g}" for k in FITTABLE
                 if getattr(self.start, k) != getattr(self.machine, k)]
        return (f"fit of {self.machine.name} to {self.runs} run(s) and {self.ratios} ratio(s): objective "
                f"{self.before:.4f} -> {self.after:.4f}, median error {100 * self.median_error:.1f}%\n" + "\n".join(moved))


def _allowed(name: str, value: float, start: float) -> bool:
    if name in AT_MOST_ONE and value > 1.0:
        return False
    return 1 / SPAN <= value / start <= SPAN


def fit_machine(runs: Sequence[Run], ratios: Sequence[Ratio] = (), start: Machine = H200_DATASHEET, *,
                params: Sequence[str] = FITTABLE, fitted_on: str = "") -> KernelFit:
    """Fit ``params`` of ``start`` to ``runs`` and ``ratios`` (module docstring)."""
    runs, ratios = list(runs), list(ratios)
    if not runs:
        raise ValueError("fit_machine needs at least one measured run")
    unknown = [p for p in params if p not in FITTABLE]
    if unknown:
        raise ValueError(f"cannot fit {', '.join(unknown)}; fittable constants: {', '.join(FITTABLE)}")
    best, first, best_val = log_search(start, params, lambda m: objective(m, runs, ratios, start), STEPS, _allowed)
    best = best.replace(fitted_on=fitted_on or best.fitted_on)
    err = median(abs(e) for e in errors(best, runs))
    return KernelFit(best, start, first, best_val, len(runs), len(ratios), err)


def calibrate(recording: str | os.PathLike | Recording, *, start: Machine = H200_DATASHEET,
              store: str | os.PathLike | None = None) -> KernelFit:
    """Fit the machine constants to a recording (a path or a ``Recording``); with ``store`` (a
    folder: the runtime passes ``<cache>/calibration``) keep the fit there for the recording's
    device kind, where ``fitted.default_machine`` finds it."""
    rec = recording if isinstance(recording, Recording) else read_recording(recording)
    what = f"{rec.device or 'an unnamed device'}, {rec.date[:10] or 'undated'}, {len(rec.runs)} measured kernels"
    fit = fit_machine(rec.runs, rec.ratios, start.replace(name=rec.device or start.name), fitted_on=what)
    if store is not None:
        save_machine(calibration_file(store, rec.device_kind or rec.device), fit.machine, rec.device_kind,
                     fit.summary() | {"command": rec.command})
    return fit


__all__ = ["KernelFit", "RECORDING_SCHEMA", "Ratio", "Recording", "Run", "calibrate", "errors", "fit_machine",
           "objective", "rank_correlation", "read_recording"]

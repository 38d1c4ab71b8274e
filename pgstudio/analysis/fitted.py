"""Fitted machine constants per device: the files, and the machine a prediction uses by default.

A *fitted file* is JSON: ``schema`` (``FITTED_SCHEMA``), ``device`` (the GPU's name),
``device_kind`` (name, SMs, compute capability: the key the tuning cache uses), ``fitted_on``
(date and what was measured), ``constants`` (the ``machine.FITTABLE`` values) and ``fit`` (the
objective before / after, the number of measurements).  ``calibrate.fit_machine`` writes one.

Where they live: the package ships ``analysis/fitted/h200.json``, fitted from the H200 recordings
beside it that it names under ``recordings`` (``h200_repo_figures.json``: the H200 kernel times
the repository quotes; a sweep recorded by ``benchmarks/predict.py --record`` joins it), so a
user without a GPU gets the calibrated H200 model by default; a user's own fits live beside the tuning cache, one file per device kind
(``<cache>/calibration/<device kind>.json``; the runtime passes that folder, since the analysis
layer does not know where the cache is).  ``default_machine(device_kind, folder)`` takes the
user's fit for that device when there is one, else the shipped H200 fit.  Standard library only.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from .machine import FITTABLE, H200_DATASHEET, Machine

FITTED_SCHEMA = "pgstudio.fitted-machine"
#: The shipped fits, by file name.
SHIPPED = Path(__file__).with_name("fitted")
H200_FILE = SHIPPED / "h200.json"
#: The H200 figures the repository quotes, as a recording (``benchmarks/predict.py --repo-figures``).
H200_REPO_FIGURES = SHIPPED / "h200_repo_figures.json"


def _safe_name(device_kind: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in device_kind) or "device"


def calibration_file(folder: str | os.PathLike, device_kind: str) -> Path:
    """Where a user's fit for ``device_kind`` lives inside ``folder``."""
    return Path(folder) / f"{_safe_name(device_kind)}.json"


def machine_from(doc: Any, where: str = "fitted file") -> Machine:
    """The machine a fitted document describes (the datasheet H200 for every constant it leaves out)."""
    if not isinstance(doc, dict) or doc.get("schema") != FITTED_SCHEMA or not isinstance(doc.get("constants"), dict):
        raise ValueError(f"{where}: expected a JSON object with schema {FITTED_SCHEMA!r} and a 'constants' object")
    values = doc["constants"]
    unknown = sorted(set(values) - set(FITTABLE))
    if unknown:
        raise ValueError(f"{where}: unknown constant(s) {', '.join(unknown)}; fittable: {', '.join(FITTABLE)}")
    bad = [k for k, v in values.items() if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0]
    if bad:
        raise ValueError(f"{where}: constant(s) {', '.join(bad)} must be positive numbers")
    return H200_DATASHEET.replace(name=str(doc.get("device") or H200_DATASHEET.name),
                                  fitted_on=str(doc.get("fitted_on") or "an unnamed run"),
                                  **{k: float(v) for k, v in values.items()})


def load_machine(path: str | os.PathLike) -> Machine:
    """The machine of one fitted file; ``ValueError`` naming the file when it is not one."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{p}: not a readable fitted-machine file ({exc})") from None
    return machine_from(doc, str(p))


def fitted_document(machine: Machine, device_kind: str, fit: dict[str, Any],
                    recordings: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON document of a fit (what ``save_machine`` writes); ``recordings``: the files (beside
    it) it was fitted to."""
    return {"schema": FITTED_SCHEMA, "device": machine.name, "device_kind": device_kind,
            "fitted_on": machine.fitted_on, "constants": {k: float(f"{v:.5g}") for k, v in machine.constants().items()},
            "fit": fit, "recordings": list(recordings)}


def recordings_of(path: str | os.PathLike) -> tuple[Path, ...]:
    """The recordings a fitted file names, as paths beside it."""
    p = Path(path)
    names = json.loads(p.read_text()).get("recordings") or ()
    return tuple(p.parent / str(n) for n in names)


def save_machine(path: str | os.PathLike, machine: Machine, device_kind: str, fit: dict[str, Any],
                 recordings: tuple[str, ...] = ()) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(json.dumps(fitted_document(machine, device_kind, fit, recordings), indent=1) + "\n")
    tmp.replace(p)
    return p


@lru_cache(maxsize=1)
def shipped_h200() -> Machine:
    """The H200 fit shipped with pgstudio (the datasheet model if the file is missing)."""
    if not H200_FILE.is_file():
        return H200_DATASHEET
    return load_machine(H200_FILE)


def default_machine(device_kind: str | None = None, folder: str | os.PathLike | None = None) -> Machine:
    """The user's fit for ``device_kind`` in ``folder`` when there is a readable one, else the
    shipped H200 fit.  A damaged user file is ignored (the shipped fit stands in), never fatal."""
    if device_kind and folder is not None:
        p = calibration_file(folder, device_kind)
        if p.is_file():
            try:
                return load_machine(p)
            except ValueError:
                pass
    return shipped_h200()


__all__ = ["FITTED_SCHEMA", "H200_FILE", "H200_REPO_FIGURES", "calibration_file", "default_machine", "fitted_document",
           "load_machine", "machine_from", "recordings_of", "save_machine", "shipped_h200"]

"""Recorded GPU results, for pages read or run without a GPU.

A notebook cell that benchmarks a design on a GPU shows, where there is none, the table a GPU run
recorded -- labelled with the device, the date and the command that made it -- or says plainly
that no recording exists yet.  Nothing here invents a number: a recording is written only by
``record`` from a ``benchmark`` result, which verified every variant against a reference on fresh
random data with a poisoned output before timing it (``runtime.bench``).

    python benchmarks/notebooks.py --record     # on a GPU: writes notebooks/recorded/<design>.json

A recording is one JSON file per design: ``schema``, ``design``, ``device``, ``date`` (UTC, ISO
8601), ``command``, ``pgstudio`` (version) and ``table`` (the benchmark's text table).  Reading
one needs the standard library only.
"""

from __future__ import annotations

import datetime
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = "pgstudio.recorded-benchmark"
#: Where notebooks look, relative to their own folder.
FOLDER = "recorded"
#: The command that writes the recordings the notebooks show, and where (from the repository root).
COMMAND = "python benchmarks/notebooks.py --record"
HOME = "notebooks/recorded"


@dataclass(frozen=True)
class Recording:
    design: str
    device: str
    date: str
    command: str
    pgstudio: str
    table: str

    def label(self) -> str:
        """'recorded on an NVIDIA H200 on 2026-12-02 (python benchmarks/notebooks.py --record)'."""
        article = "an" if self.device[:1].upper() in "AEIOUN" else "a"  # "an NVIDIA", "a Tesla"
        return f"recorded on {article} {self.device} on {self.date[:10]} ({self.command}, pgstudio {self.pgstudio})"

    def text(self) -> str:
        return (f"{self.label()}; every variant was verified on fresh random data before it was timed:\n"
                f"{self.table}")


def path_of(design: str, folder: str | os.PathLike = FOLDER) -> Path:
    return Path(folder) / f"{design}.json"


def load(design: str, folder: str | os.PathLike = FOLDER) -> Recording | None:
    """The recording of ``design`` in ``folder``, or None when there is none.  A file that is not a
    recording raises ``ValueError`` naming the file and what is wrong."""
    path = path_of(design, folder)
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable recording ({exc})") from None
    fields = ("design", "device", "date", "command", "pgstudio", "table")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not all(isinstance(doc.get(f), str) for f in fields):
        raise ValueError(f"{path}: expected a JSON object with schema {SCHEMA!r} and text fields {', '.join(fields)}")
    return Recording(**{f: doc[f] for f in fields})


def show(design: str, folder: str | os.PathLike = FOLDER) -> str:
    """What a notebook prints where there is no GPU: the recording, labelled, or that none exists."""
    rec = load(design, folder)
    if rec is None:
        return (f"no recording of {design} exists yet: on a machine with an NVIDIA GPU, `{COMMAND}` "
                f"(from the repository root) writes {HOME}/{design}.json")
    return rec.text()


def device_name() -> str:
    """The current GPU's name, as CUDA reports it (needs CuPy and a GPU)."""
    from ._cupy import cupy

    cp = cupy()
    name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pgstudio")
    except PackageNotFoundError:
        return "unknown"


def record(design: str, table: Any, folder: str | os.PathLike = FOLDER, *, device: str | None = None,
           command: str = COMMAND) -> Path:
    """Write ``table`` (a ``benchmark`` result of ``design``, run on this machine's GPU) as the
    recording of ``design``; return the file.  A null runtime's table measured nothing and is
    refused: a recording is what a GPU measured."""
    if getattr(table, "measured", True) is False:
        from ..errors import PgStudioError
        raise PgStudioError(f"the benchmark of {design!r} ran on the null runtime and measured nothing, so it is not "
                            "recorded; record a benchmark run on a GPU")
    doc = {"schema": SCHEMA, "design": design, "device": device or device_name(),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": command, "pgstudio": _version(), "table": str(table)}
    path = path_of(design, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


__all__ = ["COMMAND", "FOLDER", "HOME", "Recording", "device_name", "load", "record", "show"]

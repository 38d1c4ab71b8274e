"""A sweep's results file: JSON lines, appended as variants finish, read back to resume or to show.

Line 1 is the header::

    {"schema": "pgstudio.sweep", "version": 1, "design": "merge_copy", "design_sha256": "...",
     "kind": "stream", "problem": "...", "unit": "GB/s", "settings": {"n": ..., "rounds": ...}, ...}

then one record per finished step of a variant (``sweep_jobs``' dicts plus ``key`` and
``variant``); a later record of the same key replaces an earlier one (a variant compiled by a
GPU-less run, then timed).  Each line is flushed as it is written, so an interrupted sweep
loses at most the variants in flight; a torn last line is ignored.  Reopening the file for the
same design and settings resumes: what is recorded is not computed again.  A file of another
design, or of other settings that change what a timing means (the element count), is refused
with a message naming both.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Iterator

from ..errors import FileError, PgStudioError
from ..model.files import write_atomic
from .sweep_jobs import COMPILED, NOT_RUN

SCHEMA, VERSION = "pgstudio.sweep", 1
#: Settings whose change makes earlier timings incomparable: a resume must match them.
MUST_MATCH = ("n", "arch")


def design_sha(design_json: str) -> str:
    return hashlib.sha256(design_json.encode()).hexdigest()


def _clean(value: Any) -> Any:
    """JSON without NaN (not valid JSON): NaN becomes null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def read(path: str | Path) -> tuple[dict, list[dict], str]:
    """(header, records in file order, a note on lines that could not be read)."""
    p = Path(path)
    try:
        lines = p.read_text().splitlines()
    except OSError as exc:
        raise PgStudioError(f"cannot read sweep results {str(p)!r}: {exc.strerror or exc}") from None
    if not lines:
        raise PgStudioError(f"sweep results {str(p)!r} are empty")
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("schema") != SCHEMA:
        raise PgStudioError(f"{str(p)!r} is not a pgstudio sweep results file (its first line is not a "
                            f"{SCHEMA!r} header)")
    if header.get("version") != VERSION:
        raise PgStudioError(f"sweep results {str(p)!r} have version {header.get('version')!r}; this pgstudio "
                            f"reads version {VERSION}")
    records, bad = [], 0
    for _i, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            bad += 1  # a torn line from an interrupted write
            continue
        if isinstance(rec, dict) and isinstance(rec.get("key"), str):
            records.append(rec)
        else:
            bad += 1
    note = f"{bad} unreadable line(s) in {p.name} skipped" if bad else ""
    return header, records, note


class SweepLog:
    """An open results file (see the module docstring)."""

    def __init__(self, path: str | Path, header: dict, records: dict[str, dict], note: str = "") -> None:
        self.path = Path(path)
        self.header = header
        self.records = records
        self.note = note
        self._file = None

    @classmethod
    def open(cls, path: str | Path, header: dict, *, resume: bool = True) -> "SweepLog":
        """Start ``path`` with ``header``, or resume it (``resume=False``: start over)."""
        p = Path(path)
        header = {"schema": SCHEMA, "version": VERSION, **header}
        if resume and p.is_file() and p.stat().st_size:
            old, records, note = read(p)
            _check_same(p, old, header)
            _drop_torn_tail(p)
            return cls(p, old, {r["key"]: r for r in records}, note)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FileError(f"cannot create the folder of results file {str(p)!r}: {exc.strerror or exc}",
                            "give --results a path in a folder you can write, or --no-results") from None
        write_atomic(p, json.dumps(_clean(header)) + "\n")
        return cls(p, header, {})

    def done(self, timing: bool) -> dict[str, dict]:
        """Records that need no more work: everything but ``not run`` ones, and, when timing,
        those only compiled so far."""
        return {k: r for k, r in self.records.items()
                if r.get("status") != NOT_RUN and not (timing and r.get("status") == COMPILED)}

    def append(self, record: dict) -> None:
        if self._file is None:
            self._file = open(self.path, "a", encoding="utf-8")
        self._file.write(json.dumps(_clean(record), sort_keys=True) + "\n")
        self._file.flush()
        self.records[record["key"]] = record

    def close(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None

    def __iter__(self) -> Iterator[dict]:
        return iter(self.records.values())


def _drop_torn_tail(path: Path) -> None:
    """Cut an unfinished last line (an interrupted write), so the next record starts a line."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


def _check_same(path: Path, old: dict, new: dict) -> None:
    if old.get("design_sha256") != new.get("design_sha256"):
        raise PgStudioError(f"{str(path)!r} holds a sweep of design {old.get('design')!r} as it was then, not of this "
                            f"design {new.get('design')!r} as it is now; give another results file, or start this one "
                            "over (--fresh / resume=False)")
    a, b = old.get("settings", {}), new.get("settings", {})
    diff = [f"{k}={a.get(k)!r} there, {b.get(k)!r} now" for k in MUST_MATCH if a.get(k) != b.get(k)]
    if diff:
        raise PgStudioError(f"{str(path)!r} was written with other settings ({'; '.join(diff)}); timings would not "
                            "compare: use the same settings, another results file, or start it over "
                            "(--fresh / resume=False)")


__all__ = ["MUST_MATCH", "SCHEMA", "SweepLog", "VERSION", "design_sha", "read"]

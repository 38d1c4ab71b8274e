"""The studio's autosave: the last few visits' designs in one file, each with its time stamp.

Why visits and not edits: a notebook that builds a studio and edits it at once (or a page that is
reloaded again and again) must never push out what a person did in an earlier visit.  Every
``Studio`` is one visit; its edits replace only its own entry of the file, so an earlier visit's
design stays until ``KEEP`` newer visits have saved, and the studio offers it back before it
writes anything (``Studio`` holds its writes while the offer is open).

The file records the studio's name: two names that map to one file (the mapping is injective
but for a 40-bit hash) are refused instead of one silently replacing the other.  Only a regular
file is read or replaced (a FIFO would hang the reader; a device must not be replaced), at most
``MAX_BYTES``.  Writes are atomic -- a temporary file beside the target, flushed, renamed -- made
with the user's umask (``os.open`` with 0666, so the kernel applies it); temporary files of a
writer that was killed (its process id is in the name) are removed by the next writer.
"""

from __future__ import annotations

import datetime
import errno
import json
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import DesignError
from ..model.design import Design
from ..model.limits import MAX_FILE_BYTES

FORMAT = "pgstudio-autosave"
#: Visits kept in one autosave file (newest first).
KEEP = 5
MAX_BYTES = (KEEP + 1) * MAX_FILE_BYTES


class AutosaveRefused(Exception):
    """The autosave file cannot be used at all (not a regular file, another studio's file): the
    studio turns autosave off and says why, so that nothing replaces it."""


class AutosaveUnreadable(Exception):
    """The file exists but holds no autosave this version can read (kept aside by the studio)."""


@dataclass(frozen=True)
class Version:
    """One visit's design: ``visit`` identifies the studio that wrote it, ``saved`` is local time."""

    visit: str
    saved: str
    design: Design
    dismissed: bool = False

    @property
    def when(self) -> str:
        return self.saved.replace("T", " ")[:16]


def _stamp() -> str:
    return datetime.datetime.now().isoformat(timespec="seconds")


def _is_regular(path: Path) -> bool | None:
    """True / False for a regular file / anything else, None when nothing is there."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return None


class AutosaveFile:
    """The autosave of the studio called ``name`` at ``path``; this object is one visit."""

    def __init__(self, name: str, path: Path) -> None:
        self.name, self.path = name, path
        self.visit = secrets.token_hex(6)

    # -- reading ----------------------------------------------------------------------------
    def _read_text(self) -> str | None:
        kind = _is_regular(self.path)
        if kind is None:
            return None
        if not kind:
            raise AutosaveRefused(f"{self.path} is not a regular file")
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            raise AutosaveRefused(f"{self.path} cannot be read: {exc.strerror or exc}") from None
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # replaced since the check above
                raise AutosaveRefused(f"{self.path} is not a regular file")
            data = f.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise AutosaveUnreadable(f"longer than {MAX_BYTES} bytes")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AutosaveUnreadable(f"not UTF-8 text ({exc.reason})") from None

    def versions(self) -> list[Version]:
        """The visits in the file, newest first ([] when there is no file)."""
        text = self._read_text()
        if text is None:
            return []
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise AutosaveUnreadable(f"not JSON ({exc})") from None
        if isinstance(doc, dict) and doc.get("format") == FORMAT:
            return self._parse_versions(doc)
        try:  # a design file as earlier pgstudio versions autosaved it: one version, owner unknown
            design = Design.from_json(text)
        except (DesignError, ValueError, TypeError, RecursionError) as exc:
            raise AutosaveUnreadable(str(exc)) from None
        saved = datetime.datetime.fromtimestamp(self.path.stat().st_mtime).isoformat(timespec="seconds")
        return [Version("earlier", saved, design)]

    def _parse_versions(self, doc: dict) -> list[Version]:
        owner = doc.get("studio")
        if owner != self.name:
            raise AutosaveRefused(f"{self.path} holds the autosave of the studio named {owner!r}, not {self.name!r}")
        out = []
        entries = doc.get("versions")
        if not isinstance(entries, list):
            raise AutosaveUnreadable("no list of versions")
        for entry in entries:
            try:
                design = Design.from_json(json.dumps(entry["design"]))
                out.append(Version(str(entry["visit"]), str(entry["saved"]), design, bool(entry.get("dismissed"))))
            except (DesignError, KeyError, ValueError, TypeError, RecursionError) as exc:
                raise AutosaveUnreadable(f"a version cannot be read ({exc})") from None
        return sorted(out, key=lambda v: v.saved, reverse=True)

    # -- writing ----------------------------------------------------------------------------
    def save(self, design: Design) -> None:
        """Make ``design`` this visit's entry (the newest); other visits' entries are kept, the
        oldest beyond ``KEEP`` dropped.  Raises AutosaveRefused / AutosaveUnreadable / OSError."""
        others = [v for v in self.versions() if v.visit != self.visit]
        self._write([Version(self.visit, _stamp(), design), *others][:KEEP])

    def dismiss(self, visit: str) -> None:
        """Mark an offered version as declined (kept in the file, not offered again)."""
        vs = self.versions()
        self._write([Version(v.visit, v.saved, v.design, True) if v.visit == visit else v for v in vs])

    def _write(self, versions: list[Version]) -> None:
        doc = {"format": FORMAT, "studio": self.name,
               "versions": [{"visit": v.visit, "saved": v.saved, "dismissed": v.dismissed,
                             "design": json.loads(v.design.to_json())} for v in versions]}
        write_atomic_umask(self.path, json.dumps(doc, indent=1, ensure_ascii=False))

    def keep_copy(self, version: Version) -> Path:
        """Write ``version``'s design as a plain design file beside the autosave (a new name)."""
        base = self.path.name[: -len(".json")]
        for n in range(1000):
            p = self.path.with_name(f"{base}.kept-{version.saved.replace(':', '')}{f'-{n}' if n else ''}.json")
            if not p.exists():
                write_atomic_umask(p, version.design.to_json())
                return p
        raise FileExistsError(f"no free name beside {self.path}")


_TMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]+\.tmp$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale_temporaries(path: Path) -> list[Path]:
    """Remove the temporary files of writes to ``path`` whose writer process is gone."""
    removed = []
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return removed
    for p in entries:
        m = _TMP.match(p.name)
        if m and m["name"] == path.name and not _alive(int(m["pid"])):
            try:
                p.unlink()
                removed.append(p)
            except OSError:
                pass
    return removed


def write_atomic_umask(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, a new file with the user's umask (an existing one
    keeps its mode); refuses to replace anything but a regular file."""
    if _is_regular(path) is False:
        raise AutosaveRefused(f"{path} is not a regular file")
    clean_stale_temporaries(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        if _is_regular(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise
        raise

"""Saving, loading and autosaving designs as JSON, with messages instead of tracebacks.

The autosave file sits in the working directory (next to the notebook when Jupyter started
the kernel there) as ``<name>.pgstudio-autosave.json``.  ``name`` is made a plain file name first
(``autosave_stem``): ``Studio(name="../x")`` must not write outside its folder.  Every write is
atomic (``model.files.write_atomic``: a temporary file in the same folder, flushed to disk, then
renamed over the old one), so a kernel restart or a crash mid-write leaves the previous autosave
whole.  An autosave that
cannot be read on restore is renamed aside (``set_aside``), never overwritten by the next edit:
what it held may be the only copy of a user's design.
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path

from ..errors import DesignError, FileError
from ..model.design import Design
from ..model.files import read_design_bytes, write_atomic
from ..model.limits import MAX_NAME_CHARS

AUTOSAVE_SUFFIX = ".pgstudio-autosave.json"
#: Kept-aside copies of unreadable autosaves: ``<name>.pgstudio-autosave.unreadable-<time>.json``.
ASIDE_INFIX = ".unreadable-"
#: Names Windows reserves for devices, whatever the extension.
_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


#: A name used as it is: letters, digits, '_' and '-', starting with a letter or digit, and not of
#: the form ``<text>-<10 hex digits>`` that other names map to.
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_HASHED = re.compile(r".*-[0-9a-f]{10}")


def autosave_stem(name: object) -> str:
    """``name`` as a file-name stem that stays inside its folder, different for different names.

    A plain name (letters, digits, '_' and '-', at most ``MAX_NAME_CHARS``) is used as it is;
    any other name becomes its plain letters (at most 40) and ten hex digits of its SHA-256, so
    ``my lab`` and ``my_lab``, long names sharing a beginning, and non-ASCII names get files of
    their own (the file records its studio's name too, and a collision is refused on open).

    >>> autosave_stem("lab"), autosave_stem("my lab"), autosave_stem("../x")
    ('lab', 'my_lab-e283ee3c9c', 'x-d6b96a97d1')
    """
    import hashlib

    text = str(name)
    if (_PLAIN.fullmatch(text) and len(text) <= MAX_NAME_CHARS and not _HASHED.fullmatch(text)
            and text.upper() not in _DEVICES):
        return text
    plain = re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_-")[:40] or "studio"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{plain}-{digest}"


def autosave_path(name: str = "studio", folder: str | os.PathLike | None = None) -> Path:
    """Where the studio called ``name`` autosaves: always a file directly inside ``folder``."""
    return Path(folder or os.getcwd()) / f"{autosave_stem(name)}{AUTOSAVE_SUFFIX}"


def write_design(design: Design, path: str | os.PathLike) -> str:
    """Write atomically (``model.files.write_atomic``), creating the folder; returns a message for
    the user.  Raises OSError (``FileError`` names the path and the fix)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, design.to_json())
    return f"saved design {design.name!r} to {path}"


def save_design(design: Design, path: str | os.PathLike) -> tuple[bool, str]:
    """(ok, message) -- never raises for a problem of the user's (bad folder, no permission)."""
    if not str(path).strip():
        return False, "cannot save: give a file name, e.g. my_design.json"
    try:
        return True, write_design(design, path)
    except FileError as exc:
        return False, f"cannot save: {exc}"
    except OSError as exc:
        return False, f"cannot save to {path}: {exc.strerror or exc}"


def parse_design(data: bytes | str, source: str) -> tuple[Design | None, str]:
    """(design, message) from file contents; design is None when the contents are not a design."""
    try:
        design = Design.from_json(data)
    except DesignError as exc:
        return None, f"cannot load {source}: {exc}"
    except (ValueError, TypeError, RecursionError) as exc:  # defensive: a malformed file is a message too
        return None, f"cannot load {source}: not a pgstudio design file ({type(exc).__name__}: {exc})"
    return design, f"loaded design {design.name!r} from {source}"


def load_design(path: str | os.PathLike) -> tuple[Design | None, str]:
    path = Path(str(path).strip())
    if not str(path) or str(path) == ".":
        return None, "cannot load: give a file name, e.g. my_design.json"
    try:
        data = read_design_bytes(path)
    except FileError as exc:
        return None, f"cannot load: {exc}"
    return parse_design(data, str(path))


def set_aside(path: str | os.PathLike) -> Path:
    """Rename an unreadable autosave to ``<stem>.unreadable-<time>.json`` beside it (a new name,
    never an existing file) and return the new path.  Raises OSError when it cannot be renamed."""
    path = Path(path)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = path.name[: -len(".json")] if path.name.endswith(".json") else path.name
    for n in range(1000):
        aside = path.with_name(f"{base}{ASIDE_INFIX}{stamp}{f'-{n}' if n else ''}.json")
        try:
            os.link(path, aside)  # fails if ``aside`` exists: nothing is ever overwritten
        except FileExistsError:
            continue
        except OSError:  # no hard links here (some file systems): rename, checking first
            if aside.exists():
                continue
            os.rename(path, aside)
            return aside
        path.unlink()
        return aside
    raise FileExistsError(f"no free name beside {path} to keep it")

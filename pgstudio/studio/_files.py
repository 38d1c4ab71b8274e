"""Saving, loading and autosaving designs as JSON, with messages instead of tracebacks.

The autosave file sits in the working directory (next to the notebook when Jupyter started
the kernel there) as ``<name>.pgstudio-autosave.json``; it is rewritten atomically after every
edit, so a kernel restart or a crash loses nothing.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import DesignError
from ..model.design import Design

AUTOSAVE_SUFFIX = ".pgstudio-autosave.json"
#: Files larger than this are refused (a design file is a few kB).
MAX_BYTES = 8 << 20


def autosave_path(name: str = "studio", folder: str | os.PathLike | None = None) -> Path:
    return Path(folder or os.getcwd()) / f"{name}{AUTOSAVE_SUFFIX}"


def write_design(design: Design, path: str | os.PathLike) -> str:
    """Write atomically (temp file + rename); returns a message for the user.  Raises OSError."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(design.to_json())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return f"saved design {design.name!r} to {path}"


def save_design(design: Design, path: str | os.PathLike) -> tuple[bool, str]:
    """(ok, message) -- never raises for a problem of the user's (bad folder, no permission)."""
    if not str(path).strip():
        return False, "cannot save: give a file name, e.g. my_design.json"
    try:
        return True, write_design(design, path)
    except OSError as exc:
        return False, f"cannot save to {path}: {exc.strerror or exc}"


def parse_design(data: bytes | str, source: str) -> tuple[Design | None, str]:
    """(design, message) from file contents; design is None when the contents are not a design."""
    if len(data) > MAX_BYTES:
        return None, f"cannot load {source}: {len(data)} bytes is too large for a design file"
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
        data = path.read_bytes()
    except FileNotFoundError:
        return None, f"cannot load {path}: no such file"
    except IsADirectoryError:
        return None, f"cannot load {path}: it is a folder"
    except OSError as exc:
        return None, f"cannot load {path}: {exc.strerror or exc}"
    return parse_design(data, str(path))

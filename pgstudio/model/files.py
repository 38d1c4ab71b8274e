"""The files a user names: read a design file within its size limit, write any output atomically.

Every problem of the file system (a missing file, a folder where a file belongs, a missing or
read-only folder, a full disk) becomes a ``FileError`` whose one-line message names the path, what
is wrong and the fix, so the command line and the studio say it the same way.  Writes go to a
temporary file in the target's folder, are flushed to disk and then renamed over the target: an
interrupted write never leaves half a file, and a failed one leaves the old file as it was.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ..errors import FileError
from .limits import MAX_FILE_BYTES

#: The fix for a design file that is not where the user said.
MAKE_ONE = "check the path (pgstudio example merge_copy --out FILE writes a design file)"


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _refuse_special(p: Path, expected: str) -> None:
    """A path that names a FIFO, a socket or a device is refused by its kind: opening a FIFO waits
    for a writer forever, and a device may never end."""
    try:
        mode = p.stat().st_mode
    except OSError:
        return  # missing or unreadable: the open below says which
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
        raise FileError(f"{str(p)!r} is {kind}, expected {expected}", "name a regular file")


def read_design_bytes(path: str | os.PathLike) -> bytes:
    """The contents of the design file ``path``: at most ``MAX_FILE_BYTES + 1`` bytes are read
    (the loader refuses a longer file; a wrong path may name a huge one)."""
    if not str(path).strip():
        raise FileError("no design file named", "give the path of a design JSON file")
    p = Path(path)
    _refuse_special(p, "a design file")
    try:
        with p.open("rb") as f:
            return f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise FileError(f"no design file at {str(path)!r}", MAKE_ONE) from None
    except IsADirectoryError:
        raise FileError(f"{str(path)!r} is a folder, expected a design file", "name the JSON file inside it") from None
    except OSError as exc:
        raise FileError(f"cannot read {str(path)!r}: {_why(exc)}", "check the path and its permissions") from None


def output_file(path: str | os.PathLike) -> Path:
    """``path`` as a file that can be written, or ``FileError``: not a folder, in a folder that exists."""
    p = Path(path)
    if not str(path).strip():
        raise FileError("no output file named", "give a file name")
    if p.is_dir():
        raise FileError(f"{str(path)!r} is a folder, expected a file to write",
                        f"give a file name, e.g. {str(p / ('out' + (p.suffix or '.txt')))!r}")
    _refuse_special(p, "a file to write")  # a write would rename over it, or block on a FIFO
    parent = p.parent
    if not parent.exists():
        raise FileError(f"cannot write {str(path)!r}: folder {str(parent)!r} does not exist",
                        f"create it first (mkdir -p {parent}) or write elsewhere")
    if not parent.is_dir():
        raise FileError(f"cannot write {str(path)!r}: {str(parent)!r} is a file, not a folder", "choose another path")
    return p


def write_atomic(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file, fsync, rename); returns the path."""
    p = output_file(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    except OSError as exc:
        raise FileError(f"cannot write {str(path)!r}: {_why(exc)}", "check the folder's permissions") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, p.stat().st_mode & 0o777 if p.exists() else 0o644)  # mkstemp makes 0600
        os.replace(tmp, p)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise FileError(f"cannot write {str(path)!r}: {_why(exc)}", "check free space and permissions") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def output_folder(path: str | os.PathLike) -> Path:
    """``path`` as a folder to write into, created (with its parents) when missing."""
    p = Path(path)
    if not str(path).strip():
        raise FileError("no output folder named", "give a folder name")
    if p.exists() and not p.is_dir():
        raise FileError(f"{str(path)!r} is a file, expected a folder for the output", "give a folder name")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileError(f"cannot create folder {str(path)!r}: {_why(exc)}", "check the path and its permissions") from None
    return p


__all__ = ["MAKE_ONE", "output_file", "output_folder", "read_design_bytes", "write_atomic"]

"""What every command shares: reading a design file, and the one way a command reports a user's mistake.

A command raises ``PgStudioError`` (or a subclass) for anything the user can fix; ``main`` prints
it as one line and exits with status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import PgStudioError
from ..model.design import Design


def design_argument(p: argparse.ArgumentParser) -> None:
    """The positional design-file argument every design command takes."""
    p.add_argument("design", help="a design JSON file (pgstudio example NAME --out FILE writes one)")


def load_design(path: str) -> Design:
    """The design in ``path``, or a ``PgStudioError`` saying why it cannot be read."""
    p = Path(path)
    if not p.is_file():
        raise PgStudioError(f"no design file at {path!r}")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise PgStudioError(f"cannot read {path!r}: {exc.strerror or exc}") from None
    return Design.from_json(data)


__all__ = ["design_argument", "load_design"]

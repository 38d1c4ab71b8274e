"""What every command shares: reading a design file, writing outputs, bounded flags, and the one
way a command reports a user's mistake.

A command raises ``PgStudioError`` (or a subclass: ``DesignError`` for a wrong file,
``FileError`` for a path that cannot be read or written) for anything the user can fix; ``main``
prints it as one line and exits with status 2.  Numeric flags are bounded when parsed
(``count``), so no flag can ask for a billion iterations.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Callable

from ..errors import FileError
from ..model.design import Design
from ..model.files import output_file, output_folder, read_design_bytes, write_atomic
from ..model.limits import MAX_PROBLEM_VALUE


#: Loop iterations a flag may ask the checker or the simulator for (their budgets bound the work too).
MAX_ITERATIONS = 1000
#: Elements per tensor a flag may ask for.
MAX_ELEMENTS = MAX_PROBLEM_VALUE


def design_argument(p: argparse.ArgumentParser) -> None:
    """The positional design-file argument every design command takes."""
    p.add_argument("design", help="a design JSON file (pgstudio example NAME --out FILE writes one)")


def load_design(path: str) -> Design:
    """The design in ``path``, or a ``PgStudioError`` saying why it cannot be read."""
    return Design.from_json(read_design_bytes(path))


def count(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number from ``low`` to ``high`` (argparse prints the error)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range, expected {low} to {high}")
        return value
    parse.__name__ = "count"  # argparse names the type in "invalid count value"
    return parse


def positive_number(high: float) -> Callable[[str], float]:
    """An argparse ``type``: a finite number above 0 and at most ``high``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (math.isfinite(value) and 0 < value <= high):
            raise argparse.ArgumentTypeError(f"{text} is out of range, expected a number above 0 and at most {high}")
        return value
    parse.__name__ = "number"
    return parse


def write_output(path: str | os.PathLike, data: str | bytes, *, keep: str | os.PathLike | None = None) -> Path:
    """Write one output file atomically; ``keep`` names an input (the design file) it must not replace."""
    target = output_file(path)
    if keep is not None and Path(keep).exists() and target.exists() and target.resolve() == Path(keep).resolve():
        raise FileError(f"{str(path)!r} is the design file itself; writing there would replace the design",
                        "give another output path (-o / --out)")
    return write_atomic(target, data)


__all__ = ["MAX_ELEMENTS", "MAX_ITERATIONS", "count", "design_argument", "load_design", "output_file", "output_folder",
           "positive_number", "write_output"]

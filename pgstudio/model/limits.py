"""The value domain of a design: the range of every number and the size of every list.

A value outside its range is not a wrong design that ``validate()`` could report: it is not a
design at all.  ``num_stages`` 0 divides by zero in every ring, a NaN problem size is no index, a
billion stages or a million tasks cannot be laid out, simulated or drawn in a notebook's time.
The constructors (``CooperativeGroup``, ``PipelineConfig``, resources, ``Task``, ``Loop``,
``CapturedSchedule``, ``PipelineGroup``, ``Design``) call these checks and raise ``DesignError``,
so every design that exists -- built in Python, edited in the studio, loaded from a file -- is
one that every command can handle in bounded time and memory.  The file loader reaches the same
checks through those constructors (and ``check_count`` before it builds anything) and names the
field's path.

Rules that relate values to each other (a tma byte count that is no multiple of 16, members of a
group with different stage counts, shared memory that does not fit) stay diagnostics of
``validate()``: those designs exist, and the studio shows what is wrong with them.

>>> whole_problem(0, 1, MAX_STAGES)
'is 0, expected an integer from 1 to 64'
>>> whole_problem(float("nan"), 0, 10) is not None
True
"""

from __future__ import annotations

import math

from ..errors import DesignError

#: A design file is a few kB (the 256-resource scale designs are under 1 MB).
MAX_FILE_BYTES = 8 << 20
#: Characters of a name (resources, groups, tasks, schedules, problem symbols).
MAX_NAME_CHARS = 64
#: Characters of a text field (a compute expression, a problem string).
MAX_TEXT_CHARS = 1024

#: Stages of one pipeline ring (real pipelines use 2..8; the studio's editor stops here too).
MAX_STAGES = 64
#: Bytes landing in one stage: the range of an mbarrier's tx-count is +-(2^20 - 1), and one
#: block's shared memory (232448 B) is smaller still.
MAX_STAGE_BYTES = (1 << 20) - 1
#: Threads of one block, so of any cooperative group.
MAX_THREADS = 1024
#: Warps of one block (1024 threads).
MAX_WARPS = MAX_THREADS // 32

#: Dimensions of a tile shape, and the extent of each.
MAX_TILE_RANK = 4
MAX_TILE_DIM = 1 << 16
#: Magnitude of a problem-shape value or a literal loop bound (2^40: a terabyte of elements).
MAX_PROBLEM_VALUE = 1 << 40

#: Elements of one design.
MAX_RESOURCES = 1024
MAX_GROUPS = 1024
MAX_TASKS = 1024
MAX_PROBLEM_ENTRIES = 64
#: Recorded steps of one schedule and of a whole design, nesting of domain loops, work inputs
#: of one step.
MAX_STEPS = 1 << 14
MAX_DESIGN_STEPS = 1 << 16
MAX_LOOP_DEPTH = 8
MAX_ARGS = 64


def is_whole(value: object) -> bool:
    """A whole number that is not a bool (True would silently mean 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def shown(value: object) -> str:
    """``repr(value)`` on one short line: a long integer by its first digits and its length.

    >>> shown(7), shown(10 ** 40)
    ('7', '10000000... (41 digits)')
    """
    if is_whole(value) and abs(value) >= 10 ** 20:
        if abs(value).bit_length() > 10_000:  # past what str() converts (sys.get_int_max_str_digits)
            return f"an integer of about {int(abs(value).bit_length() * 0.30103)} digits"
        return f"{str(value)[:8]}... ({len(str(abs(value)))} digits)"
    text = repr(value)
    return text if len(text) <= 80 else text[:60] + "..."


def whole_problem(value: object, low: int, high: int) -> str | None:
    """Why ``value`` is not an integer in ``[low, high]``, or None when it is."""
    if is_whole(value) and low <= value <= high:
        return None
    return f"is {shown(value)}, expected an integer from {low} to {high}"


def number_problem(value: object, high: float = MAX_PROBLEM_VALUE) -> str | None:
    """Why ``value`` is not a finite number of magnitude at most ``high``, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"is {value!r}, expected a number"
    if isinstance(value, float) and not math.isfinite(value):
        return f"is {value!r}, expected a finite number"
    if abs(value) > high:
        return f"is {shown(value)}, expected a number of magnitude at most {high}"
    return None


def check_whole(value: object, what: str, low: int, high: int, code: str, hint: str) -> int:
    """Return ``value`` or raise ``DesignError`` naming ``what``, the value and the range."""
    problem = whole_problem(value, low, high)
    if problem:
        raise DesignError(f"{what} {problem}", code=code, hint=hint)
    return value  # type: ignore[return-value]


def check_count(n: int, what: str, high: int, code: str = "design.size") -> None:
    """Raise ``DesignError`` when a design holds more than ``high`` of ``what``."""
    if n > high:
        raise DesignError(f"{what}: {n} is more than the limit of {high}", code=code,
                          hint="split the design, or check that the file is the one you meant")


def check_text(value: object, what: str, high: int = MAX_TEXT_CHARS, code: str = "design.text") -> str:
    """Return ``value`` or raise ``DesignError`` when it is no string or longer than ``high``."""
    if not isinstance(value, str):
        raise DesignError(f"{what} is {value!r}, expected a string", code=code)
    if len(value) > high:
        raise DesignError(f"{what} has {len(value)} characters, expected at most {high}", code=code,
                          hint="shorten it")
    return value


__all__ = ["MAX_ARGS", "MAX_DESIGN_STEPS", "MAX_FILE_BYTES", "MAX_GROUPS", "MAX_LOOP_DEPTH", "MAX_NAME_CHARS",
           "MAX_PROBLEM_ENTRIES", "MAX_PROBLEM_VALUE", "MAX_RESOURCES", "MAX_STAGES", "MAX_STAGE_BYTES", "MAX_STEPS",
           "MAX_TASKS", "MAX_TEXT_CHARS", "MAX_THREADS", "MAX_TILE_DIM", "MAX_TILE_RANK", "MAX_WARPS",
           "check_count", "check_text", "check_whole", "is_whole", "number_problem", "shown",
           "whole_problem"]

"""The one gate between design text and an exported TS script.

An exported script is Python that a user runs next, so no text of a design may become code in it.
Every piece of design text the script holds is one of three kinds, and only this module writes
them:

- a *name* (``name``): a resource, group, task, schedule, work-input or method name written as a
  Python identifier.  It is checked -- ASCII identifier, not a Python keyword, not a dunder, not a
  name the script binds itself -- and refused with ``DesignError`` (code ``ts.export``) otherwise;
- a member of a fixed set (enum words: memory kinds, modes, agents, ops) written by the caller
  from its own table, never from the design;
- a *literal* (``lit``): a str / int / float / bool / None or a tuple of them, written by
  ``json.dumps`` (printable ASCII text) or ``ascii()`` (anything else: newlines, quotes, U+2028,
  NUL, lone surrogates all become escapes) and checked to read back as the same value.

Comments and docstrings of the script are fixed text plus checked names only: a comment is ended
by a newline, a docstring by three quotes, so free text never goes there.
"""

from __future__ import annotations

import ast
import json
import keyword
import math
from typing import Any

from ..errors import DesignError

#: Names the script defines, imports or calls itself; a design element may not take one.
SCRIPT_NAMES = frozenset({
    "dataclass", "Agent", "CooperativeGroup", "PipelineOp", "consumer_work", "domain_loop", "producer_work",
    "schedule", "work_tile_loop", "PipelineGroupMode", "TileSchedulerType", "SmemAllocation", "SmemAllocator",
    "PipelineGroup", "MemoryResource", "PipelineConfig", "TaskLocalVariable", "TileSchedulerConfig", "WorkQueue",
    "Task", "TaskManager", "design_name", "problem", "num_work_tiles", "warp_groups", "PgResource", "tasks",
    "resource_dependency_graph", "smem_allocator", "task_manager", "resource", "stage_info", "self", "cutlass",
})
#: Builtins the script (or TS while it runs the script's classes) calls: a name may not shadow one.
BUILTIN_NAMES = frozenset({"print", "len", "int", "str", "float", "bool", "tuple", "list", "dict", "object",
                           "super", "isinstance", "getattr", "range", "type"})


def refuse(what: str, hint: str) -> DesignError:
    return DesignError(f"ts: {what}", code="ts.export", hint=hint)


def _show(value: Any) -> str:
    text = ascii(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def name(value: Any, field: str, extra: frozenset | set = frozenset()) -> str:
    """``value`` when it can be written as a Python name in the script, else ``DesignError``."""
    why = None
    if not isinstance(value, str) or not value:
        why = "is not a non-empty string"
    elif not (value.isascii() and value.isidentifier()):
        why = "is not a Python identifier (ASCII letters, digits and '_', not starting with a digit)"
    elif keyword.iskeyword(value):
        why = "is a Python keyword"
    elif value.startswith("__"):
        why = "starts with '__' (Python's own names)"
    elif value in SCRIPT_NAMES or value in BUILTIN_NAMES or value in extra:
        why = "is a name the TS script uses itself"
    if why:
        raise refuse(f"{field} {_show(value)} {why}; the exported script writes it as a Python name",
                     f"rename the {field.split(' ')[-1]} to a plain identifier such as 'smem_a'")
    return value


def _text(value: str) -> str:
    if value.isascii() and value.isprintable():
        return json.dumps(value)  # printable ASCII: JSON's escapes (\" and \\) are Python's
    return ascii(value)  # every other character as an escape


def lit(value: Any, field: str = "value") -> str:
    """A Python literal of ``value`` that reads back as the same value (module docstring)."""
    if isinstance(value, str):
        out = _text(value)
    elif value is None or isinstance(value, bool):
        out = repr(value)
    elif isinstance(value, int):
        try:
            out = repr(int(value))
        except ValueError:  # more digits than Python converts
            raise refuse(f"{field} is an integer of more than 4300 digits", "use a smaller number") from None
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise refuse(f"{field} is {value!r}; the script writes finite numbers only", "use a finite number")
        out = repr(float(value))
    elif isinstance(value, tuple):
        items = [lit(v, field) for v in value]
        out = f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    else:
        raise refuse(f"{field} is a {type(value).__name__}, which the script cannot write as a literal",
                     "use a string, a number or a tuple of them")
    if type(value) is not tuple and ast.literal_eval(out) != value and value == value:
        raise refuse(f"{field} {_show(value)} does not read back as written", "use plain text")
    return out


def integer(value: Any, field: str) -> str:
    """A whole number (not a bool) as a literal."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise refuse(f"{field} is {_show(value)}, expected a whole number", "give an integer")
    return lit(value, field)


def member(value: Any, allowed: tuple | frozenset, field: str) -> str:
    """``value`` when it is one of the fixed words ``allowed`` (an enum's values, the op table)."""
    if not isinstance(value, str) or value not in allowed:
        raise refuse(f"{field} {_show(value)} is not one of {', '.join(sorted(allowed))}", "use one of those words")
    return value


__all__ = ["BUILTIN_NAMES", "SCRIPT_NAMES", "integer", "lit", "member", "name", "refuse"]

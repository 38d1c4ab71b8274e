"""Loop bounds by name: ``domain_loop(0, num_k_tiles, 1)`` keeps the symbol ``num_k_tiles``.

TS bounds are plain ints by the time ``domain_loop`` sees them, but pgstudio's designs name their
loop counts after the problem shape (``Loop(0, "num_k_tiles", 1)``), so a design can be resized
and its tasks keep their meaning.  This module reads the call's own source text (the caller's
frame and the exact position of the call, Python 3.11+), and for each bound written as a
module-level name (``num_k_tiles``) or as ``problem["num_k_tiles"]`` whose value matches, returns
the name.  Everything else -- a literal, a local, an expression, a script without source -- stays
the int.  Nothing is evaluated: the source is parsed, never run.
"""

from __future__ import annotations

import ast
import linecache
from types import FrameType
from typing import Any

#: The module-level dict a script may keep its problem shape in (``problem["M"]``).
PROBLEM = "problem"


def _call_source(frame: FrameType) -> str | None:
    """The source text of the call being executed in ``frame`` (possibly several lines)."""
    code = frame.f_code
    try:
        line, end_line, col, end_col = list(code.co_positions())[frame.f_lasti // 2]
    except (IndexError, ValueError):
        return None
    if None in (line, end_line, col, end_col):
        return None
    lines = [linecache.getline(code.co_filename, n, frame.f_globals).encode() for n in range(line, end_line + 1)]
    if not all(lines):
        return None
    if len(lines) == 1:
        text = lines[0][col:end_col]
    else:
        text = lines[0][col:] + b"".join(lines[1:-1]) + lines[-1][:end_col]
    return text.decode(errors="replace")


def _name_of(node: ast.expr, value: Any, frame: FrameType) -> str | None:
    glb = frame.f_globals
    if isinstance(node, ast.Name):
        local = frame.f_locals is not glb and node.id in frame.f_locals
        if not local and node.id.isidentifier() and glb.get(node.id, object()) == value:
            return node.id
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == PROBLEM
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
        table = glb.get(PROBLEM)
        key = node.slice.value
        if isinstance(table, dict) and key.isidentifier() and table.get(key, object()) == value:
            return key
    return None


def bound_names(frame: FrameType | None, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """``values`` with each int that the call wrote as a module-level name replaced by the name."""
    if frame is None:
        return values
    text = _call_source(frame)
    if text is None:
        return values
    try:
        call = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return values
    if not isinstance(call, ast.Call) or len(call.args) != len(values) or any(
            isinstance(a, ast.Starred) for a in call.args):
        return values
    out = []
    for node, value in zip(call.args, values):
        name = _name_of(node, value, frame) if isinstance(value, int) and not isinstance(value, bool) else None
        out.append(name if name is not None else value)
    return tuple(out)


__all__ = ["PROBLEM", "bound_names"]

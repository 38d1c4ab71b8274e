"""The problem shape: named sizes that loop bounds and the generators read (``Design.problem``).

The shapes of the two kinds of design are made here (examples and sweeps use them): a streaming
design moves ``num_elements`` in tiles of ``tile_elems``; a GEMM design computes an M x N x K
product in BM x BN output tiles, BK deep per k step.  The derived counts (``num_tiles``,
``num_k_tiles``) are the domain-loop bounds the schedules iterate over.

One rule for an entry, used by ``Design`` and by the file loader (which names the field path):
the key is a name (it becomes a symbol of loop bounds and generated code) and the value a size --
a whole number from 0, a finite number, or a word such as the element type.

>>> entry_problem("num_tiles", 64) is None
True
>>> entry_problem("num_tiles", float("nan"))
'value is nan, expected a finite number'
"""

from __future__ import annotations

from .limits import MAX_PROBLEM_VALUE, number_problem, whole_problem
from .names import name_problem, word_problem
from .targets import DTYPE_BYTES

#: The fix every problem-entry message gives.
HINT = "give problem sizes as whole numbers >= 0 named by identifiers, e.g. problem={'num_tiles': 64}"


def stream_problem(num_elements: int, tile_bytes: int, dtype: str) -> dict:
    """``num_elements`` of ``dtype`` in tiles of ``tile_bytes``."""
    tile_elems = tile_bytes // DTYPE_BYTES[dtype]
    return {"num_elements": num_elements, "tile_elems": tile_elems,
            "num_tiles": -(-num_elements // max(tile_elems, 1)), "dtype": dtype}


def gemm_problem(m: int, n: int, k: int, bm: int, bn: int, bk: int, dtype: str) -> dict:
    """M x N x K in BM x BN x BK tiles."""
    tiles = -(-m // bm) * -(-n // bn)
    return {"M": m, "N": n, "K": k, "BM": bm, "BN": bn, "BK": bk, "num_tiles": tiles,
            "num_k_tiles": -(-k // bk), "dtype": dtype}


def entry_problem(key: object, value: object) -> str | None:
    """Why ``key: value`` cannot be a problem entry, or None when it can."""
    problem = name_problem(key)
    if problem is None and isinstance(value, str):
        problem = word_problem(value) and f"value {word_problem(value)}"  # a word: it may reach generated code
    elif problem is None:
        why = number_problem(value) if isinstance(value, float) else whole_problem(value, 0, MAX_PROBLEM_VALUE)
        problem = why and f"value {why}"
    return problem


__all__ = ["HINT", "entry_problem", "gemm_problem", "stream_problem"]

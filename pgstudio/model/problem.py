"""The problem shape: named sizes that loop bounds and the generators read (``Design.problem``).

The shapes of the two kinds of design are made here (examples and sweeps use them): a streaming
design moves ``num_elements`` in tiles of ``tile_elems``; a GEMM design computes an M x N x K
product in BM x BN output tiles, BK deep per k step.  The derived counts (``num_tiles``,
``num_k_tiles``) are the domain-loop bounds the schedules iterate over.

One rule for an entry, used by ``Design`` and by the file loader (which names the field path):
the key is a name (it becomes a symbol of loop bounds and generated code) and the value a size --
a whole number from 0, a finite number, or a word such as the element type.

The keys the generators read as counts (``INTEGER_KEYS``: sizes, tile shapes, tile counts, the
split and the cluster shape) must hold an ``int``: ``CLUSTER_N = 2.0`` or ``True`` compares equal
to a count the generator builds, and would be written into a kernel as ``2.0``.  That is a rule
of ``validate()`` (``count_problem``, code ``problem.integer``), so a file or a studio can hold
such a design and say what is wrong; a word in such a key is reported by the rules that read it.

>>> entry_problem("num_tiles", 64) is None
True
>>> entry_problem("num_tiles", float("nan"))
'value is nan, expected a finite number'
>>> count_problem("CLUSTER_N", 2.0)
'CLUSTER_N is 2.0, a float; the generators read CLUSTER_N as a count, so it must be an integer'
"""

from __future__ import annotations

from .limits import MAX_PROBLEM_VALUE, is_whole, number_problem, shown, whole_problem
from .names import name_problem, word_problem
from .targets import DTYPE_BYTES

#: Problem keys the generators and the analyses read as counts: their values are integers.
INTEGER_KEYS = frozenset(("M", "N", "K", "BM", "BN", "BK", "num_tiles", "num_k_tiles", "num_elements", "tile_elems",
                          "SPLIT_K", "STREAM_K", "CLUSTER_M", "CLUSTER_N"))

#: The fix every problem-entry message gives.
HINT = "give problem sizes as whole numbers >= 0 named by identifiers, e.g. problem={'num_tiles': 64}"


def stream_problem(num_elements: int, tile_bytes: int, dtype: str) -> dict:
    """``num_elements`` of ``dtype`` in tiles of ``tile_bytes``."""
    tile_elems = tile_bytes // DTYPE_BYTES[dtype]
    return {"num_elements": num_elements, "tile_elems": tile_elems,
            "num_tiles": -(-num_elements // max(tile_elems, 1)), "dtype": dtype}


def gemm_units(m: int, n: int, k: int, bm: int, bn: int, bk: int, split_k: int = 1) -> tuple[int, int]:
    """(work units of the tile loop, k tiles of one unit): output tiles x ``split_k`` parts, and
    the k tiles of a part (the largest, when they do not split evenly).  The one rule for
    ``num_tiles`` / ``num_k_tiles`` of a GEMM problem.

    >>> gemm_units(4096, 4096, 4096, 128, 256, 64), gemm_units(128, 8192, 8192, 128, 256, 64, 4)
    ((512, 64), (128, 32))
    """
    splits = max(1, split_k)
    k_tiles = -(-k // bk)
    return -(-m // bm) * -(-n // bn) * splits, -(-k_tiles // splits)


def gemm_problem(m: int, n: int, k: int, bm: int, bn: int, bk: int, dtype: str, *, b_major: str = "mn",
                 split_k: int = 1, cluster: tuple[int, int] = (1, 1), stream_k: bool = False) -> dict:
    """M x N x K in BM x BN x BK tiles.

    ``b_major``: "mn" when B is stored K x N (row-major, D = A @ B), "k" when it is stored N x K;
    kept as the key ``b_major`` only when it is not the default.  ``split_k`` > 1 cuts the K range
    of every output tile into that many parts (key ``SPLIT_K``): each part is a work unit of the
    tile loop, so ``num_tiles`` counts tiles x parts and ``num_k_tiles`` the k tiles of one part.
    ``cluster`` (CM, CN) = (1, 2) runs the blocks in clusters of two along N (keys ``CLUSTER_M``,
    ``CLUSTER_N``): the pair computes neighbouring tiles of one row of tiles, so they read the same
    A tile, and each loads half of it for both (TMA multicast); (2, 1) pairs along M and shares B.
    ``stream_k`` (key ``STREAM_K`` = 1) shares the output tiles past the last full wave of the
    persistent grid among all its blocks by k tiles (``codegen.gemm.scheduler``): a problem whose
    tiles make 3.9 waves takes 3.9 rounds, not 4.  ``num_tiles`` / ``num_k_tiles`` stay the tiles
    and their k tiles (a block's pipeline is the same).

    >>> gemm_problem(256, 256, 1024, 128, 128, 64, "float16", split_k=2)["num_tiles"]
    8
    """
    tiles, k_tiles = gemm_units(m, n, k, bm, bn, bk, split_k)
    out = {"M": m, "N": n, "K": k, "BM": bm, "BN": bn, "BK": bk, "num_tiles": tiles,
           "num_k_tiles": k_tiles, "dtype": dtype}
    if b_major != "mn":
        out["b_major"] = b_major
    if split_k != 1:
        out["SPLIT_K"] = split_k
    if tuple(cluster) != (1, 1):
        out["CLUSTER_M"], out["CLUSTER_N"] = cluster
    if stream_k:
        out["STREAM_K"] = 1
    return out


def entry_problem(key: object, value: object) -> str | None:
    """Why ``key: value`` cannot be a problem entry, or None when it can."""
    problem = name_problem(key)
    if problem is None and isinstance(value, str):
        problem = word_problem(value) and f"value {word_problem(value)}"  # a word: it may reach generated code
    elif problem is None:
        why = number_problem(value) if isinstance(value, float) else whole_problem(value, 0, MAX_PROBLEM_VALUE)
        problem = why and f"value {why}"
    return problem


def count_problem(key: str, value: object) -> str | None:
    """Why ``value`` cannot be the count that problem key ``key`` is (``INTEGER_KEYS``), or None:
    a number that is not an ``int`` (a float, a bool).  Other keys, and words, pass."""
    if key not in INTEGER_KEYS or isinstance(value, str) or is_whole(value):
        return None
    return (f"{key} is {shown(value)}, a {type(value).__name__}; the generators read {key} as a count, "
            "so it must be an integer")


__all__ = ["HINT", "INTEGER_KEYS", "count_problem", "entry_problem", "gemm_problem", "gemm_units", "stream_problem"]

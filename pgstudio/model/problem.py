"""The problem shapes of the two kinds of design, in one place (examples and sweeps use them).

A streaming design moves ``num_elements`` in tiles of ``tile_elems``; a GEMM design computes
an M x N x K product in BM x BN output tiles, BK deep per k step.  The derived counts
(``num_tiles``, ``num_k_tiles``) are the domain-loop bounds the schedules iterate over.
"""

from __future__ import annotations

from .targets import DTYPE_BYTES


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


__all__ = ["gemm_problem", "stream_problem"]

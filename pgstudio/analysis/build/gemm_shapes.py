"""Tile shapes for a GEMM problem: the few that a short measured search should try.

A persistent GEMM kernel runs its work units (output tiles, or tiles x K parts with split-K) in
waves of one block per SM.  Which tile shape wins depends on the problem: a large square problem
wants the biggest tile (fewer bytes per flop), a problem with fewer tiles than SMs (small M)
wants its K range split so every SM works, a ragged problem wants the shape whose last wave is
fullest.  ``gemm_tiles`` ranks the shapes the generator builds for the canonical GEMM designs
(12 warps: two MMA warpgroups) by a simple model -- waves x the work of one unit, divided by how
well that tile feeds the tensor cores -- and returns the best few; ``runtime.tuning`` measures
them and keeps the winner per device.  Each choice is a design the user can see: BM, BN, BK,
the stages and ``SPLIT_K`` are the design's problem keys.

>>> [t.label for t in gemm_tiles(128, 8192, 8192, "float16")][:2]
['128x256x64 s3 split-K 4', '128x256x32 s6 split-K 4']
>>> gemm_tiles(8192, 8192, 8192, "bfloat16")[0].label
'128x256x64 s3'
"""

from __future__ import annotations

from dataclasses import dataclass

from .gemm_limits import MAX_SPLIT_K

#: (BM, BN, BK, stages) the canonical 12-warp GEMM designs build for 16-bit operands, with the
#: relative rate at which each feeds the tensor cores (shared-memory bytes per flop: a 128 x 256
#: tile reads 3/256 B per MAC, a 128 x 128 tile 4/256).
SHAPES_16BIT: tuple[tuple[int, int, int, int, float], ...] = (
    (128, 256, 64, 3, 1.00),
    (128, 256, 32, 6, 0.99),  # the same bytes in flight in finer steps (64-byte swizzle panels of A)
    (256, 128, 64, 3, 0.97),
    (128, 128, 64, 5, 0.92),
)
#: float32 operands (tf32): half the K per byte, so BK = 32 rows of 128 bytes.
SHAPES_TF32: tuple[tuple[int, int, int, int, float], ...] = (
    (128, 128, 32, 4, 1.00),
)
#: A split unit keeps at least this many k tiles (shorter ones spend more on the reduction).
MIN_K_TILES_PER_SPLIT = 4
SMS_H100 = 132


@dataclass(frozen=True)
class GemmTiles:
    """One tile choice: BM x BN x BK, pipeline stages and split-K parts, with its modelled cost."""

    bm: int
    bn: int
    bk: int
    stages: int
    split_k: int = 1
    cost: float = 0.0  # modelled time, arbitrary units (lower is better)

    @property
    def label(self) -> str:
        text = f"{self.bm}x{self.bn}x{self.bk} s{self.stages}"
        return text + (f" split-K {self.split_k}" if self.split_k > 1 else "")

    @property
    def key(self) -> str:
        return f"{self.bm}x{self.bn}x{self.bk}/s{self.stages}/k{self.split_k}"

    def as_dict(self) -> dict:
        return {"bm": self.bm, "bn": self.bn, "bk": self.bk, "num_stages": self.stages, "split_k": self.split_k}


def _splits(tiles: int, k_tiles: int, sms: int) -> list[int]:
    """Split-K part counts worth trying: 1, and for fewer tiles than SMs the largest split that
    keeps the units within one wave and each unit at least ``MIN_K_TILES_PER_SPLIT`` deep."""
    out = [1]
    if tiles < sms:
        best = 1
        for s in range(2, MAX_SPLIT_K + 1):
            if tiles * s <= sms and k_tiles // s >= MIN_K_TILES_PER_SPLIT:
                best = s
        if best > 1:
            out.append(best)
    return out


def gemm_tiles(m: int, n: int, k: int, dtype: str, sms: int = SMS_H100, limit: int = 4) -> tuple[GemmTiles, ...]:
    """The ``limit`` tile choices of lowest modelled cost for an M x N x K ``dtype`` GEMM on a GPU
    with ``sms`` multiprocessors (module docstring), best first; the largest plain tile is always
    among them, so a search never does worse than the default."""
    shapes = SHAPES_TF32 if dtype == "float32" else SHAPES_16BIT
    found: list[GemmTiles] = []
    for bm, bn, bk, stages, rate in shapes:
        tiles = -(-m // bm) * -(-n // bn)
        k_tiles = -(-k // bk)
        for s in _splits(tiles, k_tiles, sms):
            units = tiles * s
            waves = -(-units // sms)
            cost = waves * bm * bn * bk * -(-k_tiles // s) / rate
            found.append(GemmTiles(bm, bn, bk, stages, s, cost))
    found.sort(key=lambda t: (t.cost, t.split_k, -t.bn))
    best = found[:limit]
    default = next(t for t in found if (t.bm, t.bn, t.split_k) == shapes[0][:2] + (1,))
    if default not in best:
        best[-1] = default
    return tuple(best)


__all__ = ["GemmTiles", "MIN_K_TILES_PER_SPLIT", "SHAPES_16BIT", "SHAPES_TF32", "gemm_tiles"]

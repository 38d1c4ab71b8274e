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
'128x256x64 s4'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...model.targets import SMEM_CAPACITY, STAGING_TURNS, dtype_bytes
from .gemm_limits import MAX_SPLIT_K, stream_k_units, warpgroup_grid

#: (BM, BN, BK, stages) the canonical 12-warp GEMM designs build for 16-bit operands, with the
#: relative rate at which each feeds the tensor cores (shared-memory bytes per flop: a 128 x 256
#: tile reads 3/256 B per MAC, a 128 x 128 tile 4/256).
SHAPES_16BIT: tuple[tuple[int, int, int, int, float], ...] = (
    # four stages: the staging buffer takes each tile in turns (``smem_layout.Staging.turns``) to
    # make room; measured 1-2 % ahead of three with whole-tile staging on an H100.  A split-K
    # choice keeps whole-tile staging, so it runs the stages that fit beside it (``_stages_for``)
    (128, 256, 64, 4, 1.00),
    (128, 256, 32, 6, 0.99),  # the same bytes in flight in finer steps (64-byte swizzle panels of A)
    (256, 128, 64, 3, 0.97),
    (128, 128, 64, 5, 0.92),
    # narrow tiles for few rows of tiles (small M or N): twice the blocks of 128 x 128, and the
    # deepest pipeline that fits (measured on an H200: 128 x 64 s8 is the fastest plain tile at
    # M = 128, N = K = 8192)
    (128, 64, 64, 8, 0.80),
    (64, 128, 64, 8, 0.80),
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
    cluster: tuple[int, int] = (1, 1)  # (CLUSTER_M, CLUSTER_N): pairs of blocks sharing A (1, 2) or B (2, 1)
    stream_k: bool = False  # STREAM_K: the last partial wave's tiles shared among all blocks by k tiles
    # a design with a residual (merge_gemm_resadd): R staged in this many column slices, the tile
    # taken in as many turns through ``acc_stages`` staging stages (``smem_layout.turn_slices``)
    turns: int = 1
    acc_stages: int = 1

    @property
    def label(self) -> str:
        text = f"{self.bm}x{self.bn}x{self.bk} s{self.stages}"
        text += f" split-K {self.split_k}" if self.split_k > 1 else ""
        text += " stream-K" if self.stream_k else ""
        text += f" cluster {self.cluster[0]}x{self.cluster[1]}" if self.cluster != (1, 1) else ""
        return text + (f" R in {self.turns} turns x {self.acc_stages}" if self.turns > 1 or self.acc_stages > 1 else "")

    @property
    def key(self) -> str:
        key = f"{self.bm}x{self.bn}x{self.bk}/s{self.stages}/k{self.split_k}"
        key += f"/c{self.cluster[0]}x{self.cluster[1]}" if self.cluster != (1, 1) else ""
        key += f"/t{self.turns}a{self.acc_stages}" if self.turns > 1 or self.acc_stages > 1 else ""
        return key + ("/sk" if self.stream_k else "")

    @classmethod
    def from_key(cls, key: str) -> "GemmTiles":
        """The choice a ``key`` names ("128x256x64/s3/k4", "128x256x64/s3/k1/sk" with stream-K,
        "128x256x64/s4/k1/t4a1" with a residual in four slices through one staging stage).

        >>> GemmTiles.from_key("128x256x64/s3/k4").label, GemmTiles.from_key("128x256x64/s3/k1/sk").label
        ('128x256x64 s3 split-K 4', '128x256x64 s3 stream-K')
        >>> GemmTiles.from_key("128x256x64/s3/k1/t4a2").label
        '128x256x64 s3 R in 4 turns x 2'
        """
        try:
            tile, stages, split, *rest = key.split("/")
            bm, bn, bk = (int(x) for x in tile.lower().split("x"))
            stream_k = rest[-1:] == ["sk"]
            rest = rest[:-1] if stream_k else rest
            turns = acc_stages = 1
            if rest and rest[-1].startswith("t"):
                turns, acc_stages = (int(x) for x in rest.pop()[1:].split("a"))
            if len(rest) > 1:
                raise ValueError(key)
            cm, cn = (int(x) for x in rest[0].lstrip("c").split("x")) if rest else (1, 1)
            return cls(bm, bn, bk, int(stages.lstrip("s")), int(split.lstrip("k")), cluster=(cm, cn), stream_k=stream_k,
                       turns=turns, acc_stages=acc_stages)
        except ValueError:
            raise ValueError(f"tile key {key!r}: expected BMxBNxBK/sSTAGES/kSPLIT[/cCMxCN][/tTURNSaSTAGES][/sk], e.g. "
                             "128x256x64/s3/k1, 128x64x64/s8/k1/c1x2, 128x256x64/s4/k1/t4a1 or 128x256x64/s3/k1/sk") from None

    def as_dict(self) -> dict:
        out = {"bm": self.bm, "bn": self.bn, "bk": self.bk, "num_stages": self.stages, "split_k": self.split_k}
        out |= {"cluster": self.cluster} if self.cluster != (1, 1) else {}
        out |= {"turns": self.turns, "acc_stages": self.acc_stages} if self.turns > 1 or self.acc_stages > 1 else {}
        return out | ({"stream_k": True} if self.stream_k else {})


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


def gemm_tiles(m: int, n: int, k: int, dtype: str, sms: int = SMS_H100, limit: int = 6) -> tuple[GemmTiles, ...]:
    """The ``limit`` tile choices of lowest modelled cost for an M x N x K ``dtype`` GEMM on a GPU
    with ``sms`` multiprocessors (module docstring), best first; the largest plain tile is always
    among them, so a search never does worse than the default; then the cluster twins of the best
    plain choices (``_cluster_twins``)."""
    shapes = SHAPES_TF32 if dtype == "float32" else SHAPES_16BIT
    found: list[GemmTiles] = []
    for bm, bn, bk, stages, rate in shapes:
        tiles = -(-m // bm) * -(-n // bn)
        k_tiles = -(-k // bk)
        for s in _splits(tiles, k_tiles, sms):
            units = tiles * s
            waves = -(-units // sms)
            cost = waves * bm * bn * bk * -(-k_tiles // s) / rate
            found.append(GemmTiles(bm, bn, bk, _stages_for(bm, bn, bk, stages, s, dtype_bytes(dtype)), s, cost))
    found.sort(key=lambda t: (t.cost, t.split_k, -t.bn))
    best = found[:limit]
    default = next(t for t in found if (t.bm, t.bn, t.split_k) == shapes[0][:2] + (1,))
    if default not in best:
        best[-1] = default
    return tuple(best) + tuple(_cluster_twins(best, m, n)) + tuple(_stream_k_twins(best, m, n, k, sms))


#: Plain choices whose cluster twins a search also measures.
CLUSTER_TWINS_OF = 2


def _cluster_twins(best: list[GemmTiles], m: int, n: int) -> list[GemmTiles]:
    """Pairs of blocks sharing a tile through TMA multicast, for the best ``CLUSTER_TWINS_OF`` plain
    choices: along N (1, 2) the pair reads one A tile, along M (2, 1) one B tile, so the operand
    every block of a row (column) rereads from L2 is read half as often -- what limits a problem of
    few tile rows, where every SM rereads the same A.  The model cannot rank them (their gain is
    L2 traffic it does not count), so they are measured beside their plain twins."""
    out = []
    for t in [t for t in best if t.split_k == 1][:CLUSTER_TWINS_OF]:
        for cl in ((1, 2), (2, 1)):
            pairs = -(-m // t.bm) if cl[0] > 1 else -(-n // t.bn)
            if pairs >= 2:
                out.append(GemmTiles(t.bm, t.bn, t.bk, t.stages, 1, t.cost, cl))
    return out


#: Plain choices whose stream-K twins a search also measures.
STREAM_K_TWINS_OF = 2


def _stream_k_twins(best: list[GemmTiles], m: int, n: int, k: int, sms: int) -> list[GemmTiles]:
    """Stream-K twins (unsplit) of the best ``STREAM_K_TWINS_OF`` tile shapes whose tiles leave the
    last wave partly empty (``gemm_limits.stream_k_units`` shares them; for fewer tiles than SMs
    it is an even split-K): the tail they save is the model's, the partial sums' round trip is
    not, so they are measured beside their twins."""
    out: list[GemmTiles] = []
    for t in [t for t in best if t.cluster == (1, 1)]:
        tiles, k_tiles = -(-m // t.bm) * -(-n // t.bn), -(-k // t.bk)
        dp, workers = stream_k_units(tiles, k_tiles, sms)
        twin = dataclasses.replace(t, split_k=1, stream_k=True)
        if workers and all(o.key != twin.key for o in out):
            rounds = dp // sms + -(-(tiles - dp) * k_tiles // workers) / k_tiles
            out.append(dataclasses.replace(twin, cost=t.cost * rounds / -(-tiles * t.split_k // sms)))
        if len(out) == STREAM_K_TWINS_OF:
            break
    return out


#: The wider space ``tile_space`` walks (what a measured exploration tries; ``gemm_tiles`` ranks a
#: few of it for a tuning search): BM, BN, BK per operand width, split-K part counts.
SPACE_BM, SPACE_BN = (64, 128, 256), (64, 128, 256)
SPACE_BK = {2: (32, 64), 4: (16, 32)}
SPACE_SPLITS = (1, 2, 3, 4, 6, 8)
SPACE_CLUSTERS = ((1, 2), (2, 1))
MAX_STAGES = 8


def _deepest(bm: int, bn: int, bk: int, esz: int, turns: int = 1) -> int:
    """The most stages of A and B tiles that fit beside one 16-bit accumulator staging buffer
    holding ``1 / turns`` of the tile (``smem_layout.Staging.turns``)."""
    return min(MAX_STAGES, (SMEM_CAPACITY - 2048 - bm * bn * 2 // turns) // ((bm + bn) * bk * esz))


def _stages_for(bm: int, bn: int, bk: int, stages: int, split_k: int, esz: int) -> int:
    """``stages``, or for a split-K choice (whose partial sums need the whole tile staged) the most
    that fit beside whole-tile staging."""
    return stages if split_k == 1 else min(stages, _deepest(bm, bn, bk, esz))


def tile_space(m: int, n: int, k: int, dtype: str, sms: int = SMS_H100) -> tuple[GemmTiles, ...]:
    """Every tile choice of the 12-warp GEMM designs worth measuring for one problem, cheapest by
    the ``gemm_tiles`` model first: each BM x BN the two MMA warpgroups can cover (at most 128
    fp32 accumulators a thread), each BK, the deepest pipeline that fits and one stage less, and
    the split-K counts that keep the work units within two waves and each unit at least
    ``MIN_K_TILES_PER_SPLIT`` k tiles deep, pairs of blocks in clusters, and stream-K where the
    last wave is partly empty.  Some may still be refused by the design rules (the
    caller validates); what is left is a benchmark's to measure.

    >>> space = tile_space(128, 8192, 8192, "float16")
    >>> len(space), {t.split_k for t in space} == {1, 2, 3, 4, 6, 8}, {t.cluster for t in space}
    (179, True, {(1, 1), (1, 2), (2, 1)})
    """
    esz = dtype_bytes(dtype)
    found: list[GemmTiles] = []
    for bm in SPACE_BM:
        for bn in SPACE_BN:
            if warpgroup_grid(bm, bn, 2) is None or bm * bn // 256 > 128:
                continue
            for bk in SPACE_BK[esz]:
                deepest = _deepest(bm, bn, bk, esz)
                in_turns = _deepest(bm, bn, bk, esz, STAGING_TURNS[-1])  # unsplit: staging in turns
                tiles = -(-m // bm) * -(-n // bn)
                k_tiles = -(-k // bk)
                for stages in sorted({in_turns, deepest, deepest - 1} - {0, 1}):
                    for s in SPACE_SPLITS:
                        if s > 1 and (stages > deepest or tiles * s > 2 * sms or k_tiles // s < MIN_K_TILES_PER_SPLIT):
                            continue
                        waves = -(-tiles * s // sms)
                        cost = waves * bm * bn * bk * -(-k_tiles // s)
                        found.append(GemmTiles(bm, bn, bk, stages, s, cost))
                        if s == 1:  # pairs of blocks sharing A (along N) or B (along M), where there are pairs
                            found += [GemmTiles(bm, bn, bk, stages, 1, cost, cl) for cl in SPACE_CLUSTERS
                                      if (-(-m // bm) if cl[0] > 1 else -(-n // bn)) >= 2]
                            if stream_k_units(tiles, k_tiles, sms)[1]:  # the last wave's tiles shared
                                found.append(GemmTiles(bm, bn, bk, stages, 1, cost, stream_k=True))
    found.sort(key=lambda t: (t.cost, t.split_k, -t.bn, -t.stages))
    return tuple(found)


def residual_turns(tiles) -> tuple[GemmTiles, ...]:
    """For a design whose epilogue reads a residual beside the accumulator
    (``accumulators.residuals``): the twins of ``tiles``' unsplit 128 x 256 x 64 choices that
    stage the residual in four column slices through two staging stages
    (``smem_layout.turn_slices``), which leaves room for three operand stages where a whole
    residual tile leaves two.

    >>> [t.label for t in residual_turns(gemm_tiles(8192, 8192, 8192, "float16"))][:1]
    ['128x256x64 s3 R in 4 turns x 2']
    """
    out: list[GemmTiles] = []
    for t in tiles:
        if (t.bm, t.bn, t.bk, t.split_k, t.cluster) == (128, 256, 64, 1, (1, 1)):
            twin = dataclasses.replace(t, stages=3, turns=4, acc_stages=2)
            if twin not in out:
                out.append(twin)
    return tuple(out)


__all__ = ["GemmTiles", "MIN_K_TILES_PER_SPLIT", "SHAPES_16BIT", "SHAPES_TF32", "gemm_tiles", "residual_turns",
           "tile_space"]

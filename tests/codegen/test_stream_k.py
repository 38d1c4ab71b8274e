"""Stream-K (problem key STREAM_K): the partition the kernel computes, what the generator emits
and refuses, and the tuner's key.  The kernel's correctness on the GPU is
tests/runtime/test_gemm_lifts.py::test_stream_k_shares_partial_waves_and_keeps_its_counters_clean."""

from __future__ import annotations

import pytest

from pgstudio.analysis.buildable.gemm_limits import STREAM_K_MIN_K_TILES, stream_k_units
from pgstudio.analysis.buildable.gemm_shapes import GemmTiles, gemm_tiles
from pgstudio.codegen.gemm import emit_gemm
from pgstudio.errors import DesignError
from pgstudio.examples import merge_gemm


def _units(tiles: int, k_tiles: int, grid: int) -> list[list[tuple[int, int, int, bool]]]:
    """Per block, its stream-K units as the kernel walks them (scheduler.stream_k_coords, read as
    Python): (shared tile, first k tile, k tiles, finishes)."""
    dp, workers = stream_k_units(tiles, k_tiles, grid)
    iters = (tiles - dp) * k_tiles
    out = []
    for w in range(grid):
        mine = []
        for second in (0, 1):
            sk_tile, kt0, n = 0, 0, 0
            if w < workers:
                beg, end = w * iters // workers, (w + 1) * iters // workers
                t0, cut = beg // k_tiles, (beg // k_tiles + 1) * k_tiles
                crosses = end > cut
                if crosses and second == 0:
                    sk_tile, n = t0 + 1, end - cut
                elif second == (1 if crosses else 0):
                    sk_tile, kt0, n = t0, beg - t0 * k_tiles, min(end, cut) - beg
            if n:
                mine.append((sk_tile, kt0, n, kt0 + n == k_tiles))
        out.append(mine)
    return out


@pytest.mark.parametrize("tiles, k_tiles, grid", [(8, 64, 132), (512, 16, 132), (512, 64, 132), (128, 32, 132),
                                                  (32, 128, 132), (2048, 128, 132), (7168, 128, 132), (4, 2, 132)])
def test_every_k_tile_of_a_shared_tile_is_worked_once_and_one_block_finishes_it(tiles, k_tiles, grid):
    dp, workers = stream_k_units(tiles, k_tiles, grid)
    assert dp % grid == 0 or workers == 0
    if workers == 0:
        assert dp == tiles  # nothing shared: every tile stays whole
        return
    assert tiles - dp <= workers <= grid
    units = _units(tiles, k_tiles, grid)
    covered: dict[int, list[int]] = {}
    finishers: dict[int, int] = {}
    for w, mine in enumerate(units):
        assert len([u for u in mine if not u[3]]) <= 1  # at most one partial per block: one workspace slot
        assert [u[3] for u in mine] == sorted(u[3] for u in mine)  # a partial before the block's finish
        for t, kt0, n, last in mine:
            assert n >= 1
            covered.setdefault(t, []).extend(range(kt0, kt0 + n))
            if last:
                assert t not in finishers
                finishers[t] = w
        assert sum(n for _, _, n, _ in mine) >= min(STREAM_K_MIN_K_TILES, k_tiles) or not mine
    assert sorted(covered) == list(range(tiles - dp)) == sorted(finishers)
    for t, kts in covered.items():
        assert sorted(kts) == list(range(k_tiles))
        # the finisher is the highest worker on its tile; each other worker's partial is its first unit
        on = [w for w, mine in enumerate(units) if any(u[0] == t for u in mine)]
        assert finishers[t] == max(on)
        assert all(units[w][0][0] == t and not units[w][0][3] for w in on if w != finishers[t])


def test_the_kernel_computes_the_partition_of_the_one_rule():
    code = emit_gemm(merge_gemm(4096, 4096, 4096, dtype="bfloat16", stream_k=True)).code
    assert f"* num_k_tiles / {STREAM_K_MIN_K_TILES});" in code
    assert "const int num_tiles = dp_tiles + (sk_workers > 0 ? 2 * (int)gridDim.x : 0);" in code
    epilogue = code[code.index("task 'epilogue'"):code.index("done_epilogue:")]
    assert "if (unit_stores) {" in epilogue  # the epilogue works on finished tiles only
    mma = code[code.index("task 'mma'"):code.index("done_mma:")]
    assert "sk_wait_partials(pg_cnt + sk_tile, peers" in mma and "red_release_gpu(pg_cnt + sk_tile, 1)" in mma
    load = code[code.index("task 'load_a'"):code.index("done_load_a:")]
    assert "if (unit_stores)" not in load and "k0 = (kt0 + kt) * 64;" in load


@pytest.mark.parametrize("kw, arch, words", [
    (dict(split_k=2), "sm_90a", "splits K 2 ways and asks for stream-K"),
    (dict(cluster=(1, 2)), "sm_90a", "clusters blocks (1, 2) and asks for stream-K"),
    ({}, "sm_100a", "stream-K is built for sm_90a, not sm_100a"),
])
def test_what_stream_k_is_not_built_with_is_refused_in_words(kw, arch, words):
    with pytest.raises(DesignError) as info:
        emit_gemm(merge_gemm(dtype="bfloat16", stream_k=True, **kw), arch=arch)
    assert words in str(info.value) and "codegen.stream_k" in str(info.value.code) + str(info.value)


def test_a_stream_k_choice_round_trips_through_its_key_and_the_tuner_measures_twins():
    t = GemmTiles.from_key("128x256x64/s3/k1/sk")
    assert t.stream_k and t.key == "128x256x64/s3/k1/sk" and t.as_dict()["stream_k"] is True
    assert GemmTiles.from_key("128x64x64/s8/k1/c1x2").cluster == (1, 2)
    with pytest.raises(ValueError, match="BMxBNxBK/sSTAGES/kSPLIT"):
        GemmTiles.from_key("128x256x64/s3/k1/c1x2/c2x1")
    keys = [t.key for t in gemm_tiles(4096, 4096, 4096, "bfloat16")]
    assert "128x256x64/s4/k1/sk" in keys and "128x256x64/s4/k1" in keys
    whole = [t.key for t in gemm_tiles(4224, 3072, 1024, "bfloat16")]  # 396 tiles of 128 x 256: 3 full waves
    assert "128x256x64/s4/k1" in whole and "128x256x64/s4/k1/sk" not in whole

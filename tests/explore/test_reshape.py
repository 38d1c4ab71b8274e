"""Design-to-design reshapes (explore.reshape): what the tuner and the sweep build from a user's design."""

from pgstudio import examples
from pgstudio.analysis.buildable.gemm_shapes import gemm_tiles
from pgstudio.explore.reshape import with_gemm_tiles


def test_with_gemm_tiles_builds_what_the_canonical_builder_builds():
    """The tuner reshapes a user's GEMM design to each tile choice: for merge_gemm it is exactly the
    design the example builds at that choice (tiles, stages, split-K parts, cluster, stream-K)."""
    seen_stream_k = False
    for m, n, k in ((128, 8192, 8192), (4168, 3000, 1000)):
        for t in gemm_tiles(m, n, k, "bfloat16", 132):
            seen_stream_k |= t.stream_k
            want = examples.merge_gemm(m, n, k, num_stages=t.stages, bm=t.bm, bn=t.bn, bk=t.bk, dtype="bfloat16",
                                       split_k=t.split_k, cluster=t.cluster, stream_k=t.stream_k)
            assert with_gemm_tiles(examples.merge_gemm(m, n, k, dtype="bfloat16"), t).to_json() == want.to_json(), t
    assert seen_stream_k  # 128 x 8192 x 8192: 32 tiles of 128 x 256 on 132 SMs have stream-K twins


def test_with_gemm_tiles_stages_a_residual_in_the_slices_the_choice_names():
    """A residual's turns are a tile choice too: the tuner's twin of 128 x 256 x 64 builds the
    design the example builds with ``turns`` and ``acc_stages``, and a choice that names none keeps
    the design's own slices."""
    from pgstudio.analysis.buildable.gemm_shapes import GemmTiles, residual_turns
    whole = examples.merge_gemm_resadd(8192, 8192, 8192, num_stages=4, bn=256, bk=32, compact=True)
    twins = residual_turns(gemm_tiles(8192, 8192, 8192, "float16", 132))
    assert twins and all((t.turns, t.acc_stages, t.stages) == (4, 2, 3) for t in twins)
    t = GemmTiles(128, 256, 64, 3, turns=4, acc_stages=2)
    # the reshape keeps the design's tasks (here one draining warp), where the example's default
    # with slices drains with two
    want = examples.merge_gemm_resadd(8192, 8192, 8192, num_stages=3, bn=256, bk=64, compact=True, turns=4,
                                      acc_stages=2, drain_warps=1)
    assert with_gemm_tiles(whole, t).to_json() == want.to_json()
    kept = with_gemm_tiles(want, GemmTiles(128, 256, 64, 3))
    assert kept.resource("smem_r").tile == (128, 64) and kept.resource("tmem_c").pipeline_config.num_stages == 2


def test_a_residual_cannot_be_cut_into_slices_of_part_chunks():
    import pytest

    from pgstudio.errors import PgStudioError
    from pgstudio.explore.reshape import with_residual_turns
    d = examples.merge_gemm_resadd(bn=128)
    with pytest.raises(PgStudioError, match=r"turns=32: the residual .* comes in 1, 2, 4 column slices"):
        with_residual_turns(d, 32, 1)
    assert with_residual_turns(d, 2, 1).resource("smem_r").tile == (128, 64)

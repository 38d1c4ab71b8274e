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

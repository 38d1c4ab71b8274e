"""The lifted generator limits on the GPU: each design verifies against cuBLAS on fresh random data
with poisoned outputs, at tile-multiple and ragged shapes (K ragged too, and K shorter than the
split-K parts, so some work units have no k tiles)."""

import pytest

from gemm_designs import LIFTED, LIFTED_TF32

#: (M, N, K): tile multiples; ragged in every dimension; smaller than one tile (2 k tiles of 64).
SHAPES = [(512, 512, 512), (1000, 776, 520), (129, 264, 72)]

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(LIFTED))
def test_lifted_design_matches_cublas(name, dtype):
    from pgstudio.runtime.run import run_gemm
    d = LIFTED[name](dtype=dtype)
    for seed, (m, n, k) in enumerate(SHAPES):
        res = run_gemm(d, m, n, k, seed=seed)
        assert res.ok and res.checks and all(c.rel_error == c.rel_error for c in res.checks)  # verify() raised otherwise


@pytest.mark.parametrize("name", sorted(LIFTED_TF32))
def test_tf32_design_matches_fp32_cublas(name):
    from pgstudio.runtime.gemm_run import TOLERANCE
    from pgstudio.runtime.run import run_gemm
    d = LIFTED_TF32[name]()
    for seed, (m, n, k) in enumerate(SHAPES):
        res = run_gemm(d, m, n, k, seed=seed)
        assert res.checks and all(c.rel_error <= TOLERANCE["float32"] for c in res.checks)


def _runs_again_with_clean_counters(d, dtype: str, shape: tuple[int, int, int], seed: int) -> None:
    """Verify ``d`` at ``shape``, launch it three times more, find its workspace counters at zero,
    then poison the outputs and launch once more without a reset: every output is right."""
    import cupy as cp

    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime.gemm_run import TOLERANCE, GemmLauncher, GemmWorkload
    from pgstudio.runtime.storage import to_float32
    src = emit_gemm(d)
    la = GemmLauncher(src)
    data = GemmWorkload.make(d, src, *shape, seed=seed)
    la.verify(data)
    for _ in range(3):
        la.launch(data)
    cp.cuda.get_current_stream().synchronize()
    assert int(la.workspace(data)[1].sum()) == 0
    data.poison()
    la.launch(data)  # no reset in between: the kernel left the counters at zero
    cp.cuda.get_current_stream().synchronize()
    for out, want in data.reference().items():
        got = to_float32(data.arrays[out], dtype)
        assert not bool(cp.isnan(got).any())
        assert float(cp.abs(got - want).max()) <= TOLERANCE[dtype] * float(cp.abs(want).max())


def test_split_k_runs_again_after_a_launch_and_keeps_its_counters_clean():
    """The last unit of a tile resets the tile's counters, so back-to-back launches stay right."""
    _runs_again_with_clean_counters(LIFTED["split_k2"](dtype="float16"), "float16", (1000, 776, 520), 7)


#: (M, N, K) that share tiles by k tiles: fewer tiles than SMs with 7 partials a tile; a full wave
#: before the shared ones; a ragged shape whose shares end inside a k tile; and K too short to
#: share, where every tile stays whole.
STREAM_K_SHAPES = [(512, 512, 4096), (4096, 4096, 1024), (1000, 776, 2056), (4096, 4096, 256)]


@pytest.mark.parametrize("name", ["stream_k", "stream_k_bn128", "resadd_stream_k", "fork_stream_k", "turns2_stream_k",
                                  "resadd_turns4_stream_k"])
def test_stream_k_shares_partial_waves_and_keeps_its_counters_clean(name):
    """Every stream-K unit's partials reach the block that finishes its tile, at shapes that share
    tiles several ways; back-to-back launches leave the counters at zero (the finisher resets)."""
    from pgstudio.runtime.run import run_gemm
    d = LIFTED[name](dtype="bfloat16")
    for seed, (m, n, k) in enumerate(STREAM_K_SHAPES):
        res = run_gemm(d, m, n, k, seed=seed)
        assert res.ok and res.checks
    _runs_again_with_clean_counters(d, "bfloat16", (512, 512, 4096), 9)

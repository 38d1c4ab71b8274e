"""On a GPU: every streaming design and its twin verify (fp32, bf16, sizes that are and are not
multiples of the tile); a kernel with an arrive count one too high ends through its watchdog with
the right barrier named, and the next kernel in the process runs and verifies; benchmarks run."""

import time

import pytest

from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.errors import KernelHangError
from stream_designs import async_compute, cp_async_copy, mixed_merge, wrong_count

pytestmark = pytest.mark.gpu

SIZES = (1, 7, 2049, 3 * 16384 + 5, 64 * 8192, 1_000_003)
STREAMING = [examples.example(n) for n in examples.STREAMING]


def _designs(dtype):
    for name in examples.STREAMING:
        d = examples.example(name, dtype=dtype)
        yield d
        yield examples.ungrouped(d)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("index", range(6))
def test_streaming_designs_and_twins_verify_at_every_size(dtype, index):
    from pgstudio.runtime import run
    design = list(_designs(dtype))[index]
    for n in SIZES:
        res = run(design, n=n, timing=False)
        assert res.ok and res.shape == (n,) and len(res.checks) == len([r for r in design.resources
                                                                   if r.name.startswith("gmem_d")])
        assert all(c.bad == 0 for c in res.checks), [str(c) for c in res.checks]


def test_fp16_and_async_producers_verify():
    from pgstudio.runtime import run
    for d in (examples.merge_copy(dtype="float16"), examples.fork_copy(dtype="float16"), async_compute(),
              async_compute(dtype="bfloat16"), cp_async_copy(), cp_async_copy(dtype="float16"), mixed_merge(),
              mixed_merge(dtype="bfloat16")):
        for n in (5, 1_000_003):
            assert run(d, n=n, timing=False).ok, d.name


def test_tensors_named_like_the_functions_of_an_expression_verify():
    """Tensors called expf and fmaxf do not hide the C functions the expressions call."""
    import re
    from pgstudio import Design
    from pgstudio.runtime import run
    text = re.sub(r"\bgmem_b\b", "fmaxf", re.sub(r"\bgmem_a\b", "expf", async_compute().to_json()))
    d = Design.from_json(text)  # D = sigmoid(max(expf, 0) * fmaxf) - 0.5
    assert d.validate().ok and d.resource("smem_s").compute.expr == "max(expf, 0.f) * fmaxf"
    assert run(d, n=100_003, timing=False).ok


def test_small_stages_and_many_stages_verify():
    from pgstudio.runtime import run
    for mode_design in (examples.merge_copy(num_stages=16, tile_bytes=256),
                        examples.fused_merge_copy(num_stages=8, tile_bytes=256),
                        examples.fork_copy(num_stages=2, tile_bytes=65536)):
        for n in (100, 777_777):
            assert run(mode_design, n=n, timing=False).ok, mode_design.name


@pytest.mark.parametrize("mode", ["Merge", "Fork", "FusedMerge"])
@pytest.mark.parametrize("depth", [16, examples.MAX_CHAIN_GROUPS])
def test_deep_chains_verify_with_and_without_a_tail(mode, depth):
    """Every group of a deep chain is computed once per element, in the tile path and in the tail
    (sizes that are not a whole number of 16-byte vectors); the values match the reference bit for bit."""
    from pgstudio.runtime import run
    for dtype in ("float32", "bfloat16", "float16"):
        d = examples.chain(depth, mode, dtype=dtype)
        tile = d.problem_dict["tile_elems"]
        for n in (5, 37 * tile + 3, 1_000_003):
            res = run(d, n=n, timing=False)
            assert res.ok and res.checks[0].max_abs == 0.0, (d.name, dtype, n, [str(c) for c in res.checks])


@pytest.mark.parametrize("which, tasks, barrier, iteration", [
    ("empty", ("load_a", "load_b"), "ab.shared_empty", 4),  # 129 expected, 128 consumer threads arrive
    ("full", ("store",), "ab.full_0", 0),  # 2 expected, one elected producer thread arrives
])
def test_an_arrive_count_one_too_high_is_caught_and_the_context_survives(which, tasks, barrier, iteration):
    from pgstudio.runtime import run
    from pgstudio.runtime.compile import load
    bad = wrong_count(which)
    load(emit(bad, validate=False))  # compile and load first: the clock below times the hang alone
    t0 = time.perf_counter()
    with pytest.raises(KernelHangError) as info:
        run(bad, n=64 * 2048, validate=False, timing=False, grid=1, executor="inline")  # one block: a deterministic first waiter
    elapsed = time.perf_counter() - t0
    r = info.value.record
    assert elapsed < 2.0
    assert r["task"] in tasks and r["barrier"] == barrier and r["stage"] == 0 and r["iteration"] == iteration
    assert r["block"] == 0 and r["complete"] and r["waited_ms"] >= 1000.0
    assert barrier in str(info.value) and f"task {r['task']!r}" in str(info.value)
    good = run(examples.merge_copy(), n=1 << 22, repeats=5, executor="inline")  # the same process, the same context
    assert good.ok and good.median_ms > 0


def test_run_result_is_cached_and_displays():
    from pgstudio.runtime import run
    d = examples.merge_copy(num_stages=3)
    first = run(d, n=1 << 20, repeats=5, executor="inline")
    again = run(d, n=1 << 20, repeats=5, executor="inline")
    assert again.cached and again.compile_s == 0.0
    assert len(again.times_ms) == 5 and again.gbps > 0
    from pgstudio.render.display import bundle as views_of
    bundle = views_of(again)
    assert "<table>" in bundle["text/html"] and "verified" in bundle["text/plain"]
    assert first.grid >= 1 and first.blocks_per_sm >= 1


def test_benchmark_interleaves_the_design_its_twin_and_the_library():
    from pgstudio.runtime import benchmark
    t = benchmark(examples.merge_copy(), n=1 << 22, rounds=4, progress=False)  # as given: no tuning
    names = [r.name for r in t.rows]
    assert names == ["merge_copy", "merge_copy_ungrouped", "cupy elementwise", "cp.add", "device copy"]
    assert all(r.median_ms > 0 and r.runs == 4 for r in t.rows)
    assert t.speedup("merge_copy", "merge_copy_ungrouped") > 0 and "GB/s" in str(t)
    fork = benchmark(examples.fork_copy(dtype="bfloat16"), n=(1 << 20) + 3, rounds=2, progress=False)
    assert [r.name for r in fork.rows] == ["fork_copy", "fork_copy_ungrouped", "cupy elementwise", "device copy"]

"""On a GPU: the executors time real kernels.

* The embedded executor and Ray each time the 48-variant merge_copy sweep, every variant verified;
  their medians agree within 5% per variant.
* ``mistakes.undersized_consumer_group()`` run with ``validate=False`` reports a clear error (the
  design, what ran, and the likely cause), and the next benchmark in the same process runs and
  verifies: the process that asked never touched the broken CUDA context.

Run on a GPU machine: ``python -m pytest -q tests/runtime/test_gpu_executor.py -s`` (the sweep
tables are printed; ``-m gpu`` selects these).
"""

import pytest

from pgstudio import examples, mistakes
from pgstudio.errors import KernelFault, KernelHangError, PgStudioError
from pgstudio.runtime.bench import benchmark
from pgstudio.runtime.executor.embedded import EmbeddedExecutor
from pgstudio.explore.sweep import OK, sweep

pytestmark = pytest.mark.gpu

N = 1 << 26  # 768 MiB moved per launch: long enough (~0.2 ms) for stable medians
ROUNDS = 30


@pytest.fixture(scope="module")
def embedded_sweep(tmp_path_factory):
    ex = EmbeddedExecutor()
    table = sweep(examples.merge_copy(num_elements=N), n=N, rounds=ROUNDS, executor=ex,
                  results=tmp_path_factory.mktemp("gpu") / "embedded.jsonl", progress=False)
    ex.close()
    print(table.table())
    return table


def test_the_embedded_executor_times_every_variant_verified(embedded_sweep):
    t = embedded_sweep
    assert len(t.rows) == 48 and [r.status for r in t.rows] == [OK] * 48, t.table()
    assert all(r.runs == ROUNDS and r.rate > 0 and r.median_ms > 0 for r in t.rows)
    assert all(r.where.startswith("GPU ") for r in t.rows)


@pytest.mark.cluster
def test_ray_times_the_same_sweep_within_5_percent_per_variant(embedded_sweep, ray_local, tmp_path):
    from pgstudio.runtime.executor.cluster import RayExecutor
    ex = RayExecutor()
    assert ex.gpu_count() >= 1, ex.describe()
    t = sweep(examples.merge_copy(num_elements=N), n=N, rounds=ROUNDS, executor=ex, results=tmp_path / "ray.jsonl",
              progress=False)
    print(t.table())
    assert [r.status for r in t.rows] == [OK] * 48, t.table()
    assert all(r.where.startswith("ray ") for r in t.rows)
    off = []
    for r in t.rows:
        e = embedded_sweep.row(r.grouping, r.num_stages, r.tile)
        ratio = r.median_ms / e.median_ms
        print(f"{r.label:<24} embedded {e.median_ms:.4f} ms  ray {r.median_ms:.4f} ms  ratio {ratio:.3f}")
        if not 0.95 <= ratio <= 1.05:
            off.append(f"{r.label}: {ratio:.3f}")
    assert not off, "medians differ by more than 5%: " + ", ".join(off)


def test_a_trapping_kernel_costs_a_worker_not_this_process():
    ex = EmbeddedExecutor()
    bad = mistakes.undersized_consumer_group()
    with pytest.raises(PgStudioError) as info:
        benchmark(bad, validate=False, rounds=5, executor=ex, progress=False)
    err = info.value
    print(f"{type(err).__name__}: {err}")
    assert "undersized_consumer_group" in str(err)
    if isinstance(err, KernelFault):  # a trap (the H200 reports cudaErrorLaunchFailure)
        assert err.cause.startswith("design.validate() reports [")
        assert "the worker was replaced and this process is unaffected" in str(err)
    else:  # the watchdog or the check caught it first: still a clear error, the worker kept
        assert isinstance(err, (KernelHangError, PgStudioError))
    table = benchmark(examples.merge_copy(), rounds=5, executor=ex, progress=False)  # the next one works
    print(table.table())
    assert table.rows[0].name == "merge_copy" and table.rows[0].median_ms > 0
    ex.close()


def test_the_canonical_merge_gemm_sweep_times_at_least_12_verified_variants(tmp_path):
    from pgstudio.explore.sweep import FAILED
    t = sweep(examples.merge_gemm(), rounds=10, results=tmp_path / "merge_gemm.jsonl", progress=False)
    print(t.table())
    assert t.count(OK) >= 12, t.table()
    assert t.count(FAILED) == 0, [f"{r.label}: {r.message}" for r in t.rows if r.status == FAILED]
    assert t.unit == "TFLOP/s" and t.best.rate > 0

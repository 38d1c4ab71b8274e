"""runtime.bench and runtime.gemm_bench on a CPU: which designs CuPy has a one-call ufunc peer for
(a plain ``x op y`` of two inputs, through copies, and nothing else), the CuPy peers needing CuPy,
and a tuned GEMM benchmark on the null runtime keeping the design as given beside the tuner's."""

from __future__ import annotations

import math

import pytest

from pgstudio import examples
from pgstudio.errors import GpuUnavailable
from pgstudio.runtime._cupy import gpu_available
from pgstudio.runtime.backend import NULL
from pgstudio.runtime.bench import device_copy, elementwise_peer, library, ufunc_of, ufunc_peer
from pgstudio.runtime.gemm_bench import benchmark_gemm, library_gemm
from pgstudio.runtime.tuned import Tuned

no_gpu = pytest.mark.skipif(gpu_available(), reason="the no-GPU path")


def _async(store, expr="max(gmem_a, 0.f) * gmem_b"):
    from stream_designs import async_compute  # tests/codegen, on the path through tests/runtime/conftest.py
    return async_compute(expr=expr, store=store)


@pytest.mark.parametrize("store, want", [
    ("smem_s * smem_s", None),  # smem_s is computed, not a copy of an input: no ufunc computes it
    ("sigmoid(smem_s) - 0.5", None),  # a call inside: not one ufunc of two names
    ("smem_s - 2.0", None),  # a name and a number
])
def test_only_a_binary_op_of_two_copied_inputs_is_a_ufunc(store, want):
    assert ufunc_of(_async(store), "float32") is want


def test_a_copy_of_a_copy_is_still_its_input():
    d = _async("smem_s + smem_s", expr="gmem_a")  # smem_s = gmem_a, copied by a compute step
    assert ufunc_of(d, "float32") == ("add", "gmem_a", "gmem_a", "gmem_d")
    assert ufunc_of(d, "float16") == ("add", "gmem_a", "gmem_a", "gmem_d")


def test_the_null_library_rows_are_the_cupy_paths_of_the_design():
    work = NULL.stream_workload(examples.merge_copy(), 1 << 12, "float32")
    assert [(label, what) for label, what, _ in library(work, NULL)] == [
        ("cupy elementwise", "CuPy ElementwiseKernel"), ("cp.add", "CuPy")]
    fork = NULL.stream_workload(examples.fork_copy(), 1 << 12, "float32")
    assert [label for label, _, _ in library(fork, NULL)] == ["cupy elementwise"]
    assert ufunc_peer(fork) is None  # nothing to build, so nothing needs CuPy
    copy = device_copy(work, NULL)
    assert copy.amount == 2 * (1 << 12) * 4 and "0.00 GiB" in copy.what


@no_gpu
def test_the_cupy_peers_need_cupy_in_words():
    work = NULL.stream_workload(examples.merge_copy(), 1 << 12, "float32")
    with pytest.raises(GpuUnavailable, match="no GPU here"):
        elementwise_peer(work)
    with pytest.raises(GpuUnavailable, match="no GPU here"):
        ufunc_peer(work)


@no_gpu
def test_the_library_gemms_need_cupy_in_words():
    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime.backend import CUDA
    d = examples.merge_gemm(256, 256, 128)
    work = NULL.gemm_workload(d, emit_gemm(d), 256, 256, 128)
    with pytest.raises(GpuUnavailable, match="no GPU here"):
        library_gemm(d, work, CUDA)


def test_a_tuned_gemm_benchmark_keeps_the_design_as_given_beside_the_tuners():
    given = examples.merge_gemm(512, 512, 256)
    tuned = Tuned(examples.merge_gemm(512, 512, 256, num_stages=2), "128x128x64 s2", "the model's first choice")
    t = benchmark_gemm(given, rounds=2, tuned=tuned, backend=NULL)
    names = [r.name for r in t.rows]
    assert names[:3] == ["merge_gemm", "merge_gemm_ungrouped", "merge_gemm_as_designed"]
    assert [r.what for r in t.rows[:3]] == ["pgstudio, 1 group(s), tuned: 128x128x64 s2",
                                            "pgstudio, per-resource barriers", "pgstudio, the design as given"]
    assert t.note == "tuned: 128x128x64 s2 (the model's first choice)" and not t.measured
    assert all(math.isnan(r.median_ms) for r in t.rows)
    same = benchmark_gemm(given, rounds=1, tuned=Tuned(given, "as given", "cache"), backend=NULL, peers=False)
    assert [r.name for r in same.rows] == ["merge_gemm", "merge_gemm_ungrouped"]  # nothing else to show

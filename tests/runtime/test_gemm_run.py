"""Running GEMM kernels: every design and its ungrouped twin against cuBLAS on fresh random data
with poisoned outputs, at tile-multiple and ragged shapes, fp16 and bf16; the watchdog; the SASS."""

import dataclasses
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
from gemm_designs import ALL, gemm_design  # noqa: E402

from pgstudio.codegen.gemm import emit_gemm  # noqa: E402
from pgstudio.errors import DesignError, KernelHangError  # noqa: E402
from pgstudio.examples import merge_gemm  # noqa: E402
from pgstudio.runtime.gemm_run import evaluate, is_gemm  # noqa: E402

#: (M, N, K): tile multiples, ragged in every dimension, and smaller than one tile.
SHAPES = [(512, 512, 512), (1000, 776, 520), (129, 264, 72)]


def test_reference_expressions_evaluate_without_eval():
    x = np.array([-1.0, 2.0])
    assert evaluate("max(smem_act, 0.f)", {"smem_act": x}, np).tolist() == [0.0, 2.0]
    assert evaluate("tmem_c + 2 * smem_r", {"tmem_c": x, "smem_r": x}, np).tolist() == [-3.0, 6.0]
    with pytest.raises(DesignError):
        evaluate("__import__('os')", {}, np)


def test_is_gemm():
    from pgstudio.examples import merge_copy
    assert is_gemm(merge_gemm()) and not is_gemm(merge_copy())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,twin", ALL)
def test_matches_cublas(name, twin, dtype):
    from pgstudio.runtime.run import run_gemm
    d = gemm_design(name, twin, dtype=dtype)
    for seed, (m, n, k) in enumerate(SHAPES):
        res = run_gemm(d, m, n, k, seed=seed)
        assert res.ok and res.checks and all(c.rel_error == c.rel_error for c in res.checks)  # verify() raised otherwise


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_b_stored_n_by_k(dtype):
    from pgstudio.runtime.run import run_gemm
    run_gemm(merge_gemm(dtype=dtype), 1000, 776, 520, seed=3, b_major="k")


@pytest.mark.gpu
def test_tensors_named_like_kernel_words_verify():
    """The generated GEMM names tensor pointers g_<name>: a design's tensors may be called o, src,
    M or wd_abort (words of the kernel and its arguments) and the kernel still computes D = A @ B."""
    from pgstudio.runtime.run import run_gemm
    from pgstudio.model.edits import rename_resource
    d = merge_gemm(b_producer="async")
    for old, new in (("gmem_a", "M"), ("gmem_b", "src"), ("gmem_d", "o")):
        d = rename_resource(d, old, new)
    assert d.validate().ok
    run_gemm(d, 1000, 776, 520, seed=4)
    run_gemm(rename_resource(merge_gemm(), "gmem_d", "wd_abort"), 512, 512, 512, seed=5)


@pytest.mark.gpu
def test_watchdog_names_a_barrier_that_never_completes():
    from pgstudio import barrier_layout
    from pgstudio.runtime.gemm_run import GemmLauncher, GemmWorkload
    d = merge_gemm()
    src = emit_gemm(d)
    # plant a wrong arrive count on A's full barrier: its phase never completes, the pipeline stops
    wrong = re.sub(r"pg_mbar_init\(bar0 \+ 0u, 1u\);  // ab\.full_0\[0\]", "pg_mbar_init(bar0 + 0u, 2u);  // ab.full_0[0]", src.code)
    assert wrong != src.code
    bad = dataclasses.replace(src, code=wrong)
    la = GemmLauncher(bad, budget_ms=200)
    data = GemmWorkload.make(d, bad, 512, 512, 256, seed=0)
    with pytest.raises(KernelHangError) as info:
        la.verify(data)
    rec = info.value.record
    assert rec["task"] in {t.name for t in d.tasks}
    assert rec["barrier"] in {s.name for s in barrier_layout(d).sets} and "hung" in str(info.value)
    run = GemmLauncher(src)  # the context is still usable: the correct kernel runs afterwards
    assert all(c.ok for c in run.verify(GemmWorkload.make(d, src, 512, 512, 256, seed=1)))


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("cuobjdump") is None, reason="no cuobjdump")
def test_loaded_sm90a_kernel_sass_has_hgmma(tmp_path):
    from pgstudio.runtime.compile import cubin_for
    cub = cubin_for(emit_gemm(merge_gemm()))
    path = tmp_path / "k.cubin"
    path.write_bytes(cub.data)
    sass = subprocess.run(["cuobjdump", "--dump-sass", str(path)], capture_output=True, text=True, check=True).stdout
    assert "HGMMA.64x256x16.F32" in sass

"""Every GEMM configuration the GPU benchmarks may run compiles for sm_90a, so a GPU session never
meets a compile error: the tile choices of ``benchmarks/gemm.py --suite`` (every suite shape and
dtype), the layouts of ``benchmarks/fusion.py`` (every K and dtype) and the lifted variants the GPU
tests run (``gemm_designs.LIFTED`` / ``LIFTED_TF32``: BK=32, BM=64, tf32, fp32 output, split-K) and the
A/B configurations of ``benchmarks/gemm_ab.py``.  The list
and the compile are ``benchmarks/gemm_precompile.py``'s: validated, emitted, compiled by NVRTC
once per distinct source in a pool of two processes."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

pytestmark = [pytest.mark.nvrtc, pytest.mark.timeout(600)]


def test_every_benchmark_configuration_is_valid_and_compiles_for_sm_90a():
    import gemm_precompile as pre
    t0 = time.perf_counter()
    configs = pre.configurations()
    found, invalid = pre.sources(configs)
    assert not invalid, "benchmark configurations the rules refuse:\n" + "\n".join(invalid[:10])
    failed = pre.compile_all(found, jobs=2)
    print(f"\n{len(configs)} configurations, {len(found)} distinct sources compiled in {time.perf_counter() - t0:.0f} s")
    assert not failed, "\n".join(f"{found[k][0]}: {why}" for k, why in list(failed.items())[:3])
    labels = " ".join(label for label, _ in found.values())
    for kind in ("suite", "fusion", "lifted", "ab"):  # each list contributes sources of its own
        assert f"{kind} " in labels
    assert len(found) >= 10

"""Every GEMM configuration the GPU benchmarks may run compiles for sm_90a (issue 15): the tile
choices of ``benchmarks/gemm.py --suite`` (``gemm_suite.candidates``: every suite shape and dtype),
of ``benchmarks/fusion.py`` (every K and dtype), and the lifted variants the GPU tests run
(``gemm_designs.LIFTED`` / ``LIFTED_TF32``: BK=32, BM=64, tf32, fp32 output, split-K).  Each is
validated, emitted and compiled by NVRTC, once per distinct source, in a pool of two processes;
the cubins land in the on-disk cache, so a GPU run that shares the cache compiles nothing."""

from __future__ import annotations

import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from gemm_designs import LIFTED, LIFTED_TF32
from pgstudio.codegen import emit

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

pytestmark = [pytest.mark.nvrtc, pytest.mark.timeout(600)]


def configurations() -> list[tuple[str, object]]:
    """(label, design) of every configuration, in the order the GPU script meets them."""
    import fusion
    import gemm_suite
    out = []
    for m, n, k in gemm_suite.SUITE:
        for dt in gemm_suite.DTYPES:
            out += [(f"suite {m}x{n}x{k} {dt} {t.label}", d) for t, d in gemm_suite.candidates(m, n, k, dt)]
    for k in fusion.KS:
        for dt in fusion.DTYPES:
            out += [(f"fusion K={k} {dt} {d.name} {d.problem_dict['BN']}", d) for d in fusion.designs(k, dt)]
    for name, make in sorted(LIFTED.items()):
        out += [(f"lifted {name} {dt}", make(dtype=dt)) for dt in ("float16", "bfloat16")]
    out += [(f"lifted {name}", make()) for name, make in sorted(LIFTED_TF32.items())]
    return out


def _compile(src):
    from pgstudio.runtime.compile import cubin_for
    try:
        cubin_for(src)
        return src.key, ""
    except Exception as exc:  # noqa: BLE001 - reported by the test with the configuration
        return src.key, f"{type(exc).__name__}: {exc}"[:1500]


def test_every_benchmark_configuration_is_valid_and_compiles_for_sm_90a():
    t0 = time.perf_counter()
    configs = configurations()
    sources, invalid = {}, []
    for label, d in configs:
        d = d.with_targets("sm_90a")
        errors = d.validate().errors
        if errors:
            invalid.append(f"{label}: {[e.code for e in errors]} {errors[0].message[:200]}")
            continue
        src = emit(d, arch="sm_90a")
        sources.setdefault(src.key, (label, src))
    assert not invalid, "benchmark configurations the rules refuse:\n" + "\n".join(invalid[:10])
    with ProcessPoolExecutor(max_workers=2) as pool:
        failed = {k: why for k, why in pool.map(_compile, [s for _, s in sources.values()]) if why}
    print(f"\n{len(configs)} configurations, {len(sources)} distinct sources compiled in "
          f"{time.perf_counter() - t0:.0f} s")
    assert not failed, "\n".join(f"{sources[k][0]}: {why}" for k, why in list(failed.items())[:3])
    assert len(sources) >= 10  # the suite's tile choices, fusion's layouts and every lifted variant

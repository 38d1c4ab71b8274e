#!/usr/bin/env python3
"""Compile every GEMM configuration the GPU benchmarks and GPU tests run, once, in parallel.

    PYTHONPATH=$PWD python3 benchmarks/gemm_precompile.py [--jobs N]

The configurations: the tile choices of ``gemm.py --suite`` (``gemm_suite.candidates`` for every
suite shape and dtype), the layouts of ``fusion.py`` (every K and dtype) and the lifted variants
of the GPU tests (``tests/codegen/gemm_designs.py``: BK=32, BM=64, tf32, fp32 output, split-K)
and the A/B configurations of ``gemm_ab.py`` and ``residual_turns.py``.
Each is validated and emitted for sm_90a and compiled by NVRTC once per distinct source into the
on-disk cache (``$PGSTUDIO_CACHE`` or ``~/.cache/pgstudio/kernels``), so the runs that follow
load cubins instead of compiling one at a time.  ``tests/codegen/test_gemm_configs_compile.py``
runs the same list on CPU CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def configurations() -> list[tuple[str, object]]:
    """(label, design) of every configuration, in the order the GPU runs meet them."""
    import fusion
    import gemm_suite
    sys.path.insert(0, str(HERE.parent / "tests" / "codegen"))
    from gemm_designs import LIFTED, LIFTED_TF32
    out = []
    for m, n, k in gemm_suite.SUITE:
        for dt in gemm_suite.DTYPES:
            out += [(f"suite {m}x{n}x{k} {dt} {t.label}", d) for t, d in gemm_suite.candidates(m, n, k, dt)]
    for k in fusion.KS:
        for dt in fusion.DTYPES:
            out += [(f"fusion K={k} {dt} {d.name} BN={d.problem_dict['BN']}", d) for d in fusion.designs(k, dt)]
    for name, make in sorted(LIFTED.items()):
        out += [(f"lifted {name} {dt}", make(dtype=dt)) for dt in ("float16", "bfloat16")]
    out += [(f"lifted {name}", make()) for name, make in sorted(LIFTED_TF32.items())]
    import gemm_ab
    out += [(f"ab {c[0]} {c[1]} {'x'.join(map(str, c[2:5]))} {c[6]}", gemm_ab.design(*c[1:])) for c in gemm_ab.CONFIGS]
    import residual_turns
    out += [(f"ab residual {layout} K={k}", residual_turns.design(k, layout, "float16"))
            for k in residual_turns.KS for layout in residual_turns.LAYOUTS]
    return out


def sources(configs) -> tuple[dict, list[str]]:
    """({source key: (label, KernelSource)} for sm_90a, [why each refused configuration is refused])."""
    from pgstudio.codegen import emit
    found, invalid = {}, []
    for label, d in configs:
        d = d.with_targets("sm_90a")
        errors = d.validate().errors
        if errors:
            invalid.append(f"{label}: {[e.code for e in errors]} {errors[0].message[:200]}")
            continue
        src = emit(d, arch="sm_90a")
        found.setdefault(src.key, (label, src))
    return found, invalid


def compile_one(src) -> tuple[str, str]:
    """(source key, '' or why NVRTC refused it)."""
    from pgstudio.runtime.compile import cubin_for
    try:
        cubin_for(src)
        return src.key, ""
    except Exception as exc:  # noqa: BLE001 - reported with the configuration
        return src.key, f"{type(exc).__name__}: {exc}"[:1500]


def compile_all(found: dict, jobs: int) -> dict[str, str]:
    """{source key: why} of the sources that did not compile."""
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return {k: why for k, why in pool.map(compile_one, [s for _, s in found.values()]) if why}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 2))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    configs = configurations()
    found, invalid = sources(configs)
    failed = compile_all(found, args.jobs)
    print(f"{len(configs)} configurations, {len(found)} distinct sources, {len(failed)} failed, {len(invalid)} refused "
          f"by the rules; {time.perf_counter() - t0:.1f} s with {args.jobs} process(es)")
    for line in invalid[:5] + [f"{found[k][0]}: {why[:300]}" for k, why in list(failed.items())[:5]]:
        print("  " + line)
    return 1 if failed or invalid else 0


if __name__ == "__main__":
    sys.exit(main())

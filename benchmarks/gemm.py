"""merge_gemm vs its ungrouped twin vs cuBLAS on the GPU, in one run.

    python benchmarks/gemm.py                       # 8192^3 and 4096^3, float16 and bfloat16
    python benchmarks/gemm.py --sizes 4096 --dtypes float16 --designs merge_gemm fused_merge_gemm

Every variant is verified against a float32 cuBLAS reference (fresh random data, poisoned
outputs) before it is timed; times are medians of interleaved rounds (CUDA events).  cuBLAS is
``cupy.matmul`` for float16 and ``cublasGemmEx`` for bfloat16 (CuPy has no bfloat16 dtype).
"""

from __future__ import annotations

import argparse
import sys

from pgstudio.examples import CANONICAL
from pgstudio.runtime.gemm_run import benchmark_gemm


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8192, 4096])
    ap.add_argument("--dtypes", nargs="+", default=["float16", "bfloat16"])
    ap.add_argument("--designs", nargs="+", default=["merge_gemm"])
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args(argv)
    head = f"{'M=N=K':>6} {'dtype':<9} {'variant':<34} {'median ms':>10} {'TFLOP/s':>8} {'x cuBLAS':>9}"
    print(head)
    print("-" * len(head))
    summary = []
    for size in args.sizes:
        for dtype in args.dtypes:
            for name in args.designs:
                d = CANONICAL[name](m=size, n=size, k=size, dtype=dtype)
                table = benchmark_gemm(d, rounds=args.rounds, seed=size)
                lib = next((r for r in table.rows if r[0].startswith("cuBLAS")), None)
                for variant, ms, tf in table.rows:
                    rel = f"{tf / lib[2]:.3f}" if lib else "-"
                    print(f"{size:>6} {dtype:<9} {variant:<34} {ms:>10.4f} {tf:>8.1f} {rel:>9}")
                rows = {r[0]: r for r in table.rows}
                twin = rows.get(f"{name}_ungrouped")
                summary.append(f"{name} {size}^3 {dtype}: {rows[name][2] / lib[2]:.3f} x cuBLAS"
                               + (f", grouped / ungrouped time {rows[name][1] / twin[1]:.3f}" if twin else "")
                               if lib else f"{name} {size}^3 {dtype}: no cuBLAS baseline")
                sys.stdout.flush()
    print()
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

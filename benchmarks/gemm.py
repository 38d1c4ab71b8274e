"""GEMM designs on the GPU against the best library GEMM (and Triton), in one run.

    python benchmarks/gemm.py                       # merge_gemm vs its twin vs the libraries: 8192^3 and 4096^3, fp16 and bf16
    python benchmarks/gemm.py --sizes 4096 --dtypes float16 --designs merge_gemm fused_merge_gemm
    python benchmarks/gemm.py --suite --results suite.jsonl    # the shape suite (gemm_suite.py), resumable

Every variant is verified against a float32 reference (fresh random data, poisoned outputs)
before it is timed; times are medians of interleaved rounds.  The library peers are every GEMM
a user would call (``pgstudio.runtime.peers``: ``torch.matmul`` -- cuBLASLt with its heuristics --
and ``cublasGemmEx`` through CuPy); "x best lib" divides the fastest of them by the row's time.

``--suite`` runs the shape suite: merge_gemm at the tile shape a short cached search
picks for each problem (``explore.tuning.tune_gemm``), the library peers, and a persistent TMA matmul in
Triton (``triton_matmul.py``), with the geometric means and the lowest ratio against the targets.
Items are appended to ``--results`` as they finish; run the same command again to resume after a
crash (the interrupted item is recorded as crashed).  ``--table`` prints a results file again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pgstudio.examples import CANONICAL


def designs_table(args) -> int:
    from pgstudio.runtime.gemm_bench import benchmark_gemm
    head = f"{'M=N=K':>6} {'dtype':<9} {'variant':<34} {'median ms':>10} {'TFLOP/s':>8} {'x best lib':>10}"
    print(head)
    print("-" * len(head))
    summary = []
    for size in args.sizes:
        for dtype in args.dtypes:
            for name in args.designs:
                d = CANONICAL[name](m=size, n=size, k=size, dtype=dtype)
                table = benchmark_gemm(d, rounds=args.rounds, seed=size)
                best = table.best_peer
                for r in table.rows:
                    rel = f"{best[1] / r.median_ms:.3f}" if best else "-"
                    print(f"{size:>6} {dtype:<9} {r.name:<34} {r.median_ms:>10.4f} {r.rate:>8.1f} {rel:>10}")
                rows = {r.name: r for r in table.rows}
                twin = rows.get(f"{name}_ungrouped")
                summary.append(f"{name} {size}^3 {dtype}: {table.vs_best_library():.3f} x best library ({best[0]})"
                               + (f", grouped / ungrouped time {rows[name].median_ms / twin.median_ms:.3f}"
                                  if twin else "")
                               if best else f"{name} {size}^3 {dtype}: no library peer")
                sys.stdout.flush()
    print()
    print("\n".join(summary))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8192, 4096])
    ap.add_argument("--dtypes", nargs="+", default=["float16", "bfloat16"])
    ap.add_argument("--designs", nargs="+", default=["merge_gemm"])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--suite", action="store_true", help="run the shape suite (gemm_suite.py)")
    ap.add_argument("--shapes", nargs="+", default=None, help="suite shapes as MxNxK (default: the whole suite)")
    ap.add_argument("--results", default="gemm_suite.jsonl", help="suite results file (JSON lines, resumable)")
    ap.add_argument("--no-triton", action="store_true", help="leave the Triton peer out")
    ap.add_argument("--table", action="store_true", help="print the suite table of --results and stop")
    ap.add_argument("--profile", metavar="MxNxK", help="verify, then launch 3 times the tuned merge_gemm of one shape "
                    "(first --dtypes entry; tiles from the tuning cache or the model) -- to run under ncu")
    ap.add_argument("--tiles", metavar="KEY", help="with --profile: this tile choice (e.g. 128x256x64/s3/k4), "
                    "not the tuned one")
    args = ap.parse_args(argv)
    if args.profile:
        import gemm_suite
        m, n, k = (int(x) for x in args.profile.lower().split("x"))
        print(gemm_suite.profile(m, n, k, args.dtypes[0], tiles=args.tiles))
        return 0
    if not args.suite and not args.table:
        return designs_table(args)
    import gemm_suite
    path = Path(args.results)
    if not args.table:
        shapes = ([tuple(int(x) for x in s.lower().split("x")) for s in args.shapes] if args.shapes
                  else gemm_suite.SUITE)
        gemm_suite.run_suite(path, shapes, args.dtypes, args.rounds, triton=not args.no_triton)
    text, figs = gemm_suite.table(path)
    print()
    print(text)
    return 0 if figs["ok"] == figs["items"] else 1


if __name__ == "__main__":
    sys.exit(main())

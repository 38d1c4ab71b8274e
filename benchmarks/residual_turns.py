#!/usr/bin/env python3
"""A residual in column slices, measured: merge_gemm_resadd (D = A @ B + R) at M = N = 8192 in
each residual layout beside the PyTorch composition, K by K.

    PYTHONPATH=$PWD python3 benchmarks/residual_turns.py [--rounds 10] [--ks 1024 8192] [--dtype float16]

The layouts: a whole residual tile (128 x 128 x 64, a warpgroup drains; 128 x 256 x 32, one warp
drains), and R in column slices beside 128 x 256 x 64 stages (``merge_gemm_resadd(turns=...)``):
four slices through two stages, four through one, two through one (each drained by two warps,
the default with slices: one warp loads A and B), and four through two drained by one warp
(``drain_warps=1``).  Per K every kernel is verified on the same fresh random data with poisoned
outputs (and every peer too), then all are timed
interleaved (``runtime.timing``); x = the best peer's time (``torch.matmul`` + ``torch.add``,
``torch.addmm``, the cuBLAS compositions: ``runtime.peers.residual_peers``) / the kernel's.  The
compositions' add is timed alone beside a device copy of the same bytes, to show it runs at memory
speed.  See docs/gemm.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys

M = N = 8192
KS = (1024, 8192)
#: layout -> merge_gemm_resadd keywords (BM = 128)
LAYOUTS = {
    "128x128x64 s4": {"num_stages": 4, "bn": 128, "bk": 64},
    "128x256x32 s4": {"num_stages": 4, "bn": 256, "bk": 32, "compact": True},
    "s3 R 4 turns x 2": {"num_stages": 3, "bn": 256, "bk": 64, "compact": True, "turns": 4, "acc_stages": 2},
    "s4 R 4 turns x 1": {"num_stages": 4, "bn": 256, "bk": 64, "compact": True, "turns": 4},
    "s3 R 2 turns x 1": {"num_stages": 3, "bn": 256, "bk": 64, "compact": True, "turns": 2},
    "s3 R 4x2, 1 drain": {"num_stages": 3, "bn": 256, "bk": 64, "compact": True, "turns": 4, "acc_stages": 2,
                          "drain_warps": 1},
}


def design(k: int, layout: str, dtype: str):
    from pgstudio.examples import merge_gemm_resadd
    return merge_gemm_resadd(M, N, k, bm=128, dtype=dtype, **LAYOUTS[layout])


def run_k(k: int, dtype: str, rounds: int) -> tuple[dict[str, float], str, float, float, float]:
    """({layout: median ms}, the best peer, its median ms, the GB/s of the compositions' add alone
    and of a device copy of the same bytes) at K = ``k``: the add runs near the copy's speed, so the
    compositions are not slowed by a slow elementwise step."""
    import cupy as cp

    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime import peers as P
    from pgstudio.runtime.gemm_run import TOLERANCE, GemmWorkload
    from pgstudio.runtime.timing import batch_for, estimate_ms, time_interleaved
    from gemm_ab import verified_launches
    with cp.cuda.Stream(non_blocking=True):  # the kernels, cuBLAS and PyTorch on one stream
        sources = {v: emit_gemm(design(k, v, dtype)) for v in LAYOUTS}
        first = next(iter(LAYOUTS))
        data = GemmWorkload.make(design(k, first, dtype), sources[first], M, N, k)
        runs = verified_launches(sources, data)
        a, b, r = data.arrays["gmem_a"], data.arrays["gmem_b"], data.arrays["gmem_r"]
        out, scratch = cp.empty((M, N), dtype=cp.uint16), cp.empty((M, N), dtype=cp.uint16)
        peers = P.residual_peers(a, b, r, out, scratch, M, N, k, dtype)
        for p in peers:
            P.verify_peer(p, {"gmem_d": out}, data.reference(), dtype, TOLERANCE[dtype])
        add_bytes = 3 * 2 * M * N  # the add reads two 16-bit M x N tensors and writes one
        src, dst = cp.empty(add_bytes // 4, dtype=cp.uint16), cp.empty(add_bytes // 4, dtype=cp.uint16)
        checks = [("add alone", P.elementwise16("add", dtype, scratch, out, r)),
                  ("device copy", lambda: cp.copyto(dst, src))]
        times = time_interleaved(runs + [(p.label, p.call) for p in peers] + checks, rounds,
                                 batch=batch_for(estimate_ms(runs[0][1])))
    med = {name: statistics.median(ts) for name, ts in times.items()}
    best, best_ms = P.fastest(times, [p.label for p in peers])
    gbps = {name: add_bytes / (med[name] * 1e-3) / 1e9 for name, _ in checks}
    return {v: med[v] for v in LAYOUTS}, best, best_ms, gbps["add alone"], gbps["device copy"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", type=int, nargs="+", default=list(KS))
    ap.add_argument("--dtype", default="float16", choices=("float16", "bfloat16"))
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args(argv)
    bad = [k for k in args.ks if k < 8 or k % 8]
    if bad:
        print(f"residual_turns.py: K = {bad[0]}: expected a positive multiple of 8 (the TMA row-stride rule), "
              "e.g. 1024", file=sys.stderr)
        return 2
    sys.path.insert(0, __import__("os").path.dirname(__file__))
    from gemm_ab import refuse_without_gpu
    if refuse_without_gpu("residual_turns.py"):
        return 2
    print(f"merge_gemm_resadd {M} x {N} x K, {args.dtype}: median ms (x best peer)")
    print(f"{'K':>6}  " + "".join(f"{v:>20}" for v in LAYOUTS) + "  best peer; its add alone vs a device copy")
    for k in args.ks:
        ms, best, best_ms, add_gbps, copy_gbps = run_k(k, args.dtype, args.rounds)
        cells = "".join(f"{f'{ms[v]:.4f} ({best_ms / ms[v]:.3f})':>20}" for v in LAYOUTS)
        print(f"{k:>6}  {cells}  {best} {best_ms:.4f}; add {add_gbps:,.0f} GB/s vs copy {copy_gbps:,.0f} GB/s",
              flush=True)
    print("every kernel and peer verified on fresh poisoned data first, then all timed interleaved")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

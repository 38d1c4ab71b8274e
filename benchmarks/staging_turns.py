#!/usr/bin/env python3
"""Accumulator staging in turns, measured: 128 x 256 x 64 merge_gemm at three stages (whole-tile
staging) against four (the staging takes each tile in two turns, or in four through two
quarter-tile stages), beside the library, shape by shape.

    PYTHONPATH=$PWD python3 benchmarks/staging_turns.py [--rounds 10] [--shapes 4096x4096x4096 ...]

Per shape every kernel is verified on the same fresh random data with poisoned outputs (and the
library peers too), then all are timed interleaved (``runtime.timing``); x = the best library
time (``torch.matmul`` / ``cublasGemmEx``) / the kernel's.  The ragged shape runs each variant
in a 1 x 2 cluster, as the tuner picks it there.  See docs/gemm.md.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys

SHAPES = ("4096x4096x4096", "2048x2048x2048", "4168x3000x1000", "512x8192x8192", "8192x8192x8192",
          "4096x14336x4096")
#: variant -> merge_gemm keywords (at 128 x 256 x 64, bf16)
VARIANTS = {"s3 whole": {"num_stages": 3}, "s4 2 turns": {"num_stages": 4},
            "s4 4 turns": {"num_stages": 4, "acc_stages": 2}}
RAGGED = "4168x3000x1000"


def design(shape: str, variant: str):
    from pgstudio.examples import merge_gemm
    m, n, k = map(int, shape.split("x"))
    cluster = (1, 2) if shape == RAGGED else (1, 1)
    return merge_gemm(m, n, k, bm=128, bn=256, bk=64, dtype="bfloat16", cluster=cluster, **VARIANTS[variant])


def run_shape(shape: str, rounds: int) -> dict[str, float]:
    """x best library of every variant at ``shape``."""
    import cupy as cp

    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime import peers as P
    from pgstudio.runtime.gemm_run import TOLERANCE, GemmWorkload
    from pgstudio.runtime.timing import batch_for, estimate_ms, time_interleaved
    from gemm_ab import verified_launches
    m, n, k = map(int, shape.split("x"))
    with cp.cuda.Stream(non_blocking=True):  # the kernels, CuPy, cuBLAS and PyTorch on one stream
        sources = {v: emit_gemm(design(shape, v)) for v in VARIANTS}
        first = next(iter(VARIANTS))
        data = GemmWorkload.make(design(shape, first), sources[first], m, n, k)
        runs = verified_launches(sources, data)
        out = cp.empty((m, n), dtype=cp.uint16)
        peers = P.gemm_peers(data.arrays["gmem_a"], data.arrays["gmem_b"], out, m, n, k, "bfloat16",
                             b_major=data.b_major)
        for p in peers:
            P.verify_peer(p, {"gmem_d": out}, data.reference(), "bfloat16", TOLERANCE["bfloat16"])
        times = time_interleaved(runs + [(p.label, p.call) for p in peers], rounds,
                                 batch=batch_for(estimate_ms(runs[0][1])))
    med = {name: statistics.median(ts) for name, ts in times.items()}
    best = min(med[p.label] for p in peers)
    return {v: best / med[v] for v in VARIANTS}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="+", default=list(SHAPES))
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args(argv)
    bad = [x for x in args.shapes if not re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*", x)]
    if bad:
        print(f"staging_turns.py: shape {bad[0]!r}: expected MxNxK with positive whole numbers, e.g. 4096x4096x4096",
              file=sys.stderr)
        return 2
    sys.path.insert(0, __import__("os").path.dirname(__file__))
    from gemm_ab import refuse_without_gpu
    if refuse_without_gpu("staging_turns.py"):
        return 2
    print(f"{'shape (bf16, 128x256x64)':<28}" + "".join(f"{v:>14}" for v in VARIANTS))
    for shape in args.shapes:
        x = run_shape(shape, args.rounds)
        print(f"{shape + (' c1x2' if shape == RAGGED else ''):<28}" + "".join(f"{x[v]:>14.3f}" for v in VARIANTS),
              flush=True)
    print("x = best library time / kernel time; every kernel verified on fresh poisoned data first")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

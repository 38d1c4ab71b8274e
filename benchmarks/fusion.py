"""Fusion against composition (issue 15): what one grouped kernel saves over library calls.

    python benchmarks/fusion.py [--ks 512 1024 2048 8192] [--dtypes float16 bfloat16] [--results fusion.jsonl]

At M = N = 8192, for each K and dtype, on the same fresh random data:

* ``merge_gemm_resadd`` (D = A @ B + R: the accumulator and the residual tile are one Merge group
  in front of the epilogue) against cuBLAS's GEMM followed by CuPy's add;
* ``fork_gemm_act`` (D0 = A @ B and D1 = relu(A) from one loaded A tile, forked to the MMA and to
  the ReLU task) against cuBLAS's GEMM plus CuPy's ReLU (``cp.maximum``).

The design runs at the tile shape a short cached search picks (``runtime.tuning.tune_gemm``: the
canonical layout at 128 x 128, and the compact one -- one epilogue warp -- at 128 x 256), each
candidate verified first.  The composition is verified too (its outputs poisoned, then compared
with the float32 reference), and both are timed interleaved (CUDA events around each, the
composition's two launches inside one pair).  For bfloat16, which CuPy has no dtype for, the add
and the ReLU are CuPy ``ElementwiseKernel`` s over the 16-bit storage (rounding like the GEMM's
store).  Targets: resadd >= 2.0x at K = 1024 and >= 1.08x at K = 8192; fork_gemm_act >= 1.2x at
K = 1024.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from gemm_suite import read_results, rel_error, stop_if_context_lost, timing_words

from pgstudio.runtime.timing import batch_for, estimate_ms, time_interleaved

from pgstudio import examples
from pgstudio.analysis.build.gemm_shapes import GemmTiles

M = N = 8192
KS = (512, 1024, 2048, 8192)
DTYPES = ("float16", "bfloat16")
#: (design, K, target) pairs of the issue.
TARGETS = {("merge_gemm_resadd", 1024): 2.0, ("merge_gemm_resadd", 8192): 1.08, ("fork_gemm_act", 1024): 1.2}
#: Tile choices searched: the canonical layout (BN=128, a warpgroup drains) and the compact one (BN=256).
CANDIDATES = {
    "merge_gemm_resadd": (GemmTiles(128, 128, 64, 4), GemmTiles(128, 256, 64, 2), GemmTiles(128, 256, 32, 4)),
    "fork_gemm_act": (GemmTiles(128, 128, 64, 3), GemmTiles(128, 256, 64, 3), GemmTiles(128, 256, 32, 6)),
}

_BF16 = r"""
__device__ __forceinline__ float bf2f(unsigned short h) { return __uint_as_float(((unsigned int)h) << 16); }
__device__ __forceinline__ unsigned short f2bf(float f) {
  unsigned int u = __float_as_uint(f); u += 0x7FFFu + ((u >> 16) & 1u); return (unsigned short)(u >> 16);
}
"""


def builder(name: str, k: int, dtype: str):
    make = examples.CANONICAL[name]
    return lambda t: make(M, N, k, num_stages=t.stages, bm=t.bm, bn=t.bn, bk=t.bk, dtype=dtype, compact=t.bn > 128)


def designs(k: int, dtype: str):
    """Every design the benchmark may run at one K and dtype (what CI compiles)."""
    return [builder(name, k, dtype)(t) for name, tiles in CANDIDATES.items() for t in tiles]


def _elementwise(dtype: str, op: str):
    """CuPy's add (two operands) or ReLU (one), over fp16 arrays or bf16 storage; ``fn(*ins, out)``."""
    import cupy as cp
    if dtype == "float16":
        if op == "add":
            return lambda x, y, out: cp.add(x.view(cp.float16), y.view(cp.float16), out=out.view(cp.float16))
        return lambda x, out: cp.maximum(x.view(cp.float16), cp.float16(0), out=out.view(cp.float16))
    if op == "add":
        kern = cp.ElementwiseKernel("uint16 x, uint16 y", "uint16 o", "o = f2bf(bf2f(x) + bf2f(y))", "pg_bf16_add",
                                    preamble=_BF16)
        return lambda x, y, out: kern(x, y, out)
    kern = cp.ElementwiseKernel("uint16 x", "uint16 o", "o = f2bf(fmaxf(bf2f(x), 0.f))", "pg_bf16_relu", preamble=_BF16)
    return lambda x, out: kern(x, out)


def run_item(name: str, k: int, dtype: str, rounds: int) -> dict:
    import cupy as cp

    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime.gemm_run import (TOLERANCE, GemmData, GemmLauncher, cublas_matmul, reference, to_float32,
                                           verify)
    from pgstudio.runtime.tuning import tune_gemm
    t0 = time.perf_counter()
    build = builder(name, k, dtype)
    tiles = CANDIDATES[name]
    data = GemmData.make(emit_gemm(build(tiles[0])), M, N, k)
    tuned, search = tune_gemm(name, build, tiles, data)
    d = tuned.design
    src = emit_gemm(d)
    la = GemmLauncher(src)
    data.encode(src)
    errors = {"pgstudio": verify(d, src, la, data)}
    args = la.args(GemmData(M, N, k, dtype, data.arrays, data.values, dict(data.maps), data.out_dtypes))
    ref = reference(d, src, data)
    tol = TOLERANCE[dtype]
    gemm_out = cp.empty((M, N), dtype=cp.uint16)
    found = cublas_matmul(data, "gmem_a", "gmem_b", gemm_out)
    if found is None:
        raise RuntimeError(f"no cuBLAS GEMM for {dtype} here")
    label, gemm = found
    if name == "merge_gemm_resadd":
        add, r = _elementwise(dtype, "add"), data.arrays["gmem_r"]
        out = cp.empty((M, N), dtype=cp.uint16)
        outs = {"gmem_d": out}

        def composition():
            gemm()
            add(gemm_out, r, out)
    else:
        relu, a = _elementwise(dtype, "relu"), data.arrays["gmem_a"]
        d1 = cp.empty(a.shape, dtype=cp.uint16)
        outs = {"gmem_d0": gemm_out, "gmem_d1": d1}

        def composition():
            gemm()
            relu(a, d1)
    for arr in outs.values():
        arr.fill(0x7FFF)
    composition()
    cp.cuda.get_current_stream().synchronize()
    errors["composition"] = {}
    for o, arr in outs.items():
        err, bad = rel_error(to_float32(arr, dtype), ref[o])
        if bad or not err <= tol:
            raise AssertionError(f"composition output {o} disagrees with the reference: {err:.3g}, {bad} NaN")
        errors["composition"][o] = err
    batch = batch_for(estimate_ms(lambda: la.launch(data, args)))
    times = time_interleaved([("pgstudio", lambda: la.launch(data, args)), ("composition", composition)], rounds,
                             batch=batch)
    timing = timing_words(batch)
    la.check_watchdog()
    mine, comp = (statistics.median(times[x]) for x in ("pgstudio", "composition"))
    return {"design": name, "k": k, "dtype": dtype, "tiles": tuned.settings, "source": tuned.source,
            "search": search, "cublas": label, "errors": errors, "ms": mine, "composition_ms": comp,
            "speedup": comp / mine, "timing": timing, "seconds": round(time.perf_counter() - t0, 2)}


def table(path: Path) -> str:
    recs = read_results(path)
    head = (f"{'design':<18} {'K':>5} {'dtype':<9} {'tiles (tuned)':<18} {'fused ms':>9} {'composed ms':>12} "
            f"{'speedup':>8}  target")
    lines = [head, "-" * len(head)]
    for rec in recs.values():
        if rec.get("status") != "ok":
            lines.append(f"{rec['item']:<40} {rec.get('status')}: {rec.get('message', '')[:120]}")
            continue
        target = TARGETS.get((rec["design"], rec["k"]))
        verdict = f">= {target}: {'PASS' if rec['speedup'] >= target else 'MISS'}" if target else ""
        lines.append(f"{rec['design']:<18} {rec['k']:>5} {rec['dtype']:<9} {rec['tiles']:<18} {rec['ms']:>9.4f} "
                     f"{rec['composition_ms']:>12.4f} {rec['speedup']:>7.3f}x  {verdict}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", type=int, nargs="+", default=list(KS))
    ap.add_argument("--dtypes", nargs="+", default=list(DTYPES))
    ap.add_argument("--designs", nargs="+", default=list(CANDIDATES))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--results", default="fusion.jsonl")
    ap.add_argument("--table", action="store_true", help="print the table of --results and stop")
    args = ap.parse_args(argv)
    path = Path(args.results)
    if not args.table:
        done = read_results(path)
        with path.open("a") as f:
            for name in args.designs:
                for k in args.ks:
                    for dt in args.dtypes:
                        key = f"{name}/K{k}/{dt}"
                        if key in done:
                            continue
                        f.write(json.dumps({"item": key, "status": "started"}) + "\n")
                        f.flush()
                        try:
                            rec = {"item": key, "status": "ok", **run_item(name, k, dt, args.rounds)}
                        except Exception as exc:  # noqa: BLE001 - recorded, the benchmark goes on
                            rec = {"item": key, "status": "failed", "message": f"{type(exc).__name__}: {exc}"[:600]}
                        f.write(json.dumps(rec, default=float) + "\n")
                        f.flush()
                        print(f"{key}: {rec.get('speedup', rec.get('message', ''))}", flush=True)
                        if rec["status"] != "ok":
                            stop_if_context_lost()
    print()
    print(table(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Every tile choice of merge_gemm for one problem, measured against cuBLAS: the map behind the tuner.

    PYTHONPATH=$PWD python3 benchmarks/gemm_tiles.py --shapes 128x8192x8192 4168x3000x1000 --dtype float16

``explore.tuning`` measures only the few tile choices that ``gemm_shapes.gemm_tiles`` ranks best
for a problem.  This benchmark measures the whole ``gemm_shapes.tile_space`` (BM x BN x BK,
pipeline depth, split-K parts) so the ranking can be checked and the model corrected where it
guesses wrong.  Per shape: every candidate the design rules accept is built, compiled (in
parallel, once per distinct source), verified against the float32 reference on fresh random data
with a poisoned output, then all of them and cuBLAS are timed interleaved (``runtime.timing``).
The table lists each candidate's time, TFLOP/s and ratio to cuBLAS, fastest first, with the
model's own rank beside it; the records go to ``--results`` (JSON lines).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _compile(src) -> str:
    from pgstudio.runtime.compile import cubin_for
    try:
        cubin_for(src)
        return ""
    except Exception as exc:  # noqa: BLE001 - reported with the candidate
        return f"{type(exc).__name__}: {exc}"[:300]


def candidates(m: int, n: int, k: int, dtype: str, sms: int):
    """[(GemmTiles, design, source)] the rules accept, and [(label, why)] they refuse."""
    import gemm_suite

    from pgstudio.analysis.buildable.gemm_shapes import tile_space
    from pgstudio.codegen.gemm import emit_gemm
    build = gemm_suite.builder(m, n, k, dtype)
    ok, refused = [], []
    for t in tile_space(m, n, k, dtype, sms):
        d = build(t).with_targets("sm_90a")
        errors = d.validate().errors
        if errors:
            refused.append((t.label, f"{errors[0].code}: {errors[0].message[:120]}"))
            continue
        ok.append((t, d, emit_gemm(d)))
    return ok, refused


def explore(m: int, n: int, k: int, dtype: str, rounds: int, jobs: int) -> dict:
    """Measure every candidate of one problem (module docstring); a plain record."""
    import cupy as cp

    from pgstudio.runtime._cupy import sm_count
    from pgstudio.runtime.gemm_run import GemmLauncher, GemmWorkload
    from pgstudio.runtime.peers import gemm_ex
    from pgstudio.runtime.timing import batch_for, estimate_ms, time_interleaved
    t0 = time.perf_counter()
    found, refused = candidates(m, n, k, dtype, sm_count())
    sources = {src.key: src for _, _, src in found}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        failed = {key: why for key, why in zip(sources, pool.map(_compile, sources.values())) if why}
    rec: dict = {"shape": [m, n, k], "dtype": dtype, "refused": refused, "rows": [],
                 "compile_s": round(time.perf_counter() - t0, 1)}
    with cp.cuda.Stream(non_blocking=True):
        data = GemmWorkload.make(found[0][1], found[0][2], m, n, k)
        variants = []
        for rank, (t, _, src) in enumerate(found):
            row = {"tiles": t.label, "model_rank": rank}
            rec["rows"].append(row)
            if src.key in failed:
                row.update(status="compile failed", message=failed[src.key])
                continue
            try:
                la = GemmLauncher(src)
                row["error"] = max(c.rel_error for c in la.verify(data))
                args = la.args(data)
            except Exception as exc:  # noqa: BLE001 - a candidate that fails is reported, the rest go on
                row.update(status="failed", message=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
                continue
            row["status"] = "ok"
            variants.append((t.label, lambda la=la, args=args: la.launch(data, args)))
        scratch = cp.empty((m, n), dtype=cp.uint16)
        variants.append(("cuBLAS", gemm_ex(data.arrays["gmem_a"], data.arrays["gmem_b"], scratch, m, n, k, dtype,
                                           data.b_major)))
        if not variants:
            return rec
        times = time_interleaved(variants, rounds, warmup=2, batch=batch_for(estimate_ms(variants[0][1])))
    flops = 2.0 * m * n * k
    lib_ms = statistics.median(times["cuBLAS"]) if "cuBLAS" in times else float("nan")
    rec["cublas_ms"] = lib_ms
    for row in rec["rows"]:
        if row.get("status") == "ok":
            row["ms"] = statistics.median(times[row["tiles"]])
            row["tflops"] = flops / (row["ms"] * 1e-3) / 1e12
            row["x_cublas"] = lib_ms / row["ms"]
    rec["seconds"] = round(time.perf_counter() - t0, 1)
    return rec


def table(rec: dict, top: int) -> str:
    m, n, k = rec["shape"]
    rows = sorted((r for r in rec["rows"] if r.get("status") == "ok"), key=lambda r: r["ms"])
    head = f"{'tiles':<28} {'ms':>9} {'TFLOP/s':>8} {'x cuBLAS':>9} {'model rank':>10}"
    lines = [f"{m}x{n}x{k} {rec['dtype']}: {len(rows)} of {len(rec['rows'])} candidates verified and timed "
             f"({len(rec['refused'])} refused by the rules); cuBLAS {rec.get('cublas_ms', float('nan')):.4f} ms",
             head, "-" * len(head)]
    for r in rows[:top]:
        lines.append(f"{r['tiles']:<28} {r['ms']:>9.4f} {r['tflops']:>8.1f} {r['x_cublas']:>9.3f} {r['model_rank']:>10}")
    bad = [r for r in rec["rows"] if r.get("status") not in ("ok", None)]
    lines += [f"  {r['tiles']}: {r['status']}: {r.get('message', '')[:160]}" for r in bad[:5]]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="+", default=["128x8192x8192", "4168x3000x1000", "2048x2048x2048"])
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--top", type=int, default=12, help="rows of each table")
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 2))
    ap.add_argument("--results", default="gemm_tiles.jsonl")
    args = ap.parse_args(argv)
    with open(args.results, "a") as f:
        for shape in args.shapes:
            m, n, k = (int(x) for x in shape.lower().split("x"))
            rec = explore(m, n, k, args.dtype, args.rounds, args.jobs)
            f.write(json.dumps(rec, default=float) + "\n")
            f.flush()
            print(table(rec, args.top), flush=True)
            print(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

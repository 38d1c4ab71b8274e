"""Fusion against composition: what one grouped kernel saves over the library calls a user writes.

    python benchmarks/fusion.py [--ks 512 1024 2048 8192] [--dtypes float16 bfloat16] [--results fusion.jsonl]

At M = N = 8192, for each K and dtype, on the same fresh random data:

* ``merge_gemm_resadd`` (D = A @ B + R: the accumulator and the residual tile are one Merge group
  in front of the epilogue) against ``torch.matmul`` + ``torch.add`` and ``torch.addmm`` (cuBLAS
  with beta = 1), and without PyTorch's help ``cublasGemmEx`` + a memory-speed add and a device
  copy of R + ``cublasGemmEx`` with beta = 1 (``pgstudio.runtime.peers.residual_peers``);
* ``fork_gemm_act`` (D0 = A @ B and D1 = relu(A) from one loaded A tile, forked to the MMA and to
  the ReLU task) against ``torch.matmul`` + ``torch.clamp(min=0)`` and ``cublasGemmEx`` + a
  memory-speed ReLU (``activation_peers``).

The design runs at the tile shape a short cached search picks (``explore.tuning.tune_gemm``), each
candidate verified first.  Every peer is verified too (its outputs poisoned, then compared with
the float32 reference), and all are timed interleaved; "x best" divides the fastest peer's time
by the fused kernel's.  The elementwise step of the cuBLAS compositions is timed alone as well and
reported in GB/s beside a device copy of the same bytes, to show that the peer runs at memory
speed.  Targets: resadd >= 1.0x the best peer at every K and >= 1.25x at K = 1024; fork_gemm_act
>= 1.0x at every K.
"""

from __future__ import annotations

import argparse
import json
import traceback
import statistics
import sys
import time
from pathlib import Path

from gemm_suite import read_results, stop_if_context_lost, timing_words

from pgstudio.runtime.timing import batch_for, estimate_ms, time_interleaved

from pgstudio import examples
from pgstudio.analysis.buildable.gemm_shapes import GemmTiles

M = N = 8192
KS = (512, 1024, 2048, 8192)
DTYPES = ("float16", "bfloat16")
#: Speed-up over the best peer to reach: (design, K) -> target; a design's default for other K.
TARGETS = {("merge_gemm_resadd", 1024): 1.25}
DEFAULT_TARGET = {"merge_gemm_resadd": 1.0, "fork_gemm_act": 1.0}
#: Tile choices searched: the canonical layout (BN=128, a warpgroup drains), the compact one (BN=256) and,
#: for the fork, four stages of it with the staging taken in turns, and the stream-K twins (measured ahead
#: at K = 8192); for the residual, R in column slices taken in turns beside 128 x 256 x 64 stages
#: (``merge_gemm_resadd(turns=...)``, ``benchmarks/residual_turns.py`` compares them alone).
CANDIDATES = {
    "merge_gemm_resadd": (GemmTiles(128, 128, 64, 4), GemmTiles(128, 256, 32, 4),
                          GemmTiles(128, 256, 64, 3, turns=4, acc_stages=2), GemmTiles(128, 256, 64, 4, turns=4),
                          GemmTiles(128, 256, 64, 3, turns=2),
                          GemmTiles(128, 256, 64, 3, turns=4, acc_stages=2, stream_k=True)),
    "fork_gemm_act": (GemmTiles(128, 128, 64, 3), GemmTiles(128, 256, 64, 3), GemmTiles(128, 256, 64, 4),
                      GemmTiles(128, 256, 32, 6), GemmTiles(128, 256, 64, 3, stream_k=True),
                      GemmTiles(128, 256, 64, 4, stream_k=True)),
}

def builder(name: str, k: int, dtype: str):
    make = examples.CANONICAL[name]
    return lambda t: make(M, N, k, num_stages=t.stages, bm=t.bm, bn=t.bn, bk=t.bk, dtype=dtype, compact=t.bn > 128,
                          stream_k=t.stream_k, **({"turns": t.turns, "acc_stages": t.acc_stages} if t.turns > 1 else {}))


def designs(k: int, dtype: str):
    """Every design the benchmark may run at one K and dtype (what CI compiles)."""
    return [builder(name, k, dtype)(t) for name, tiles in CANDIDATES.items() for t in tiles]


def run_item(name: str, k: int, dtype: str, rounds: int) -> dict:
    import cupy as cp
    with cp.cuda.Stream(non_blocking=True):  # PyTorch's peers launch on this stream too (runtime.peers)
        return _run_item(name, k, dtype, rounds)


def _run_item(name: str, k: int, dtype: str, rounds: int) -> dict:
    import cupy as cp

    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime import peers as P
    from pgstudio.runtime.gemm_run import TOLERANCE, GemmLauncher, GemmWorkload
    from pgstudio.explore.tuning import tune_gemm
    t0 = time.perf_counter()
    build = builder(name, k, dtype)
    tiles = CANDIDATES[name]
    first = build(tiles[0])
    data = GemmWorkload.make(first, emit_gemm(first), M, N, k)
    tuned, search = tune_gemm(name, build, tiles, data)
    la = GemmLauncher(emit_gemm(tuned.design))
    errors = {"pgstudio": {c.tensor: c.rel_error for c in la.verify(data)}}
    args = la.args(data)
    ref = data.reference()
    tol = TOLERANCE[dtype]
    a, b = data.arrays["gmem_a"], data.arrays["gmem_b"]
    if name == "merge_gemm_resadd":
        out, scratch, r = cp.empty((M, N), dtype=cp.uint16), cp.empty((M, N), dtype=cp.uint16), data.arrays["gmem_r"]
        outs = {"gmem_d": out}
        peers = P.residual_peers(a, b, r, out, scratch, M, N, k, dtype)
        ew = P.elementwise16("add", dtype, scratch, out, r)
        ew_bytes = 3 * 2 * M * N
    else:
        d0, d1 = cp.empty((M, N), dtype=cp.uint16), cp.empty(a.shape, dtype=cp.uint16)
        outs = {"gmem_d0": d0, "gmem_d1": d1}
        peers = P.activation_peers(a, b, d0, d1, M, N, k, dtype)
        ew = P.elementwise16("relu", dtype, a, d1)
        ew_bytes = 2 * 2 * a.size
    for peer in peers:
        errors[peer.label] = P.verify_peer(peer, outs, ref, dtype, tol)
    src_copy, dst_copy = cp.empty(ew_bytes // 4, dtype=cp.uint16), cp.empty(ew_bytes // 4, dtype=cp.uint16)
    variants = [("pgstudio", lambda: la.launch(data, args)), *((p.label, p.call) for p in peers),
                ("elementwise step alone", ew), ("device copy, same bytes", lambda: cp.copyto(dst_copy, src_copy))]
    batch = batch_for(estimate_ms(variants[0][1]))
    times = time_interleaved(variants, rounds, batch=batch)
    timing = timing_words(batch)
    la.check_watchdog()
    med = {x: statistics.median(ts) for x, ts in times.items()}
    best, best_ms = P.fastest(times, [p.label for p in peers])
    mine = med["pgstudio"]
    return {"design": name, "k": k, "dtype": dtype, "tiles": tuned.settings, "source": tuned.source,
            "search": search, "errors": errors, "ms": mine, "peers": {p.label: med[p.label] for p in peers},
            "best_peer": best, "best_peer_ms": best_ms, "speedup": best_ms / mine,
            "elementwise_gbps": ew_bytes / (med["elementwise step alone"] * 1e-3) / 1e9,
            "copy_gbps": ew_bytes / (med["device copy, same bytes"] * 1e-3) / 1e9,
            "timing": timing, "seconds": round(time.perf_counter() - t0, 2)}


def target(rec: dict) -> float:
    return TARGETS.get((rec["design"], rec["k"]), DEFAULT_TARGET.get(rec["design"], 1.0))


def table(path: Path) -> str:
    recs = read_results(path)
    head = (f"{'design':<18} {'K':>5} {'dtype':<9} {'tiles (tuned)':<18} {'fused ms':>9} {'best peer':<32} "
            f"{'peer ms':>8} {'x best':>7}  target      {'add/relu GB/s':>13} {'copy GB/s':>9}")
    lines = [head, "-" * len(head)]
    for rec in recs.values():
        if rec.get("status") != "ok":
            lines.append(f"{rec['item']:<40} {rec.get('status')}: {rec.get('message', '')[:120]}")
            continue
        if "best_peer" not in rec:  # a record of an older format
            continue
        goal = target(rec)
        verdict = f">= {goal}: {'PASS' if rec['speedup'] >= goal else 'MISS'}"
        lines.append(f"{rec['design']:<18} {rec['k']:>5} {rec['dtype']:<9} {rec['tiles']:<18} {rec['ms']:>9.4f} "
                     f"{rec['best_peer']:<32} {rec['best_peer_ms']:>8.4f} {rec['speedup']:>6.3f}x  {verdict:<11} "
                     f"{rec['elementwise_gbps']:>13,.0f} {rec['copy_gbps']:>9,.0f}")
        others = ", ".join(f"{p} {ms:.4f}" for p, ms in rec["peers"].items() if p != rec["best_peer"])
        lines.append(f"{'':<18}   other peers (ms): {others}")
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
                            rec = {"item": key, "status": "failed", "message": f"{type(exc).__name__}: {exc}"[:600],
                           "where": traceback.format_exc()[-2000:]}
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

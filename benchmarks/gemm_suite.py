"""The GEMM shape suite: merge_gemm at its tuned tile shape against the best library GEMM and Triton.

For every shape and dtype, in one process and on the same fresh random data:

1. the tile shape: ``gemm_tiles`` ranks a few (BM x BN x BK, stages, split-K) for the problem,
   ``explore.tuning.tune_gemm`` verifies each against the float32 reference (poisoned outputs) and times them,
   and keeps the fastest for this GPU (cached: a second run reuses it);
2. the peers: every library GEMM a user would call (``pgstudio.runtime.peers``: ``torch.matmul``,
   cuBLASLt with its heuristics, and ``cublasGemmEx`` through CuPy), the fastest of them being
   "the best library", and a persistent TMA matmul in Triton (``triton_matmul``, its tile
   configuration picked the same way), each checked against the float32 reference on poisoned
   outputs before it is timed;
3. the design, the library peers and Triton timed interleaved, round after round (``runtime.timing``:
   batches of launches queued behind a GPU hold, on one created stream), medians reported.

Results go to a JSON-lines file as each item finishes; a rerun skips finished items and records
an item that a crash interrupted as crashed, so a driver loop resumes past a fault.
"""

from __future__ import annotations

import json
import traceback
import math
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from pgstudio import examples
from pgstudio.analysis.buildable.gemm_shapes import GemmTiles, gemm_tiles
from pgstudio.runtime.timing import batch_for, estimate_ms, time_interleaved

#: (M, N, K): squares, transformer shapes, small M, ragged.
SUITE: tuple[tuple[int, int, int], ...] = (
    (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384),
    (16384, 4096, 4096), (4096, 14336, 4096), (4096, 4096, 14336), (8192, 28672, 8192),
    (128, 8192, 8192), (512, 8192, 8192),
    (4168, 3000, 1000),
)
DTYPES = ("float16", "bfloat16")
#: Targets: the geometric mean over the suite of x best library, and the floor for any one shape
#: (the compass goal beyond them is a geometric mean of 1.05).
TARGET_GEOMEAN, TARGET_FLOOR = 1.02, 0.92
#: No GPU multiplies 16-bit matrices faster than this (dense TFLOP/s; the H200 peaks near 990): a
#: peer timed faster did not run where the events time it, and its row is not counted.
PLAUSIBLE_TFLOPS = 2500.0


def builder(m: int, n: int, k: int, dtype: str) -> Callable[[GemmTiles], Any]:
    """The merge_gemm design of an M x N x K problem at a tile choice."""
    return lambda t: examples.merge_gemm(m, n, k, num_stages=t.stages, bm=t.bm, bn=t.bn, bk=t.bk, dtype=dtype,
                                         split_k=t.split_k, cluster=t.cluster, stream_k=t.stream_k)


def candidates(m: int, n: int, k: int, dtype: str, sms: int = 132) -> list[tuple[GemmTiles, Any]]:
    """Every (tile choice, design) the suite may run for one problem (what CI compiles)."""
    build = builder(m, n, k, dtype)
    return [(t, build(t)) for t in gemm_tiles(m, n, k, dtype, sms)]


def timing_words(batch: int) -> str:
    """How the rows were timed, for the record."""
    return (f"{batch} launch(es) back to back per timed batch, queued behind a GPU hold "
            "(pgstudio.runtime.timing); the same for every variant")


def rel_error(got32, want) -> tuple[float, int]:
    """(max |got - want| / max |want|, NaN count)."""
    import cupy as cp
    scale = float(cp.abs(want).max()) or 1.0
    return float(cp.abs(got32 - want).max()) / scale, int(cp.isnan(got32).sum())


def run_item(m: int, n: int, k: int, dtype: str, *, rounds: int = 20, seed: int | None = None,
             triton: bool = True) -> dict:
    """One shape and dtype: tune, verify, time (module docstring); a plain record.

    Everything runs on one explicit (non-default) CuPy stream: Triton launches on the stream
    PyTorch calls current, and an ``ExternalStream`` of the legacy default stream (handle 0) is
    ambiguous to it, so the Triton kernels ran outside the timed events (its rows timed ~0 ms and
    read back half-written results).  A real handle names one stream for CuPy, cuBLAS, pgstudio's
    launcher and Triton alike."""
    import cupy as cp
    with cp.cuda.Stream(non_blocking=True):
        return _run_item(m, n, k, dtype, rounds=rounds, seed=seed, triton=triton)


def _run_item(m: int, n: int, k: int, dtype: str, *, rounds: int, seed: int | None, triton: bool) -> dict:
    import cupy as cp

    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime._cupy import sm_count
    from pgstudio.runtime.gemm_run import TOLERANCE, GemmLauncher, GemmWorkload
    from pgstudio.runtime.peers import gemm_peers, verify_peer
    from pgstudio.explore.tuning import tune_gemm
    t0 = time.perf_counter()
    out: dict[str, Any] = {"shape": [m, n, k], "dtype": dtype, "rows": {}, "notes": []}
    tiles = gemm_tiles(m, n, k, dtype, sm_count())
    build = builder(m, n, k, dtype)
    first = build(tiles[0])
    data = GemmWorkload.make(first, emit_gemm(first), m, n, k, seed)
    tuned, search = tune_gemm("merge_gemm", build, tiles, data)
    out.update(tiles=tuned.settings, source=tuned.source, search=search)
    la = GemmLauncher(emit_gemm(tuned.design))
    out["errors"] = {"pgstudio": {c.tensor: c.rel_error for c in la.verify(data)}["gmem_d"]}
    args = la.args(data)
    variants: list[tuple[str, Callable[[], None]]] = [("pgstudio", lambda: la.launch(data, args))]
    want = data.values["gmem_a"] @ data.values["gmem_b"]
    tol = TOLERANCE[dtype]
    scratch = cp.empty((m, n), dtype=cp.uint16)
    out["peers"] = []
    for peer in gemm_peers(data.arrays["gmem_a"], data.arrays["gmem_b"], scratch, m, n, k, dtype):
        out["errors"][peer.label] = verify_peer(peer, {"D": scratch}, {"D": want}, dtype, tol)["D"]
        out["peers"].append(peer.label)
        variants.append((peer.label, peer.call))
    if triton:
        picked = _triton_peer(data, want, tol, out)
        if picked is not None:
            variants.append(("Triton", picked))
    batch = batch_for(estimate_ms(variants[0][1]))
    times = time_interleaved(variants, rounds, batch=batch)
    out["timing"] = timing_words(batch)
    la.check_watchdog()
    flops = 2.0 * m * n * k
    for name, ts in times.items():
        ms = statistics.median(ts)
        out["rows"][name] = {"ms": ms, "tflops": flops / (ms * 1e-3) / 1e12, "runs": len(ts)}
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


def _triton_peer(data, want, tol: float, out: dict) -> Callable[[], None] | None:
    """Triton's persistent TMA matmul at its fastest verified configuration, or None (noted)."""
    import cupy as cp

    import triton_matmul as tm
    from pgstudio.runtime.peers import on_cupy_stream, torch_view
    from pgstudio.runtime.storage import to_float32
    why = tm.available()
    if why:
        out["notes"].append(f"Triton: {why}")
        return None
    c_bits = cp.empty((data.m, data.n), dtype=cp.uint16)
    a, b, c = (torch_view(x, data.dtype) for x in (data.arrays["gmem_a"], data.arrays["gmem_b"], c_bits))
    ok: list[tuple[str, Callable[[], None]]] = []
    for cfg in tm.CONFIGS:
        try:
            call = on_cupy_stream(tm.matmul_call(a, b, c, cfg))  # Triton launches on PyTorch's stream
            c_bits.fill(0x7FFF)
            call()
            cp.cuda.get_current_stream().synchronize()
            err, bad = rel_error(to_float32(c_bits, data.dtype), want)
        except Exception as exc:  # noqa: BLE001 - a configuration that does not build is noted
            out["notes"].append(f"Triton {cfg.label}: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
            continue
        if bad or not err <= tol:
            out["notes"].append(f"Triton {cfg.label}: wrong result ({err:.3g}, {bad} NaN), not timed")
            continue
        out["errors"][f"Triton {cfg.label}"] = err
        ok.append((cfg.label, call))
    if not ok:
        return None
    times = time_interleaved(ok, rounds=5, warmup=2, batch=batch_for(estimate_ms(ok[0][1])))
    best = min(ok, key=lambda x: statistics.median(times[x[0]]))
    out["triton_config"] = best[0]
    out["triton_search"] = {name: statistics.median(ts) for name, ts in times.items()}
    return best[1]


def profile(m: int, n: int, k: int, dtype: str, launches: int = 3, tiles: str | None = None) -> str:
    """Verify the tuned merge_gemm of one problem (or the one of ``tiles``, a ``GemmTiles.key``),
    then launch it ``launches`` times (for ncu)."""
    import cupy as cp

    from pgstudio.codegen.gemm import emit_gemm
    from pgstudio.runtime._cupy import sm_count
    from pgstudio.runtime.gemm_run import GemmLauncher, GemmWorkload
    from pgstudio.explore.tuning import Tuned, tune_gemm
    choices = gemm_tiles(m, n, k, dtype, sm_count())
    build = builder(m, n, k, dtype)
    first = build(choices[0])
    data = GemmWorkload.make(first, emit_gemm(first), m, n, k)
    if tiles is not None:
        pick = GemmTiles.from_key(tiles)
        tuned = Tuned(build(pick), pick.label, "given")
    else:
        tuned, _ = tune_gemm("merge_gemm", build, choices, data, search=False)
    src = emit_gemm(tuned.design)
    la = GemmLauncher(src)
    la.verify(data)
    for _ in range(launches):
        la.launch(data)
    cp.cuda.get_current_stream().synchronize()
    la.check_watchdog()
    return f"profiled {src.entry} at {m}x{n}x{k} {dtype}: {tuned.describe()}"


# -- resumable driver, table ---------------------------------------------------------------------------

def item_key(m: int, n: int, k: int, dtype: str) -> str:
    return f"{m}x{n}x{k}/{dtype}"


def read_results(path: Path) -> dict[str, dict]:
    """Finished records by item, and items a crash interrupted (status 'crashed')."""
    found: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                if rec.get("status") == "started":
                    found.setdefault(rec["item"], {"item": rec["item"], "status": "crashed"})
                else:
                    found[rec["item"]] = rec
    return found


def run_suite(path: Path, shapes, dtypes, rounds: int, triton: bool) -> None:
    """Run every item not yet in ``path``, appending each record as it finishes."""
    done = read_results(path)
    with path.open("a") as f:
        for m, n, k in shapes:
            for dt in dtypes:
                key = item_key(m, n, k, dt)
                if key in done:
                    continue
                f.write(json.dumps({"item": key, "status": "started"}) + "\n")
                f.flush()
                try:
                    rec = {"item": key, "status": "ok", **run_item(m, n, k, dt, rounds=rounds, seed=None,
                                                                  triton=triton)}
                except Exception as exc:  # noqa: BLE001 - recorded, the suite goes on
                    rec = {"item": key, "status": "failed", "message": f"{type(exc).__name__}: {exc}"[:600],
                           "where": traceback.format_exc()[-2000:]}
                f.write(json.dumps(rec, default=float) + "\n")
                f.flush()
                print(summary_line(rec), flush=True)
                if rec["status"] != "ok":
                    stop_if_context_lost()


def stop_if_context_lost() -> None:
    """After a failure: a trap leaves this process's CUDA context unusable, so exit (status 3)
    and let the driver start a fresh process, which resumes at the next item."""
    from pgstudio.runtime._cupy import context_usable
    if not context_usable():
        print("the CUDA context is lost (a kernel trapped): exiting so a fresh process resumes", flush=True)
        raise SystemExit(3)


def best_library(rec: dict) -> tuple[str, dict] | None:
    """(label, row) of the fastest library peer of a record (older records: their "cuBLAS" row)."""
    rows = rec["rows"]
    labels = rec.get("peers") or [x for x in ("cuBLAS",) if x in rows]
    timed = [(x, rows[x]) for x in labels if x in rows]
    return min(timed, key=lambda x: x[1]["ms"]) if timed else None


def summary_line(rec: dict) -> str:
    if rec.get("status") != "ok":
        return f"{rec['item']:<24} {rec.get('status')}: {rec.get('message', '')[:200]}"
    rows = rec["rows"]
    mine = rows["pgstudio"]
    parts = [f"{rec['item']:<24} {rec['tiles']:<26} {mine['ms']:8.4f} ms {mine['tflops']:6.1f} TF/s"]
    for peer in [*(rec.get("peers") or ["cuBLAS"]), "Triton"]:
        if peer in rows:
            parts.append(f"{peer} {rows[peer]['ms']:8.4f} ms  x{rows[peer]['ms'] / mine['ms']:.3f}")
    return "  ".join(parts)


def table(path: Path) -> tuple[str, dict]:
    """The suite table from the results file, and the summary figures (x best library: the
    fastest library peer's time over pgstudio's, above 1 when pgstudio is faster)."""
    recs = read_results(path)
    head = (f"{'M x N x K':<20} {'dtype':<9} {'pgstudio tiles (tuned)':<26} {'ms':>9} {'TFLOP/s':>8} "
            f"{'best library':<14} {'lib ms':>9} {'lib TF/s':>8} {'x best lib':>10} {'Triton ms':>10} {'x Triton':>9}")
    lines = [head, "-" * len(head)]
    vs_lib, vs_tri, implausible = [], [], 0
    for rec in recs.values():
        if rec.get("status") != "ok":
            lines.append(f"{rec['item']:<30} {rec.get('status')}: {rec.get('message', '')[:120]}")
            continue
        rows = rec["rows"]
        mine = rows["pgstudio"]
        best = best_library(rec)
        tri = rows.get("Triton")
        if tri and tri["tflops"] > PLAUSIBLE_TFLOPS:
            implausible += 1
            tri = None
        label, lib = best if best else ("-", None)
        xl = lib["ms"] / mine["ms"] if lib else math.nan
        xt = tri["ms"] / mine["ms"] if tri else math.nan
        if lib:
            vs_lib.append(xl)
        if tri:
            vs_tri.append(xt)
        m, n, k = rec["shape"]
        lines.append(f"{f'{m}x{n}x{k}':<20} {rec['dtype']:<9} {rec['tiles']:<26} {mine['ms']:>9.4f} {mine['tflops']:>8.1f} "
                     f"{label:<14} {lib['ms'] if lib else math.nan:>9.4f} {lib['tflops'] if lib else math.nan:>8.1f} "
                     f"{xl:>10.3f} {tri['ms'] if tri else math.nan:>10.4f} {xt:>9.3f}")

    def geo(xs):
        return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else math.nan

    figs = {"geomean_library": geo(vs_lib), "geomean_triton": geo(vs_tri), "min_library": min(vs_lib, default=math.nan),
            "items": len(recs), "ok": len(vs_lib)}
    lines += ["", f"geometric mean x best library {figs['geomean_library']:.3f} (target >= {TARGET_GEOMEAN}) "
              f"{'PASS' if figs['geomean_library'] >= TARGET_GEOMEAN else 'MISS'}",
              f"lowest x best library {figs['min_library']:.3f} (target >= {TARGET_FLOOR}) "
              f"{'PASS' if figs['min_library'] >= TARGET_FLOOR else 'MISS'}",
              f"geometric mean x Triton {figs['geomean_triton']:.3f}",
              f"Triton measured on {len(vs_tri)} of {figs['ok']} items"
              + (f" ({implausible} timed faster than any GPU's peak: not counted)" if implausible else ""),
              f"{figs['ok']} of {figs['items']} items ran and verified; timing: "
              + "; ".join(sorted({r.get("timing", "-") for r in recs.values() if r.get("status") == "ok"}))]
    return "\n".join(lines), figs


__all__ = ["DTYPES", "SUITE", "builder", "candidates", "read_results", "run_item", "run_suite", "table"]

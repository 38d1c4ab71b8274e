"""Default tuning: what a design runs best with on this GPU, found by a short measured search and
kept per device, so ``benchmark(design)`` with no options runs the design at its best settings.

A streaming design's stage count and bytes per stage decide how many loads and stores a block
keeps in flight, and the best pair depends on the GPU (on an H200 the example's 8 KiB x 4 measured
0.967x a device copy).  ``tune_stream`` runs a sweep
(``explore.sweep``: every variant built, validated, compiled, verified on fresh data with a
poisoned output, then timed) over ``STREAM_STAGES`` x ``STREAM_TILE_BYTES`` (plus the design's own
pair) x ``STREAM_OPTIONS``, in this process, and keeps the fastest.  The winner is written to
``<cache>/tuning/<device>.json`` (``compile.cache_dir()``: ``$PGSTUDIO_CACHE`` or
``~/.cache/pgstudio/kernels``), keyed by the design's JSON and the element count; the next call
on the same kind of GPU reads it back without timing anything.  What was chosen, and how, is
part of the result (``Tuned.describe``).

A GEMM design's tile shape, stages and split-K (its problem's BM, BN, BK, ``SPLIT_K``) likewise
depend on the problem and the GPU.  ``tune_gemm`` measures the few candidates that
``analysis.buildable.gemm_shapes.gemm_tiles`` ranks best for the problem, each verified against
cuBLAS on the caller's fresh data with poisoned outputs before it is timed (interleaved), and
keeps the fastest per device, problem and design family.

The cache is per device *kind* (name, multiprocessors, compute capability), not per card: two
H200s share an entry.  Delete the file to search again.

On the null runtime (``executor="null"``) a search takes every step and measures nothing, so its
choice is the model's (the sweep's predicted fastest; ``gemm_tiles``' first), said to be
unmeasured, and the cache is neither read nor written.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from ..model.design import Design
from ..runtime.compile import cache_dir
from ..runtime.tuned import Tuned
from .sweep_log import design_sha
from .sweep_space import Variant

#: The streaming search: stage counts x bytes per stage (with the design's own pair added) x code
#: options (``codegen.kernel.TUNING``: plain stores, or streaming ``st.global.cs`` ones).
STREAM_STAGES = (4, 6, 8)
STREAM_TILE_BYTES = (2048, 4096, 8192)
STREAM_OPTIONS = ("default", "store=cs")
#: Timed launches per variant in a search (a search ranks; the benchmark measures).
SEARCH_ROUNDS = 10


def device_kind() -> str:
    """``NVIDIA_H200-132sm-cc90``: the GPU kind a tuning holds for."""
    from ..runtime._cupy import cupy, sm_count
    cp = cupy()
    dev = cp.cuda.Device()
    name = cp.cuda.runtime.getDeviceProperties(dev.id)["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    return f"{re.sub(r'[^A-Za-z0-9]+', '_', name).strip('_')}-{sm_count()}sm-cc{dev.compute_capability}"


def cache_file(device: str) -> Path:
    return cache_dir() / "tuning" / f"{device}.json"


def cached(device: str, key: str) -> dict | None:
    """The remembered choice for ``key`` on ``device``, or None."""
    path = cache_file(device)
    try:
        return json.loads(path.read_text()).get(key)
    except (OSError, ValueError):
        return None


def remember(device: str, key: str, value: dict) -> None:
    """Keep ``value`` for ``key`` (atomic replace: a parallel process never reads half a file)."""
    path = cache_file(device)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError):
        table = {}
    table[key] = value
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(table, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def stream_settings(v: Variant) -> str:
    return f"{v.num_stages} stages x {v.tile[0]} B" + "".join(f", {k}={val}" for k, val in v.options)


def _own_pair(design: Design) -> tuple[int, int] | None:
    """(stages, bytes per stage) of the design's main pipelines, when they share one."""
    from .reshape import main_pipelines
    cfgs = {(design.resource(r).pipeline_config.num_stages, design.resource(r).pipeline_config.num_bytes)
            for r in main_pipelines(design)}
    return next(iter(cfgs)) if len(cfgs) == 1 else None


def _runtime(executor: Any):
    """The backend a tuner's measurements come from: the GPU, unless ``executor`` is the null
    runtime's (default: this process, "inline")."""
    from ..runtime.backend import backend_for
    return backend_for(executor or "inline")


def tune_stream(design: Design, n: int, *, rounds: int = SEARCH_ROUNDS, search: bool = True,
                executor: Any = None) -> Tuned:
    """The fastest stages x bytes-per-stage variant of streaming ``design`` over ``n`` elements on
    this GPU: from the cache, else by a sweep in this process (module docstring).  Raises
    ``PgStudioError`` when no variant verifies (the sweep's table says why).

    On the null runtime (``executor="null"``'s) the sweep runs every step and measures nothing:
    the choice is the model's fastest variant (``SweepTable.predicted_best``), said to be
    unmeasured, and nothing is read from or written to the cache."""
    from ..errors import PgStudioError
    from ..runtime.verify import NULL_RUNTIME
    from .sweep import OK, sweep
    measured = _runtime(executor).measured
    device = device_kind() if measured else "null"
    key = f"stream/{design.name}/{design_sha(design.to_json())[:16]}/n{n}"
    hit = cached(device, key) if measured else None
    if hit is not None:
        v = Variant.from_dict(hit["variant"])
        return Tuned(v.build(design), stream_settings(v), f"cached for {device}", float(hit.get("rate", "nan")),
                     v.options)
    if not search:
        return Tuned(design, "as designed", "no search")
    stages, tiles = list(STREAM_STAGES), list(STREAM_TILE_BYTES)
    own = _own_pair(design)
    if own is not None:
        stages = sorted({*stages, own[0]})
        tiles = sorted({*tiles, own[1]})
    table = sweep(design, stages, tiles, ["designed"], options=STREAM_OPTIONS, n=n, rounds=rounds,
                  executor=executor or "inline", progress=False)
    if not measured:
        guess = table.predicted_best
        if guess is None:
            return Tuned(design, "as designed", f"{NULL_RUNTIME}: nothing was measured or predicted")
        return Tuned(guess.variant.build(design), stream_settings(guess.variant),
                     f"{NULL_RUNTIME}: the model's choice of {len(table.rows)} variants, not measured",
                     options=guess.variant.options)
    ok = [r for r in table.rows if r.status == OK]
    if not ok:
        raise PgStudioError(f"tuning {design.name!r}: no variant verified and ran; the sweep says:\n{table.table()}")
    best = max(ok, key=lambda r: r.rate)
    remember(device, key, {"variant": best.variant.as_dict(), "rate": best.rate, "variants": len(table.rows),
                           "measured": {r.key: round(r.rate, 1) for r in ok}})
    return Tuned(best.variant.build(design), stream_settings(best.variant),
                 f"search of {len(table.rows)} variants on {device}", best.rate, best.variant.options)


def tune_gemm_design(design: Design, seed: int | None = None, *, executor: Any = None) -> Tuned:
    """The tuner's choice for a GEMM design's own problem on this GPU: ``gemm_shapes.gemm_tiles``
    ranks the tile choices (with a residual, also their twins taking it in column slices:
    ``gemm_shapes.residual_turns``), each is the design's own tasks and groups at that choice
    (``reshape.with_gemm_tiles``), measured once and cached per device and design name (on the
    null runtime, ranked for the model's machine and measured not at all)."""
    from ..analysis.accumulators import accumulators, residuals
    from ..analysis.buildable.gemm_shapes import gemm_tiles, residual_turns
    from ..analysis.machine import Machine
    from ..codegen.gemm import emit_gemm
    from .reshape import with_gemm_tiles
    backend = _runtime(executor)
    p = design.problem_dict
    m, n, k = int(p["M"]), int(p["N"]), int(p["K"])
    data = backend.gemm_workload(design, emit_gemm(design), m, n, k, seed)
    if backend.measured:
        from ..runtime._cupy import sm_count
        sms = sm_count()
    else:
        sms = Machine().sms
    tiles = gemm_tiles(m, n, k, data.dtype, sms)
    acc = next(iter(accumulators(design)), None)
    if acc is not None and residuals(design, acc):  # a residual beside the accumulator: also in column slices
        tiles = (*tiles, *residual_turns(tiles))
    tuned, _ = tune_gemm(design.name, lambda t: with_gemm_tiles(design, t), tiles, data, backend=backend)
    return tuned


def tune_gemm(family: str, build: Callable[[Any], Design], tiles: Sequence[Any], data: Any, *,
              rounds: int = SEARCH_ROUNDS, warmup: int = 2, search: bool = True,
              backend: Any = None) -> tuple[Tuned, list[dict]]:
    """The fastest of ``tiles`` (``gemm_shapes.GemmTiles``) for the GEMM designs ``build(tiles)`` of
    ``family`` on ``data`` (a ``gemm_run.GemmWorkload`` of the problem): from the cache, else each
    candidate built, verified against cuBLAS (poisoned outputs) and timed interleaved, the
    winner remembered (module docstring).  Returns the choice and one record per candidate
    (label, status, median ms, error).  A candidate that does not build, verify or run is
    recorded with why and left out; ``PgStudioError`` when none is left.  On the null runtime
    (``backend=runtime.backend.NULL``, ``data`` its workload) every candidate takes the same steps,
    none is measured, and the choice is the model's first (``tiles[0]``, when it builds)."""
    import statistics

    from ..analysis.buildable.gemm_shapes import GemmTiles
    from ..codegen.gemm import emit_gemm
    from ..errors import PgStudioError
    from ..runtime.backend import CUDA
    from ..runtime.timing import batch_for, estimate_ms, time_interleaved
    from ..runtime.verify import NOT_RUN, NULL_RUNTIME
    backend = backend or CUDA
    measured = backend.measured
    m, n, k = data.shape
    device = device_kind() if measured else "null"
    key = f"gemm/{family}/{m}x{n}x{k}/{data.dtype}"
    hit = cached(device, key) if measured else None
    if hit is not None:
        t = GemmTiles(**{k: tuple(v) if k == "cluster" else v for k, v in hit["tiles"].items()})
        return Tuned(build(t), t.label, f"cached for {device}", float(hit.get("rate", "nan"))), []
    if not search:
        t = tiles[0]
        return Tuned(build(t), t.label, "model's first choice, not measured"), []
    backend.require()  # GpuUnavailable before any work when no GPU is usable
    records: list[dict] = []
    runs: list[tuple[Any, Callable[[], None], list[float]]] = []
    for t in tiles:
        rec: dict[str, Any] = {"tiles": t.label}
        records.append(rec)
        try:
            la = backend.launcher(emit_gemm(build(t)))
            rec["error"] = max(c.rel_error for c in la.verify(data))
            args = la.args(data)
        except Exception as exc:  # noqa: BLE001 - a candidate that fails is reported, the search goes on
            rec.update(status="failed", message=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
            continue
        rec["status"] = "ok" if measured else NOT_RUN
        runs.append((t, (lambda la=la, args=args: la.launch(data, args)), []))
    if not runs:
        raise PgStudioError(f"tuning {family} at {m}x{n}x{k} {data.dtype}: no candidate verified: "
                            + "; ".join(f"{r['tiles']}: {r.get('message', '')}" for r in records))
    named = [(str(i), fn) for i, (_, fn, _) in enumerate(runs)]
    clock = backend.clock
    timed = time_interleaved(named, rounds, warmup=warmup, batch=batch_for(estimate_ms(named[0][1], clock=clock)),
                             clock=clock)
    for i, (_, _, times) in enumerate(runs):
        times.extend(timed[str(i)])
    flops = 2.0 * m * n * k
    for t, _, times in runs:
        rec = next(r for r in records if r["tiles"] == t.label)
        rec["median_ms"] = statistics.median(times)
        rec["tflops"] = flops / (rec["median_ms"] * 1e-3) / 1e12
    if not measured:
        first = runs[0][0]
        return Tuned(build(first), first.label,
                     f"{NULL_RUNTIME}: the model's first choice of {len(tiles)} tile shapes, not measured"), records
    best, _, best_times = min(runs, key=lambda x: statistics.median(x[2]))
    rate = flops / (statistics.median(best_times) * 1e-3) / 1e12
    remember(device, key, {"tiles": {"bm": best.bm, "bn": best.bn, "bk": best.bk, "stages": best.stages,
                                     "split_k": best.split_k, "cluster": list(best.cluster),
                                     "stream_k": best.stream_k}, "rate": rate,
                           "measured": {r["tiles"]: round(r.get("tflops", float("nan")), 1) for r in records}})
    return Tuned(build(best), best.label, f"search of {len(tiles)} tile shapes on {device}", rate), records


__all__ = ["STREAM_OPTIONS", "STREAM_STAGES", "STREAM_TILE_BYTES", "Tuned", "cache_file", "cached", "device_kind", "remember",
           "tune_gemm", "tune_stream"]

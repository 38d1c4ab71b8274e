"""The two jobs of a sweep, as they run in a worker: compile one variant, time one variant.

Both take the base design as JSON (plain text crosses processes and machines, and loading it
never executes anything) and the variant as a dict, rebuild the variant's design there, and
return a plain dict -- the record the sweep writes to its results file.

* ``compile_variant`` (a CPU job): build, ``design.validate()``, generate, NVRTC.  A variant
  the validator or the generator rejects is ``invalid`` with its diagnostics ("[code] message");
  NVRTC rejecting generated code is ``failed`` (a generator bug to report); no NVRTC here is
  ``not run``.  The cubin lands in the on-disk cache and rides along as the job's payload.
* ``time_variant`` (a GPU job): put the cubin in this machine's cache, load it, verify on fresh
  random inputs with a poisoned output, then time ``warmup`` + ``rounds`` launches between CUDA
  events; the median and the bandwidth (streaming, GB/s) or throughput (GEMM, TFLOP/s).
"""

from __future__ import annotations

import statistics
from typing import Any

from ..errors import CompileError, DesignError, GpuUnavailable, PgStudioError
from ..model.design import Design
from ..runtime.executor import WithPayload
from .sweep_space import GEMM, Variant, kind_of

OK, COMPILED, INVALID, FAILED, NOT_RUN = "ok", "compiled", "invalid", "failed", "not run"
STATUSES = (OK, COMPILED, INVALID, FAILED, NOT_RUN)


def _build(design_json: str, variant: dict) -> tuple[Variant, Design]:
    v = Variant.from_dict(variant)
    return v, v.build(Design.from_json(design_json))


def _emit(design: Design, v: Variant, arch: str):
    from ..codegen import emit
    return emit(design, arch=arch, validate=False, **({"tuning": dict(v.options)} if v.options else {}))


def compile_variant(design_json: str, variant: dict, arch: str = "sm_90a") -> WithPayload:
    """Build, check, generate and compile one variant (see the module docstring)."""
    rec: dict[str, Any] = {"phase": "compile", "arch": arch}
    try:
        v, d = _build(design_json, variant)
    except PgStudioError as exc:
        return WithPayload({**rec, "status": INVALID, "codes": [getattr(exc, "code", "") or "sweep.variant"],
                            "message": str(exc)}, None)
    report = d.validate()
    if not report.ok:
        errs = list(report.errors)
        return WithPayload({**rec, "status": INVALID, "codes": [e.code for e in errs],
                            "message": "; ".join(f"[{e.code}] {e.message}" for e in errs)}, None)
    try:
        src = _emit(d, v, arch)
    except (DesignError, CompileError) as exc:  # what the generator cannot build (until a codegen.* rule says so)
        code = getattr(exc, "code", "") or "codegen"
        return WithPayload({**rec, "status": INVALID, "codes": [code], "message": f"[{code}] {exc}"}, None)
    rec.update(kernel=src.entry, smem_bytes=src.smem_bytes, threads=src.block[0] * src.block[1] * src.block[2],
               source_key=src.key)
    from ..runtime.compile import cubin_for
    try:
        cub = cubin_for(src)
    except GpuUnavailable as exc:
        return WithPayload({**rec, "status": NOT_RUN, "message": str(exc)}, None)
    except CompileError as exc:
        return WithPayload({**rec, "status": FAILED, "codes": ["nvrtc"], "message": str(exc)}, None)
    rec.update(status=COMPILED, cubin_bytes=len(cub), compile_s=round(cub.seconds, 4), cached=cub.cached)
    return WithPayload(rec, cub.data)


def time_variant(design_json: str, variant: dict, settings: dict, payload: bytes | None = None) -> dict:
    """Verify, then time one compiled variant on this worker's GPU (see the module docstring)."""
    v, d = _build(design_json, variant)
    src = _emit(d, v, "sm_90a")
    if payload:
        from ..runtime.compile import store_cubin
        store_cubin(src, payload)
    from ..runtime.compile import forget
    try:
        return _time(d, src, settings)
    finally:
        forget(src)  # a GPU worker of a big sweep loads thousands of kernels: keep none of them


def _time(d: Design, src: Any, settings: dict) -> dict:
    rounds, warmup = int(settings.get("rounds", 20)), int(settings.get("warmup", 3))
    seed = settings.get("seed")
    rec: dict[str, Any] = {"phase": "run", "kernel": src.entry, "smem_bytes": src.smem_bytes}
    if kind_of(d) == GEMM:
        from ..runtime.gemm_run import run_gemm
        res = run_gemm(d, timing=True, reps=rounds, warmup=warmup, seed=seed,
                       **({"budget_ms": settings["budget_ms"]} if settings.get("budget_ms") else {}))
        rec.update(status=OK, median_ms=res.ms, rate=res.tflops, runs=rounds,
                   rel_error=max(res.errors.values(), default=float("nan")))
        return rec
    from ..runtime.run import BUDGET_MS, Launcher, Workload
    la = Launcher(src, blocks_per_sm=settings.get("blocks_per_sm"), budget_ms=settings.get("budget_ms") or BUDGET_MS)
    work = Workload.make(d, int(settings.get("n") or src.info["num_elements"]), str(src.info["dtype"]), seed)
    checks = la.verify(work)
    times = la.time(work, warmup, rounds)
    median = statistics.median(times)
    rec.update(status=OK, median_ms=median, rate=work.bytes_moved / (median * 1e-3) / 1e9, runs=len(times),
               blocks_per_sm=la.blocks_per_sm, registers=la.lk.num_regs,
               rel_error=max((c.rel_error for c in checks), default=float("nan")))
    return rec


__all__ = ["COMPILED", "FAILED", "INVALID", "NOT_RUN", "OK", "STATUSES", "compile_variant", "time_variant"]

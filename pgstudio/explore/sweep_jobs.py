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
  events; the median and the bandwidth (streaming, GB/s) or throughput (GEMM, TFLOP/s).  On the
  null runtime (``executor="null"``) it takes the same steps with nothing launched, and the
  variant stays ``compiled``: nothing was verified or timed (a later GPU sweep times it).
"""

from __future__ import annotations

from typing import Any

from ..analysis.validate import validate
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
    report = validate(d)
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
    """Verify and time ``d``'s kernel ``src`` through the launch contract (``runtime.launch``), on
    the runtime the sweep asked for (``settings["runtime"]``: "null" for the null runtime)."""
    from ..runtime.backend import CUDA, NULL
    from ..runtime.run import run_gemm
    from ..runtime.launch import RunResult
    from ..runtime.verify import NULL_RUNTIME
    backend = NULL if settings.get("runtime") == "null" else CUDA
    rounds, warmup = int(settings.get("rounds", 20)), int(settings.get("warmup", 3))
    seed, budget = settings.get("seed"), settings.get("budget_ms") or None
    rec: dict[str, Any] = {"phase": "run", "kernel": src.entry, "smem_bytes": src.smem_bytes}
    if kind_of(d) == GEMM:
        res = run_gemm(d, timing=True, reps=rounds, warmup=warmup, seed=seed, backend=backend,
                       **({"budget_ms": budget} if budget else {}))
    else:
        la = backend.launcher(src, blocks_per_sm=settings.get("blocks_per_sm"), budget_ms=budget)
        work = backend.stream_workload(d, int(settings.get("n") or src.info["num_elements"]), str(src.info["dtype"]),
                                       seed)
        res = RunResult.of(la, work, la.verify(work), la.time(work, warmup, rounds), warm=False, wall_s=0.0)
        rec.update(blocks_per_sm=res.blocks_per_sm, registers=res.registers)
    if not res.measured:  # the timing job ran every step, and nothing was verified or timed
        rec.update(status=COMPILED, measured=False,
                   message=f"{NULL_RUNTIME}: the timing job ran; {len(res.checks)} output(s) not verified, not timed")
        return rec
    rec.update(status=OK, median_ms=res.median_ms, rate=res.rate, runs=len(res.times_ms),
               rel_error=max((c.rel_error for c in res.checks), default=float("nan")))
    return rec


__all__ = ["COMPILED", "FAILED", "INVALID", "NOT_RUN", "OK", "STATUSES", "compile_variant", "time_variant"]

"""Run a design's kernel: launch, verify against the reference, then time it -- either kind.

``run(design)`` emits (or reuses) the kernel, loads it, draws fresh random inputs, poisons the
outputs (NaN bytes), launches once, checks the watchdog record (``KernelHangError`` in words),
compares every output with the reference of the same design, and only then times it with CUDA
events: a few warm-up launches, then the median of many (the launch contract,
``runtime.launch``).  The result displays as a table in a notebook.  Default sizes come from
the design's problem (``num_elements``; M, N, K for a GEMM design, which ``run_gemm`` runs).
With ``executor="null"`` it runs on the null runtime (``runtime.null``) and its result says that
nothing ran.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

from ..codegen import emit
from ..codegen.gemm import emit_gemm
from ..codegen.source import KernelSource
from ..errors import DesignError
from ..model.design import Design
from .backend import CUDA, backend_for
from .gemm_run import BUDGET_MS as GEMM_BUDGET_MS
from .gemm_run import is_gemm
from .launch import Launcher, RunResult, Workload
from .stream_run import BUDGET_MS

_EMITTED: dict[Any, KernelSource] = {}


def emit_cached(design: Design, **kw: Any) -> KernelSource:
    """``emit(design, **kw)``, memoised on the (immutable, hashable) design and options."""
    try:
        key = (design, tuple(sorted((k, tuple(sorted(v.items())) if isinstance(v, Mapping) else v)
                                    for k, v in kw.items())))
        hash(key)
    except TypeError:
        return emit(design, **kw)
    src = _EMITTED.get(key)
    if src is None:
        src = _EMITTED[key] = emit(design, **kw)
    return src


def run(design: Design, *, n: int | None = None, seed: int | None = None, verify: bool = True, timing: bool = True,
        warmup: int = 3, repeats: int = 20, budget_ms: float = BUDGET_MS, blocks_per_sm: int | None = None,
        tuning: Mapping[str, Any] | None = None, validate: bool = True, workload: Workload | None = None,
        grid: int | None = None, executor: Any = None) -> RunResult:
    """Compile, verify and time ``design`` on the GPU (see the module docstring).

    ``grid`` fixes the number of blocks (default: a persistent grid filling every SM).  Like
    ``benchmark`` and ``trace`` it runs in a GPU worker process (``executor``: the default worker
    processes, ``"inline"`` for this process, e.g. to debug, or ``"null"`` for the null runtime),
    so a kernel that traps raises ``KernelFault`` here and the notebook stays usable; a given
    ``workload`` holds this process's GPU arrays, so it runs here.
    """
    from .executor import get_executor
    ex = get_executor(executor)
    if not ex.in_process and workload is None:
        from .isolated import on_gpu
        kwargs = dict(n=n, seed=seed, verify=verify, timing=timing, warmup=warmup, repeats=repeats, budget_ms=budget_ms,
                      blocks_per_sm=blocks_per_sm, tuning=dict(tuning) if tuning else None, validate=validate, grid=grid)
        return on_gpu(run, design, kwargs, executor=ex, what="run", progress=False)
    backend = backend_for(ex)
    if is_gemm(design):
        if n is not None or workload is not None or grid is not None:
            raise DesignError(f"design {design.name!r} is a GEMM: its shape is its problem's M, N and K, and its grid "
                              "is one block per SM", code="run.gemm",
                              hint="leave n, workload and grid out, or call runtime.run.run_gemm(design, m, n, k)")
        return run_gemm(design, seed=seed, timing=timing, reps=repeats, warmup=warmup, backend=backend)
    t0 = time.perf_counter()
    src = emit_cached(design, validate=validate, tuning=dict(tuning or {}))
    warm = backend.is_loaded(src)
    launcher: Launcher = backend.launcher(src, blocks_per_sm=blocks_per_sm, budget_ms=budget_ms, grid=grid)
    work = workload or backend.stream_workload(design, int(n or src.info["num_elements"]), str(src.info["dtype"]), seed)
    checks = launcher.verify(work) if verify else ()
    times = launcher.time(work, warmup, repeats) if timing else []
    return RunResult.of(launcher, work, checks, times, warm=warm, wall_s=time.perf_counter() - t0)


def run_gemm(design: Design, m: int | None = None, n: int | None = None, k: int | None = None, *,
             seed: int | None = None, b_major: str | None = None, timing: bool = False,
             reps: int = 10, warmup: int = 2, budget_ms: float = GEMM_BUDGET_MS, backend: Any = None) -> RunResult:
    """Verify (and optionally time) ``design`` at M x N x K (default: the design's problem).

    ``backend``: ``runtime.backend.CUDA`` (the default) or ``NULL``, the null runtime's, which
    allocates, loads and launches nothing and returns a result that says so."""
    backend = backend or CUDA
    t0 = time.perf_counter()
    backend.require()
    p = design.problem_dict
    m, n, k = m or p["M"], n or p["N"], k or p["K"]
    src = emit_gemm(design, b_major=b_major)
    warm = backend.is_loaded(src)
    launcher = backend.launcher(src, budget_ms=budget_ms)
    work = backend.gemm_workload(design, src, m, n, k, seed)
    checks = launcher.verify(work)
    times = launcher.time(work, warmup, reps) if timing else []
    return RunResult.of(launcher, work, checks, times, warm=warm, wall_s=time.perf_counter() - t0)


__all__ = ["BUDGET_MS", "emit_cached", "run", "run_gemm"]

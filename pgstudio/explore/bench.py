"""``tuned_benchmark(design)``: the benchmark a user asks for -- the design at the tuner's choice
for this GPU, beside the design as given, its ungrouped twin and the library.

``pgstudio.benchmark`` is this function.  It chooses the tuning (``choose_tuning``, with
``explore.tuning``: from the per-device cache, else a short measured search) and hands it to
``runtime.bench.benchmark(design, tuned=...)``, which times what it is given.  Both steps run in
one GPU worker process (``runtime.isolated``): a kernel that traps during the search or the
benchmark costs that worker, never the caller.

When to tune (``tune``): None tunes unless the caller fixed the settings -- code options
(``tuning``) or ``blocks_per_sm`` for a streaming design -- or asked for a run without validation
(``validate=False``, a design under study exactly as given); True always tunes; False runs the
design as given.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ..model.design import Design
from ..runtime.backend import backend_for
from ..runtime.bench import benchmark
from ..runtime.bench_table import BenchTable
from ..runtime.executor import get_executor
from ..runtime.isolated import on_gpu
from ..runtime.run import emit_cached
from ..runtime.stream_run import BUDGET_MS
from ..runtime.tuned import Tuned
from .tuning import tune_gemm_design, tune_stream


def choose_tuning(design: Design, *, n: int | None = None, seed: int | None = None, validate: bool = True,
                  tuning: Mapping[str, Any] | None = None, blocks_per_sm: int | None = None,
                  tune: bool | None = None, executor: Any = None) -> Tuned | None:
    """The tuner's choice for ``design`` on this process's GPU, or None when it runs as given (the
    module docstring says when).  A GEMM design's choice is its tile shape for its own problem
    (``tuning.tune_gemm_design``); a streaming design's is its stages x bytes per stage x code
    options over ``n`` elements (default: the design's ``num_elements``; ``tuning.tune_stream``).
    ``executor``: where the search runs (default this process; the null runtime's measures nothing)."""
    from ..runtime.gemm_run import is_gemm
    if is_gemm(design):
        return tune_gemm_design(design, seed, executor=executor) if tune or (tune is None and validate) else None
    if not (tune or (tune is None and validate and not tuning and blocks_per_sm is None)):
        return None
    src = emit_cached(design, validate=validate, tuning=dict(tuning or {}))
    return tune_stream(design, int(n or src.info["num_elements"]), executor=executor)


def tuned_benchmark(design: Design, *, n: int | None = None, rounds: int = 30, warmup: int = 3,
                    seed: int | None = None, budget_ms: float = BUDGET_MS, blocks_per_sm: int | None = None,
                    tuning: Mapping[str, Any] | None = None, twin: bool = True, peers: bool = True, copy: bool = True,
                    progress: bool = True, validate: bool = True, executor: Any = None, tune: bool | None = None,
                    on_progress: Callable[[int, int, str], None] | None = None) -> BenchTable:
    """Time ``design`` at its tuning for this GPU against the design as given, its ungrouped twin,
    the library and a device copy (module docstring; the options are ``runtime.bench.benchmark``'s,
    with ``tune``).  It runs in a GPU worker process (``executor``: the default worker processes,
    ``"inline"`` for this process, or ``"null"`` for the null runtime, where the search and the
    benchmark take every step and measure nothing); ``progress`` draws a tqdm bar,
    ``on_progress(done, total, text)`` receives each step."""
    ex = get_executor(executor)
    if not ex.in_process:
        kwargs = dict(n=n, rounds=rounds, warmup=warmup, seed=seed, budget_ms=budget_ms, blocks_per_sm=blocks_per_sm,
                      tuning=dict(tuning) if tuning else None, twin=twin, peers=peers, copy=copy, validate=validate,
                      tune=tune)
        return on_gpu(tuned_benchmark, design, kwargs, executor=ex, what="benchmark", progress=progress,
                      on_progress=on_progress)
    backend_for(ex).require()  # one clear GpuUnavailable before the search touches CuPy
    tuned = choose_tuning(design, n=n, seed=seed, validate=validate, tuning=tuning, blocks_per_sm=blocks_per_sm,
                          tune=tune, executor=ex)
    return benchmark(design, n=n, rounds=rounds, warmup=warmup, seed=seed, budget_ms=budget_ms,
                     blocks_per_sm=blocks_per_sm, tuning=tuning, twin=twin, peers=peers, copy=copy, progress=progress,
                     validate=validate, executor=ex, tuned=tuned, on_progress=on_progress)


def timed_or_compiled(design: Design, out: Callable[[str], Any] = print) -> None:
    """What a teaching notebook's benchmark cell shows: on a GPU, ``tuned_benchmark``'s table
    (every variant verified before it is timed); without one, the design compiled for sm_90a and
    sm_100a and what a GPU run recorded for it, if one did (``runtime.recorded``).  A compile that
    cannot run here (no NVRTC wheels, a generator limit) is said, never raised: the notebook runs
    to its end on any machine."""
    from ..codegen import emit
    from ..runtime import recorded
    from ..runtime._cupy import gpu_available
    from ..runtime.compile import compile_cubin

    if gpu_available():
        out(str(tuned_benchmark(design, progress=False)))
        return
    out(f"no GPU here: {design.name} is compiled, not timed")
    for arch in ("sm_90a", "sm_100a"):
        try:
            cubin = compile_cubin(emit(design, arch=arch), arch)
            out(f"  {arch}: {len(cubin.data):,} B cubin")
        except Exception as exc:  # said in the notebook, not raised (see above)
            out(f"  {arch}: not compiled ({type(exc).__name__}: {exc})")
    out(recorded.show(design.name))


__all__ = ["choose_tuning", "timed_or_compiled", "tuned_benchmark"]

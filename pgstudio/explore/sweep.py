"""``sweep(design, ...)``: which design choice wins, over a few variants or thousands.

The variants are the points of a ``sweep_space.Space`` (stages x tile x grouping, and for
streaming designs consumer warps x code options); every one is

1. **compiled** on a CPU worker: built, checked by ``design.validate()`` (an invalid variant is
   listed with its diagnostics, never run), generated and compiled by NVRTC -- no GPU needed;
2. **timed** on a GPU worker when there is a GPU: verified on fresh random inputs with a poisoned
   output, then timed (``sweep_jobs``).

Where they run is the executor's business (``executor=``: the default worker processes,
``"inline"`` to debug, ``"ray"`` for a cluster, ``"null"`` for the null runtime, whose timing jobs
launch nothing and leave every variant ``compiled``); results stream back as variants finish, drive
the progress bar (tqdm, with an ETA) and, with ``results=PATH``, are appended to a JSON-lines
file as they come, so an interrupted or extended sweep resumes where it stopped
(``sweep_log``).  Without a GPU the sweep compiles every variant and says that nothing was
timed.  The result is a ``SweepTable``: text, an HTML table, and a heatmap or bars, with the
kernel-time model's prediction of every valid variant beside the measured time.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import PgStudioError
from ..model.design import Design
from ..runtime.executor import Job, get_executor
from ..runtime.progress import Progress
from .sweep_jobs import COMPILED, FAILED, INVALID, NOT_RUN, OK, compile_variant, time_variant
from .sweep_log import SweepLog, design_sha
from .sweep_space import (DEFAULT_GROUPINGS, DESIGNED, GEMM, GROUPINGS, UNGROUPED, Space, Variant, space_for,
                          with_grouping, with_stages, with_tile)
from .sweep_table import SweepRow, SweepTable, load_sweep

#: Timed launches per variant after the warm-up ones (medians are reported).
ROUNDS, WARMUP = 20, 3


def problem_of(design: Design, space: Space, n: int | None) -> tuple[str, int | None, str]:
    """(the problem in words, the element count of a streaming sweep, the rate's unit)."""
    p = design.problem_dict
    if space.kind == GEMM:
        if n is not None:
            raise PgStudioError(f"n is the element count of streaming designs; {design.name!r} is a GEMM design, "
                                "whose shape is its problem's M, N and K")
        return f"{p.get('M')} x {p.get('N')} x {p.get('K')} {p.get('dtype', 'float16')} GEMM", None, "TFLOP/s"
    count = int(n or p.get("num_elements", 1 << 24))
    if count < 1:
        raise PgStudioError(f"n={count} elements: give at least 1")
    dtype = str(p.get("dtype", design.resources[0].dtype if design.resources else "float32"))
    return f"{count:,} {dtype} elements", count, "GB/s"


def _failure_record(phase: str, out: Any) -> dict:
    err = out.error
    kind = "worker" if err.crashed else ("gpu context" if err.poisoned else err.kind)
    text = str(err)
    if err.poisoned:
        text += "; the GPU worker was replaced and the sweep went on"
    return {"phase": phase, "status": FAILED, "codes": [kind], "message": text}


def sweep(design: Design, num_stages: Iterable[int] | None = None, tiles: Iterable[Any] | None = None,
          grouping: Iterable[str] | None = None, *, warps: Iterable[int] | None = None,
          options: Iterable[Any] | None = None, n: int | None = None, rounds: int = ROUNDS, warmup: int = WARMUP,
          seed: int | None = None, budget_ms: float | None = None, blocks_per_sm: int | None = None,
          executor: Any = None, results: str | Path | None = None, resume: bool = True,
          compile_only: bool | None = None, arch: str = "sm_90a", progress: bool = True,
          on_progress: Callable[[int, int, str], None] | None = None) -> SweepTable:
    """Compile every variant of ``design`` and, on a GPU, verify and time it (module docstring).

    ``num_stages`` / ``tiles`` / ``grouping`` / ``warps`` / ``options``: the axes (None: the
    design's defaults, ``sweep_space.space_for``); ``tiles`` are bytes per stage (streaming) or
    ``"BMxBNxBK"`` shapes (GEMM).  ``results``: a JSON-lines file to append to and resume from
    (``resume=False`` starts it over).  ``compile_only``: None times when a GPU is there.
    ``progress`` draws a tqdm bar; ``on_progress(done, total, text)`` gets every step with
    tqdm's meter text (the studio).
    """
    t0 = time.perf_counter()
    space = space_for(design, num_stages, tiles, grouping, warps=warps, options=options)
    specs, skipped = space.variants(design)
    problem, count, unit = problem_of(design, space, n)
    ex = get_executor(executor)
    gpus = ex.gpu_count() if compile_only is not True else 0
    timing = gpus > 0
    why_not = "" if timing else _why_not_timed(compile_only, ex)
    design_json = design.to_json()
    settings = {"n": count, "rounds": int(rounds), "warmup": int(warmup), "seed": seed, "budget_ms": budget_ms,
                "blocks_per_sm": blocks_per_sm, "arch": arch}
    if ex.runtime == "null":  # the timing jobs run on the null runtime, and their records say so
        settings["runtime"] = "null"
    header = {"design": design.name, "design_sha256": design_sha(design_json), "kind": space.kind,
              "problem": problem, "unit": unit, "space": space.as_dict(), "settings": settings}
    log = SweepLog.open(results, header, resume=resume) if results else None
    done = log.done(timing) if log is not None else {}
    records: dict[str, dict] = dict(done)
    todo = [v for v in specs if v.key not in done]
    bar = Progress(len(todo) * (2 if timing else 1), f"sweep {design.name}", "step", enabled=progress,
                   on_update=on_progress)
    try:
        with ex.session() as s:
            for v in todo:
                s.submit(Job(v.key, compile_variant, (design_json, v.as_dict(), arch),
                             label=f"{design.name} {v.label}"))
            by_key = {v.key: v for v in todo}
            for out in s:
                v = by_key[out.job.key]
                phase = "run" if out.job.gpu else "compile"
                rec = dict(out.value) if out.ok else _failure_record(phase, out)
                rec.update(key=v.key, variant=v.as_dict(), attempts=out.attempts, where=out.where)
                if phase == "run":
                    rec = {**records.get(v.key, {}), **rec}
                elif rec["status"] == COMPILED and timing:
                    s.submit(Job(v.key, time_variant, (design_json, v.as_dict(), settings), gpu=True,
                                 label=f"{design.name} {v.label}"), payload=out.handle)
                elif timing:
                    bar.set_total(bar.total - 1)  # no timing step for a variant that did not compile
                records[v.key] = rec
                if log is not None:
                    log.append(rec)
                bar.update(1, f"{'timed' if phase == 'run' else 'compiled'} {v.label}")
    finally:
        bar.close()
        if log is not None:
            log.close()
    rows = tuple(SweepRow.from_record(records[v.key]) if v.key in records else
                 SweepRow(v.grouping, v.num_stages, v.tile, NOT_RUN, message="interrupted", warps=v.warps,
                          options=v.options) for v in specs)
    note = why_not
    if not timing and not any(r.status == NOT_RUN for r in rows):
        compiled = sum(r.status in (COMPILED, OK) for r in rows)
        note = f"{why_not}: compiled {compiled} of {len(rows)} variants for {arch}; nothing was timed"
    elif ex.runtime == "null":
        from ..runtime.verify import NULL_RUNTIME
        compiled = sum(r.status == COMPILED for r in rows)
        note = (f"{NULL_RUNTIME}: compiled {compiled} of {len(rows)} variants for {arch} and ran their timing jobs; "
                "nothing was verified or timed")
    table = SweepTable(design.name, problem, unit, rows, note, time.perf_counter() - t0, ex.describe(),
                       str(results) if results else "", len(done), {"skipped": skipped, "timing": timing})
    return table.with_predictions(design, n=count)  # the model's time beside each variant


def _why_not_timed(compile_only: bool | None, ex: Any) -> str:
    if compile_only:
        return "compile only (as asked)"
    if ex.name == "ray":
        return "no GPU in the Ray cluster"
    from ..errors import GpuUnavailable
    from ..runtime._cupy import _gpu_count
    try:
        n, why = _gpu_count()
    except GpuUnavailable:
        return "no CuPy here (timing needs pip install 'pgstudio[gpu]' on a machine with an NVIDIA GPU)"
    return f"no GPU here ({why or 'CuPy sees no device'})" if n == 0 else "no GPU visible to the executor"


__all__ = ["COMPILED", "DEFAULT_GROUPINGS", "DESIGNED", "FAILED", "GROUPINGS", "INVALID", "NOT_RUN", "OK", "ROUNDS",
           "SweepRow", "SweepTable", "UNGROUPED", "Variant", "WARMUP", "load_sweep", "problem_of", "sweep",
           "with_grouping", "with_stages", "with_tile"]

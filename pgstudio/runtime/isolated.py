"""Run one GPU function of a design in a worker process: how ``benchmark`` and ``trace`` isolate.

``on_gpu(fn, design, executor=...)`` sends the design (as JSON) to a GPU worker, which calls
``fn(design, executor="inline", **kwargs)`` there -- the same function, run in-process inside the
worker -- and returns its (plain, picklable) result.  The null executor's worker is this process
and its function runs on the null runtime (``executor.null``).  The function's progress bar is relayed to
this process and drawn here (tqdm), or handed to ``on_progress(done, total, text)``.

When the kernel traps, hangs past its time limit or kills the worker, the caller gets a
``KernelFault`` naming the design, what ran, the GPU's own words and the likely cause: the
errors ``design.validate()`` reports (for a design run with ``validate=False``), else the
watchdog's record, else a generator bug to report.  The worker is replaced; this process never
touched CUDA and stays usable.
"""

from __future__ import annotations

from typing import Any, Callable

from ..analysis.validate import validate
from ..errors import GpuUnavailable, KernelFault
from ..model.design import Design
from .executor import Failure, Job, get_executor
from .progress import Progress


def _design_job(fn: Callable[..., Any], design_json: str, kwargs: dict, executor: Any = "inline") -> Any:
    """In the worker: the design back from JSON, then the function in-process (``executor``: the
    job's ``Executor.job_executor()``, "inline" but for the null runtime's)."""
    return fn(Design.from_json(design_json), executor=executor, **kwargs)


def likely_cause(design: Design, failure: Failure) -> str:
    """Why a kernel of ``design`` probably failed, in words (see the module docstring)."""
    try:
        errors = list(validate(design).errors)
    except Exception:  # noqa: BLE001 - a design too broken to validate says so elsewhere
        errors = []
    if errors:
        shown = "; ".join(f"[{e.code}] {e.message}" for e in errors[:3])
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        return f"design.validate() reports {shown}{more}"
    record = dict(failure.fields).get("record")
    if record:
        return f"the watchdog recorded {record}"
    return ("the design validates, so this is a code-generator bug: please report it with the design file "
            "(design.to_json())")


def on_gpu(fn: Callable[..., Any], design: Design, kwargs: dict | None = None, *, executor: Any = None,
           what: str = "", progress: bool = True, on_progress: Callable[[int, int, str], None] | None = None,
           timeout_s: float | None = None) -> Any:
    """``fn(design, executor="inline", **kwargs)`` on a GPU worker of ``executor`` (module docstring).

    ``progress`` draws the function's progress here (tqdm); ``on_progress`` receives it too.
    """
    ex = get_executor(executor)
    if ex.gpu_count() == 0:
        from ._cupy import require_gpu
        require_gpu()  # says whether CuPy or the GPU is missing
        raise GpuUnavailable(f"the {ex.name} executor sees no GPU")
    label = f"{what or fn.__name__} of design {design.name!r}"
    bars: dict[str, Progress] = {}

    def relay(_key: str, desc: str, unit: str, done: int, total: int, text: str) -> None:
        bar = bars.get(desc)
        if bar is None:
            bar = bars[desc] = Progress(total, desc, unit, enabled=progress, on_update=on_progress)
        bar.absorb(done, total, text)

    job = Job(f"{fn.__name__}:{design.name}", _design_job, (fn, design.to_json(), dict(kwargs or {}),
                                                           ex.job_executor()), gpu=True, label=label, timeout_s=timeout_s)
    try:
        with ex.session(relay) as s:
            s.submit(job)
            out = next(iter(s))
    finally:
        for bar in bars.values():
            bar.close()
    if out.error is None:
        return out.value
    if out.error.crashed or out.error.poisoned:
        raise KernelFault(f"{label} failed on {out.where or ex.name}: {out.error}; the worker was replaced and "
                          "this process is unaffected", likely_cause(design, out.error))
    raise out.error.exception(label)


__all__ = ["likely_cause", "on_gpu"]

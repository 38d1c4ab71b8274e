"""Where kernels run: worker processes by default, this process for debugging, Ray for clusters.

======================  ==========================================================================
``"embedded"``          the default: worker processes on this machine, one per GPU for launches and
                        timing, one per core for NVRTC compiles (``embedded.EmbeddedExecutor``); a
                        trap, an illegal address or a hang costs a worker, never the notebook
``"inline"``            every job in the calling process, one after another (debugging)
``"ray"``               Ray tasks on a local instance or a cluster (``cluster.RayExecutor``)
``"null"``              the null runtime (``runtime.null``): jobs in this process, GPU jobs on a
                        null device that allocates, launches and times nothing, so the plumbing
                        above the GPU runs without one (``null.NullExecutor``)
======================  ==========================================================================

``get_executor(None)`` is the default: ``$PGSTUDIO_EXECUTOR`` when set, else one shared
embedded executor whose workers start on the first job and stay warm for the next.
Benchmarks, sweeps and traces take ``executor=`` with any of the names above or an instance.
"""

from __future__ import annotations

import os
from typing import Any

from ...errors import GpuUnavailable, PgStudioError
from ._job import Failure, Job, Outcome, WithPayload
from .base import Executor, Session

NAMES = ("embedded", "inline", "ray", "null")
_SHARED: dict[str, Executor] = {}


def default_name() -> str:
    """``$PGSTUDIO_EXECUTOR`` or ``"embedded"``."""
    return os.environ.get("PGSTUDIO_EXECUTOR", "").strip() or "embedded"


def get_executor(spec: Any = None) -> Executor:
    """An executor from a name (see the module docstring), an ``Executor``, or None (the default)."""
    if isinstance(spec, Executor):
        return spec
    name = default_name() if spec is None else spec
    if not isinstance(name, str) or name not in NAMES:
        raise PgStudioError(f"executor {name!r} is not known; use one of {', '.join(NAMES)} or an Executor instance")
    if name not in _SHARED:
        if name == "embedded":
            from .embedded import EmbeddedExecutor
            _SHARED[name] = EmbeddedExecutor()
        elif name == "inline":
            from .inline import InlineExecutor
            _SHARED[name] = InlineExecutor()
        elif name == "null":
            from .null import NullExecutor
            _SHARED[name] = NullExecutor()
        else:
            from .cluster import RayExecutor
            _SHARED[name] = RayExecutor()
    return _SHARED[name]


def check_gpu(spec: Any = None, *, null_ok: bool = False) -> None:
    """Raise ``GpuUnavailable`` before any worker starts when the jobs of executor ``spec`` could
    not reach a GPU: the null runtime (unless ``null_ok``, where its null device stands in for
    one, as in a benchmark's plumbing) or no GPU visible to this process.  One rule for every
    button that runs on the GPU (the studio's Compile & Benchmark and Measure)."""
    from .._cupy import gpu_available
    if get_executor(spec).runtime == "null":
        if null_ok:
            return
        raise GpuUnavailable("the null runtime launches nothing, so nothing can be measured")
    if not gpu_available():
        raise GpuUnavailable("CuPy sees no NVIDIA GPU in this Python process")


def shutdown() -> None:
    """Stop the shared executors' workers (they start again when needed)."""
    for ex in list(_SHARED.values()):
        ex.close()


__all__ = ["Executor", "Failure", "Job", "NAMES", "Outcome", "Session", "WithPayload", "check_gpu", "default_name", "get_executor",
           "shutdown"]

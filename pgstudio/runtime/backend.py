"""Which runtime a run uses: the GPU (``CUDA``) or the null runtime (``NULL``, ``runtime.null``).

Everything that runs kernels -- ``run``, ``benchmark``, the explorer's timing jobs and tuners --
asks its backend for workloads, launchers and the clock, and never names a kernel kind's classes
itself; so one code path serves the GPU and the null runtime, and the null runtime takes every
step a GPU run takes.  The executor decides: ``backend_for(executor)`` is ``NULL`` for the null
executor (``executor="null"``) and ``CUDA`` for every other.
"""

from __future__ import annotations

from typing import Any

from ..codegen.source import KernelSource
from ..model.design import Design
from .launch import GEMM, Launcher, Workload
from .timing import CUDA_EVENTS, NULL_CLOCK


class Backend:
    """Workloads, launchers and the clock of one runtime."""

    name = ""
    #: Its times and checks are measurements (False: the null runtime).
    measured = True
    clock: Any = None

    def require(self) -> None:
        """Raise ``GpuUnavailable`` (in words) when this runtime cannot run here."""

    def is_loaded(self, src: KernelSource) -> bool:
        return False

    def launcher(self, src: KernelSource, *, blocks_per_sm: int | None = None, budget_ms: float | None = None,
                 grid: int | None = None) -> Launcher:  # pragma: no cover - interface
        """A launcher of ``src``, streaming or GEMM by the kernel's kind."""
        raise NotImplementedError

    def stream_workload(self, design: Design, n: int, dtype: str,
                        seed: int | None = None) -> Workload:  # pragma: no cover - interface
        raise NotImplementedError

    def gemm_workload(self, design: Design, src: KernelSource, m: int, n: int, k: int,
                      seed: int | None = None) -> Workload:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<runtime backend {self.name}>"


class CudaBackend(Backend):
    """Kernels loaded by CuPy and launched on this process's GPU, timed by CUDA events."""

    name = "cuda"
    clock = CUDA_EVENTS

    def require(self) -> None:
        from ._cupy import require_gpu
        require_gpu()

    def is_loaded(self, src: KernelSource) -> bool:
        from .compile import is_loaded
        return is_loaded(src)

    def launcher(self, src: KernelSource, *, blocks_per_sm: int | None = None, budget_ms: float | None = None,
                 grid: int | None = None) -> Launcher:
        if src.info.get("kind") == GEMM:
            from .gemm_run import BUDGET_MS, GemmLauncher
            return GemmLauncher(src, budget_ms or BUDGET_MS)
        from .stream_run import BUDGET_MS as STREAM_BUDGET_MS
        from .stream_run import StreamLauncher
        return StreamLauncher(src, blocks_per_sm=blocks_per_sm, budget_ms=budget_ms or STREAM_BUDGET_MS, grid=grid)

    def stream_workload(self, design: Design, n: int, dtype: str, seed: int | None = None) -> Workload:
        from .stream_run import StreamWorkload
        return StreamWorkload.make(design, n, dtype, seed)

    def gemm_workload(self, design: Design, src: KernelSource, m: int, n: int, k: int,
                      seed: int | None = None) -> Workload:
        from .gemm_run import GemmWorkload
        return GemmWorkload.make(design, src, m, n, k, seed)


class NullBackend(Backend):
    """The null runtime (``runtime.null``): nothing allocated, loaded, launched or timed."""

    name = "null"
    measured = False
    clock = NULL_CLOCK

    def launcher(self, src: KernelSource, *, blocks_per_sm: int | None = None, budget_ms: float | None = None,
                 grid: int | None = None) -> Launcher:
        from .null import NullLauncher
        return NullLauncher(src, blocks_per_sm=blocks_per_sm, budget_ms=budget_ms, grid=grid)

    def stream_workload(self, design: Design, n: int, dtype: str, seed: int | None = None) -> Workload:
        from .null import NullWorkload
        return NullWorkload.stream(design, n, dtype)

    def gemm_workload(self, design: Design, src: KernelSource, m: int, n: int, k: int,
                      seed: int | None = None) -> Workload:
        from .null import NullWorkload
        return NullWorkload.gemm(design, src, m, n, k)


CUDA = CudaBackend()
NULL = NullBackend()


def backend_for(executor: Any = None) -> Backend:
    """``NULL`` for the null executor (``executor.null``), ``CUDA`` for any other (an ``Executor``,
    a name, or None: the default executor)."""
    from .executor import get_executor
    ex = get_executor(executor)
    return NULL if getattr(ex, "runtime", "cuda") == "null" else CUDA


__all__ = ["CUDA", "Backend", "CudaBackend", "NULL", "NullBackend", "backend_for"]

"""pgstudio: design, check, draw, compile and benchmark mbarrier pipelines and PipelineGroups.

The public API keeps the names a CUTLASS Task Scheduling user knows (``PipelineGroup``,
``PipelineGroupMode``, ``create_*_pipeline_cfg``, ``@schedule``, ``domain_loop``, ``Task``).
``import pgstudio`` imports no heavy package: pictures, the GPU runtime and the studio load
their libraries when first used.
"""

import sys

from .analysis import (BarrierAllocator, BarrierLayout, Report, SmemAllocator, barrier_layout, smem_layout,
                       validate)
from .errors import CompileError, DesignError, GpuUnavailable, KernelHangError, PgStudioError, ScheduleError
from .model import (Agent, AsyncProducerOp, CapturedSchedule, Compute, CooperativeGroup, Design, GmemTensor,
                    MemoryResource, OpKind, PipelineConfig, PipelineGroup, PipelineGroupMode, PipelineType, Resource,
                    SmemTile, Task, TmemAccumulator, create_async_async_pipeline_cfg, create_async_umma_pipeline_cfg,
                    create_tma_async_pipeline_cfg, create_tma_umma_pipeline_cfg, create_umma_async_pipeline_cfg,
                    create_umma_umma_pipeline_cfg, domain_loop, schedule, ungrouped)

__version__ = "0.1.0"


def load_ipython_extension(shell) -> None:
    """``%load_ext pgstudio``: show pgstudio values in notebook cells with their pictures."""
    from .render.display import register
    register(shell)


def _show_values_richly() -> None:
    """In a running IPython shell (a notebook), register the rich views of ``render.display`` now,
    so that a bare design, report, layout, timeline, verdict or result in a cell shows its picture."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is not None:
        load_ipython_extension(shell)


_show_values_richly()


def benchmark(design: Design, **options):
    """Verify and time ``design`` on this GPU at its tuning for it, beside the design as given, its
    ungrouped twin, the fastest library path and a device copy; returns the table.

    The tuner's choice (a short measured search, cached per device) is made by the explorer and
    handed to the runtime, which times what it is given: this is
    ``pgstudio.explore.bench.tuned_benchmark``, whose options (``n``, ``rounds``, ``tune``,
    ``executor``, ``progress`` ...) it takes.  Imported on first call, so ``import pgstudio``
    stays light.
    """
    from .explore.bench import tuned_benchmark
    return tuned_benchmark(design, **options)

__all__ = [
    "Agent", "AsyncProducerOp", "BarrierAllocator", "BarrierLayout", "CapturedSchedule", "CompileError", "Compute",
    "CooperativeGroup", "Design", "DesignError", "GmemTensor", "GpuUnavailable", "KernelHangError", "MemoryResource",
    "OpKind", "PgStudioError", "PipelineConfig", "PipelineGroup", "PipelineGroupMode", "PipelineType", "Report",
    "Resource", "ScheduleError", "SmemAllocator", "SmemTile", "Task", "TmemAccumulator", "barrier_layout", "benchmark",
    "create_async_async_pipeline_cfg", "create_async_umma_pipeline_cfg", "create_tma_async_pipeline_cfg",
    "create_tma_umma_pipeline_cfg", "create_umma_async_pipeline_cfg", "create_umma_umma_pipeline_cfg",
    "domain_loop", "schedule", "smem_layout", "ungrouped", "validate",
]

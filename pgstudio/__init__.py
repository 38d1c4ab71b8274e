"""pgstudio: design, check, draw, compile and benchmark mbarrier pipelines and PipelineGroups.

The public API keeps the names a CUTLASS Task Scheduling user knows (``PipelineGroup``,
``PipelineGroupMode``, ``create_*_pipeline_cfg``, ``@schedule``, ``domain_loop``, ``Task``).
``import pgstudio`` imports no heavy package: pictures, the GPU runtime and the studio load
their libraries when first used.
"""

from .analysis import (BarrierAllocator, BarrierLayout, Report, SmemAllocator, barrier_layout, smem_layout,
                       validate)
from .errors import CompileError, DesignError, GpuUnavailable, KernelHangError, PgStudioError, ScheduleError
from .model import (Agent, AsyncProducerOp, CapturedSchedule, Compute, CooperativeGroup, Design, GmemTensor,
                    MemoryResource, OpKind, PipelineConfig, PipelineGroup, PipelineGroupMode, PipelineType, Resource,
                    SmemTile, Task, TmemAccumulator, create_async_async_pipeline_cfg, create_async_umma_pipeline_cfg,
                    create_tma_async_pipeline_cfg, create_tma_umma_pipeline_cfg, create_umma_async_pipeline_cfg,
                    create_umma_umma_pipeline_cfg, domain_loop, schedule, ungrouped)

__version__ = "0.1.0"

__all__ = [
    "Agent", "AsyncProducerOp", "BarrierAllocator", "BarrierLayout", "CapturedSchedule", "CompileError", "Compute",
    "CooperativeGroup", "Design", "DesignError", "GmemTensor", "GpuUnavailable", "KernelHangError", "MemoryResource",
    "OpKind", "PgStudioError", "PipelineConfig", "PipelineGroup", "PipelineGroupMode", "PipelineType", "Report",
    "Resource", "ScheduleError", "SmemAllocator", "SmemTile", "Task", "TmemAccumulator", "barrier_layout",
    "create_async_async_pipeline_cfg", "create_async_umma_pipeline_cfg", "create_tma_async_pipeline_cfg",
    "create_tma_umma_pipeline_cfg", "create_umma_async_pipeline_cfg", "create_umma_umma_pipeline_cfg",
    "domain_loop", "schedule", "smem_layout", "ungrouped", "validate",
]

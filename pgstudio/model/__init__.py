"""What a design IS: frozen values and the structural rules they carry.  Standard library only."""

from .capture import BoundSchedule, Schedule, Value, domain_loop, schedule
from .config import (FACTORIES, CooperativeGroup, PipelineConfig, create_async_async_pipeline_cfg,
                     create_async_umma_pipeline_cfg, create_tma_async_pipeline_cfg, create_tma_umma_pipeline_cfg,
                     create_umma_async_pipeline_cfg, create_umma_umma_pipeline_cfg)
from .design import Design
from .diagnostic import Diagnostic, Severity
from .group import GroupConfig, MemberRef, PipelineGroup
from .kinds import Agent, AsyncProducerOp, Bytes, Op, OpKind, PipelineType, Role, Side, Verb, Who
from .protocol import PROTOCOL, Action, PipelineGroupMode
from .resource import Compute, GmemTensor, Memory, MemoryResource, Resource, SmemTile, TmemAccumulator
from .schedule import CapturedSchedule, Loop, Step
from .task import Task
from .ungroup import ungrouped

__all__ = [
    "Action", "Agent", "AsyncProducerOp", "BoundSchedule", "Bytes", "CapturedSchedule", "Compute",
    "CooperativeGroup", "Design", "Diagnostic", "FACTORIES", "GmemTensor", "GroupConfig", "Loop", "MemberRef",
    "Memory", "MemoryResource", "Op", "OpKind", "PROTOCOL", "PipelineConfig", "PipelineGroup", "PipelineGroupMode",
    "PipelineType", "Resource", "Role", "Schedule", "Severity", "Side", "SmemTile", "Step", "Task",
    "TmemAccumulator", "Value", "Verb", "Who", "create_async_async_pipeline_cfg", "create_async_umma_pipeline_cfg",
    "create_tma_async_pipeline_cfg", "create_tma_umma_pipeline_cfg", "create_umma_async_pipeline_cfg",
    "create_umma_umma_pipeline_cfg", "domain_loop", "schedule", "ungrouped",
]

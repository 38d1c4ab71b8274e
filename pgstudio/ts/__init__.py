"""CUTLASS Task Scheduling (TS) spoken by pgstudio: run TS design scripts, export designs TS accepts.

``pgstudio.ts`` has TS's public names -- ``MemoryResource``, ``PipelineConfig.create_*_pipeline_cfg``,
``PipelineGroup`` / ``PipelineGroupMode``, ``@schedule``, ``domain_loop``, ``work_tile_loop``,
``producer_work`` / ``consumer_work`` / ``WorkAttr``, ``TaskLocalVariable``, ``when_true`` /
``when_false`` with ``IterationPredicate`` / ``Every`` / ``OpaqueCondition``, ``Task``,
``TaskManager``, ``SmemAllocator``, ``BarrierAllocator``, ``WorkQueue`` -- with TS's signatures
and rules, so a TS design script runs against pgstudio by changing its import lines::

    from pgstudio.ts import *          # instead of cutlass.pipeline / cutlass.experimental.task_scheduling

Its ``TaskManager`` builds a pgstudio ``Design`` (``task_manager.design``) and checks it as TS's
does.  Where pgstudio cannot model a TS construct (iteration guards, clusters, dynamic domains,
CLC scheduling ...) it raises ``DesignError`` naming it: ``ts: <construct> cannot be modelled yet: ...``.

- ``load(path)`` runs a TS script -- unmodified: its ``cutlass`` imports resolve to pgstudio.ts
  while it runs -- and returns the design its ``TaskManager`` built.  SECURITY: this executes the
  script, which is arbitrary Python; run only your own scripts.  pgstudio never runs a script on
  its own: design files (JSON) are data and loading one executes nothing.
- ``to_ts(design)`` (``design.to_ts()``) writes a readable TS script of a design: configs,
  resources, groups, schedules, tasks and allocator; TS's own constructors and ``TaskManager``
  accept it on a CPU.  The work methods are stubs to fill with CuTe DSL code.
- ``pgstudio import-ts`` / ``export-ts`` (``cli.import_ts``, ``cli.export_ts``) are these two on files.

TS's code is NVIDIA's, under its own licence; pgstudio does not include it.  docs/ts.md lists
where pgstudio and TS 4.8.1 knowingly differ.
"""

from ..errors import DesignError, ScheduleError
from ..model.group import PipelineGroupMode
from ..model.kinds import PipelineType
from . import pipeline
from ._config import PipelineConfig, SignalingThreads
from ._cooperative import Agent, CooperativeGroup, PipelineOp
from ._group import MemberRef, PipelineGroup
from ._guards import BlockGuard, Every, IterationPredicate, OpaqueCondition, when_false, when_true
from ._load import load
from ._export import to_ts
from ._memory import BarrierAllocator, SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator
from ._resource import (MemoryResource, PdlLaunchBarrier, PdlWaitBarrier, TileSchedulerConfig, TileSchedulerType,
                        WorkQueue)
from ._schedule import Schedule, domain_loop, schedule, work_tile_loop
from ._manager import TaskManager
from ._task import Task
from ._work import StageInfo, TaskLocalVariable, WorkAttr, consumer_work, producer_work

from ._unmodelled import UNMODELLED, unmodelled


def __getattr__(name: str):
    """A known TS name that pgstudio does not model yet: one line saying so (not a bare ImportError)."""
    if name in UNMODELLED:
        raise unmodelled(name)
    raise AttributeError(f"module 'pgstudio.ts' has no attribute {name!r}")


__all__ = [
    "Agent", "BarrierAllocator", "BlockGuard", "CooperativeGroup", "DesignError", "Every", "IterationPredicate",
    "MemberRef", "MemoryResource", "OpaqueCondition", "PdlLaunchBarrier", "PdlWaitBarrier", "PipelineConfig",
    "PipelineGroup", "PipelineGroupMode", "PipelineOp", "PipelineType", "Schedule", "ScheduleError",
    "SignalingThreads", "SmemAllocation", "SmemAllocator", "StageInfo", "Task", "TaskLocalVariable", "TaskManager",
    "TileSchedulerConfig", "TileSchedulerType", "TmemAllocation", "TmemAllocator", "WorkAttr", "WorkQueue",
    "consumer_work", "domain_loop", "load", "pipeline", "producer_work", "schedule",
    "to_ts", "when_false", "when_true", "work_tile_loop",
]

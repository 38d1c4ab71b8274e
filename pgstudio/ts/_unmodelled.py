"""TS names that a TS script may touch and that pgstudio does not model yet.

``from pgstudio.ts import ScheduleStage`` (or a script running under ``pgstudio.ts.load``) must
not end in a bare ImportError: every public name of TS 4.8's ``cutlass.experimental.task_scheduling``
and ``cutlass.pipeline`` that ``pgstudio.ts`` lacks is listed here, and reaching one raises one
line saying pgstudio does not model it yet (``pgstudio.ts.__getattr__``).  A test with TS
installed checks that this list and ``pgstudio.ts`` together cover TS's public names.
"""

from __future__ import annotations

from ..errors import DesignError

#: TS's task-scheduling internals and checker results (its scheduler and checker, not a design).
SCHEDULING = frozenset("""
BlockedTaskInfo CheckResult ConditionalBlock DataFlowToken DeadlockInfo DependencyGraphControlEdge
DependencyGraphEdge DomainLoop DomainLoopProxy LoopGuard PdlOrderInfo RaceInfo ResourceContext ResourceProxy
Route ScheduleBuilder ScheduleResult ScheduleStage ScheduleStageType Step TSPipelineAsyncUmma TSPipelineTmaAsync
TSPipelineUmmaUmma WorkTileInfo WorkTileLoop WorkTileLoopProxy bind_task_local_variables build_alias_info
check_all_interleavings expand_loop get_task_local_variables guard_fires is_iteration_predicate is_loop_guard
is_skippable_guard lower_to_legacy normalize_and_validate_schedule_list print_schedule_list
""".split())
#: CUTLASS's device-side pipeline classes and barrier calls (kernel code, which pgstudio generates itself).
DEVICE = frozenset("""
MbarrierArray MbarrierLayout NamedBarrier PipelineAsync PipelineAsyncUmma PipelineClcFetchAsync PipelineConsumer
PipelineCpAsync PipelineOrder PipelineProducer PipelineState PipelineTmaAsync PipelineTmaMultiConsumersAsync
PipelineTmaStore PipelineTmaUmma PipelineUmmaAsync PipelineUserType SyncObject TmaStoreFence agent_sync arrive
arrive_and_wait arrive_unaligned compute_k_tile make_pipeline_state pipeline_init_arrive pipeline_init_wait sync
wait wait_unaligned
""".split())
UNMODELLED = SCHEDULING | DEVICE


def unmodelled(name: str) -> DesignError:
    """The one-line error for a known TS name that pgstudio does not model yet."""
    what = "TS's scheduler / checker internals" if name in SCHEDULING else "CUTLASS device-side pipeline code"
    return DesignError(f"ts: {name} ({what}) is a TS name pgstudio does not model yet", code="ts.unsupported",
                       hint="build the design from the modelled names (docs/ts.md: TS names pgstudio models), or run "
                            "the script with TS itself")


__all__ = ["DEVICE", "SCHEDULING", "UNMODELLED", "unmodelled"]

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


#: TS's resource base class (``MemoryResource``, and so ``PipelineGroup`` and ``WorkQueue``): the state
#: and methods its kernel uses to create pipelines and move their states.
_RESOURCE = frozenset("""
consumer_aux_work consumer_release_state consumer_state consumer_status consumer_var_names consumer_work
consumer_work_stage copy_consumer_vars_to copy_consumer_vars_to_consumer_of create create_consumer_variables
create_consumer_variables_internal create_pipeline create_producer_variables create_producer_variables_internal
dummy get_consumer_requirements get_consumer_var get_producer_acquire_state get_producer_commit_state
get_producer_requirements get_producer_var get_producer_work_state initialize_runtime_state_internal
load_consumer_status load_producer_status physical_ranges producer_aux_work producer_commit_state producer_state
producer_status producer_work set_consumer_var state_src store_consumer_status store_producer_status
""".split())
#: Per class that pgstudio.ts models: TS's public attributes that pgstudio's class lacks.
ATTRIBUTES: dict[str, frozenset[str]] = {
    "MemoryResource": _RESOURCE,
    "PipelineGroup": _RESOURCE | {"group_pipeline"},
    "WorkQueue": _RESOURCE | {"create_tile_scheduler", "fetch_work_tile", "get_and_advance_work_tile",
                              "init_work_tile", "initial_work_tile_info", "producer_tail", "skip_work_tile",
                              "skip_work_tile_if", "tile_scheduler", "work_tile"},
    "PdlLaunchBarrier": _RESOURCE | {"launch_griddep"},
    "PdlWaitBarrier": _RESOURCE | {"wait_griddep"},
    "SmemAllocator": frozenset({"get_as_type", "get_typed_ptr", "smem_base", "tmem_ptr_alloc"}),
    "TmemAllocator": frozenset({"add_alias_group"}),
    "Task": frozenset("""
        get_domain init_variables is_selected make_task_cache run run_body captured_schedule constexpr_work_kwargs
        default_num_registers domain domain_getter domain_start dummy head_schedule_list is_persistent
        loop_first_iter_fallback_list loop_last_iter_fallback_list loop_schedule_list post_work_loop_tail_slots
        pre_work_loop_head_slots skip_if skippable_head_slots skippable_tail_slots slot_routing step
        tail_schedule_list unroll work_queue work_queue_idx""".split()),
    "TaskManager": frozenset({"get_marmaid_string_dependency_graph", "resources"}),
    "TaskLocalVariable": frozenset({"field_name", "owner", "slot_name"}),
    "SignalingThreads": frozenset({"is_valid_combination", "validate"}),
    "WorkAttr": frozenset({"is_valid_combination", "validate"}),
    "PipelineType": frozenset({"ClcFetchAsync"}),
}


class UnmodelledName(DesignError, AttributeError):
    """A TS attribute pgstudio does not model yet: one line, and still an ``AttributeError``."""


def listed_owner(cls: type, name: str) -> str | None:
    """The pgstudio.ts class in ``cls``'s MRO whose TS twin has ``name`` that pgstudio lacks."""
    for c in cls.__mro__:
        if c.__module__.startswith("pgstudio.") and name in ATTRIBUTES.get(c.__name__, ()):
            return c.__name__
    return None


def unmodelled_attribute(owner: str, name: str) -> UnmodelledName:
    """The one-line error for TS's ``owner.name`` that pgstudio does not model yet."""
    return UnmodelledName(f"ts: {owner}.{name} is a TS name pgstudio does not model yet (kernel-side state or a TS "
                          f"internal)", code="ts.unsupported",
                          hint="keep it in kernel code (pgstudio does not run work bodies), or run the script with TS "
                               "itself")


def missing_attribute(exc: AttributeError) -> UnmodelledName | None:
    """The one-line error for an ``AttributeError`` on a TS attribute pgstudio does not model yet
    (an enum's, which no mixin reaches: ``PipelineType.ClcFetchAsync``), or None."""
    obj, name = getattr(exc, "obj", None), getattr(exc, "name", None)
    if obj is None or not isinstance(name, str):
        return None
    owner = listed_owner(obj if isinstance(obj, type) else type(obj), name)
    return None if owner is None else unmodelled_attribute(owner, name)


class _TSClass(type):
    """The classes' own attributes (``MemoryResource.create_pipeline``) answer as their objects' do."""

    def __getattr__(cls, name: str):
        owner = listed_owner(cls, name)
        if owner is not None:
            raise unmodelled_attribute(owner, name)
        raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}", name=name, obj=cls)


class TSAttributes(metaclass=_TSClass):
    """Mixin of pgstudio.ts's classes: TS's attributes they lack raise ``unmodelled_attribute``."""

    def __getattr__(self, name: str):
        owner = listed_owner(type(self), name)
        if owner is not None:
            raise unmodelled_attribute(owner, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self)


__all__ = ["ATTRIBUTES", "DEVICE", "SCHEDULING", "TSAttributes", "UNMODELLED", "UnmodelledName", "listed_owner",
           "missing_attribute", "unmodelled", "unmodelled_attribute"]

"""TS's barriers as TS initialises them, read on a CPU.

``ts_barrier_inits(path)`` runs a TS script with TS, then calls its ``TaskManager``'s kernel entry
``setup_resources_and_tasks()`` the way a kernel does, with the CuTe DSL tracing only (its dry
run: IR is built, nothing is compiled or launched).  Every mbarrier array TS's pipelines create
initialises its barriers through ``MbarrierArray.mbarrier_init``; that call is watched, and the
arrive count and stage count of each array are recorded with the resource or group whose
``create()`` made it -- the numbers a kernel built by TS waits for.  The transaction bytes a phase
of an array expects are those its pipelines arm: the ``tx_count`` of every TMA view of the array
that the resources' pipelines hold once set up (a FusedMerge's members each arm their own bytes on
a recast view of the shared array; a Fork's members share one view, armed once).

The one thing stubbed: a work queue's tile scheduler, whose parameters are the kernel's CuTe DSL
objects (an exported script leaves them to the kernel); it owns no barriers of a static
persistent queue.  Nothing here copies TS: it calls TS's entry points and reads its objects.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator

from ts_side import run_ts_script


@dataclass(frozen=True)
class Init:
    """One mbarrier array as TS initialised it."""

    owner: str  # the resource or group whose create() made it
    stages: int
    arrive_count: int
    tx_bytes: int


@contextlib.contextmanager
def watching() -> Iterator[list[Init]]:
    """Record every mbarrier array TS initialises while active (module docstring)."""
    from cutlass.cutlass_dsl import CuTeDSL
    from cutlass.experimental.task_scheduling import pipeline_group, resources
    from cutlass.pipeline import helpers

    found: list[tuple[str, Any]] = []
    owners: list[str] = []
    init = helpers.MbarrierArray.mbarrier_init

    def recorded(self: Any, *args: Any, **kwargs: Any) -> Any:
        found.append((owners[-1] if owners else "", self))
        return init(self, *args, **kwargs)

    def owned(create: Any) -> Any:
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            owners.append(self.name)
            try:
                return create(self, *args, **kwargs)
            finally:
                owners.pop()
        return wrapper

    dsl = CuTeDSL._get_dsl()
    saved = [(helpers.MbarrierArray, "mbarrier_init", init),
             (resources.MemoryResource, "create", resources.MemoryResource.create),
             (pipeline_group.PipelineGroup, "create", pipeline_group.PipelineGroup.create),
             (resources.WorkQueue, "create_tile_scheduler", resources.WorkQueue.create_tile_scheduler)]
    dryrun = dsl.envar.dryrun
    helpers.MbarrierArray.mbarrier_init = recorded
    resources.MemoryResource.create = owned(resources.MemoryResource.create)
    pipeline_group.PipelineGroup.create = owned(pipeline_group.PipelineGroup.create)
    resources.WorkQueue.create_tile_scheduler = lambda self: None
    dsl.envar.dryrun = True
    try:
        yield found
    finally:
        dsl.envar.dryrun = dryrun
        for cls, attr, value in saved:
            setattr(cls, attr, value)


def ts_barrier_inits(path: str, exhaustive: bool = True) -> tuple[dict[str, Any], list[Init]]:
    """Run the script with TS and set up its kernel's resources: (its globals, TS's barrier inits).
    ``exhaustive``: whether TS's TaskManager also runs its interleaving checker."""
    from cutlass.pipeline import PipelineOp

    ts_globals = run_ts_script(path, exhaustive)
    manager = ts_globals["task_manager"]
    with watching() as found:
        manager.setup_resources_and_tasks()
    views: dict[int, Any] = {}  # the sync objects the pipelines hold, once each
    for r in manager.resources:
        pipeline = getattr(r, "pipeline", None)
        for attr in ("sync_object_full", "sync_object_empty"):
            view = getattr(pipeline, attr, None)
            if view is not None:
                views[id(view)] = view
    out = []
    for owner, array in found:
        armed = [v.tx_count for v in views.values() if getattr(v, "barrier_storage", None) is array.barrier_storage
                 and v.op_type is PipelineOp.TmaLoad]
        out.append(Init(owner, array.num_stages, array.arrive_count, sum(armed)))
    return ts_globals, out


def pg_barrier_inits(layout: Any) -> list[Init]:
    """pgstudio's barrier sets in the same terms."""
    return [Init(s.owner, s.stages, s.init_count, s.tx_bytes) for s in layout.sets]


def by_owner(inits: list[Init]) -> dict[str, list[tuple[int, int, int]]]:
    """Per owner, its arrays' (stages, arrive count, bytes), sorted: TS creates a group's shared
    array and per-member arrays in an order of its own, pgstudio lays them out in another."""
    out: dict[str, list[tuple[int, int, int]]] = {}
    for i in inits:
        out.setdefault(i.owner, []).append((i.stages, i.arrive_count, i.tx_bytes))
    return {k: sorted(v) for k, v in sorted(out.items())}

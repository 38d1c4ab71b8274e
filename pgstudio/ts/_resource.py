"""TS's ``MemoryResource`` base class, the work queue, and how a resource becomes a model resource.

A TS resource is a ``@dataclass(kw_only=True)`` subclass of ``MemoryResource`` with work methods
(``_work.py``).  Resources are compared and hashed by identity, as TS's are (they key the
dependency graph), and remember the order they were created in: that order is the design's
resource order, which pgstudio's barrier and shared-memory layouts follow.

A TS resource does not say which memory it lives in or what it computes; pgstudio's model does.
A resource class may declare the fields pgstudio reads -- ``memory`` ("gmem" | "smem" | "tmem"),
``dtype``, ``tile``, ``compute``, ``expr``, ``aliases``, ``stage_bytes`` (an exported script
declares all of them).  What it does not declare is inferred: the memory from the class or
resource name (``Gmem...``, ``smem_a``), else from the pipeline (none: global memory; an MMA
producer: tensor memory; else shared memory); the bytes of a pipeline whose TS factory takes none
from ``stage_bytes`` or the resource's SMEM allocations per stage.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..errors import DesignError
from ..model.resource import COMPUTE_OPS, DTYPES, Compute, Memory, RESOURCE_CLASSES, Resource
from ._config import PipelineConfig
from ._unmodelled import TSAttributes

_CREATED = itertools.count()
_MEMORIES = tuple(m.value for m in Memory)


class _Identity(TSAttributes):
    """Identity equality and hash for every resource class, and its creation order."""

    __pgstudio_order__: int

    def __new__(cls, *args: Any, **kwargs: Any):
        obj = super().__new__(cls)
        obj.__pgstudio_order__ = next(_CREATED)
        obj.pipeline_group = None  # set by the PipelineGroup that claims it (TS's attribute)
        return obj

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A subclass's @dataclass would generate field equality and drop the hash; TS resources key
        # dicts by identity, so keep identity (dataclasses leave methods a class defines itself).
        super().__init_subclass__(**kwargs)
        cls.__eq__ = _Identity.__eq__
        cls.__hash__ = _Identity.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


@dataclass(kw_only=True, eq=False)
class MemoryResource(_Identity):
    """Base of every TS resource (see the module docstring).  Subclass it with
    ``@dataclass(kw_only=True)`` and declare work methods with ``@producer_work`` / ``@consumer_work``."""

    name: str = ""
    is_barrier: bool = False
    pipeline_config: PipelineConfig | None = None
    consumer_vars: dict = field(default_factory=dict)
    producer_vars: dict = field(default_factory=dict)
    pipeline: Any = None
    consumer_wait_signaling_threads: Any = None

    def get_smem_requirements(self) -> list:
        """SMEM data allocations of this resource (TS's hook; none by default)."""
        return []

    def get_tmem_requirements(self) -> list:
        """TMEM column allocations of this resource (TS's hook; none by default)."""
        return []


class TileSchedulerType(Enum):
    """How a persistent kernel hands out work tiles; pgstudio models ``StaticPersistent``."""

    StaticPersistent = "StaticPersistent"
    ClcDynamicPersistent = "ClcDynamicPersistent"


@dataclass(frozen=True)
class TileSchedulerConfig:
    """A tile-scheduler type and its (CuTe DSL) parameters; pgstudio reads the type only."""

    tile_scheduler_type: TileSchedulerType
    tile_scheduler_params: Any = None
    response_ptr: Any = None

    @staticmethod
    def create_static_persistent_tile_scheduler_params(tile_scheduler_params: Any) -> "TileSchedulerConfig":
        return TileSchedulerConfig(TileSchedulerType.StaticPersistent, tile_scheduler_params)

    @staticmethod
    def create_clc_dynamic_persistent_tile_scheduler_params(tile_scheduler_params: Any,
                                                             response_ptr: Any) -> "TileSchedulerConfig":
        return TileSchedulerConfig(TileSchedulerType.ClcDynamicPersistent, tile_scheduler_params, response_ptr)


@dataclass(kw_only=True, eq=False)
class WorkQueue(MemoryResource):
    """The persistent work-tile queue that ``work_tile_loop(wq)`` iterates.  pgstudio models the
    loop itself (an outer loop over the work tiles), so the queue and its bookkeeping steps
    (``try_wait`` / ``wait`` / ``get_and_advance_work_tile`` / ``release``) leave no trace in the
    design."""

    tile_scheduler_config: TileSchedulerConfig | None = None

    def check_modelled(self) -> None:
        cfg = self.tile_scheduler_config
        kind = getattr(getattr(cfg, "tile_scheduler_type", None), "value", None)
        if kind != "StaticPersistent" or self.pipeline_config is not None:
            raise DesignError(f"ts: WorkQueue {self.name!r} ({kind or 'no tile scheduler'}) cannot be modelled yet: "
                              f"pgstudio models a StaticPersistent work-tile loop",
                              code="ts.unsupported",
                              hint="use TileSchedulerConfig(TileSchedulerType.StaticPersistent, params)")


_work_queue_fields = WorkQueue.__init__


def _work_queue_init(self, *args, **kwargs) -> None:
    """TS takes the tile scheduler config positionally too: ``WorkQueue(cfg, name="wq")``."""
    if len(args) > 1 or (args and "tile_scheduler_config" in kwargs):
        raise TypeError("WorkQueue() takes one positional argument, the tile_scheduler_config")
    if args:
        kwargs["tile_scheduler_config"] = args[0]
    _work_queue_fields(self, **kwargs)


WorkQueue.__init__ = _work_queue_init  # type: ignore[method-assign]


@dataclass(kw_only=True, eq=False)
class PdlWaitBarrier(MemoryResource):
    """TS's Programmatic Dependent Launch wait: not modelled (pgstudio models one kernel)."""

    is_barrier: bool = True


@dataclass(kw_only=True, eq=False)
class PdlLaunchBarrier(MemoryResource):
    """TS's Programmatic Dependent Launch trigger: not modelled (pgstudio models one kernel)."""

    is_barrier: bool = True


def is_resource(obj: Any) -> bool:
    return isinstance(obj, MemoryResource)


def order(obj: Any) -> int:
    return getattr(obj, "__pgstudio_order__", 0)


def memory_of(r: Any) -> str:
    """The memory a TS resource lives in (module docstring)."""
    declared = getattr(r, "memory", None)
    if isinstance(declared, str) and declared in _MEMORIES:
        return declared
    names = [r.name.lower(), *(k.__name__.lower() for k in type(r).__mro__)]
    for mem in _MEMORIES:
        if any(n.startswith(mem) for n in names):
            return mem
    cfg = r.pipeline_config
    if cfg is None:
        return Memory.GMEM.value
    return Memory.TMEM.value if cfg.pipeline_type.producer_kind.value == "umma" else Memory.SMEM.value


def stage_bytes(r: Any, cfg: PipelineConfig) -> int:
    """Bytes per stage of a pipeline whose TS factory takes none: the declared ``stage_bytes``,
    else the resource's SMEM allocations divided by its stages."""
    declared = getattr(r, "stage_bytes", None)
    if isinstance(declared, int) and not isinstance(declared, bool):
        return declared
    total = 0
    for alloc in r.get_smem_requirements() or ():
        size = getattr(alloc, "size_bytes", 0)
        total += size if isinstance(size, int) else 0
    return total // cfg.num_stages if cfg.num_stages and total % cfg.num_stages == 0 else 0


def to_model(r: Any, *, produced: bool, aliases: str | None = None) -> Resource:
    """The model resource of a TS resource.  ``produced``: some task writes it (a global-memory
    tensor that is written is a store, one that is only read an input); ``aliases``: the buffer
    it views when the resource does not say (the first member of a TS Fork)."""
    if isinstance(r, (PdlWaitBarrier, PdlLaunchBarrier)):
        raise DesignError(f"ts: {type(r).__name__} {r.name!r} cannot be modelled yet: pgstudio models one kernel, "
                          f"without programmatic dependent launch", code="ts.unsupported",
                          hint="leave the PDL barrier out of the design pgstudio reads")
    if not isinstance(r.name, str) or not r.name:
        raise DesignError(f"ts: a {type(r).__name__} has no name; pgstudio names every resource",
                          code="name.identifier", hint=f"pass name=... to {type(r).__name__}(...)")
    cfg = r.pipeline_config
    if cfg is not None and not isinstance(cfg, PipelineConfig):
        raise DesignError(f"ts: resource {r.name!r}: pipeline_config is {cfg!r}, expected a config from "
                          f"PipelineConfig.create_*_pipeline_cfg(...)", code="group.explicit_config",
                          hint="build it with a PipelineConfig.create_*_pipeline_cfg factory")
    memory = memory_of(r)
    dtype = getattr(r, "dtype", None)
    tile = getattr(r, "tile", None)
    declared_alias = getattr(r, "aliases", aliases)
    compute = getattr(r, "compute", None)
    expr = getattr(r, "expr", "")
    if not (isinstance(compute, str) and compute in COMPUTE_OPS):
        compute = {"gmem": "store" if produced else "input", "tmem": "mma"}.get(memory, "copy")
    return RESOURCE_CLASSES[memory](
        name=r.name,
        pipeline_config=None if cfg is None else cfg.with_bytes(stage_bytes(r, cfg)),
        compute=Compute(compute, expr if isinstance(expr, str) else ""),
        dtype=dtype if isinstance(dtype, str) and dtype in DTYPES else "float32",
        tile=tuple(tile) if isinstance(tile, (tuple, list)) and all(isinstance(x, int) for x in tile) else (),
        aliases=declared_alias if isinstance(declared_alias, str) else None)


__all__ = ["MemoryResource", "PdlLaunchBarrier", "PdlWaitBarrier", "TileSchedulerConfig", "TileSchedulerType",
           "WorkQueue", "is_resource", "memory_of", "order", "stage_bytes", "to_model"]

"""TS's allocators: ``SmemAllocator`` / ``TmemAllocator`` and their allocation objects.

A TS script registers resources and groups with an allocator and hands it to the
``TaskManager``.  pgstudio lays out shared memory from the design itself (``smem_layout``: data
buffers, then barriers), so these allocators keep TS's interface and answer from pgstudio's
layout: ``barrier_smem_bytes`` is pgstudio's barrier bytes of what was registered,
``total_smem_bytes`` the data bytes of the registered allocations (bump-allocated with their
alignment, phases of an alias group sharing one region, as TS describes it).  Emitting the
shared-memory array (``allocate``, ``get``) is CuTe DSL work and raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..analysis.layout import BARRIER_BYTES, barrier_layout
from ..errors import DesignError
from ..model.targets import SMEM_CAPACITY
from ._group import PipelineGroup
from ._resource import MemoryResource, to_model
from ._unmodelled import TSAttributes


@dataclass(eq=False)
class SmemAllocation:
    """A named SMEM region; ``offset`` is set by ``SmemAllocator.compute_layout()``."""

    name: str
    size_bytes: int = 0
    alignment: int = 128
    dtype: Any = None
    count: int = 1
    offset: int = field(default=0, init=False)


@dataclass(eq=False)
class TmemAllocation:
    """A named TMEM column region; ``offset`` is set by ``TmemAllocator.compute_layout()``."""

    name: str
    num_columns: int
    offset: int = field(default=0, init=False)


def _align(n: int, a: int) -> int:
    return -(-n // a) * a if a > 1 else n


class SmemAllocator(TSAttributes):
    """TS's SMEM allocator over pgstudio's layout (module docstring)."""

    def __init__(self) -> None:
        self.allocations: list[SmemAllocation] = []
        self.alias_groups: list[list[list[SmemAllocation]]] = []
        self.resources: list[MemoryResource] = []
        self.groups: list[PipelineGroup] = []
        self._total: int | None = None

    def add(self, alloc: SmemAllocation) -> SmemAllocation:
        self.allocations.append(alloc)
        return alloc

    def add_tmem_ptr(self, alloc: SmemAllocation) -> SmemAllocation:
        return self.add(alloc)

    def add_alias_group(self, phases: list[list[SmemAllocation]]) -> None:
        """Allocations of different phases reuse one region; within a phase they coexist."""
        self.alias_groups.append([list(p) for p in phases])

    def add_resource(self, resource: MemoryResource) -> None:
        """Register a resource's data allocations (and, unless grouped, its barriers)."""
        if not isinstance(resource, MemoryResource):
            raise DesignError(f"ts: SmemAllocator.add_resource() takes a resource, got {type(resource).__name__}",
                              code="alloc.resource", hint="pass the resource object")
        self.resources.append(resource)
        for alloc in resource.get_smem_requirements() or ():
            self.add(alloc)

    def add_pipeline_group(self, group: PipelineGroup) -> None:
        """Register a group's barriers (its members' data goes through add_resource)."""
        if not isinstance(group, PipelineGroup):
            raise DesignError(f"ts: SmemAllocator.add_pipeline_group() takes a PipelineGroup, got "
                              f"{type(group).__name__}", code="alloc.group", hint="pass the group object")
        self.groups.append(group)

    def compute_layout(self) -> None:
        """Offsets for every registered allocation: alias groups first, phase by phase."""
        offset = 0
        aliased: set[int] = set()
        for phases in self.alias_groups:
            base, end = offset, offset
            for phase in phases:
                cursor = base
                for alloc in phase:
                    cursor = _align(cursor, alloc.alignment)
                    alloc.offset = cursor
                    cursor += alloc.size_bytes
                    aliased.add(id(alloc))
                end = max(end, cursor)
            offset = end
        for alloc in self.allocations:
            if id(alloc) not in aliased:
                offset = _align(offset, alloc.alignment)
                alloc.offset = offset
                offset += alloc.size_bytes
        self._total = offset

    @property
    def total_smem_bytes(self) -> int:
        """Data bytes of the registered allocations (after ``compute_layout()``)."""
        if self._total is None:
            raise DesignError("ts: call SmemAllocator.compute_layout() first", code="alloc.layout",
                              hint="compute_layout() after registering every resource and group")
        return self._total

    @property
    def total(self) -> int:
        """TS's name for the data bytes (after ``compute_layout()``)."""
        return self.total_smem_bytes

    def print_usage_report(self) -> None:
        """TS's report of the shared memory the registered allocations take: each allocation's
        offset and bytes, then the data and barrier totals (pgstudio's layout)."""
        data = self.total_smem_bytes  # refuses before compute_layout(), as the totals do
        for alloc in self.allocations:
            print(f"  {alloc.name}: offset {alloc.offset}, {alloc.size_bytes} B")
        print(f"shared memory: {data} B of data, {self.barrier_smem_bytes} B of barriers")

    @property
    def barrier_smem_bytes(self) -> int:
        """pgstudio's barrier bytes of what was registered: each group's slots, and each
        pipelined resource outside a group its ``[full x S][empty x S]``."""
        total = sum(barrier_layout(g.model).num_barriers for g in self.groups)
        for r in self.resources:
            if r.pipeline_config is not None and r.pipeline_group is None:
                total += barrier_layout(to_model(r, produced=True)).num_barriers
        return total * BARRIER_BYTES

    def verify(self, design: Any, capacity: int | None) -> None:
        """Raise when data plus barriers exceed ``capacity`` (TS's default: 232448 B)."""
        if self._total is None:
            return
        limit = capacity if capacity is not None else SMEM_CAPACITY
        used = _align(self._total, 16) + self.barrier_smem_bytes
        if used > limit:
            raise DesignError(f"shared memory exceeded: data {self._total} B + barriers {self.barrier_smem_bytes} B = "
                              f"{used} B, expected at most {limit} B per block", code="smem.capacity",
                              hint="use fewer stages or smaller tiles")

    def allocate(self) -> Any:
        raise _kernel_only("allocate()")

    def assign_barrier_ptrs(self) -> None:
        raise _kernel_only("assign_barrier_ptrs()")

    def get(self, alloc: SmemAllocation) -> Any:
        raise _kernel_only("get()")


class TmemAllocator(TSAttributes):
    """TS's TMEM column allocator: offsets and the total column count."""

    def __init__(self) -> None:
        self.allocations: list[TmemAllocation] = []
        self.total_tmem_columns = 0

    def add(self, alloc: TmemAllocation) -> TmemAllocation:
        self.allocations.append(alloc)
        return alloc

    def add_resource(self, resource: MemoryResource) -> None:
        for alloc in resource.get_tmem_requirements() or ():
            self.add(alloc)

    def compute_layout(self) -> None:
        offset = 0
        for alloc in self.allocations:
            alloc.offset = offset
            offset += alloc.num_columns
        self.total_tmem_columns = offset

    @property
    def total(self) -> int:
        """TS's name for the columns taken (after ``compute_layout()``)."""
        return self.total_tmem_columns

    def print_usage_report(self) -> None:
        """Each allocation's first column and width, then the total."""
        for alloc in self.allocations:
            print(f"  {alloc.name}: column {alloc.offset}, {alloc.num_columns} columns")
        print(f"tensor memory: {self.total_tmem_columns} columns")


class BarrierAllocator:
    """Owns barrier storage instead of the SMEM allocator: groups get consecutive slots."""

    def __init__(self) -> None:
        self.groups: list[PipelineGroup] = []

    def add_pipeline_group(self, group: PipelineGroup) -> int:
        """Register a group; returns the byte offset of its slots."""
        offset = self.num_bytes
        self.groups.append(group)
        return offset

    @property
    def num_bytes(self) -> int:
        return sum(barrier_layout(g.model).num_bytes for g in self.groups)


def _kernel_only(what: str) -> DesignError:
    return DesignError(f"ts: SmemAllocator.{what} emits CuTe DSL code; pgstudio lays out shared memory from the design "
                       f"(pgstudio.smem_layout)", code="ts.unsupported", hint="run the script under TS for the kernel")


__all__ = ["BarrierAllocator", "SmemAllocation", "SmemAllocator", "TmemAllocation", "TmemAllocator"]

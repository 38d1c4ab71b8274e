"""Allocators in TS's words: ``SmemAllocator.add_resource`` / ``.add_pipeline_group`` lay out data
and barriers and raise when the block's shared memory is exceeded; a ``BarrierAllocator`` may own
barrier storage instead (``add_pipeline_group``)."""

from __future__ import annotations

from ..errors import DesignError
from ..model.group import PipelineGroup, owner_of
from ..model.resource import Memory, Resource
from ..model.targets import SMEM_CAPACITY
from .layout import BARRIER_BYTES, DATA_ALIGN, BarrierLayout, _align, barrier_layout

__all__ = ["BarrierAllocator", "SmemAllocator"]


class BarrierAllocator:
    """Owns mbarrier storage: groups and ungrouped resources get consecutive slots."""

    def __init__(self) -> None:
        self.layouts: dict[str, BarrierLayout] = {}
        self.offsets: dict[str, int] = {}
        self.num_bytes = 0

    def _add(self, owner: str, layout: BarrierLayout) -> int:
        if owner in self.layouts:
            raise DesignError(f"{owner!r} already has barrier storage in this allocator", code="alloc.twice",
                              hint="register each group or resource once")
        self.layouts[owner] = layout
        self.offsets[owner] = self.num_bytes
        self.num_bytes += layout.num_bytes
        return self.offsets[owner]

    def add_pipeline_group(self, group: PipelineGroup) -> int:
        """Lay out the group's (N+1)S or 2S slots; returns their byte offset."""
        return self._add(group.name, barrier_layout(group))

    def add_resource(self, resource: Resource) -> int:
        return self._add(resource.name, barrier_layout(resource))

    @property
    def num_barriers(self) -> int:
        return self.num_bytes // BARRIER_BYTES


class SmemAllocator:
    """Lays out one block's shared memory: data buffers, then barriers, against ``capacity``."""

    def __init__(self, capacity: int = SMEM_CAPACITY, barriers: BarrierAllocator | None = None) -> None:
        self.capacity = capacity
        self.data: dict[str, tuple[int, int]] = {}  # resource -> (offset, bytes)
        self.data_bytes = 0
        self.barriers = barriers or BarrierAllocator()
        self._grouped: set[str] = set()

    def add_resource(self, resource: Resource, *, grouped: bool | None = None) -> int:
        """Place ``resource``'s stages; its own barriers too unless it is (or will be) grouped.

        A resource that ``aliases`` one already placed shares its buffer (grown to the larger
        size when it is the last buffer).  Raises ``DesignError`` and changes nothing when the
        block's shared memory would be exceeded."""
        if resource.name in self.data:
            raise DesignError(f"{resource.name!r} already has data storage in this allocator", code="alloc.twice",
                              hint="register each resource once")
        cfg = resource.pipeline_config
        nbytes = cfg.num_bytes * cfg.num_stages if cfg and resource.memory is Memory.SMEM else 0
        if grouped is None:
            grouped = owner_of(resource) is not None
        barrier_bytes = barrier_layout(resource).num_bytes if cfg is not None and not grouped else 0
        root = self.data.get(resource.aliases) if resource.aliases else None
        if root is not None:
            offset = root[0]
            end = max(self.data_bytes, offset + nbytes)
        else:
            offset = _align(self.data_bytes, DATA_ALIGN)
            end = offset + nbytes
        self._check(end, self.barriers.num_bytes + barrier_bytes)
        self.data[resource.name] = (offset, nbytes)
        self.data_bytes = end
        if barrier_bytes:
            self.barriers.add_resource(resource)
        return offset

    def add_pipeline_group(self, group: PipelineGroup) -> int:
        """The group owns its barrier slots (its members own none)."""
        self._check(self.data_bytes, self.barriers.num_bytes + barrier_layout(group).num_bytes)
        return self.barriers.add_pipeline_group(group)

    @property
    def total_bytes(self) -> int:
        return _align(self.data_bytes, 16) + self.barriers.num_bytes

    def report(self) -> str:
        return (f"smem: data {self.data_bytes} B + barriers {self.barriers.num_bytes} B = {self.total_bytes} B "
                f"of {self.capacity} B")

    def _check(self, data_bytes: int, barrier_bytes: int) -> None:
        total = _align(data_bytes, 16) + barrier_bytes
        if total > self.capacity:
            raise DesignError(
                f"shared memory exceeded: data {data_bytes} B + barriers {barrier_bytes} B = "
                f"{total} B, expected at most {self.capacity} B per block",
                code="smem.capacity", hint="use fewer stages or smaller tiles")

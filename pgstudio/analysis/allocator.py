"""Allocators in TS's words: ``SmemAllocator.add_resource`` / ``.add_pipeline_group`` lay out data
and barriers and raise when the block's shared memory is exceeded; a ``BarrierAllocator`` may own
barrier storage instead (``add_pipeline_group``)."""

from __future__ import annotations

from ..errors import DesignError
from ..model.group import PipelineGroup
from ..model.resource import Memory, Resource
from .layout import BARRIER_BYTES, DATA_ALIGN, SMEM_CAPACITY, BarrierLayout, _align, barrier_layout


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
        """Place ``resource``'s stages; its own barriers too unless it is (or will be) grouped."""
        cfg = resource.pipeline_config
        nbytes = cfg.num_bytes * cfg.num_stages if cfg and resource.memory is Memory.SMEM else 0
        offset = _align(self.data_bytes, DATA_ALIGN)
        self.data[resource.name] = (offset, nbytes)
        self.data_bytes = offset + nbytes
        if grouped is None:
            from ..model.group import _CLAIMS
            grouped = _CLAIMS.get(id(resource)) is not None
        if cfg is not None and not grouped:
            self.barriers.add_resource(resource)
        self._check()
        return offset

    def add_pipeline_group(self, group: PipelineGroup) -> int:
        """The group owns its barrier slots (its members own none)."""
        offset = self.barriers.add_pipeline_group(group)
        self._check()
        return offset

    @property
    def total_bytes(self) -> int:
        return _align(self.data_bytes, 16) + self.barriers.num_bytes

    def report(self) -> str:
        return (f"smem: data {self.data_bytes} B + barriers {self.barriers.num_bytes} B = {self.total_bytes} B "
                f"of {self.capacity} B")

    def _check(self) -> None:
        if self.total_bytes > self.capacity:
            raise DesignError(
                f"shared memory exceeded: data {self.data_bytes} B + barriers {self.barriers.num_bytes} B = "
                f"{self.total_bytes} B, expected at most {self.capacity} B per block",
                code="smem.capacity", hint="use fewer stages or smaller tiles")

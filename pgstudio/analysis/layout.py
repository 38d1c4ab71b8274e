"""The barrier layout and the shared-memory layout, under the one name most callers import.

The barrier layout (every mbarrier slot, its counts, a cluster's peers, the generator's own
``mma_done`` barriers) lives in ``barrier_layout.py``; what a block requests in shared memory in
``smem_layout.py``; the GEMM accumulator facts both read in ``accumulators.py``.
"""

from __future__ import annotations

from ..model.targets import DATA_ALIGN, SMEM_CAPACITY
from .accumulators import accumulator_shape, accumulators, copied_out
from .barrier_layout import (BARRIER_BYTES, TMEM_SLOT_BYTES, BarrierLayout, BarrierSet, Slot, barrier_layout,
                             design_sets)
from .smem_layout import ALIGN_SLACK, STAGING_PAD, SWIZZLE_PANEL, Buffer, SmemLayout, Staging, _align, smem_layout

__all__ = ["ALIGN_SLACK", "BARRIER_BYTES", "DATA_ALIGN", "SMEM_CAPACITY", "STAGING_PAD", "SWIZZLE_PANEL",
           "TMEM_SLOT_BYTES", "BarrierLayout", "BarrierSet", "Buffer", "Slot", "SmemLayout", "Staging", "_align",
           "accumulator_shape", "accumulators", "barrier_layout", "copied_out", "design_sets", "smem_layout"]

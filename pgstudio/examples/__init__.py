"""The canonical designs, by name.  Each function returns a valid ``Design``.

Streaming designs (``merge_copy``, ``fork_copy``, ``fused_merge_copy``) move 1-D tiles of
``tile_bytes`` through ``num_stages`` stages; GEMM designs follow the warp-specialised GEMM
mainloop: LoadA and LoadB fill smem_a / smem_b, one MMA task consumes both into a tensor-memory
accumulator that an epilogue drains.  ``ungrouped(design)`` gives the per-resource-barrier twin of any of them.
"""

from typing import Callable

from ..errors import DesignError
from ..model.derive import adopt_derived
from ..model.design import Design
from ..model.edits import blank_design
from ..model.ungroup import ungrouped
from .chain import MAX_CHAIN_GROUPS, MAX_CHAIN_WIDTH, chain
from .gemm import (epilogue_schedule, fork_gemm_act, fork_gemm_load_schedule, fused_merge_gemm, fused_mma_schedule,
                   gemm_load_schedule, merge_gemm, merge_gemm_resadd, merge_mma_schedule)
from .streaming import (consume_store_schedule, fork_copy, fork_load_schedule, fused_merge_copy, fused_store_schedule,
                        load_schedule, merge_copy, merge_store_schedule)

#: Every canonical design by name.
CANONICAL: dict[str, Callable[..., Design]] = {
    "merge_copy": merge_copy,
    "fork_copy": fork_copy,
    "fused_merge_copy": fused_merge_copy,
    "merge_gemm": merge_gemm,
    "merge_gemm_resadd": merge_gemm_resadd,
    "fork_gemm_act": fork_gemm_act,
    "fused_merge_gemm": fused_merge_gemm,
}
#: The streaming (copy / elementwise) designs the streaming code generator covers.
STREAMING = ("merge_copy", "fork_copy", "fused_merge_copy")


#: What "New design" offers: a label -> the canonical design it starts from (None: an empty design).
TEMPLATES: dict[str, str | None] = {
    "Streaming Merge: D = A + B": "merge_copy",
    "Streaming Fork: D0 = A, D1 = relu(A)": "fork_copy",
    "Streaming FusedMerge: D = A + B": "fused_merge_copy",
    "GEMM mainloop: D = A @ B": "merge_gemm",
    "GEMM + residual: D = A @ B + R": "merge_gemm_resadd",
    "Fork GEMM + activation": "fork_gemm_act",
    "Empty design": None,
}


def template(label: str) -> Design:
    """A new design from one of ``TEMPLATES``: problem shape, dtypes, warpgroups and groups of the
    canonical design, with schedules that follow the design (derived: a mode switch re-derives them)."""
    if label not in TEMPLATES:
        raise DesignError(f"no template named {label!r}; templates: {', '.join(TEMPLATES)}", code="examples.unknown")
    name = TEMPLATES[label]
    return blank_design() if name is None else adopt_derived(example(name))


def example(name: str, **kwargs) -> Design:
    """A canonical design by name (``pgstudio.examples.example("merge_copy")``)."""
    if name not in CANONICAL:
        raise DesignError(f"no example named {name!r}; examples: {', '.join(CANONICAL)}", code="examples.unknown")
    return CANONICAL[name](**kwargs)


__all__ = [*CANONICAL, "CANONICAL", "MAX_CHAIN_GROUPS", "MAX_CHAIN_WIDTH", "STREAMING", "TEMPLATES", "chain", "example",
           "template", "ungrouped",
           # the schedules the designs share, for designs built from them
           "consume_store_schedule", "epilogue_schedule", "fork_gemm_load_schedule", "fork_load_schedule",
           "fused_mma_schedule", "fused_store_schedule", "gemm_load_schedule", "load_schedule", "merge_mma_schedule",
           "merge_store_schedule"]

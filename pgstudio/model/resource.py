"""Resources: the memories a design moves data through, and what each one computes.

A resource lives in global memory (``GmemTensor``), shared memory (``MemoryResource``, alias
``SmemTile``) or tensor memory (``TmemAccumulator``).  A pipelined resource carries a
``PipelineConfig``; its stages are guarded by full / empty mbarriers.  ``compute`` says what the
resource holds in terms of its dependencies (a copy of a gmem tile, an elementwise expression,
an MMA, a store), which is what the code generator emits and the reference computes.

Inside a ``@schedule`` the resource's methods (acquire, commit, wait, release, read, load,
store, mma) record steps; outside one they raise ``ScheduleError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Iterable

from ..errors import DesignError
from .config import PipelineConfig
from .limits import MAX_TEXT_CHARS, MAX_TILE_DIM, MAX_TILE_RANK, check_text, whole_problem
from .names import check_name, check_word
from .steps import WorkSteps
from .targets import DTYPES  # noqa: F401  (re-exported: the element types a resource may have)

__all__ = [
    "Memory",
    "COMPUTE_OPS",
    "Compute",
    "Resource",
    "MemoryResource",
    "SmemTile",
    "GmemTensor",
    "TmemAccumulator",
    "RESOURCE_CLASSES",
    "alias_roots",
]


class Memory(str, Enum):
    GMEM = "gmem"
    SMEM = "smem"
    TMEM = "tmem"

    def __str__(self) -> str:
        return self.value


#: The compute catalog: what a resource holds in terms of its dependencies.
COMPUTE_OPS = ("input", "copy", "elementwise", "mma", "store")



@dataclass(frozen=True)
class Compute:
    """What a resource computes from its dependencies.

    ``op`` is one of ``COMPUTE_OPS``: ``input`` (filled from outside the kernel), ``copy`` (a
    copy of its one dependency's tile), ``elementwise`` (``expr`` over the dependency names, e.g.
    ``"max(smem_a, 0.f) * smem_b"``), ``mma`` (first dependency @ second), ``store`` (write the
    ``expr`` of its dependencies, or a copy of the only one, to global memory).
    """

    op: str = "copy"
    expr: str = ""

    def __post_init__(self) -> None:
        check_word(self.op, "compute op", "resource.compute")  # the catalog rule says which ops exist
        check_text(self.expr, "compute expression", MAX_TEXT_CHARS, "resource.compute")  # the grammar parses it

    def __str__(self) -> str:
        return f"{self.op}({self.expr})" if self.expr else self.op


@dataclass(frozen=True)
class Resource(WorkSteps):
    """Base of all resources; see the module docstring."""

    memory: ClassVar[Memory] = Memory.SMEM

    name: str
    pipeline_config: PipelineConfig | None = None
    compute: Compute = field(default_factory=Compute)
    dtype: str = "float32"
    tile: tuple[int, ...] = ()
    aliases: str | None = None

    def __post_init__(self) -> None:
        check_name(self.name, f"{self.memory} resource")
        if self.pipeline_config is not None and not isinstance(self.pipeline_config, PipelineConfig):
            raise DesignError(f"resource {self.name!r}: pipeline_config is {self.pipeline_config!r}, expected a "
                              f"PipelineConfig or None", code="resource.config",
                              hint="build it with a create_*_pipeline_cfg factory")
        if not isinstance(self.compute, Compute):
            raise DesignError(f"resource {self.name!r}: compute is {self.compute!r}, expected a Compute",
                              code="resource.compute", hint="give compute=Compute(op, expr)")
        check_word(self.dtype, f"resource {self.name!r}: dtype", "resource.dtype")  # a rule says which exist
        if self.aliases is not None:
            check_name(self.aliases, f"resource {self.name!r}: aliases")
        object.__setattr__(self, "tile", _tile(self.name, self.tile))

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles carry the fields only: a group's claim on this object (``group.py``)
        stays with the object, so a copy is a new, unclaimed resource."""
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_pgstudio_")}

    @property
    def pipelined(self) -> bool:
        return self.pipeline_config is not None

    @property
    def num_stages(self) -> int:
        return self.pipeline_config.num_stages if self.pipeline_config else 0

    @property
    def stage_bytes(self) -> int:
        return self.pipeline_config.num_bytes if self.pipeline_config else 0

    # -- schedule capture ------------------------------------------------------------------
    def _record(self, op: str, args: dict[str, Any] | None = None) -> Any:
        from .capture import record  # capture imports resource; keep the cycle lazy
        return record(op, self, via="bare", args=args or {})


def _tile(name: str, tile: object) -> tuple[int, ...]:
    """``tile`` as a tuple of extents, each an integer in range (a shape no layout can hold is none)."""
    if not isinstance(tile, (tuple, list)):
        problem = f"is {tile!r}, expected a list of extents"
    elif len(tile) > MAX_TILE_RANK:
        problem = f"has {len(tile)} dimensions, expected at most {MAX_TILE_RANK}"
    else:
        problem = next((f"extent {p}" for p in (whole_problem(x, 1, MAX_TILE_DIM) for x in tile) if p), None)
    if problem:
        raise DesignError(f"resource {name!r}: tile {problem}", code="resource.tile",
                          hint="give the tile shape as whole numbers, e.g. (128, 64)")
    return tuple(tile)  # type: ignore[arg-type]


@dataclass(frozen=True)
class MemoryResource(Resource):
    """A shared-memory resource (pipelined when it has a ``pipeline_config``)."""

    memory: ClassVar[Memory] = Memory.SMEM


SmemTile = MemoryResource


@dataclass(frozen=True)
class GmemTensor(Resource):
    """A global-memory tensor: an ``input`` of the kernel or the target of a ``store``."""

    memory: ClassVar[Memory] = Memory.GMEM

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.compute == Compute():
            object.__setattr__(self, "compute", Compute("input"))


@dataclass(frozen=True)
class TmemAccumulator(Resource):
    """A tensor-memory accumulator (emulated in registers / smem on sm_90)."""

    memory: ClassVar[Memory] = Memory.TMEM

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.compute == Compute():
            object.__setattr__(self, "compute", Compute("mma"))


RESOURCE_CLASSES: dict[str, type[Resource]] = {
    Memory.GMEM.value: GmemTensor,
    Memory.SMEM.value: MemoryResource,
    Memory.TMEM.value: TmemAccumulator,
}


def alias_roots(resources: Iterable[Resource], *, past_the_set: bool = False) -> dict[str, str]:
    """Resource name -> the name of the buffer it occupies, following ``aliases`` (a view of a
    view of X occupies X's buffer).  The one walk for every question about shared buffers: a
    group asks which members view one buffer, the layout which staged resources get a buffer of
    their own, the unroller where a step's bytes land.  A chain ends at a resource that aliases
    nothing, at a cycle (a rule reports it), or at a name outside ``resources``: with
    ``past_the_set`` that name is the root (members viewing a buffer the group does not hold),
    else the last resource inside the set is (the layout places only what it holds).

    >>> from pgstudio.model.config import create_tma_async_pipeline_cfg as tma
    >>> a = MemoryResource("a", tma(num_stages=2, num_bytes=64))
    >>> b = MemoryResource("b", tma(num_stages=2, num_bytes=64), aliases="a")
    >>> c = MemoryResource("c", tma(num_stages=2, num_bytes=64), aliases="x")
    >>> alias_roots([a, b, c]), alias_roots([b, c], past_the_set=True)
    ({'a': 'a', 'b': 'a', 'c': 'c'}, {'b': 'a', 'c': 'x'})
    """
    items = list(resources)
    by_name = {r.name: r for r in items}
    roots = {}
    for r in items:
        root, seen = r.name, set()
        while root in by_name and root not in seen:
            nxt = by_name[root].aliases
            if not nxt or (nxt not in by_name and not past_the_set):
                break
            seen.add(root)
            root = nxt
        roots[r.name] = root
    return roots

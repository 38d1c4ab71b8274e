"""Thread-block clusters: which operand tile the blocks of a cluster share, and with how many peers.

A GEMM design runs its blocks in clusters with the problem keys ``CLUSTER_M`` and ``CLUSTER_N``.
The ``CLUSTER_N`` blocks of a cluster row compute neighbouring output tiles of one row of tiles,
so they read the same A tile: each block loads 1/n of its rows and the TMA engine multicasts them
into every block of the row (``.multicast::cluster``), completing on each block's own full
barrier.  A stage of the shared tile is free again only once the MMA of *every* block has
released it, so the shared tile's empty barrier counts the releases of all n blocks: each block
arrives in its own block and, through ``mapa``, in each peer's.  ``CLUSTER_M`` > 1 shares B the
same way along a cluster column.  This module is the one place that says so; the barrier layout
(``barrier_layout.py``) turns it into init counts and peer arrivals, and the generator reads them.

Why the checker and the simulator may run one block for the cluster (the symmetry rule): every
block of a cluster runs the same schedules with the same loop counts (the tile scheduler hands a
cluster its work units together), and every arrival on the shared tile's empty barrier is made in
every block of the cluster.  No block gets a phase ahead of another on that barrier: a block's
round r+1 release of a stage needs its full barrier's round r+1, which needs every peer's share of
the copy, which each peer issues only after *its* empty barrier completed round r -- which needs
this block's round r release.  So the arrivals that reach one block's barrier in each phase are
its own and the same arrivals of its peers, for the same phase: modelling one block whose every
arrival on the shared empty barrier counts ``peers`` times, and whose copy lands the whole tile
(its own share and, mirrored, the peers' shares), is exact.  A cluster this rule does not cover
(both dimensions at once, a shared tile not copied by TMA, no tile to share) is refused with
``analysis.cluster`` rather than checked as one block.

    >>> from pgstudio import examples
    >>> c = cluster_of(examples.merge_gemm(cluster=(1, 2)))
    >>> c.tile, c.peers
    ('smem_a', 2)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import DesignError
from ..model.design import Design
from ..model.kinds import OpKind
from .accumulators import accumulators, operands

#: What fixes a cluster pgstudio cannot model.
FIX = "set CLUSTER_N=2 (pairs share A) or CLUSTER_M=2 (pairs share B), or remove both"


@dataclass(frozen=True)
class Cluster:
    """A design's cluster: its (CLUSTER_M, CLUSTER_N) shape, the operand tile its blocks share
    (None: nothing is shared), how many blocks share it (``peers``, this one included) and, when
    pgstudio cannot model it, why (``problem``) and what fixes it (``hint``).  ``shares``: the
    tile whose barriers count the peers (None while there is a problem)."""

    shape: tuple[int, int] = (1, 1)
    tile: str | None = None
    peers: int = 1
    problem: str = ""
    hint: str = FIX

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]

    @property
    def shares(self) -> str | None:
        return None if self.problem else self.tile


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def cluster_of(design: Design) -> Cluster:
    """The cluster of ``design`` (module docstring): the shared tile is A (the accumulator's first
    operand) along N, B along M; a design without an MMA accumulator shares nothing (a streaming
    kernel runs its blocks alone)."""
    p = design.problem_dict
    cm, cn = p.get("CLUSTER_M", 1), p.get("CLUSTER_N", 1)
    if not (_count(cm) and _count(cn)):
        return Cluster(problem=f"design {design.name!r}: cluster (CLUSTER_M, CLUSTER_N) = ({cm!r}, {cn!r}); a "
                       "cluster shape is two positive integers")
    shape = (cm, cn)
    if shape == (1, 1) or not any(r.compute.op == "mma" for r in design.resources):
        return Cluster(shape)
    accs = accumulators(design)
    pair = operands(design, accs[0]) if len(accs) == 1 else None
    if pair is None:
        return Cluster(shape, problem=f"design {design.name!r} runs clusters of {cm} x {cn} blocks, but has no one "
                       "accumulator computed from two staged shared-memory tiles, so no tile the blocks share",
                       hint="give the design one TmemAccumulator computing mma from two pipelined MemoryResources, "
                       "or remove CLUSTER_M / CLUSTER_N")
    if cm > 1 and cn > 1:
        return Cluster(shape, problem=f"design {design.name!r}: a cluster of {cm} x {cn} blocks shares both operand "
                       "tiles, each with other peers; pgstudio models clusters along one dimension")
    tile, peers = (pair[0], cn) if cn > 1 else (pair[1], cm)
    cfg = design.resource(tile).pipeline_config
    if cfg.producer_kind is not OpKind.TMA:
        return Cluster(shape, tile, peers, problem=f"{tile!r} is shared by the {peers} blocks of a cluster, so the TMA engine "
                       f"multicasts it, but its pipeline is {cfg.pipeline_type}",
                       hint=f"give {tile!r} a TMA producer, or pair the blocks along the other dimension")
    return Cluster(shape, tile, peers)


def require_modelled(design: Design, what: str) -> Cluster:
    """The design's cluster, or ``DesignError`` (``analysis.cluster``) when ``what`` (the checker,
    the simulator) cannot model it by the symmetry rule."""
    c = cluster_of(design)
    if c.problem:
        raise DesignError(f"{what} cannot model the cluster: {c.problem}", code="analysis.cluster", hint=c.hint)
    return c


__all__ = ["Cluster", "FIX", "cluster_of", "require_modelled"]

"""Barrier layout (semantics.md section 4): every mbarrier slot of a design, with its counts.

A barrier is one 8-byte mbarrier slot.  Slots come in sets of S (one per stage), in this order::

    ungrouped   [full x S][empty x S]
    Merge       [full_0 x S] .. [full_{N-1} x S][shared_empty x S]          (N+1)S
    Fork        [shared_full x S][empty_0 x S] .. [empty_{N-1} x S]         (N+1)S
    FusedMerge  [shared_full x S][shared_empty x S]                         2S

Init counts and tx bytes come from the protocol table (``model/protocol.py``): a set's init
count is the sum of the declared cooperative-group thread counts of the sides that arrive on it
(a shared set that the collapsed side arrives on counts the one common group once), and its tx
bytes the bytes the table's expect_tx actions arm (a Fork tma producer arms the merged bytes once).

Two things beyond the table are part of a design's layout too, so that the figure, the table, the
checker and the generator all read them from here:

* a thread-block cluster (``cluster.py``): the empty set of the operand tile its blocks share
  counts every block's releases (``peers`` times the block's own count, the peers arriving
  through ``mapa``), and the tile's full set expects the bytes the peers' multicast copies land;
* generator-internal barriers (``internal``): on sm_100a each accumulator stage has an
  ``mma_done`` barrier that ``tcgen05.commit`` arrives on once the tile's MMAs completed and the
  MMA task waits on before it reads tensor memory.  They live after the pipeline barriers and
  the tensor-memory address slot, outside the protocol table's slots (``slots``): their slot
  indices continue after those, their offsets are their bytes from the start of barrier storage.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import DesignError
from ..model.design import Design
from ..model.group import PipelineGroup
from ..model.kinds import Op, Role, Side, Verb
from ..model.protocol import ARRIVER, arrives_on, arrives_once, expects_tx, member_actions
from ..model.resource import Resource
from ..model.targets import ARCHES, SMEM_CAPACITY_BY_ARCH
from .accumulators import staged_accumulators
from .cluster import cluster_of
from .memo import memo_of

#: Bytes of one mbarrier.
BARRIER_BYTES = 8
#: sm_100a keeps the tensor-memory address (one 8-byte slot) beside the barriers, before the
#: accumulator's ``mma_done`` barriers.
TMEM_SLOT_BYTES = 8
#: The target whose generator adds ``mma_done`` barriers (tcgen05 MMAs complete asynchronously).
MMA_DONE_ARCH = "sm_100a"
#: How ``tcgen05.commit`` arrives: once, whatever the MMA task's size.
COMMIT = "tcgen05.commit"


@dataclass(frozen=True)
class BarrierSet:
    """S slots that one barrier role of a resource or group uses, one per stage.

    ``init_count`` is what the kernel initialises the barrier with: on a cluster's shared tile it
    counts the releases of all ``peers`` blocks (``peer_arrivers`` arrive from the other blocks,
    through ``mapa``), and ``peer_tx`` of its ``tx_bytes`` land from the other blocks' multicast
    copies.  ``via``: how the arrivers arrive when it is not a plain ``mbarrier.arrive``
    (``tcgen05.commit`` for ``mma_done``); ``arch``: the only target the set exists on ("": all)."""

    name: str  # unique in a design: "<owner>.<label>"
    owner: str  # resource or group name
    label: str  # full / empty / full_0 / shared_empty / mma_done ...
    role: Role
    members: tuple[str, ...]  # resources that signal / wait through it
    stages: int
    first: int  # index of its stage-0 slot
    init_count: int
    tx_bytes: int
    shared: bool = False
    arrivers: tuple[str, ...] = ()  # tasks that arrive (filled for a design)
    waiters: tuple[str, ...] = ()  # tasks that wait
    peers: int = 1  # blocks whose arrivals it counts (a cluster's shared tile), this one included
    peer_arrivers: tuple[str, ...] = ()  # tasks of the peer blocks that arrive on it (through mapa)
    peer_tx: int = 0  # of tx_bytes: what the peer blocks' multicast copies land per phase
    via: str = ""  # how the arrivers arrive, when not mbarrier.arrive ("tcgen05.commit")
    arch: str = ""  # the one target it exists on ("" for every target)

    @property
    def block_count(self) -> int:
        """Arrivals per phase from this block alone (``init_count`` without the peers')."""
        return self.init_count // self.peers


@dataclass(frozen=True)
class Slot:
    """One mbarrier in shared-memory order."""

    index: int
    barrier: str  # the set's label: "full", "empty", "full_0", "shared_empty", ...
    owner: str
    stage: int
    offset: int  # bytes from the start of barrier storage
    arrive_count: int
    tx_bytes: int
    set: str  # BarrierSet.name


@dataclass(frozen=True)
class BarrierLayout:
    """The mbarrier slots of a group, a resource or a whole design, in shared-memory order:
    ``slots`` / ``sets`` those of the protocol table, ``internal`` the generator's own sets
    (sm_100a ``mma_done``), whose slots follow in ``internal_slots``."""

    slots: tuple[Slot, ...]
    sets: tuple[BarrierSet, ...]
    internal: tuple[BarrierSet, ...] = ()
    internal_slots: tuple[Slot, ...] = ()

    @property
    def num_barriers(self) -> int:
        """The protocol table's barriers (what grouping saves and the kernel lays out first)."""
        return len(self.slots)

    @property
    def num_bytes(self) -> int:
        return self.num_barriers * BARRIER_BYTES

    @property
    def all_sets(self) -> tuple[BarrierSet, ...]:
        return self.sets + self.internal

    @property
    def all_slots(self) -> tuple[Slot, ...]:
        """Every slot, its ``index`` its position here (what the simulator and the checker model)."""
        return self.slots + self.internal_slots

    def set_for(self, resource: str, role: str) -> BarrierSet:
        """The set through which ``resource``'s ``role`` ("full"/"empty") barrier is reached."""
        for s in self.sets:
            if s.role == role and resource in s.members:
                return s
        raise KeyError(f"no {role} barrier for resource {resource!r}")

    def internal_for(self, resource: str, label: str) -> BarrierSet | None:
        """The generator-internal ``label`` set ("mma_done") of ``resource``, or None."""
        return next((s for s in self.internal if s.label == label and resource in s.members), None)

    def slot(self, set_name: str, stage: int) -> Slot:
        for s in self.all_sets:
            if s.name == set_name:
                return self.all_slots[s.first + stage]
        raise KeyError(set_name)

    def table(self) -> str:
        """A text table, one row per set: what a TS user would print, with offsets.  A cluster's
        shared set shows its peers' arrivals and bytes, an internal set how it is arrived on."""
        rows = [("set", "slots", "offsets", "arrive", "tx bytes", "arrivers", "waiters")]
        for s in self.all_sets:
            lo = self.all_slots[s.first].offset
            hi = self.all_slots[s.first + s.stages - 1].offset
            arrive = str(s.init_count) + (f" ({s.block_count} x {s.peers} blocks)" if s.peers > 1 else "")
            tx = str(s.tx_bytes) + (f" ({s.peer_tx} from peers)" if s.peer_tx else "")
            arrivers = ",".join(s.arrivers) or "-"
            if s.via:
                arrivers += f" ({s.via})"
            if s.peer_arrivers:
                arrivers += f" + peer {','.join(s.peer_arrivers)} (mapa)"
            name = s.name + (f" [{s.arch}]" if s.arch else "")
            rows.append((name, f"{s.first}..{s.first + s.stages - 1}", f"{lo}..{hi}", arrive, tx, arrivers,
                         ",".join(s.waiters) or "-"))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        tail = f"{self.num_barriers} barriers, {self.num_bytes} bytes"
        if self.internal:
            n = len(self.internal_slots)
            tail += f" (+ {n} generator barrier{'s' if n != 1 else ''} after the tensor-memory slot)"
        lines.append(tail)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

# -- building ------------------------------------------------------------------------------------

def _own_sets(r: Resource, first: int) -> list[BarrierSet]:
    cfg = r.pipeline_config
    out = []
    for role in Role:
        side = ARRIVER[role]
        kind = cfg.pipeline_type.kind(side)
        count = cfg.arrive_count(side) if arrives_on(role, side, kind) else 0
        tx = cfg.num_bytes if role is Role.FULL and expects_tx(kind) else 0
        out.append(BarrierSet(f"{r.name}.{role}", r.name, role.value, role, (r.name,), cfg.num_stages,
                              first + len(out) * cfg.num_stages, count, tx))
    return out


def _group_sets(g: PipelineGroup, first: int) -> list[BarrierSet]:
    mode = g.mode
    members = [m for m in g.members if m.pipeline_config is not None]
    if not members:
        return []
    stages = members[0].pipeline_config.num_stages
    out: list[BarrierSet] = []
    for role in Role:
        side = ARRIVER[role]
        if role in mode.shared_barriers:
            if arrives_once(mode, role):  # one task drives it: the common group counts once
                cfg = members[0].pipeline_config
                count = cfg.arrive_count(side) if arrives_on(role, side, cfg.pipeline_type.kind(side)) else 0
            else:  # FusedMerge full: every producer arrives on the shared storage
                count = sum(m.pipeline_config.arrive_count(side) for m in members
                            if arrives_on(role, side, m.pipeline_config.pipeline_type.kind(side)))
            tx = _shared_tx(g, members) if role is Role.FULL else 0
            out.append(BarrierSet(f"{g.name}.shared_{role}", g.name, f"shared_{role}", role,
                                  tuple(m.name for m in members), stages, first + len(out) * stages, count, tx, True))
        else:
            for i, m in enumerate(members):
                cfg = m.pipeline_config
                kind = cfg.pipeline_type.kind(side)
                count = cfg.arrive_count(side) if arrives_on(role, side, kind) else 0
                tx = cfg.num_bytes if role is Role.FULL and expects_tx(kind) else 0
                out.append(BarrierSet(f"{g.name}.{role}_{i}", g.name, f"{role}_{i}", role, (m.name,), stages,
                                      first + len(out) * stages, count, tx))
    return out


def _shared_tx(g: PipelineGroup, members: list[Resource]) -> int:
    """Bytes a shared full barrier expects per phase: what the members' acquires arm with
    expect_tx -- each its own bytes, or the merged bytes once (a Fork's collapsed tma producer)."""
    tx = 0
    armed_once = False
    for m in members:
        for a in member_actions(g.mode, Op.ACQUIRE, m.pipeline_config.producer_kind):
            if a.verb is not Verb.ARRIVE_EXPECT_TX or a.role is not Role.FULL:
                continue
            if a.once:
                if not armed_once:
                    tx += g.merged_config.num_bytes
                    armed_once = True
            else:
                tx += m.pipeline_config.num_bytes
    return tx


def _slots(sets: Sequence[BarrierSet], base: int = 0, offset: int = 0) -> tuple[Slot, ...]:
    """The slots of ``sets``: slot ``k`` at ``offset + 8 (k - base)`` bytes (``base``: the index
    of the first slot of ``sets``; internal sets sit past the tensor-memory slot)."""
    slots = []
    for s in sets:
        for stage in range(s.stages):
            idx = s.first + stage
            slots.append(Slot(idx, s.label, s.owner, stage, offset + (idx - base) * BARRIER_BYTES, s.init_count,
                              s.tx_bytes, s.name))
    return tuple(sorted(slots, key=lambda sl: sl.index))


def _with_tasks(sets: list[BarrierSet], design: Design) -> list[BarrierSet]:
    out = []
    for s in sets:
        producers = tuple(dict.fromkeys(t.name for m in s.members for t in design.producers(m)))
        consumers = tuple(dict.fromkeys(t.name for m in s.members for t in design.consumers(m)))
        arrivers, waiters = (producers, consumers) if ARRIVER[s.role] is Side.PRODUCER else (consumers, producers)
        out.append(dataclasses.replace(s, arrivers=arrivers, waiters=waiters))
    return out


def _with_cluster(sets: list[BarrierSet], design: Design) -> list[BarrierSet]:
    """A cluster's shared tile (``cluster.py``): its empty sets count every block's releases (the
    peers' through mapa), its full sets expect the bytes the peers' shares of the copy land."""
    c = cluster_of(design)
    tile = c.shares
    if tile is None:
        return sets
    share = design.resource(tile).pipeline_config.num_bytes
    out = []
    for s in sets:
        if tile in s.members and s.role is Role.EMPTY:
            s = dataclasses.replace(s, init_count=s.init_count * c.peers, peers=c.peers, peer_arrivers=s.arrivers)
        elif tile in s.members and s.role is Role.FULL and s.tx_bytes:
            s = dataclasses.replace(s, peer_tx=share * (c.peers - 1) // c.peers)
        out.append(s)
    return out


def design_sets(design: Design) -> list[BarrierSet]:
    """Every barrier set of the protocol table in a design: resources in order, a group at its
    first member; a cluster's shared tile counts its peers."""
    sets: list[BarrierSet] = []
    done: set[str] = set()
    first = 0
    for r in design.resources:
        if r.pipeline_config is None:
            continue
        g = design.group_of(r.name)
        if g is not None:
            if g.name in done:
                continue
            done.add(g.name)
            new = _group_sets(g, first)
        else:
            new = _own_sets(r, first)
        sets.extend(new)
        first += sum(s.stages for s in new)
    return _with_cluster(_with_tasks(sets, design), design)


def internal_bytes(design: Design, arch: str) -> int:
    """Bytes the generator keeps after the pipeline barriers on ``arch``: on sm_100a, per staged
    accumulator, the tensor-memory address slot and one ``mma_done`` barrier per stage."""
    if arch != MMA_DONE_ARCH:
        return 0
    return sum(TMEM_SLOT_BYTES + BARRIER_BYTES * a.pipeline_config.num_stages for a, _ in staged_accumulators(design))


def internal_sets(design: Design, arch: str, first: int) -> list[BarrierSet]:
    """The ``mma_done`` sets of ``arch`` (sm_100a), slot indices from ``first``: one barrier per
    accumulator stage, arrived on once by ``tcgen05.commit`` of the MMA task's tile and waited on
    by that task before it copies tensor memory out."""
    if arch != MMA_DONE_ARCH:
        return []
    out = []
    for acc, _ in staged_accumulators(design):
        tasks = tuple(t.name for t in design.producers(acc.name))
        stages = acc.pipeline_config.num_stages
        out.append(BarrierSet(f"{acc.name}.mma_done", acc.name, "mma_done", Role.FULL, (acc.name,), stages, first, 1, 0,
                              arrivers=tasks, waiters=tasks, via=COMMIT, arch=arch))
        first += stages
    return out


def _internal_slots(sets: Sequence[BarrierSet], base: int, pipeline_bytes: int) -> tuple[Slot, ...]:
    """Each accumulator's tensor-memory slot, then its ``mma_done`` slots (``internal_bytes``)."""
    slots: list[Slot] = []
    at = pipeline_bytes
    for s in sets:
        slots += _slots([s], s.first, at + TMEM_SLOT_BYTES)
        at += TMEM_SLOT_BYTES + BARRIER_BYTES * s.stages
    return tuple(slots)


def _targets(design: Design, arch: str | None) -> tuple[str, ...]:
    if arch is not None:
        return (arch,)
    return tuple(a for a in dict.fromkeys(design.targets) if a in ARCHES)


def barrier_layout(x: Any, arch: str | None = None) -> BarrierLayout:
    """The layout of a ``PipelineGroup``, an ungrouped pipelined resource, or a ``Design``.  A
    design's layout has the internal sets of ``arch`` (None: of every target of the design)."""
    if isinstance(x, Design):  # one layout per design and arch, however many rules ask (``memo.py``)
        memo = memo_of(x)
        if ("layout", arch) not in memo:
            memo[("layout", arch)] = _layout(x, arch)
        return memo[("layout", arch)]
    return _layout(x, arch)


def _layout(x: Any, arch: str | None) -> BarrierLayout:
    internal: list[BarrierSet] = []
    if isinstance(x, Design):
        sets = design_sets(x)
        first = sum(s.stages for s in sets)
        for a in _targets(x, arch):
            internal += internal_sets(x, a, first + sum(s.stages for s in internal))
    elif isinstance(x, PipelineGroup):
        sets = _group_sets(x, 0)
    elif isinstance(x, Resource):
        if x.pipeline_config is None:
            raise DesignError(f"resource {x.name!r} has no pipeline_config, so it has no barriers",
                              code="layout.unpipelined", hint="give it a create_*_pipeline_cfg(...) config")
        sets = _own_sets(x, 0)
    else:
        raise TypeError(f"barrier_layout() takes a Design, PipelineGroup or pipelined resource, got {type(x).__name__}")
    _check_slot_count([*sets, *internal])
    slots = _slots(sets)
    return BarrierLayout(slots, tuple(sets), tuple(internal),
                         _internal_slots(internal, len(slots), len(slots) * BARRIER_BYTES))


def _check_slot_count(sets: Sequence[BarrierSet]) -> None:
    """Refuse, by value and before listing any slot, a layout whose barriers alone cannot fit in
    any block's shared memory (a stage count of 10**8 would otherwise allocate 10**8 slots)."""
    limit = max(SMEM_CAPACITY_BY_ARCH.values()) // BARRIER_BYTES
    total = sum(s.stages for s in sets)
    if total > limit:
        worst = max(sets, key=lambda s: s.stages)
        raise DesignError(f"the barrier layout needs {total} slots ({total * BARRIER_BYTES} B), more than the "
                          f"{limit} that fit in {limit * BARRIER_BYTES} B of shared memory; {worst.owner!r} has "
                          f"{worst.stages} stages", code="layout.capacity",
                          hint=f"give {worst.owner!r} fewer stages (a few to a few dozen is usual)")


__all__ = ["BARRIER_BYTES", "COMMIT", "MMA_DONE_ARCH", "TMEM_SLOT_BYTES", "BarrierLayout", "BarrierSet", "Slot",
           "barrier_layout", "design_sets", "internal_bytes", "internal_sets"]

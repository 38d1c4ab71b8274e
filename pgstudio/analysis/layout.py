"""Barrier layout and shared-memory layout (semantics.md section 4).

A barrier is one 8-byte mbarrier slot.  Slots come in sets of S (one per stage), in this order::

    ungrouped   [full x S][empty x S]
    Merge       [full_0 x S] .. [full_{N-1} x S][shared_empty x S]          (N+1)S
    Fork        [shared_full x S][empty_0 x S] .. [empty_{N-1} x S]         (N+1)S
    FusedMerge  [shared_full x S][shared_empty x S]                         2S

Init counts and tx bytes come from the protocol table (``model/protocol.py``): a set's init
count is the sum of the declared cooperative-group thread counts of the sides that arrive on it
(a shared set that the collapsed side arrives on counts the one common group once), and its tx
bytes the bytes the table's expect_tx actions arm (a Fork tma producer arms the merged bytes once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import DesignError
from ..model.design import Design
from ..model.diagnostic import Diagnostic, error
from ..model.group import PipelineGroup
from ..model.kinds import Op, Role, Side, Verb
from ..model.protocol import ARRIVER, arrives_on, arrives_once, expects_tx, member_actions
from ..model.resource import Memory, Resource, alias_roots
from ..model.targets import ARCHES, DATA_ALIGN, DTYPE_BYTES, SMEM_CAPACITY, SMEM_CAPACITY_BY_ARCH, smem_capacity

#: Bytes of one mbarrier.
BARRIER_BYTES = 8


@dataclass(frozen=True)
class BarrierSet:
    """S slots that one barrier role of a resource or group uses, one per stage."""

    name: str  # unique in a design: "<owner>.<label>"
    owner: str  # resource or group name
    label: str  # full / empty / full_0 / shared_empty ...
    role: Role
    members: tuple[str, ...]  # resources that signal / wait through it
    stages: int
    first: int  # index of its stage-0 slot
    init_count: int
    tx_bytes: int
    shared: bool = False
    arrivers: tuple[str, ...] = ()  # tasks that arrive (filled for a design)
    waiters: tuple[str, ...] = ()  # tasks that wait


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
    """The mbarrier slots of a group, a resource or a whole design, in shared-memory order."""

    slots: tuple[Slot, ...]
    sets: tuple[BarrierSet, ...]

    @property
    def num_barriers(self) -> int:
        return len(self.slots)

    @property
    def num_bytes(self) -> int:
        return self.num_barriers * BARRIER_BYTES

    def set_for(self, resource: str, role: str) -> BarrierSet:
        """The set through which ``resource``'s ``role`` ("full"/"empty") barrier is reached."""
        for s in self.sets:
            if s.role == role and resource in s.members:
                return s
        raise KeyError(f"no {role} barrier for resource {resource!r}")

    def slot(self, set_name: str, stage: int) -> Slot:
        for s in self.sets:
            if s.name == set_name:
                return self.slots[s.first + stage]
        raise KeyError(set_name)

    def table(self) -> str:
        """A text table, one row per set: what a TS user would print, with offsets."""
        rows = [("set", "slots", "offsets", "arrive", "tx bytes", "arrivers", "waiters")]
        for s in self.sets:
            lo = self.slots[s.first].offset
            hi = self.slots[s.first + s.stages - 1].offset
            rows.append((s.name, f"{s.first}..{s.first + s.stages - 1}", f"{lo}..{hi}", str(s.init_count),
                         str(s.tx_bytes), ",".join(s.arrivers) or "-", ",".join(s.waiters) or "-"))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        lines.append(f"{self.num_barriers} barriers, {self.num_bytes} bytes")
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


def _slots(sets: Sequence[BarrierSet]) -> tuple[Slot, ...]:
    slots = []
    for s in sets:
        for stage in range(s.stages):
            idx = s.first + stage
            slots.append(Slot(idx, s.label, s.owner, stage, idx * BARRIER_BYTES, s.init_count, s.tx_bytes, s.name))
    return tuple(sorted(slots, key=lambda sl: sl.index))


def _with_tasks(sets: list[BarrierSet], design: Design) -> list[BarrierSet]:
    out = []
    for s in sets:
        producers = tuple(dict.fromkeys(t.name for m in s.members for t in design.producers(m)))
        consumers = tuple(dict.fromkeys(t.name for m in s.members for t in design.consumers(m)))
        arrivers, waiters = (producers, consumers) if ARRIVER[s.role] is Side.PRODUCER else (consumers, producers)
        out.append(BarrierSet(**{**s.__dict__, "arrivers": arrivers, "waiters": waiters}))
    return out


def design_sets(design: Design) -> list[BarrierSet]:
    """Every barrier set of a design: resources in order, a group at its first member."""
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
    return _with_tasks(sets, design)


def barrier_layout(x: Any) -> BarrierLayout:
    """The layout of a ``PipelineGroup``, an ungrouped pipelined resource, or a ``Design``."""
    if isinstance(x, Design):
        sets = design_sets(x)
    elif isinstance(x, PipelineGroup):
        sets = _group_sets(x, 0)
    elif isinstance(x, Resource):
        if x.pipeline_config is None:
            raise DesignError(f"resource {x.name!r} has no pipeline_config, so it has no barriers",
                              code="layout.unpipelined", hint="give it a create_*_pipeline_cfg(...) config")
        sets = _own_sets(x, 0)
    else:
        raise TypeError(f"barrier_layout() takes a Design, PipelineGroup or pipelined resource, got {type(x).__name__}")
    _check_slot_count(sets)
    return BarrierLayout(_slots(sets), tuple(sets))


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


# -- shared memory ---------------------------------------------------------------------------------
#
# What a block really requests: the data buffers, then what the GEMM generator allocates beside
# them (accumulator staging, the sm_100a tensor-memory extras, alignment slack), then the
# barriers.  The figure users see and the capacity rule both read this one computation.

#: float32 accumulator staging rows are padded by 16 bytes against shared-memory bank conflicts;
#: 16-bit staging is swizzled in panels of this many bytes instead (``Staging``).
STAGING_PAD = 16
SWIZZLE_PANEL = 128
#: A kernel whose 128-byte-swizzled tiles need a 1024-byte-aligned base requests this much slack
#: and aligns the base by hand when it fits; otherwise it relies on ``__align__(1024)``.
ALIGN_SLACK = DATA_ALIGN
#: sm_100a keeps the tensor-memory address (one 8-byte slot) beside the barriers ...
TMEM_SLOT_BYTES = 8
#: ... and one ``mma_done`` mbarrier per accumulator stage (tcgen05.commit of a tile's MMAs).
MMA_DONE_BYTES = BARRIER_BYTES


@dataclass(frozen=True)
class Buffer:
    resource: str
    offset: int
    stage_bytes: int
    stages: int
    alias_of: str | None = None

    @property
    def num_bytes(self) -> int:
        return self.stage_bytes * self.stages

    def stage_range(self, stage: int) -> tuple[int, int]:
        """Shared-memory bytes ``[start, end)`` of ``stage``: what the barriers of that stage guard."""
        start = self.offset + stage * self.stage_bytes
        return start, start + self.stage_bytes


@dataclass(frozen=True)
class Staging:
    """Shared-memory stages of a tensor-memory accumulator in a GEMM kernel.

    sm_90a has no tensor memory: the accumulator lives in the MMA warpgroups' registers and
    these buffers are its stages, which the epilogue drains.  On sm_100a the MMA task copies
    tensor memory here with ``tcgen05.ld``.  ``dtype`` is float32, or the operands' 16-bit type
    when float32 staging does not fit (or when every output is the accumulator itself, in that
    type).

    A 16-bit staging buffer is laid out like a TMA tile: ``panel``-byte (128 B) swizzled panels of
    64 columns, one after the other, so the MMA threads write it without bank conflicts and the
    TMA engine can store it to global memory as it is.  A float32 one is plain rows, each padded
    by ``STAGING_PAD`` bytes against bank conflicts (``panel`` 0)."""

    resource: str
    offset: int
    rows: int
    pitch: int  # bytes per row: of a panel when swizzled, else the padded row
    dtype: str
    stages: int
    cols: int = 0
    panel: int = 0  # swizzled panel width in bytes; 0: padded rows

    @property
    def swizzled(self) -> bool:
        return self.panel > 0

    @property
    def panel_cols(self) -> int:
        return self.panel // DTYPE_BYTES[self.dtype] if self.panel else self.cols

    @property
    def panel_stride(self) -> int:
        """Bytes from one panel to the next (a swizzled buffer)."""
        return self.rows * self.panel

    @property
    def stage_bytes(self) -> int:
        if self.panel:
            return self.rows * self.cols * DTYPE_BYTES[self.dtype]
        return self.rows * self.pitch

    @property
    def num_bytes(self) -> int:
        return self.stage_bytes * self.stages


@dataclass(frozen=True)
class SmemLayout:
    """Data buffers, accumulator staging, then barrier storage (and the sm_100a extras), against
    the per-block capacity of ``arch``.  ``total_bytes`` is the dynamic shared memory the kernel
    requests, alignment slack included."""

    buffers: tuple[Buffer, ...]
    data_bytes: int
    barrier_offset: int
    barrier_bytes: int
    capacity: int = SMEM_CAPACITY
    tmem_bytes: int = 0
    staging: tuple[Staging, ...] = ()
    extra_bytes: int = 0  # sm_100a: tensor-memory address slot + mma_done barriers, after the barriers
    slack: int = 0  # requested beyond the end, to align the base by hand
    arch: str = ""

    @property
    def total_bytes(self) -> int:
        return self.barrier_offset + self.barrier_bytes + self.extra_bytes + self.slack

    @property
    def staging_bytes(self) -> int:
        return sum(s.num_bytes for s in self.staging)

    @property
    def padding_bytes(self) -> int:
        """Bytes between the parts (alignment of staging and barriers) plus the slack."""
        return self.total_bytes - self.data_bytes - self.staging_bytes - self.barrier_bytes - self.extra_bytes

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.capacity

    def buffer(self, resource: str) -> Buffer:
        for b in self.buffers:
            if b.resource == resource:
                return b
        raise KeyError(resource)

    def parts(self) -> str:
        """``data 65536 B + barriers 96 B`` (every part that is there)."""
        parts = [f"data {self.data_bytes} B"]
        if self.staging:
            parts.append(f"accumulator staging {self.staging_bytes} B ({', '.join(sorted({s.dtype for s in self.staging}))})")
        parts.append(f"barriers {self.barrier_bytes} B")
        if self.extra_bytes:
            parts.append(f"tensor-memory slot and mma_done barriers {self.extra_bytes} B")
        if self.padding_bytes:
            parts.append(f"alignment {self.padding_bytes} B")
        return " + ".join(parts)

    def problem(self, design: Design) -> Diagnostic:
        """The ``smem.capacity`` error of a layout that does not fit (the one capacity rule)."""
        owners = tuple(dict.fromkeys((*(b.resource for b in self.buffers), *(s.resource for s in self.staging))))
        hint = "use fewer stages or smaller tiles"
        if self.staging:
            hint += ", one accumulator stage, or a smaller BN"
        return error("smem.capacity", f"shared memory exceeded: {self.parts()} = {self.total_bytes} B, expected at most "
                     f"{self.capacity} B per block", owners or (design.name,), hint)

    def report(self) -> str:
        pct = 100.0 * self.total_bytes / self.capacity
        where = f" ({self.arch})" if self.staging or self.extra_bytes else ""
        return (f"smem{where}: {self.parts()} = {self.total_bytes} B of {self.capacity} B ({pct:.1f}%)"
                f"{'' if self.fits else '  DOES NOT FIT'}")

    def __str__(self) -> str:
        return self.report()


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def accumulators(design: Design) -> tuple[Resource, ...]:
    """Pipelined tensor-memory resources computing ``mma``: what a GEMM kernel stages."""
    return tuple(r for r in design.resources
                 if r.memory is Memory.TMEM and r.compute.op == "mma" and r.pipeline_config is not None)


def _positive(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def accumulator_shape(design: Design, acc: Resource) -> tuple[int, int] | None:
    """(rows, cols) of one accumulator stage: the problem's BM x BN, else the resource's 2-D tile."""
    p = design.problem_dict
    if _positive(p.get("BM")) and _positive(p.get("BN")):
        return p["BM"], p["BN"]
    if len(acc.tile) == 2 and all(_positive(x) for x in acc.tile):
        return acc.tile[0], acc.tile[1]
    return None


def copied_out(design: Design, acc: Resource, dtype: str) -> bool:
    """True when every global tensor computed from ``acc`` is ``acc`` itself in ``dtype`` (a plain
    ``store`` of it and nothing else): staging in that type loses nothing, and the TMA engine can
    store the staging buffer as it is."""
    outs = [r for r in design.resources if r.memory is Memory.GMEM and acc.name in design.deps(r.name)]
    return bool(outs) and all(
        r.compute.op == "store" and list(design.deps(r.name)) == [acc.name] and r.dtype == dtype
        and (r.compute.expr or acc.name).strip() == acc.name for r in outs)


def _operand_dtype(design: Design, acc: Resource) -> str:
    deps = [d for d in design.deps(acc.name) if design.has_resource(d)]
    dt = design.resource(deps[0]).dtype if deps else "float32"
    return dt if dt in DTYPE_BYTES else "float32"


def _default_arch(design: Design) -> str:
    """The design's target whose layout is the tightest (what a figure must show)."""
    known = [a for a in design.targets if a in ARCHES] or [ARCHES[0]]
    if len(known) == 1:
        return known[0]
    barriers = barrier_layout(design)
    return max(known, key=lambda a: smem_layout(design, arch=a, barriers=barriers).total_bytes / smem_capacity(a))


def smem_layout(design: Design, capacity: int | None = None, *, arch: str | None = None,
                staging_dtype: str | None = None, barriers: BarrierLayout | None = None) -> SmemLayout:
    """The shared memory a block of ``design``'s kernel requests on ``arch`` (default: the
    design's tightest target), against ``capacity`` (default: the arch's).

    Data buffers in resource order (each aligned to ``DATA_ALIGN``; views of one buffer share it,
    sized for the largest view); for a GEMM (a tensor-memory accumulator computing ``mma``) the
    accumulator staging at the next ``DATA_ALIGN`` boundary, float32 when it fits, else
    ``staging_dtype`` = the operands' type (``staging_dtype`` forces one); the barriers of
    ``barrier_layout(design)`` 16-byte aligned; on sm_100a the tensor-memory extras; and, when it
    fits, ``ALIGN_SLACK`` bytes so the kernel can align its base by hand.  ``barriers``: the
    design's ``barrier_layout`` when the caller has it already.
    """
    arch = arch or _default_arch(design)
    cap = capacity if capacity is not None else (smem_capacity(arch) if arch in ARCHES else SMEM_CAPACITY)
    smem = [r for r in design.resources if r.pipeline_config is not None and r.memory is Memory.SMEM]
    tmem = sum(r.pipeline_config.num_bytes * r.pipeline_config.num_stages for r in design.resources
               if r.pipeline_config is not None and r.memory is Memory.TMEM)
    roots = alias_roots(smem)
    family_bytes: dict[str, int] = {}
    for r in smem:
        cfg = r.pipeline_config
        family_bytes[roots[r.name]] = max(family_bytes.get(roots[r.name], 0), cfg.num_bytes * cfg.num_stages)
    offsets: dict[str, int] = {}
    buffers: list[Buffer] = []
    offset = 0
    for r in smem:
        root = roots[r.name]
        if root not in offsets:
            offsets[root] = _align(offset, DATA_ALIGN)
            offset = offsets[root] + family_bytes[root]
        cfg = r.pipeline_config
        buffers.append(Buffer(r.name, offsets[root], cfg.num_bytes, cfg.num_stages, None if root == r.name else root))
    data = offset
    nbar = barriers.num_bytes if barriers is not None else sum(s.stages for s in design_sets(design)) * BARRIER_BYTES
    accs = [(a, shape) for a in accumulators(design) if (shape := accumulator_shape(design, a)) is not None]
    if not accs:
        return SmemLayout(tuple(buffers), data, _align(data, 16), nbar, cap, tmem, arch=arch)
    extra = sum(TMEM_SLOT_BYTES + MMA_DONE_BYTES * a.pipeline_config.num_stages for a, _ in accs) \
        if arch == "sm_100a" else 0
    narrow = _operand_dtype(design, accs[0][0])
    # the narrow type first when the outputs are the accumulator itself (but not for split-K, whose
    # partial sums stay float32 until they are added)
    split = design.problem_dict.get("SPLIT_K", 1)
    plain = split in (None, 1) and all(copied_out(design, a, narrow) for a, _ in accs)
    first = (narrow, "float32") if plain else ("float32", narrow)
    choices = [staging_dtype] if staging_dtype else list(dict.fromkeys(first))

    def build(dt: str, slack: int) -> SmemLayout:
        staging, at = [], _align(data, DATA_ALIGN)
        for a, (rows, cols) in accs:
            esz = DTYPE_BYTES.get(dt, 4)
            if esz == 2 and (cols * esz) % SWIZZLE_PANEL == 0 and rows % 8 == 0:
                st = Staging(a.name, at, rows, SWIZZLE_PANEL, dt, a.pipeline_config.num_stages, cols, SWIZZLE_PANEL)
            else:
                st = Staging(a.name, at, rows, cols * esz + STAGING_PAD, dt, a.pipeline_config.num_stages, cols)
            staging.append(st)
            at += st.num_bytes
        return SmemLayout(tuple(buffers), data, _align(at, 16), nbar, cap, tmem, tuple(staging), extra, slack, arch)

    tries = [build(dt, slack) for slack in (ALIGN_SLACK, 0) for dt in choices]
    return next((t for t in tries if t.fits), min(tries, key=lambda t: t.total_bytes))

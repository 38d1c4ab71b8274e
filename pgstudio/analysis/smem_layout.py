"""Shared-memory layout: what one block of a design's kernel requests, part by part.

The data buffers (each stage of every pipelined shared-memory resource; views of one buffer share
it), then what the GEMM generator allocates beside them (accumulator staging, alignment slack),
then the barriers of ``barrier_layout`` (``barrier_layout.py``) and, on sm_100a, the generator's
tensor-memory slot and ``mma_done`` barriers after them.  The figure users see and the capacity
rule (``smem.capacity``) both read this one computation.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.design import Design
from ..model.diagnostic import Diagnostic, error
from ..model.resource import Memory, alias_roots
from ..model.targets import ARCHES, DATA_ALIGN, DTYPE_BYTES, SMEM_CAPACITY, STAGING_TURNS, smem_capacity
from .accumulators import accumulators, copied_out, operand_dtype, residuals, staged_accumulators
from .barrier_layout import BARRIER_BYTES, BarrierLayout, barrier_layout, design_sets, internal_bytes

#: float32 accumulator staging rows are padded by 16 bytes against shared-memory bank conflicts;
#: 16-bit staging is swizzled in panels of this many bytes instead (``Staging``).
STAGING_PAD = 16
SWIZZLE_PANEL = 128
#: A kernel whose 128-byte-swizzled tiles need a 1024-byte-aligned base requests this much slack
#: and aligns the base by hand when it fits; otherwise it relies on ``__align__(1024)``.
ALIGN_SLACK = DATA_ALIGN


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
    by ``STAGING_PAD`` bytes against bank conflicts (``panel`` 0).

    ``turns`` > 1 (``STAGING_TURNS``, sm_90a only): a stage's buffer holds ``1 / turns`` of the
    tile's columns (whole panels), and each tile passes through it in that many turns -- the MMA
    threads write a turn, commit it on the stage's full barrier, and write the next once the
    epilogue has released the stage (its TMA stores have read the turn).  What a whole-tile buffer
    would cost in stages is then left to the operands' pipeline (``staging_turns``)."""

    resource: str
    offset: int
    rows: int
    pitch: int  # bytes per row: of a panel when swizzled, else the padded row
    dtype: str
    stages: int
    cols: int = 0
    panel: int = 0  # swizzled panel width in bytes; 0: padded rows
    turns: int = 1  # turns a tile takes through a stage's buffer (each holds cols / turns columns)

    @property
    def swizzled(self) -> bool:
        return self.panel > 0

    @property
    def panel_cols(self) -> int:
        return self.panel // DTYPE_BYTES[self.dtype] if self.panel else self.cols

    @property
    def turn_cols(self) -> int:
        """Columns of the tile one turn (one stage's buffer) holds."""
        return self.cols // self.turns

    @property
    def panel_stride(self) -> int:
        """Bytes from one panel to the next (a swizzled buffer)."""
        return self.rows * self.panel

    @property
    def stage_bytes(self) -> int:
        if self.panel:
            return self.rows * self.turn_cols * DTYPE_BYTES[self.dtype]
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
            turns = max(s.turns for s in self.staging)
            parts.append(f"accumulator staging {self.staging_bytes} B ({', '.join(sorted({s.dtype for s in self.staging}))}"
                         f"{f', each tile in {turns} turns' if turns > 1 else ''})")
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


def turn_slices(design: Design) -> tuple[int, frozenset[str]]:
    """(T, names): the shared-memory tiles that the tasks draining the accumulator read beside it,
    when every one holds ``1 / T`` of the accumulator tile's columns (all its rows; T one of
    ``STAGING_TURNS``): a residual staged in column slices.  Each tile then goes through the
    staging in T turns, and the slice of turn t arrives with turn t.  The design says it by the
    slice's shape, e.g. a (128, 64) residual beside a 128 x 256 accumulator: four turns.
    (1, frozenset()) when the drains read no such tile."""
    accs = staged_accumulators(design)
    if len(accs) != 1:
        return 1, frozenset()
    (acc, (rows, cols)), = accs
    found: set[tuple[int, str]] = set()
    for name in residuals(design, acc):
        r = design.resource(name)
        if len(r.tile) != 2:
            continue
        r_rows, r_cols = r.tile
        turns = cols // r_cols if r_cols and cols % r_cols == 0 else 0
        if r_rows == rows and turns in STAGING_TURNS[1:]:
            found.add((turns, name))
    counts = {t for t, _ in found}
    if len(counts) != 1:
        return 1, frozenset()
    return counts.pop(), frozenset(n for _, n in found)


def staging_turns(design: Design, arch: str, plain: bool) -> tuple[int, ...]:
    """The turn counts a design's accumulator staging may use on ``arch``, in the order tried.

    More than one turn only on sm_90a (the accumulator is in the MMA threads' registers,
    ``gemm_limits.accumulator_in_registers``, so each turn is written from them), without
    split-K, and where each task that drains the accumulator can run its tile loop once per
    turn:

    * it reads nothing else, the staging is ``plain`` (every output is the accumulator itself in
      its type, stored by the TMA engine panel by panel) and at most ``MAX_TMA_STORE_TASKS`` tasks
      drain it: whole-tile staging first, then 2 and 4 turns where that does not fit;
    * or it reads only the accumulator and ``turn_slices`` of it (a residual in column slices):
      exactly the slices' T turns, which the design chose by the slices' shape.

    The smem capacity rule, the generator and the simulator read this one rule: the generator
    and simulator through ``Staging.turns`` and ``turn_tasks``."""
    from .buildable.gemm_limits import MAX_TMA_STORE_TASKS, accumulator_in_registers  # (buildable imports this)
    accs = {a.name for a, _ in staged_accumulators(design)}
    drains = [t for t in design.tasks if accs & set(t.src_resources)]
    unsplit = design.problem_dict.get("SPLIT_K", 1) in (None, 1)
    turns, slices = turn_slices(design)
    if slices:
        fed = bool(drains) and all(set(t.src_resources) <= accs | slices for t in drains)
        return (turns,) if fed and unsplit and accumulator_in_registers(arch) else STAGING_TURNS[:1]
    alone = 0 < len(drains) <= MAX_TMA_STORE_TASKS and all(set(t.src_resources) <= accs for t in drains)
    return STAGING_TURNS if plain and alone and accumulator_in_registers(arch) else STAGING_TURNS[:1]


def turn_tasks(design: Design) -> tuple[str, ...]:
    """The tasks that run their tile loop's body once per turn when the staging takes a tile in
    turns (``Staging.turns`` > 1): the tasks draining the accumulator and the producers of its
    ``turn_slices`` (each turn's slice is loaded for that turn).  The generator and the simulator
    both read this."""
    accs = {a.name for a in accumulators(design)}
    _, slices = turn_slices(design)
    return tuple(t.name for t in design.tasks if accs & set(t.src_resources) or slices & set(t.dst_resources))


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


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
    accs = staged_accumulators(design)
    if not accs:
        return SmemLayout(tuple(buffers), data, _align(data, 16), nbar, cap, tmem, arch=arch)
    extra = internal_bytes(design, arch)
    narrow = operand_dtype(design, accs[0][0])
    # the narrow type first when the outputs are the accumulator itself (but not for split-K, whose
    # partial sums stay float32 until they are added)
    split = design.problem_dict.get("SPLIT_K", 1)
    plain = split in (None, 1) and all(copied_out(design, a, narrow) for a, _ in accs)
    first = (narrow, "float32") if plain else ("float32", narrow)
    choices = [staging_dtype] if staging_dtype else list(dict.fromkeys(first))

    def build(dt: str, slack: int, turns: int = 1) -> SmemLayout | None:
        staging, at = [], _align(data, DATA_ALIGN)
        for a, (rows, cols) in accs:
            esz = DTYPE_BYTES.get(dt, 4)
            if esz == 2 and (cols * esz) % SWIZZLE_PANEL == 0 and rows % 8 == 0:
                if (cols * esz) % (SWIZZLE_PANEL * turns):
                    return None  # a turn holds whole panels
                st = Staging(a.name, at, rows, SWIZZLE_PANEL, dt, a.pipeline_config.num_stages, cols, SWIZZLE_PANEL,
                             turns)
            elif turns > 1:
                return None
            else:
                st = Staging(a.name, at, rows, cols * esz + STAGING_PAD, dt, a.pipeline_config.num_stages, cols)
            staging.append(st)
            at += st.num_bytes
        return SmemLayout(tuple(buffers), data, _align(at, 16), nbar, cap, tmem, tuple(staging), extra, slack, arch)

    # the turns ``staging_turns`` allows, in its order (whole-tile staging first, so every layout
    # that fitted before keeps it), turns in the operands' type; a design whose slices ask for
    # turns it cannot have still gets a layout to show (the generator says why: codegen.tile_shape)
    tries = []
    for turns in staging_turns(design, arch, plain):
        kinds = choices if turns == 1 else [narrow] if narrow in choices else []
        tries += [build(dt, slack, turns) for slack in (ALIGN_SLACK, 0) for dt in kinds]
    tries = [t for t in tries if t is not None] or [t for t in (build(dt, 0) for dt in choices) if t is not None]
    return next((t for t in tries if t.fits), min(tries, key=lambda t: t.total_bytes))


__all__ = ["ALIGN_SLACK", "STAGING_PAD", "STAGING_TURNS", "SWIZZLE_PANEL", "Buffer", "SmemLayout", "Staging", "smem_layout",
           "staging_turns", "turn_slices", "turn_tasks"]

"""GemmPlan: what the GEMM code generator needs to know about a design, checked once.

It finds the accumulator (a ``TmemAccumulator`` computing ``mma``) and its two operands, gives
every staged tile a *space* (which problem dimensions its rows and columns run along), places
the shared-memory buffers (operand / residual stages from ``smem_layout``, then the staging
buffers that emulate tensor memory on sm_90a, then the barriers of ``barrier_layout``), splits
the register file between warpgroups, and lists the tensor maps and kernel parameters.
Anything it cannot generate raises ``DesignError`` naming the rule, the values and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis.layout import BarrierLayout, barrier_layout, smem_layout
from ..errors import DesignError
from ..model.design import Design
from ..model.kinds import OpKind
from ..model.resource import Memory, Resource
from ..model.targets import ARCHES, DTYPE_BYTES, SMEM_CAPACITY
from ..model.task import Task
from .wgmma import MAX_N

#: Operand element types the tensor-core path takes.
DTYPES = {d: DTYPE_BYTES[d] for d in ("float16", "bfloat16")}
#: 128-byte swizzle: one panel row is 128 bytes = 64 16-bit elements; tiles are panels of 64 columns.
PANEL_COLS = 64
#: ptxas allocates every role branch within the launch bound's registers per thread (65536 /
#: threads): setmaxnreg cannot give the MMA warpgroups more at compile time, so it is not used.
REGS_PER_SM = 65536

#: Problem-dimension spaces of a tile: (rows, cols).
SPACES = {"MK": ("M", "K"), "KN": ("K", "N"), "NK": ("N", "K"), "MN": ("M", "N")}


def _err(code: str, msg: str, hint: str) -> DesignError:
    return DesignError(msg, code=f"gemm.{code}", hint=hint)


@dataclass(frozen=True)
class Tile:
    """A staged shared-memory tile: its space, shape and where its stages live."""

    resource: str
    space: str  # key of SPACES
    rows: int
    cols: int
    offset: int  # bytes from the aligned smem base
    stage_bytes: int
    stages: int
    source: str  # the gmem tensor it is loaded from
    producer: OpKind

    @property
    def panels(self) -> int:
        return self.cols // PANEL_COLS


@dataclass(frozen=True)
class Staging:
    """sm_90a: the shared-memory stand-in for one tensor-memory accumulator stage set."""

    resource: str
    offset: int
    pitch: int  # bytes per row (padded by 16 bytes against bank conflicts)
    dtype: str  # float32, or the output dtype when fp32 staging does not fit
    stages: int
    rows: int

    @property
    def stage_bytes(self) -> int:
        return self.rows * self.pitch


@dataclass(frozen=True)
class TensorMap:
    """One CUtensorMap kernel parameter: a row-major [rows x cols] gmem tensor read in boxes of
    ``box_rows`` x 64 elements with 128-byte swizzle."""

    param: str
    tensor: str
    space: str
    box_rows: int


@dataclass(frozen=True)
class GemmPlan:
    design: Design
    arch: str
    dtype: str
    bm: int
    bn: int
    bk: int
    b_major: str  # "mn": B stored K x N (row-major); "k": B stored N x K
    acc: str
    a: str
    b: str
    mma_task: Task
    tiles: dict[str, Tile]
    staging: Staging
    layout: BarrierLayout
    barrier_offset: int
    smem_bytes: int  # dynamic shared memory to request
    aligned_by_hand: bool  # True: smem_bytes has 1 KB slack and the kernel aligns its base
    num_threads: int
    launch_regs: int
    mma_wgs: tuple[int, ...]
    tensor_maps: tuple[TensorMap, ...]
    gmem_spaces: dict[str, str]  # gmem tensor -> space of its [rows x cols]
    outputs: tuple[str, ...]
    pointer_inputs: tuple[str, ...]  # gmem inputs read by threads (async producers)
    problem: dict = field(default_factory=dict)

    @property
    def esz(self) -> int:
        return DTYPES[self.dtype]

    @property
    def mma_repeats(self) -> int:
        """m64 blocks per MMA warpgroup (sm_90a)."""
        return self.bm // (64 * len(self.mma_wgs))

    @property
    def tensor_map_for(self) -> dict[tuple[str, int], TensorMap]:
        return {(m.tensor, m.box_rows): m for m in self.tensor_maps}


def _stage_dtype_and_layout(design, data_bytes, n_bar_bytes, acc, bm, bn, out_dtype, stages, want):
    def total(dt):
        pitch = bn * (4 if dt == "float32" else 2) + 16
        off = -(-data_bytes // 1024) * 1024
        bar = -(-(off + pitch * bm * stages) // 16) * 16
        return pitch, off, bar, bar + n_bar_bytes

    order = [want] if want else ["float32", out_dtype]
    for slack in (1024, 0):
        for dt in order:
            pitch, off, bar, tot = total(dt)
            if tot + slack <= SMEM_CAPACITY:
                return dt, pitch, off, bar, tot, slack
    dt = order[-1]
    pitch, off, bar, tot = total(dt)
    raise _err("smem", f"design {design.name!r}: operand stages ({data_bytes} B) + {stages} accumulator staging "
               f"buffer(s) of {bm}x{bn} {dt} ({pitch * bm * stages} B) + barriers = {tot} B, more than the "
               f"{SMEM_CAPACITY} B of shared memory a block may use",
               "use fewer stages (num_stages), one accumulator stage, or a smaller BN")


def plan_gemm(design: Design, arch: str = "sm_90a", b_major: str = "mn", acc_stage_dtype: str | None = None,
              *, validate: bool = True) -> GemmPlan:
    """Check ``design`` and plan its GEMM kernel (see the module docstring); ``validate=False``
    skips ``design.validate()``."""
    if arch not in ARCHES:
        raise _err("arch", f"arch {arch!r} is not supported; expected one of {', '.join(ARCHES)}",
                   "use arch='sm_90a' (H100 / H200) or 'sm_100a' (B200, compile only)")
    if b_major not in ("mn", "k"):
        raise _err("b_major", f"b_major {b_major!r} is unknown; expected 'mn' (B stored K x N) or 'k' (B stored N x K)",
                   "pass b_major='mn' or b_major='k'")
    report = design.validate() if validate else None
    if report is not None and not report.ok:
        first = next(iter(report.errors), None)
        raise _err("invalid", f"design {design.name!r} is not valid: {first.message if first else report}",
                   "fix the design first (Design.validate() lists every problem)")
    accs = [r for r in design.resources if r.memory is Memory.TMEM and r.compute.op == "mma"]
    if len(accs) != 1:
        raise _err("accumulator", f"design {design.name!r} has {len(accs)} tensor-memory accumulators computing mma, "
                   "expected exactly one", "give the design one TmemAccumulator with Compute('mma')")
    acc = accs[0]
    p = design.problem_dict
    for key in ("M", "N", "K", "BM", "BN", "BK"):
        if not isinstance(p.get(key), int) or p[key] <= 0:
            raise _err("problem", f"design {design.name!r}: problem value {key} is {p.get(key)!r}, expected a positive integer",
                       "build GEMM designs with M, N, K, BM, BN, BK in the problem shape")
    bm, bn, bk = p["BM"], p["BN"], p["BK"]
    deps = design.deps(acc.name)
    if len(deps) != 2:
        raise _err("operands", f"accumulator {acc.name!r} depends on {list(deps)}, expected two operands (A, B)",
                   f"set the dependency graph entry of {acc.name!r} to [smem_a, smem_b]")
    a, b = deps
    dtype = design.resource(a).dtype
    if dtype not in DTYPES or design.resource(b).dtype != dtype:
        raise _err("dtype", f"operands {a!r} / {b!r} are {dtype!r} / {design.resource(b).dtype!r}; the tensor-core path "
                   "takes float16 or bfloat16 for both", "give both operand tiles dtype float16 or bfloat16")
    if bk % PANEL_COLS:
        raise _err("bk", f"BK is {bk}, expected a multiple of {PANEL_COLS} (one 128-byte swizzle row of 16-bit elements)",
                   "use BK=64 or BK=128")
    if bn % PANEL_COLS or bn > MAX_N:
        raise _err("bn", f"BN is {bn}, expected a multiple of {PANEL_COLS} up to {MAX_N} (one wgmma covers BN)",
                   "use BN=128 or BN=256")

    mma_tasks = [t for t in design.tasks if t.schedule and any(s.op == "mma" for s in t.schedule.steps())]
    if len(mma_tasks) != 1:
        raise _err("mma_task", f"design {design.name!r} has {len(mma_tasks)} tasks issuing mma, expected one",
                   "let one task (one or two warpgroups) run the MMA")
    mma = mma_tasks[0]
    if mma.warp_idx % 4 or mma.num_warps % 4:
        raise _err("warpgroup", f"task {mma.name!r} runs wgmma on warps {mma.warp_idx}..{mma.warp_idx + mma.num_warps - 1}; "
                   "a warpgroup is 4 warps starting at a warp index divisible by 4",
                   f"give {mma.name!r} warp_idx a multiple of 4 and num_warps 4 or 8")
    n_wg = mma.num_warps // 4
    if arch == "sm_90a" and (bm % (64 * n_wg) or bm // (64 * n_wg) not in (1, 2)):
        raise _err("bm", f"BM is {bm} with {n_wg} MMA warpgroup(s); each warpgroup needs 64 or 128 rows",
                   "use BM=128 with one or two MMA warpgroups")
    if arch == "sm_90a" and (bm // (64 * n_wg)) * bn > 256:
        raise _err("registers", f"each MMA warpgroup would hold {(bm // (64 * n_wg)) * bn // 2} fp32 accumulators per "
                   "thread; at most 128 fit", "use two MMA warpgroups, or BN=128")
    if arch == "sm_100a" and bm != 128:
        raise _err("bm", f"BM is {bm}; the sm_100a path issues M=128 tcgen05.mma", "use BM=128")

    # -- spaces of staged tiles and gmem tensors -------------------------------------------------
    b_space = "KN" if b_major == "mn" else "NK"
    space_of_gmem: dict[str, str] = {}
    for res, space in ((a, "MK"), (b, b_space)):
        srcs = [d for d in design.deps(res) if design.resource(d).memory is Memory.GMEM]
        if len(srcs) != 1:
            raise _err("operands", f"operand {res!r} depends on {list(design.deps(res))}, expected one gmem tensor",
                       f"make {res!r} a copy of one gmem tensor")
        space_of_gmem[srcs[0]] = space
    dims = {"M": bm, "N": bn, "K": bk}
    sl = smem_layout(design)
    tiles: dict[str, Tile] = {}
    for r in design.resources:
        if r.memory is not Memory.SMEM or r.pipeline_config is None:
            continue
        srcs = [d for d in design.deps(r.name) if design.resource(d).memory is Memory.GMEM]
        if len(srcs) != 1:
            raise _err("tile_source", f"staged tile {r.name!r} depends on {list(design.deps(r.name))}, expected one gmem tensor",
                       f"make {r.name!r} a copy of one gmem tensor")
        src = srcs[0]
        if src in space_of_gmem:
            space = space_of_gmem[src]
        elif tuple(r.tile) == (bm, bn):
            space = "MN"
        elif tuple(r.tile) == (bm, bk):
            space = "MK"
        else:
            raise _err("tile_shape", f"tile {r.name!r} has shape {tuple(r.tile)}; expected ({bm}, {bn}) or ({bm}, {bk})",
                       "stage residual tiles as (BM, BN) or A-like tiles as (BM, BK)")
        space_of_gmem.setdefault(src, space)
        if space_of_gmem[src] != space:
            raise _err("tile_space", f"gmem tensor {src!r} is read as {space_of_gmem[src]} and as {space}", "read it one way")
        rows, cols = (dims[d] for d in SPACES[space])
        cfg = r.pipeline_config
        if r.dtype != dtype:
            raise _err("dtype", f"tile {r.name!r} is {r.dtype!r}, expected {dtype!r} like the operands", f"give it dtype {dtype!r}")
        if rows > 256:
            raise _err("box", f"tile {r.name!r} has {rows} rows; a TMA box has at most 256", "use smaller tiles")
        if cfg.num_bytes != rows * cols * DTYPES[dtype]:
            raise _err("bytes", f"tile {r.name!r}: num_bytes is {cfg.num_bytes}, but a {rows}x{cols} {dtype} tile is "
                       f"{rows * cols * DTYPES[dtype]} B", f"set num_bytes={rows * cols * DTYPES[dtype]}")
        buf = sl.buffer(r.name)
        tiles[r.name] = Tile(r.name, space, rows, cols, buf.offset, cfg.num_bytes, cfg.num_stages, src, cfg.producer_kind)

    # -- outputs --------------------------------------------------------------------------------
    outputs = []
    for r in design.resources:
        if r.memory is Memory.GMEM and r.compute.op == "store":
            ins = design.deps(r.name)
            spaces = {("MN" if i == acc.name else tiles[i].space if i in tiles else "?") for i in ins}
            if len(spaces) != 1 or spaces & {"?", "KN", "NK"}:
                raise _err("store", f"output {r.name!r} is computed from {list(ins)} whose tiles do not share one "
                           "M x N or M x K space", "store the accumulator (with M x N tiles) or an A-like tile")
            space_of_gmem[r.name] = spaces.pop()
            if r.dtype != dtype:
                raise _err("dtype", f"output {r.name!r} is {r.dtype!r}, expected {dtype!r} (D has the input dtype)",
                           f"give it dtype {dtype!r}")
            outputs.append(r.name)

    # -- shared memory: operand tiles, accumulator staging (sm_90a), barriers ------------------
    layout = barrier_layout(design)
    acc_stages = acc.pipeline_config.num_stages
    data = sl.data_bytes
    staging = None
    want = acc_stage_dtype
    if want not in (None, "float32", dtype):
        raise _err("stage_dtype", f"acc_stage_dtype {want!r} is unknown; expected None, 'float32' or {dtype!r}",
                   "leave it None (float32 when it fits)")
    # sm_100a also keeps the TMEM address slot and one mma_done barrier per accumulator stage
    extra = 0 if arch == "sm_90a" else 8 + 8 * acc_stages
    dt, pitch, off, bar_off, total, slack = _stage_dtype_and_layout(design, data, layout.num_bytes + extra, acc, bm, bn,
                                                                     dtype, acc_stages, want)
    staging = Staging(acc.name, off, pitch, dt, acc_stages, bm)

    # -- warpgroups and registers ----------------------------------------------------------------
    n_warps = -(-design.num_warps // 4) * 4
    threads = n_warps * 32
    launch = min(255, REGS_PER_SM // threads) // 8 * 8
    mma_wgs = tuple(range(mma.warp_idx // 4, (mma.warp_idx + mma.num_warps) // 4))
    acc_regs = (bm // (64 * n_wg)) * bn // 2 if arch == "sm_90a" else 0
    if acc_regs and acc_regs + 24 > launch:
        raise _err("registers", f"a block of {threads} threads leaves {launch} registers per thread, but each MMA thread "
                   f"holds {acc_regs} fp32 accumulators (plus about 24 for addresses and loop state)",
                   f"use at most {REGS_PER_SM // (acc_regs + 24) // 128 * 4} warps, or a smaller BN")

    # -- tensor maps, pointers --------------------------------------------------------------------
    maps: dict[tuple[str, int], TensorMap] = {}
    pointer_inputs = []
    for t in tiles.values():
        if t.producer is OpKind.TMA:
            key = (t.source, t.rows)
            if key not in maps:
                same = [k for k in maps if k[0] == t.source]
                maps[key] = TensorMap(f"tm_{t.source}" + (f"_{t.rows}" if same else ""), t.source, t.space, t.rows)
        elif t.source not in pointer_inputs:
            pointer_inputs.append(t.source)

    return GemmPlan(design=design, arch=arch, dtype=dtype, bm=bm, bn=bn, bk=bk, b_major=b_major, acc=acc.name, a=a, b=b,
                    mma_task=mma, tiles=tiles, staging=staging, layout=layout, barrier_offset=bar_off,
                    smem_bytes=total + slack, aligned_by_hand=bool(slack), num_threads=threads, launch_regs=launch,
                    mma_wgs=mma_wgs, tensor_maps=tuple(maps.values()), gmem_spaces=space_of_gmem,
                    outputs=tuple(outputs), pointer_inputs=tuple(pointer_inputs), problem=p)

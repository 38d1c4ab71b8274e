"""GemmPlan: what the GEMM code generator can build, and the plan it renders for one design.

It finds the accumulator (a ``TmemAccumulator`` computing ``mma``) and its two operands, gives
every staged tile a *space* (which problem dimensions its rows and columns run along), takes the
shared-memory map from ``smem_layout(design, arch=...)`` (operand / residual stages, the
accumulator staging that emulates tensor memory on sm_90a, the barriers of ``barrier_layout``),
splits the register file between warpgroups, and lists the tensor maps and kernel parameters.

``plan_gemm`` never raises for a design: everything the generator cannot build is a ``codegen.*``
diagnostic naming the values and the fix (``gemm_sizes``, ``gemm_checks``), which ``validate()``
reports for each target and ``emit`` raises as one ``DesignError``.  The generator's limits are
data (``gemm_limits``): lifting one is a change there plus the code that renders it in
the ``codegen/gemm/`` package.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model.design import Design
from ...model.diagnostic import error
from ...model.kinds import OpKind, Role
from ...model.targets import ARCHES, DTYPE_BYTES
from ...model.task import Task
from ..accumulators import copied_out, stored_in_place
from ..barrier_layout import BarrierLayout
from ..cluster import cluster_of
from ..resolve import resolve
from ..smem_layout import Staging, smem_layout, turn_slices, turn_tasks
from .gemm_checks import Checks, option_error
from .gemm_limits import (B_MAJORS, BOOKKEEPING_REGS, KSTEP_BYTES, MAX_TMA_STORE_TASKS, SPACES, TASK_BAR_BASE,
                          launch_registers, panel_bytes, warpgroup_grid, wgmma_in_flight)
from .planned import Planned
from .registers import RegisterLayout, check_registers, register_layout
from .steps import check_async_ops, check_step_targets, check_tasks_scheduled


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
    dtype: str = "float16"
    panel: int = 128  # bytes of one swizzled panel row (128, or 64 / 32 for a narrower tile)

    @property
    def esz(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def panel_cols(self) -> int:
        """Elements of one panel row."""
        return self.panel // self.esz

    @property
    def panels(self) -> int:
        return self.cols // self.panel_cols

    @property
    def panel_stride(self) -> int:
        """Bytes from one panel of a stage to the next."""
        return self.rows * self.panel


@dataclass(frozen=True)
class TensorMap:
    """One CUtensorMap kernel parameter: a row-major [rows x cols] gmem tensor read in boxes of
    ``box_rows`` x ``box_cols`` elements, swizzled ``swizzle`` bytes wide (a tile's panel)."""

    param: str
    tensor: str
    space: str
    box_rows: int
    box_cols: int = 64
    swizzle: int = 128
    dtype: str = "float16"


@dataclass(frozen=True)
class GemmPlan:
    design: Design
    arch: str
    dtype: str
    bm: int
    bn: int
    bk: int
    b_major: str  # "mn": B stored K x N (row-major); "k": B stored N x K
    wg_grid: tuple[int, int]  # sm_90a MMA warpgroups along (M, N)
    split_k: int  # parts the K range of an output tile is cut into (SPLIT_K)
    out_dtypes: dict  # output gmem tensor -> its element type
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
    tma_stores: tuple[str, ...] = ()  # outputs the TMA engine stores from the staging buffer
    tma_store_tasks: tuple[str, ...] = ()  # the tasks storing them, in design order
    in_place: tuple[str, ...] = ()  # of tma_stores, the output computed in the staging buffer first (stored_in_place)
    cluster: tuple[int, int] = (1, 1)  # (CLUSTER_M, CLUSTER_N): blocks per cluster along M and N
    multicast: str | None = None  # the operand tile a cluster shares (TMA multicast, half by each block)
    peer_sets: tuple[str, ...] = ()  # barrier sets the peer block arrives on too (the layout's peers > 1)
    registers: RegisterLayout | None = None  # the setmaxnreg layout the design asks for (registers.py)
    umma_releases: tuple[tuple[str, int], ...] = ()  # barrier set -> the MMA's umma releases on it per phase
    stream_k: bool = False  # STREAM_K: the last partial wave's tiles shared among the blocks by k tiles
    turn_tasks: tuple[str, ...] = ()  # tasks running a tile's body once per staging turn (``smem_layout.turn_tasks``)
    turn_slices: tuple[str, ...] = ()  # staged tiles holding one turn's columns (``smem_layout.turn_slices``)

    @property
    def unit_k_range(self) -> bool:
        """Whether a work unit covers a range of its tile's k tiles (split-K, stream-K) rather
        than all of them: its tasks walk ``unit_k_tiles`` from ``kt0``."""
        return self.split_k > 1 or self.stream_k

    @property
    def mma_lag(self) -> int:
        """sm_90a: k tiles of wgmma each MMA warpgroup keeps in flight, i.e. how many k tiles late
        it gives a stage back (``gemm_limits.wgmma_in_flight`` of the operands' stages)."""
        return wgmma_in_flight(min(self.tiles[self.a].stages, self.tiles[self.b].stages))

    @property
    def umma_arrivals(self) -> int:
        """Arrivals one umma consumer release makes in the kernel: on sm_90a one per MMA warpgroup
        (each arrives as soon as its own ``wgmma.wait_group`` retired the stage, so the warpgroups
        never meet per k tile: the meeting cost a small-M k tile more than its tensor work); on
        sm_100a one ``tcgen05.commit``."""
        return len(self.mma_wgs) if self.arch == "sm_90a" else 1

    def init_count(self, set_name: str) -> int:
        """The arrive count the kernel initialises each slot of ``set_name`` with: the layout's
        (the protocol table's count, a cluster's peers included), plus ``umma_arrivals - 1`` for
        every umma release the MMA makes on it per phase, from each block that releases it.  The
        design's logical count stays the layout's (what the checker, the pictures and TS see):
        one logical release is carried out by every MMA warpgroup."""
        peers = next(s.peers for s in self.layout.all_sets if s.name == set_name)
        extra = dict(self.umma_releases).get(set_name, 0) * (self.umma_arrivals - 1) * peers
        return self.layout.slot(set_name, 0).arrive_count + extra

    def store_barrier(self, task: str) -> int:
        """The named barrier id a task storing through TMA meets on before it releases the staging."""
        return TASK_BAR_BASE + self.tma_store_tasks.index(task)

    @property
    def cluster_size(self) -> int:
        return self.cluster[0] * self.cluster[1]

    @property
    def esz(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def wg_rows(self) -> int:
        """Rows of the block one MMA warpgroup covers (sm_90a)."""
        return self.bm // self.wg_grid[0]

    @property
    def wg_cols(self) -> int:
        """Columns of the block one MMA warpgroup covers (sm_90a): the N of its wgmma."""
        return self.bn // self.wg_grid[1]

    @property
    def mma_repeats(self) -> int:
        """m64 blocks per MMA warpgroup (sm_90a)."""
        return self.wg_rows // 64

    @property
    def k_steps(self) -> int:
        """MMA instructions per k tile: ``KSTEP_BYTES`` of K each (k16 of fp16 / bf16, k8 of tf32)."""
        return self.bk * self.esz // KSTEP_BYTES

    @property
    def tensor_map_for(self) -> dict[tuple[str, int, int], TensorMap]:
        return {(m.tensor, m.box_rows, m.box_cols): m for m in self.tensor_maps}


def plan_gemm(design: Design, arch: str = "sm_90a", b_major: str | None = None,
              acc_stage_dtype: str | None = None) -> Planned[GemmPlan]:
    """The GEMM plan of ``design`` for ``arch``, or the ``codegen.*`` diagnostics saying why there
    is none.  ``b_major`` None: the problem's ``b_major`` (default "mn").  Unknown options (arch,
    b_major, acc_stage_dtype) raise ``DesignError``."""
    if arch not in ARCHES:
        raise option_error("arch", arch, ARCHES, "use arch='sm_90a' (H100 / H200) or 'sm_100a' (B200, compile only)")
    if b_major is not None and b_major not in B_MAJORS:
        raise option_error("b_major", b_major, B_MAJORS, "pass b_major='mn' (B stored K x N) or 'k' (B stored N x K)")
    d = design
    c = Checks(d, arch)
    c.out += check_tasks_scheduled(d) + check_step_targets(d) + check_async_ops(d)
    c.loops()
    acc = c.accumulator()
    shape = c.problem()
    b_major = c.b_major(b_major)
    splits = c.split_k()
    cluster = c.cluster(splits)
    stream_k = c.stream_k(splits, cluster)
    if acc is None or shape is None or b_major is None:
        return Planned(None, tuple(c.out))
    _, _, _, bm, bn, bk = shape
    operands = c.operands(acc)
    first = next((x for x in d.deps(acc.name) if d.has_resource(x)), None)
    c.tile_sizes(bm, bn, bk, acc, d.resource(operands[0] if operands else first).dtype if first else "float16")
    mma = c.mma_task(acc, bm, bn, bk)
    if operands is None or mma is None:
        return Planned(None, tuple(c.out))
    a, b = operands
    dtype = d.resource(a).dtype
    if acc_stage_dtype not in (None, "float32", dtype):
        raise option_error("acc_stage_dtype", acc_stage_dtype, (None, "float32", dtype),
                            "leave it None (float32 when it fits)")
    shapes = c.tiles(a, b, b_major, dtype, bm, bn, bk)
    if shapes is None:
        return Planned(None, tuple(c.out))
    # the tile a cluster's blocks share and the sets its peers arrive on: the layout's (cluster.py)
    multicast = cluster_of(d).tile if cluster != (1, 1) else None
    if multicast is not None:
        c.multicast(multicast, shapes[multicast][1])
    c.attach_retiles({**{r: space for r, (space, *_) in shapes.items()}, acc.name: "MN"})
    outputs, out_spaces = c.outputs(acc.name, dtype, shapes)
    gmem_spaces = {src: space for space, _, _, src in shapes.values()} | out_spaces
    c.k_steps({**{r: s[0] for r, s in shapes.items()}, **out_spaces})
    c.warpgroups(mma)
    c.out += check_registers(d, mma.name, _accumulators(arch, bm, bn, mma.num_warps // 4), BOOKKEEPING_REGS)
    c.reads(a, b, mma, out_spaces)
    c.chunks(shapes, out_spaces, bm, bn, bk)
    c.split_k_store(acc.name, splits)
    stored = {s.target for t in d.tasks if t.schedule for s in t.schedule.steps() if s.op == "store"}
    for o in outputs:
        if o not in stored:
            c.out.append(error("codegen.unstored_output", f"global tensor {o!r} computes {d.resource(o).compute.op!r} "
                               "but no task stores it, so the kernel would never write it", (o,),
                               f"add {o}.store(...) to the schedule of the task that reads its operands"))
    layout = c.layout
    sl = smem_layout(d, arch=arch, staging_dtype=acc_stage_dtype, barriers=layout)
    if acc_stage_dtype is not None and not sl.fits:  # the option changed the layout the rules checked
        c.out.append(sl.problem(d))
    turns, slices = turn_slices(d)
    if slices and sl.staging[0].turns != turns:
        names = ", ".join(sorted(slices))
        c.out.append(error("codegen.tile_shape", f"tile(s) {names} hold 1/{turns} of the accumulator tile's {bn} "
                           f"columns, so each tile would go through its staging in {turns} turns; the kernel takes "
                           f"turns only on sm_90a (the accumulator in registers; this is {arch}), without split-K, in "
                           f"{dtype} staging, with every task that reads the accumulator reading only it and its slices",
                           tuple(sorted(slices)), f"stage {names} as whole ({bm}, {bn}) tiles"))
    if c.out:
        return Planned(None, tuple(c.out))
    tiles = {}
    for r, (space, rows, cols, src) in shapes.items():
        cfg = d.resource(r).pipeline_config
        tiles[r] = Tile(r, space, rows, cols, sl.buffer(r).offset, cfg.num_bytes, cfg.num_stages, src, cfg.producer_kind,
                        dtype, panel_bytes(cols, dtype))
    threads, launch = launch_registers(d.num_warps)
    maps: dict[tuple[str, int, int], TensorMap] = {}
    pointer_inputs: list[str] = []
    for t in tiles.values():
        if t.producer is OpKind.TMA:
            rows = t.rows // 2 if t.resource == multicast else t.rows  # each block of a pair loads half
            key = (t.source, rows, t.panel_cols)
            if key not in maps:
                same = [k for k in maps if k[0] == t.source]
                tag = (f"_{t.rows}" if same else "") + (f"x{t.panel_cols}" if any(k[1] == t.rows for k in same) else "")
                maps[key] = TensorMap(f"tm_{t.source}{tag}", t.source, t.space, rows,
                                      t.panel_cols, t.panel, dtype)
        elif t.source not in pointer_inputs:
            pointer_inputs.append(t.source)
    st = sl.staging[0]
    # the TMA engine stores an output from the staging buffer: the accumulator as it is, or the one
    # output computed there in place -- where the tile takes turns through its staging, whose drains
    # read only the accumulator and its column slices (``staging_turns``; measured on an H100: a
    # drain in place gained 1-8 % there; through one whole-tile stage the wait for the engine to
    # read the stage before its release is not hidden behind another turn, and thread stores
    # measured as fast or faster)
    in_place = stored_in_place(d, acc, st.dtype) if st.turns > 1 else None
    by_tma = {o for o in outputs if splits == 1 and st.swizzled and out_spaces[o] == "MN" and d.resource(o).dtype == st.dtype
              and (copied_out(d, acc, d.resource(o).dtype) or o == in_place)}
    # each task that stores through TMA meets on a named barrier of its own (ids 2..15): the tasks
    # past that store with their threads
    stored_by = {t.name: {s.target for s in (t.schedule.steps() if t.schedule else ()) if s.op == "store"} & by_tma
                 for t in d.tasks}
    store_tasks = tuple(t for t, outs in stored_by.items() if outs)[:MAX_TMA_STORE_TASKS]
    tma_stores = tuple(o for o in outputs if any(o in stored_by[t] for t in store_tasks))
    for o in tma_stores:  # box: one swizzled panel of the staging buffer (all BM rows)
        maps[(o, bm, st.panel_cols)] = TensorMap(f"tm_{o}", o, "MN", bm, st.panel_cols, st.panel, st.dtype)
    n_wg = mma.num_warps // 4
    grid = (warpgroup_grid(bm, bn, n_wg) if arch == "sm_90a" else None) or (n_wg, 1)
    return Planned(GemmPlan(
        design=d, arch=arch, dtype=dtype, bm=bm, bn=bn, bk=bk, b_major=b_major, wg_grid=grid, split_k=splits,
        out_dtypes={o: d.resource(o).dtype for o in outputs}, acc=acc.name, a=a, b=b, mma_task=mma,
        tiles=tiles, staging=sl.staging[0], layout=layout, barrier_offset=sl.barrier_offset,
        smem_bytes=sl.total_bytes, aligned_by_hand=bool(sl.slack), num_threads=threads, launch_regs=launch,
        mma_wgs=tuple(range(mma.warp_idx // 4, (mma.warp_idx + mma.num_warps) // 4)), tensor_maps=tuple(maps.values()),
        gmem_spaces=gmem_spaces, outputs=tuple(outputs), pointer_inputs=tuple(pointer_inputs), problem=d.problem_dict,
        tma_stores=tma_stores, tma_store_tasks=store_tasks, in_place=tuple(o for o in tma_stores if o == in_place),
        cluster=cluster, multicast=multicast,
        peer_sets=tuple(bs.name for bs in layout.sets if bs.peers > 1), registers=register_layout(d),
        umma_releases=_umma_releases(d, mma, layout), stream_k=stream_k,
        turn_tasks=turn_tasks(d) if sl.staging[0].turns > 1 else (), turn_slices=tuple(sorted(slices))))


def _umma_releases(d: Design, mma: Task, layout: BarrierLayout) -> tuple[tuple[str, int], ...]:
    """(set, count): the umma consumer releases the MMA task's plan makes on each barrier set per
    phase (its steps' commit-arrives on an empty barrier)."""
    counts: dict[str, int] = {}
    for rs in resolve(d, layout)[mma.name].steps():
        for a in rs.actions:
            if a.after_mma and a.role is Role.EMPTY:
                counts[a.set] = counts.get(a.set, 0) + 1
    return tuple(counts.items())


def _accumulators(arch: str, bm: int, bn: int, n_wg: int) -> int:
    """fp32 accumulators each sm_90a MMA thread holds in registers (0 on sm_100a: tensor memory)."""
    grid = warpgroup_grid(bm, bn, n_wg) if arch == "sm_90a" else None
    return (bm // grid[0] // 64) * (bn // grid[1]) // 2 if grid else 0


__all__ = ["GemmPlan", "SPACES", "TensorMap", "Tile", "plan_gemm"]

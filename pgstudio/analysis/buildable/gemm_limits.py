"""What the GEMM generator builds, as data: lift a limit here, then teach ``codegen/gemm/`` to
render it (``gemm_sizes`` and ``gemm_checks`` turn each limit into a ``codegen.*`` diagnostic).

Operands are fp16 / bf16, or fp32 that the tensor cores read as tf32 (sm_90a ``wgmma ... .tf32``,
sm_100a ``kind::tf32``).  Every staged tile lives in shared memory as *panels*: rows of at most
128 bytes, swizzled (128-, 64- or 32-byte swizzle, the panel's row width), one panel after the
other along the tile's columns; an MMA instruction reads 32 bytes of K from each row (k16 of a
16-bit type, k8 of tf32).

>>> OPERAND_DTYPES, SWIZZLE_BYTES, SM90_ROWS_PER_WARPGROUP
(('float16', 'bfloat16', 'float32'), (32, 64, 128), (64, 128))
>>> panel_bytes(32, "float16"), panel_bytes(64, "float16"), panel_bytes(64, "float32")
(64, 128, 128)
"""

from __future__ import annotations

from ...model.targets import dtype_bytes

__all__ = [
    "OPERAND_DTYPES",
    "OUTPUT_DTYPES",
    "MN_MAJOR_DTYPES",
    "SWIZZLE_BYTES",
    "PANEL_BYTES",
    "KSTEP_BYTES",
    "BN_MULTIPLE",
    "MAX_BN",
    "SM90_ROWS_PER_WARPGROUP",
    "SM100_BM",
    "MAX_ACC_PER_THREAD",
    "REGS_PER_SM",
    "MAX_REGS_PER_THREAD",
    "BOOKKEEPING_REGS",
    "MAX_BOX_ROWS",
    "TMEM_COLUMNS",
    "CHUNK_ELEMS",
    "UNIT_BYTES",
    "TILE_LOOP",
    "K_LOOP",
    "B_MAJORS",
    "MAX_SPLIT_K",
    "STREAM_K_ARCHES",
    "STREAM_K_MIN_K_TILES",
    "TASK_BAR_BASE",
    "MAX_TMA_STORE_TASKS",
    "CLUSTER_SHAPES",
    "CLUSTER_ARCHES",
    "SWIZZLE_ROWS",
    "SPACES",
    "PROBLEM_KEYS",
    "panel_bytes",
    "launch_registers",
    "warpgroup_grid",
    "wgmma_in_flight",
    "accumulator_in_registers",
]

#: Operand element types the tensor-core path takes (wgmma / tcgen05.mma kind::f16, and tf32).
OPERAND_DTYPES: tuple[str, ...] = ("float16", "bfloat16", "float32")
#: Output element types the epilogue writes, per operand type (16-bit pairs, or float32).
OUTPUT_DTYPES: dict[str, tuple[str, ...]] = {"float16": ("float16", "float32"), "bfloat16": ("bfloat16", "float32"),
                                             "float32": ("float32",)}
#: Operand types whose B the tensor cores can read N-major (transposed): wgmma transposes 16-bit types only.
MN_MAJOR_DTYPES: tuple[str, ...] = ("float16", "bfloat16")
#: Row widths of a swizzled panel (the TMA / MMA swizzle modes); a tile row wider than the widest
#: is split into panels of that width.
SWIZZLE_BYTES: tuple[int, ...] = (32, 64, 128)
PANEL_BYTES = SWIZZLE_BYTES[-1]
#: Bytes of K one MMA instruction reads from each row of A and B (k16 of fp16 / bf16, k8 of tf32).
KSTEP_BYTES = 32
#: BN is a whole number of 64-column steps (a 16-bit N-major B panel), and one wgmma (m64nNk16)
#: or tcgen05.mma covers the columns of one MMA warpgroup.
BN_MULTIPLE = 64
MAX_BN = 256
#: sm_90a: rows one MMA warpgroup covers (one or two m64 wgmma blocks).  Warpgroups split BM
#: first; when BM has fewer 64-row blocks than there are warpgroups, they split BN too, in steps
#: of ``BN_MULTIPLE`` columns.
SM90_ROWS_PER_WARPGROUP: tuple[int, ...] = (64, 128)
#: sm_100a: BM of the cta_group::1 tcgen05.mma the generator issues.
SM100_BM: tuple[int, ...] = (128,)
#: sm_90a: fp32 accumulators one MMA thread may hold (a 64 x 256 block per warpgroup).
MAX_ACC_PER_THREAD = 128
#: ptxas allocates every role branch within the launch bound's registers per thread (65536 /
#: threads, at most 255, in steps of 8), unless the design asks for a setmaxnreg layout
#: (``registers.py``); the accumulator limit below reads the launch count either way.  Beside
#: its accumulators an MMA thread needs about 24 more.
REGS_PER_SM = 65536
MAX_REGS_PER_THREAD = 255
BOOKKEEPING_REGS = 24
#: Rows of one TMA box.
MAX_BOX_ROWS = 256
#: Tensor-memory columns per CTA (sm_100a): BN x accumulator stages must fit.
TMEM_COLUMNS = 512
#: The epilogue computes and stores chunks of 8 elements (16 bytes of a 16-bit output); N and K
#: are multiples of it, so a chunk is either inside the tensor or outside it.
CHUNK_ELEMS = 8
#: Thread loaders (async producers) move 16-byte units.
UNIT_BYTES = 16
#: The loops the generator knows: persistent output tiles, and the k loop inside them.
TILE_LOOP, K_LOOP = "num_tiles", "num_k_tiles"
#: Where B is stored: "mn" K x N row-major (D = A @ B), "k" N x K (D = A @ B^T).  A design says so
#: with the problem key ``b_major``; ``emit(b_major=...)`` overrides it.
B_MAJORS = ("mn", "k")
#: Split-K (problem key ``SPLIT_K``): output tiles whose K range is cut into this many parts,
#: each a work unit of the persistent loop; the last unit of a tile to finish adds the others'
#: fp32 partials (kept in a global workspace) and stores the tile.
MAX_SPLIT_K = 16
#: Stream-K (problem key ``STREAM_K`` = 1): the output tiles past the last full wave of the
#: persistent grid are shared among its blocks by k tiles, each block at least this many (a
#: shorter share costs its partial sums' round trip more than it saves); when that leaves fewer
#: blocks than tiles, every tile stays whole.  sm_90a only (the fp32 partials go from the MMA
#: warpgroups' registers); not with split-K or clusters.
STREAM_K_MIN_K_TILES = 8
STREAM_K_ARCHES: tuple[str, ...] = ("sm_90a",)
#: Named barriers (16 per block): 0 is __syncthreads, 1 the MMA task's; each task that stores an
#: output through TMA takes one of the rest.
TASK_BAR_BASE = 2
MAX_TMA_STORE_TASKS = 16 - TASK_BAR_BASE
#: Thread-block clusters (problem keys ``CLUSTER_M``, ``CLUSTER_N``): a pair of blocks along N
#: computes neighbouring tiles of one tile row and shares its A tile, along M it shares B; each
#: block loads half of the shared tile's rows for both (TMA multicast), and a stage of it is free
#: again once the MMAs of both blocks released it.  sm_90a only; not with split-K.
CLUSTER_SHAPES: tuple[tuple[int, int], ...] = ((1, 1), (1, 2), (2, 1))
CLUSTER_ARCHES: tuple[str, ...] = ("sm_90a",)
#: A multicast half keeps the swizzle pattern's rows together (8 rows of a 128-byte panel).
SWIZZLE_ROWS = 8

#: Problem-dimension spaces of a tile: (rows, cols).
SPACES = {"MK": ("M", "K"), "KN": ("K", "N"), "NK": ("N", "K"), "MN": ("M", "N")}
PROBLEM_KEYS = ("M", "N", "K", "BM", "BN", "BK")


def panel_bytes(cols: int, dtype: str) -> int:
    """Row width in bytes of the panels of a tile ``cols`` elements wide: 128, or the whole row
    when it is narrower (64 or 32 bytes); 0 when the row cannot be swizzled (another width)."""
    row = cols * dtype_bytes(dtype)
    if row % PANEL_BYTES == 0:
        return PANEL_BYTES
    return row if row in SWIZZLE_BYTES else 0


def launch_registers(num_warps: int) -> tuple[int, int]:
    """(threads, registers per thread) of a block of ``num_warps`` warps rounded up to warpgroups.

    >>> launch_registers(12)
    (384, 168)
    """
    threads = -(-num_warps // 4) * 4 * 32
    return threads, min(MAX_REGS_PER_THREAD, REGS_PER_SM // threads) // 8 * 8


def warpgroup_grid(bm: int, bn: int, n_wg: int) -> tuple[int, int] | None:
    """How ``n_wg`` sm_90a MMA warpgroups tile a BM x BN block: (along M, along N), each covering
    64 or 128 rows and a multiple of ``BN_MULTIPLE`` columns; None when no split does.

    >>> warpgroup_grid(128, 256, 2), warpgroup_grid(64, 128, 2), warpgroup_grid(64, 64, 2)
    ((2, 1), (1, 2), None)
    """
    for wg_m in range(n_wg, 0, -1):
        if n_wg % wg_m or bm % wg_m or bm // wg_m not in SM90_ROWS_PER_WARPGROUP:
            continue
        wg_n = n_wg // wg_m
        if bn % wg_n == 0 and (bn // wg_n) % BN_MULTIPLE == 0:
            return wg_m, wg_n
    return None


#: wgmma groups (k tiles) an sm_90a MMA warpgroup keeps in flight before it waits: a stage is
#: given back (its umma release) this many k tiles after its MMAs were issued; the deeper count
#: from ``DEEP_STAGES`` stages on.  Measured on an H100 (bf16, fresh poisoned data, interleaved
#: with cuBLAS): two groups in flight run 128 x 64 x 64 at 8 stages 1.4 % faster and 128 x 256 x 32
#: at 6 stages 6 % faster, but cost 128 x 128 x 64 at 5 stages 10 % and every 3-stage tile 25-50 %
#: (the stages held back leave the loaders too few to fill).
WGMMA_IN_FLIGHT, WGMMA_IN_FLIGHT_DEEP, DEEP_STAGES = 1, 2, 6


def wgmma_in_flight(stages: int) -> int:
    """k tiles of wgmma an sm_90a MMA warpgroup leaves in flight (``wgmma.wait_group`` N), and so
    how many k tiles late it gives each stage back: ``WGMMA_IN_FLIGHT``, or
    ``WGMMA_IN_FLIGHT_DEEP`` from ``DEEP_STAGES`` stages on, at most ``stages - 1`` (the stage
    being read and the ones not yet given back must leave the loaders one to fill).  The
    generator, the simulator's cost model and the kernel-time model read this one rule."""
    want = WGMMA_IN_FLIGHT_DEEP if stages >= DEEP_STAGES else WGMMA_IN_FLIGHT
    return max(0, min(want, stages - 1))


def accumulator_in_registers(arch: str) -> bool:
    """Whether an MMA task built for ``arch`` accumulates in registers, so that it takes its
    accumulator's staging buffer (the umma producer's acquire of the accumulator resource) only
    at commit, after the whole k loop, where it writes the registers there.  sm_90a (wgmma): yes
    -- the next tile's mainloop runs while the epilogue still stores the last one; sm_100a
    (tcgen05): no, the MMA accumulates in tensor memory, which it must hold from the first k
    tile.  The generator and the simulator read this one rule."""
    return arch == "sm_90a"


def sliced_by_columns(space: str) -> bool:
    """Whether the store of an output in ``space`` is cut into N-tile column slices: an output
    that does not depend on the N tile (its space has no N, e.g. fork_gemm_act's relu(A) in
    "MK") is read by every N-tile column of the persistent tile loop, so each column stores its
    own contiguous slice of every k tile and each element is written once, with no column's task
    holding a stage for a whole tile's stores.  The emitter (``codegen.gemm.epilogue``) and the
    simulator's work of the store (``column_slices``, read by ``analysis.program``) read this
    one rule."""
    return "N" not in SPACES[space]


def column_slices(space: str, problem: dict) -> int:
    """Slices of one tile's store of an output in ``space``: ceil(N / BN) where
    ``sliced_by_columns``, else one."""
    n, bn = problem.get("N"), problem.get("BN")
    if not sliced_by_columns(space) or not (isinstance(n, int) and isinstance(bn, int) and bn > 0):
        return 1
    return max(1, -(-n // bn))


def stream_k_units(tiles: int, k_tiles: int, grid: int) -> tuple[int, int]:
    """(data-parallel tiles, stream-K workers) of a stream-K GEMM on ``grid`` persistent blocks:
    the tiles of the full waves run whole, one per block at a time; the rest (fewer than
    ``grid``) have their k tiles shared evenly among the workers, each taking at least
    ``STREAM_K_MIN_K_TILES`` and less than one tile's worth (a worker's share touches at most two
    tiles).  (tiles, 0) when the tiles fill whole waves or the rest is too short to share.  The
    generated scheduler computes the same in the kernel (``codegen.gemm.scheduler``) and the
    kernel-time model reads it (``analysis.predict``)."""
    dp = tiles // grid * grid
    rest = tiles - dp
    workers = min(grid, rest * k_tiles // STREAM_K_MIN_K_TILES)
    if rest == 0 or workers < rest:
        return tiles, 0
    return dp, workers

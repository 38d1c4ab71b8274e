"""What the GEMM generator builds, as data: lift a limit here, then teach ``codegen/gemm.py`` to
render it (``gemm_checks`` turns each limit into a ``codegen.*`` diagnostic).

>>> OPERAND_DTYPES, BK_MULTIPLE, SM90_ROWS_PER_WARPGROUP
(('float16', 'bfloat16'), 64, (64, 128))
"""

from __future__ import annotations

#: Operand element types the tensor-core path takes (wgmma / tcgen05.mma kind::f16).
OPERAND_DTYPES: tuple[str, ...] = ("float16", "bfloat16")
#: Output element types the epilogue writes, per operand type (it packs 16-bit pairs).
OUTPUT_DTYPES: dict[str, tuple[str, ...]] = {"float16": ("float16",), "bfloat16": ("bfloat16",)}
#: 128-byte swizzle: one panel row is 128 bytes = 64 16-bit elements; tiles are panels of 64 columns.
PANEL_COLS = 64
#: BK is a whole number of panels (the k step of one stage).
BK_MULTIPLE = PANEL_COLS
#: BN is a whole number of panels, and one wgmma (m64nNk16) or tcgen05.mma covers all of it.
BN_MULTIPLE = PANEL_COLS
MAX_BN = 256
#: sm_90a: rows one MMA warpgroup covers (one or two m64 wgmma blocks).
SM90_ROWS_PER_WARPGROUP: tuple[int, ...] = (64, 128)
#: sm_100a: BM of the cta_group::1 tcgen05.mma the generator issues.
SM100_BM: tuple[int, ...] = (128,)
#: sm_90a: fp32 accumulators one MMA thread may hold (a 64 x 256 block per warpgroup).
MAX_ACC_PER_THREAD = 128
#: ptxas allocates every role branch within the launch bound's registers per thread (65536 /
#: threads, at most 255, in steps of 8): setmaxnreg cannot give the MMA warpgroups more at
#: compile time, so it is not used.  Beside its accumulators an MMA thread needs about 24 more.
REGS_PER_SM = 65536
MAX_REGS_PER_THREAD = 255
BOOKKEEPING_REGS = 24
#: Rows of one TMA box.
MAX_BOX_ROWS = 256
#: Tensor-memory columns per CTA (sm_100a): BN x accumulator stages must fit.
TMEM_COLUMNS = 512
#: The epilogue and async loaders move 16-byte chunks: 8 16-bit elements per thread and step.
CHUNK_ELEMS = 8
#: The loops the generator knows: persistent output tiles, and the k loop inside them.
TILE_LOOP, K_LOOP = "num_tiles", "num_k_tiles"
#: Options of plan_gemm / emit_gemm.
B_MAJORS = ("mn", "k")

#: Problem-dimension spaces of a tile: (rows, cols).
SPACES = {"MK": ("M", "K"), "KN": ("K", "N"), "NK": ("N", "K"), "MN": ("M", "N")}
PROBLEM_KEYS = ("M", "N", "K", "BM", "BN", "BK")


def launch_registers(num_warps: int) -> tuple[int, int]:
    """(threads, registers per thread) of a block of ``num_warps`` warps rounded up to warpgroups.

    >>> launch_registers(12)
    (384, 168)
    """
    threads = -(-num_warps // 4) * 4 * 32
    return threads, min(MAX_REGS_PER_THREAD, REGS_PER_SM // threads) // 8 * 8

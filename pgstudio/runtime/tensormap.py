"""CUtensorMap for TMA: encode a 2-D tiled map with ``cuTensorMapEncodeTiled`` and pass it by value.

A generated GEMM kernel declares each map as ``const __grid_constant__ TmaDesc tm_x`` (a 64-byte
aligned struct of 16 u64, the byte image of a CUtensorMap) and hands ``&tm_x`` to
``cp.async.bulk.tensor``.  The host encodes the map once per tensor (it embeds the device
pointer: rebuild it when the array is reallocated) and the launch copies its 128 bytes into the
kernel's parameter space.

Tiles are read in boxes of ``box_rows`` rows x ``box_cols`` elements -- one swizzled panel of the
tile: 128 bytes wide (64 16-bit or 32 float32 elements) with 128-byte swizzle, or a narrower
panel with 64- or 32-byte swizzle; elements outside the tensor are filled with zeros, which is
what makes shapes that are not tile multiples correct.
"""

from __future__ import annotations

import ctypes

from ..errors import DesignError, GpuUnavailable
from ._cupy import WITHOUT_GPU

#: Elements of one full box row: 128 bytes of 16-bit elements.
BOX_COLS = 64
_DTYPE_ENUM = {"float16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", "bfloat16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
               "float32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32"}
_SIZE = {"float16": 2, "bfloat16": 2, "float32": 4}
_SWIZZLE = {128: "CU_TENSOR_MAP_SWIZZLE_128B", 64: "CU_TENSOR_MAP_SWIZZLE_64B", 32: "CU_TENSOR_MAP_SWIZZLE_32B"}


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        raise GpuUnavailable("tensor maps need cuda-bindings: pip install 'pgstudio[gpu]'") from exc
    return driver


class TmaDesc(ctypes.Structure):
    """The 128-byte CUtensorMap image, as the kernel parameter is declared."""

    _fields_ = [("opaque", ctypes.c_uint64 * 16)]


def check_tensor(name: str, rows: int, cols: int, box_rows: int, ptr: int, esz: int = 2) -> None:
    """The cuTensorMapEncodeTiled rules that a user's shape can break, as clear errors."""
    if cols * esz % 16:
        raise DesignError(f"tensor {name!r} is {rows} x {cols}: a TMA row stride must be a multiple of 16 bytes, "
                          f"so the inner dimension must be a multiple of {16 // esz} {esz * 8}-bit elements "
                          f"(got {cols})", code="tma.stride", hint=f"pad the inner dimension to a multiple of {16 // esz}")
    if not 1 <= box_rows <= 256:
        raise DesignError(f"tensor {name!r}: a TMA box has 1..256 rows, got {box_rows}", code="tma.box",
                          hint="use tiles of at most 256 rows")
    if ptr % 16:
        raise DesignError(f"tensor {name!r}: its address must be 16-byte aligned for TMA", code="tma.align",
                          hint="allocate it with CuPy (256-byte aligned)")


def check_map(rows: int, cols: int, box_rows: int, dtype: str, name: str = "tensor", *, box_cols: int = BOX_COLS,
              swizzle: int = 128, ptr: int = 0) -> None:
    """Every rule ``encode_2d`` checks before it calls the driver, as clear errors: what a GPU run
    refuses, the null runtime (``runtime.null``) refuses too."""
    if dtype not in _DTYPE_ENUM:
        raise DesignError(f"tensor {name!r}: TMA maps here take {', '.join(_DTYPE_ENUM)}, got {dtype!r}",
                          code="tma.dtype")
    if swizzle not in _SWIZZLE or box_cols * _SIZE[dtype] != swizzle:
        raise DesignError(f"tensor {name!r}: a box row of {box_cols} {dtype} elements is not one {swizzle}-byte swizzle "
                          f"span (spans: {', '.join(map(str, _SWIZZLE))} bytes)", code="tma.box")
    check_tensor(name, rows, cols, box_rows, ptr, _SIZE[dtype])


#: Bytes of an L2 line: rows that start on one can be promoted to the pair of lines they share.
L2_LINE = 128


def l2_promotion(row_bytes: int, ptr: int = 0) -> int:
    """Bytes the L2 fetches per miss of this map's loads (``CU_TENSOR_MAP_L2_PROMOTION_*``).

    A 128-byte box row of a tensor whose rows start on 128-byte lines is one line, and promoting
    its misses to 256 bytes brings the neighbouring panel's line, which the same tile reads next
    (measured on an H100: 0.992x against 0.986x the best library at 4224 x 3072 x 1024).  When the
    rows do not start on a line (a row pitch of 6000 bytes: N = 3000 16-bit elements) each box row
    straddles two lines and 256-byte promotion fetches lines no box row wants: the same kernel at
    4168 x 3000 x 1000 ran 0.683x with 256-byte promotion against 0.773x with 128-byte
    (0.776x / 0.854x in a 1 x 2 cluster)."""
    return 256 if row_bytes % L2_LINE == 0 and ptr % L2_LINE == 0 else 128


def encode_2d(ptr: int, rows: int, cols: int, box_rows: int, dtype: str, name: str = "tensor", *,
              box_cols: int = BOX_COLS, swizzle: int = 128) -> TmaDesc:
    """A row-major [rows x cols] tensor at device address ``ptr``, read in {box_cols, box_rows}
    boxes with ``swizzle``-byte swizzle (box_cols x element size bytes) and zero fill."""
    check_map(rows, cols, box_rows, dtype, name, box_cols=box_cols, swizzle=swizzle, ptr=ptr)
    cu = _driver()
    try:
        cu.cuInit(0)
    except RuntimeError as exc:  # the bindings load libcuda on their first call: no driver, no map
        raise GpuUnavailable(f"tensor {name!r}: TMA maps are encoded by the NVIDIA driver, which does not load here "
                             f"({exc}); {WITHOUT_GPU}") from exc
    u64, u32 = cu.cuuint64_t, cu.cuuint32_t
    err, tmap = cu.cuTensorMapEncodeTiled(
        getattr(cu.CUtensorMapDataType, _DTYPE_ENUM[dtype]), u32(2), ptr,
        [u64(cols), u64(rows)],  # global dims, innermost first
        [u64(cols * _SIZE[dtype])],  # byte stride of dim 1
        [u32(box_cols), u32(box_rows)],
        [u32(1), u32(1)],
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        getattr(cu.CUtensorMapSwizzle, _SWIZZLE[swizzle]),
        getattr(cu.CUtensorMapL2promotion, f"CU_TENSOR_MAP_L2_PROMOTION_L2_{l2_promotion(cols * _SIZE[dtype], ptr)}B"),
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise DesignError(f"cuTensorMapEncodeTiled failed for tensor {name!r} ({rows} x {cols} {dtype}, box "
                          f"{box_rows} x {box_cols}): {getattr(err, 'name', err)}", code="tma.encode")
    desc = TmaDesc()
    for i, word in enumerate(tmap.opaque):
        desc.opaque[i] = int(word)
    return desc


__all__ = ["BOX_COLS", "L2_LINE", "TmaDesc", "check_map", "check_tensor", "encode_2d", "l2_promotion"]

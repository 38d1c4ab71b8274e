"""Where a 16-byte unit of a staged GEMM tile lives in shared memory, as CUDA C++ expressions.

A stage of a tile is a sequence of *panels* (``analysis.buildable.gemm_limits``): panel ``q`` holds
columns ``q * panel_cols ..`` of every row, its rows ``panel`` bytes apart (128, 64 or 32).  Inside
a row the 16-byte units are permuted the way TMA's swizzle modes write them and the MMA
descriptors read them: unit ``u`` of row ``r`` sits at unit ``u ^ f(r)``, where ``f`` takes the row
bits above the panel's 8-row (128 B), 4-row pairs (64 B) or 2-row quads (32 B) pattern:

=========  ====================  ================================================
 panel      units per row         unit position
=========  ====================  ================================================
 128 B      8                     ``u ^ (r & 7)``
 64 B       4                     ``u ^ ((r >> 1) & 3)``
 32 B       2                     ``u ^ ((r >> 2) & 1)``
=========  ====================  ================================================

(CuTe's ``Swizzle<3,4,3>``, ``Swizzle<2,4,3>`` and ``Swizzle<1,4,3>`` over byte addresses; a
panel starts at a multiple of its pattern's 1024 / 512 / 256 bytes.)

>>> xor(64, "r")
'((r >> 1) & 3)'
"""

from __future__ import annotations

_XOR = {128: "({r} & 7)", 64: "(({r} >> 1) & 3)", 32: "(({r} >> 2) & 1)"}


def xor(panel: int, row: str) -> str:
    """The unit permutation of row ``row`` in a ``panel``-byte swizzled panel."""
    return _XOR[panel].format(r=row)


def unit_addr(stage: str, panel: int, panel_stride: int, row: str, byte_col: str) -> str:
    """Shared-memory address (u32) of the 16-byte unit at byte ``byte_col`` (a multiple of 16) of
    row ``row`` in the stage starting at ``stage``: its panel, its row, its swizzled unit."""
    return (f"({stage} + (u32)(({byte_col}) / {panel}) * {panel_stride}u + (u32)({row}) * {panel}u + "
            f"(u32)((((({byte_col}) % {panel}) >> 4) ^ {xor(panel, row)}) << 4))")


__all__ = ["unit_addr", "xor"]

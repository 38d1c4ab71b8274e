"""16-bit tensors as GEMM kernels and library peers keep them: uint16 bits (bfloat16 has no NumPy /
CuPy dtype).

``to_bits`` rounds float32 to the storage of a dtype (round to nearest even, as the kernels'
stores do), ``to_float32`` reads it back; float32 data is its own storage.  The rounding is
``runtime.data``'s (one rule for streaming and GEMM data); these two only view float16 as its
uint16 bits.  Both work on CuPy arrays and on NumPy ones (the CPU tests'), whichever they are given.
"""

from __future__ import annotations

from typing import Any

from . import data


def array_module(a: Any) -> Any:
    """The module of array ``a``: NumPy for a NumPy array, else CuPy (imported on first use)."""
    if type(a).__module__.split(".")[0] == "numpy":
        import numpy
        return numpy
    from ._cupy import cupy
    return cupy()


def to_bits(x32, dtype: str):
    """float32 array -> storage of ``dtype``: uint16 bits of a 16-bit type (round to nearest even),
    or float32 itself."""
    xp = array_module(x32)
    if dtype == "float32":
        return x32.astype(xp.float32)
    if dtype == "float16":
        return data.from_float32(xp, x32, dtype).view(xp.uint16)
    return data.from_float32(xp, x32, dtype)


def to_float32(bits, dtype: str):
    """Storage of ``dtype`` (uint16 bits, or float32) -> float32."""
    xp = array_module(bits)
    if dtype == "float32":
        return bits.astype(xp.float32, copy=False)
    if dtype == "float16":
        return data.to_float32(xp, bits.view(xp.float16), dtype)
    return data.to_float32(xp, bits, dtype)


__all__ = ["array_module", "to_bits", "to_float32"]

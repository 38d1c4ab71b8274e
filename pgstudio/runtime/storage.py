"""16-bit tensors as CuPy keeps them: uint16 bits (bfloat16 has no NumPy / CuPy dtype).

``to_bits`` rounds float32 to the storage of a dtype (round to nearest even, as the kernels'
stores do), ``to_float32`` reads it back; float32 data is its own storage.  One place for both,
so the GEMM runner, the library peers and the tests read and write 16-bit data the same way.
"""

from __future__ import annotations

from ._cupy import cupy


def to_bits(x32, dtype: str):
    """float32 CuPy array -> storage of ``dtype``: uint16 bits of a 16-bit type (round to nearest
    even), or float32 itself."""
    cp = cupy()
    if dtype == "float32":
        return x32.astype(cp.float32)
    if dtype == "float16":
        return x32.astype(cp.float16).view(cp.uint16)
    u = x32.astype(cp.float32).view(cp.uint32)
    return ((u + cp.uint32(0x7FFF) + ((u >> 16) & cp.uint32(1))) >> 16).astype(cp.uint16)


def to_float32(bits, dtype: str):
    """Storage of ``dtype`` (uint16 bits, or float32) -> float32."""
    cp = cupy()
    if dtype == "float32":
        return bits.astype(cp.float32, copy=False)
    if dtype == "float16":
        return bits.view(cp.float16).astype(cp.float32)
    return (bits.astype(cp.uint32) << 16).view(cp.float32)


__all__ = ["to_bits", "to_float32"]

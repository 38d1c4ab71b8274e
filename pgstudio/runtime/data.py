"""Test data for a run: element storage, float32 views, fresh random inputs, poisoned outputs.

Functions take the array module ``xp`` (CuPy on a GPU; NumPy works too, which is how the CPU
tests check the conversions).  bf16 has no CuPy dtype, so it is stored as raw ``uint16`` and
converted by bit arithmetic (round to nearest even, like the kernels' ``cvt.rn``).
"""

from __future__ import annotations

import os
from typing import Any

from ..model.targets import DTYPE_BYTES

#: Array dtype holding each element type.
STORAGE = {"float32": "float32", "float16": "float16", "bfloat16": "uint16"}
ITEMSIZE = DTYPE_BYTES
#: A bf16 quiet NaN.
BF16_NAN = 0x7FC0


def storage_dtype(xp: Any, dtype: str):
    return getattr(xp, STORAGE[dtype])


def to_float32(xp: Any, a: Any, dtype: str) -> Any:
    """Stored elements as float32 (exact: every fp16 / bf16 value is a float32 value)."""
    if dtype == "float32":
        return a
    if dtype == "float16":
        return a.astype(xp.float32)
    return xp.left_shift(a.astype(xp.uint32), xp.uint32(16)).view(xp.float32)


def from_float32(xp: Any, f: Any, dtype: str) -> Any:
    """float32 values rounded to the element type (nearest even; NaN stays NaN)."""
    if dtype == "float32":
        return f.astype(xp.float32, copy=False)
    if dtype == "float16":
        return f.astype(xp.float16)
    u = f.astype(xp.float32, copy=False).view(xp.uint32)
    sixteen, one = xp.uint32(16), xp.uint32(1)
    up = xp.add(xp.add(u, xp.uint32(0x7FFF)), xp.bitwise_and(xp.right_shift(u, sixteen), one))
    rounded = xp.right_shift(up, sixteen).astype(xp.uint16)
    return xp.where(xp.isnan(f), xp.uint16(BF16_NAN), rounded)


_UNSEEDED: dict[str, Any] = {}


def rng(xp: Any, seed: int | None = None) -> Any:
    """The generator every workload draws its inputs from.  Seeded, the same values on every run;
    unseeded, fresh values each draw from one generator per process seeded by the OS (on the GPU
    CuPy's ``RandomState``, built once: setting up its generator states costs milliseconds, more
    than drawing a workload)."""
    if xp.__name__ == "numpy":  # a host workload
        return xp.random.default_rng(seed)
    if seed is not None:
        return xp.random.RandomState(seed)
    if xp.__name__ not in _UNSEEDED:
        _UNSEEDED[xp.__name__] = xp.random.RandomState(int.from_bytes(os.urandom(4), "little"))
    return _UNSEEDED[xp.__name__]


def random_float32(xp: Any, n: int, seed: int | None) -> Any:
    """``n`` standard-normal float32 values (negative ones too, so max/relu are exercised)."""
    return rng(xp, seed).standard_normal(n, dtype=xp.float32)


def random_input(xp: Any, n: int, dtype: str, seed: int | None) -> Any:
    """Fresh random elements of ``dtype`` (as stored)."""
    f = random_float32(xp, n, seed)
    return f if dtype == "float32" else from_float32(xp, f, dtype)


def poison(xp: Any, a: Any) -> None:
    """Fill with all-ones bytes: NaN in every float type, so an unwritten element cannot pass."""
    if xp.__name__ == "numpy":
        a.view(xp.uint8).fill(0xFF)
    else:
        a.data.memset_async(0xFF, a.nbytes)


def empty(xp: Any, n: int, dtype: str) -> Any:
    return xp.empty(n, dtype=storage_dtype(xp, dtype))


__all__ = ["BF16_NAN", "ITEMSIZE", "STORAGE", "empty", "from_float32", "poison", "random_float32", "random_input", "rng",
           "storage_dtype", "to_float32"]

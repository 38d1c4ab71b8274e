"""What a design is built for: architectures, their shared memory, element types and sizes.

The one home of these constants: the rules, the layouts, the code generators, the runtime and
the studio read them from here, so "what fits" and "what exists" are decided in one place.

>>> smem_capacity("sm_90a")
232448
>>> DTYPE_BYTES["bfloat16"]
2
"""

from __future__ import annotations

#: Architectures pgstudio generates kernels for: sm_90a (H100 / H200) runs here; sm_100a
#: (B200) compiles through NVRTC.
ARCHES: tuple[str, ...] = ("sm_90a", "sm_100a")

#: The target a design is checked and built for when it names none.
DEFAULT_TARGETS: tuple[str, ...] = ("sm_90a",)

#: Dynamic shared memory one block may use with the opt-in limit (cudaFuncAttributeMaxDynamicSharedMemorySize).
SMEM_CAPACITY_BY_ARCH: dict[str, int] = {"sm_90a": 232448, "sm_100a": 232448}

#: The capacity the layouts report against when no target is named (the smallest of the targets).
SMEM_CAPACITY: int = min(SMEM_CAPACITY_BY_ARCH.values())

#: Data buffers in shared memory start on this boundary (128-byte-swizzled TMA tiles need it).
DATA_ALIGN: int = 1024

#: Turns a GEMM tile may take through an accumulator stage's buffer, fewest first: a stage holds
#: the tile's columns, half or a quarter of them (``analysis.smem_layout.Staging.turns``), and a
#: residual staged beside it comes in as many column slices (``examples.merge_gemm_resadd(turns=)``).
STAGING_TURNS: tuple[int, ...] = (1, 2, 4)


def residual_turns_ok(turns: object, bn: int) -> bool:
    """True when a residual of a BN-column tile can come in ``turns`` column slices (one of
    ``STAGING_TURNS``, dividing BN)."""
    return not isinstance(turns, bool) and turns in STAGING_TURNS and bn % turns == 0


#: Element types and their sizes in bytes.
DTYPE_BYTES: dict[str, int] = {"float32": 4, "float16": 2, "bfloat16": 2}

#: Element types a resource may have.
DTYPES: tuple[str, ...] = tuple(DTYPE_BYTES)


def smem_capacity(arch: str) -> int:
    """Bytes of dynamic shared memory a block of ``arch`` may use."""
    return SMEM_CAPACITY_BY_ARCH[arch]


def dtype_bytes(dtype: str, default: int = 4) -> int:
    """Size of one ``dtype`` element (``default`` for an unknown name, which a rule reports)."""
    return DTYPE_BYTES.get(dtype, default)


__all__ = ["ARCHES", "DATA_ALIGN", "DEFAULT_TARGETS", "DTYPES", "DTYPE_BYTES", "SMEM_CAPACITY", "SMEM_CAPACITY_BY_ARCH",
           "STAGING_TURNS", "dtype_bytes", "residual_turns_ok", "smem_capacity"]

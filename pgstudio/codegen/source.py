"""KernelSource: the code generator's output, the runtime's input (render -> compile -> run).

Plain data: the CUDA C++ text, the entry point, the launch shape and shared memory it needs,
the kernel parameters in order, and a map from generated lines back to design elements (so a
compiler error or a watchdog record can point at the task / resource / group it came from).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

__all__ = ["KernelParam", "KernelSource"]


@dataclass(frozen=True)
class KernelParam:
    """One kernel argument, in order: a gmem tensor pointer, a size, the watchdog record ..."""

    name: str
    kind: str  # "ptr" | "i64" | "i32" | "u64" | "tensormap" | "watchdog"
    dtype: str = ""  # element type of a pointer
    resource: str = ""  # the design element it belongs to


@dataclass(frozen=True)
class KernelSource:
    design: str
    code: str
    entry: str
    smem_bytes: int
    block: tuple[int, int, int]
    grid: tuple[int, int, int] | None = None  # None: persistent, one block per SM (decided at launch)
    params: tuple[KernelParam, ...] = ()
    line_map: tuple[tuple[int, str], ...] = ()  # (1-based line, design element) pairs
    arch: str = "sm_90a"
    options: tuple[str, ...] = ()
    meta: tuple[tuple[str, object], ...] = field(default=())

    @property
    def key(self) -> str:
        """Cache key: the source and the options (tinygrad-style compile cache)."""
        h = hashlib.sha256(self.code.encode())
        h.update("\0".join((self.arch, *self.options)).encode())
        return h.hexdigest()[:24]

    @property
    def info(self) -> dict[str, object]:
        """``meta`` as a dict (what the generator recorded for the runtime: dtype, tile, wait sites ...)."""
        return dict(self.meta)

    def element_at(self, line: int) -> str | None:
        """The design element that generated ``line`` (nearest mapped line at or above it)."""
        best = None
        for ln, elem in self.line_map:
            if ln <= line:
                best = elem
        return best

"""The launch contract (``runtime.launch``) for streaming kernels: their workload and launcher.

``StreamWorkload.make(design, n, dtype)`` draws fresh random inputs of ``n`` elements each and
empty outputs; ``check`` compares every output with the CuPy reference of the same design in one
pass on the GPU (``verify.compare``).  ``StreamLauncher(src)`` loads the kernel and launches it on a
persistent grid -- every SM full (``occupancy``), never more blocks than tiles -- with its watchdog
record, which ``check_watchdog`` reads back as the barrier that hung.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..codegen.ptx import RECORD_INTS
from ..codegen.source import KernelSource
from ..errors import PgStudioError
from ..model.design import Design
from . import data
from ._cupy import cupy, sm_count
from .compile import LoadedKernel, load
from .launch import STREAM, Launcher, Workload, element_count, stream_bytes
from .reference import inputs as input_names
from .reference import outputs as output_names
from .reference import reference
from .verify import Check, VerificationError, compare
from .watchdog import raise_if_hung

#: Default watchdog budget per wait (a healthy wait takes microseconds).
BUDGET_MS = 1000.0

@dataclass
class StreamWorkload(Workload):
    """The arrays one streaming launch reads and writes, shared by every contender of a benchmark."""

    design: Design
    n: int
    dtype: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    _ref: dict[str, Any] | None = None
    xp: Any = None  # the array module: CuPy (None), or NumPy for a host workload

    kind = STREAM

    @classmethod
    def make(cls, design: Design, n: int, dtype: str, seed: int | None = None,
             xp: Any = None) -> "StreamWorkload":
        """Fresh random inputs and empty outputs of ``n`` elements: on the GPU, or in host memory
        (``xp=numpy``, whose reference and check run on the host by the same rules)."""
        cp = xp if xp is not None else cupy()
        n = element_count(n)
        rng = data.rng(cp, seed)
        ins = {}
        for name in input_names(design):
            f = rng.standard_normal(n, dtype=cp.float32)
            ins[name] = f if dtype == "float32" else data.from_float32(cp, f, dtype)
        outs = {name: data.empty(cp, n, dtype) for name in output_names(design)}
        return cls(design, n, dtype, ins, outs, xp=xp)

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.n,)

    @property
    def bytes_moved(self) -> int:
        """Each input read once and each output written once."""
        return stream_bytes(self.n, self.dtype, len(self.inputs) + len(self.outputs))

    @property
    def amount(self) -> float:
        return self.bytes_moved

    def _xp(self) -> Any:
        return self.xp if self.xp is not None else cupy()

    def poison(self) -> None:
        cp = self._xp()
        for a in self.outputs.values():
            data.poison(cp, a)

    def reference(self) -> dict[str, Any]:
        if self._ref is None:
            self._ref = reference(self.design, self.inputs, self._xp(), self.dtype)
        return self._ref

    def check(self, label: str = "") -> tuple[Check, ...]:
        """Compare every output with the reference; raise ``VerificationError`` on a mismatch."""
        refs = self.reference()
        checks = tuple(compare(self.outputs[o], refs[o], self.dtype, o) for o in self.outputs)
        bad = [c for c in checks if not c.ok]
        if bad:
            raise VerificationError(f"{label or self.design.name} computed wrong values (n={self.n}, "
                                    f"{self.dtype}): " + "; ".join(map(str, bad)))
        return checks


def blocks_that_fit(threads: int, registers: int, smem_bytes: int, limits: Mapping[str, int]) -> int:
    """Blocks of ``threads`` threads, ``registers`` per thread and ``smem_bytes`` of shared memory
    that one SM holds, by its ``limits`` (CUDA device attribute names; the H200's by default).

    >>> blocks_that_fit(256, 32, 32768, {})  # shared memory allows 6 of them
    6
    """
    regs_per_warp = -(-max(registers, 1) * 32 // 256) * 256
    by_regs = limits.get("MaxRegistersPerMultiprocessor", 65536) // (regs_per_warp * -(-threads // 32))
    by_threads = limits.get("MaxThreadsPerMultiProcessor", 2048) // threads
    by_smem = limits.get("MaxSharedMemoryPerMultiprocessor", 233472) // (smem_bytes + 1024)
    return max(1, min(32, by_regs, by_threads, by_smem))


def occupancy(lk: LoadedKernel) -> int:
    """Blocks of ``lk`` that fit on one SM of this GPU (threads, registers, shared memory)."""
    cp = cupy()
    b = lk.source.block
    return blocks_that_fit(b[0] * b[1] * b[2], lk.num_regs, lk.source.smem_bytes, cp.cuda.Device().attributes)


def persistent_grid(n: int, tile_elems: int, sms: int, blocks_per_sm: int, fixed: int | None = None) -> int:
    """Every SM full (``blocks_per_sm``), never more blocks than tiles; ``fixed`` wins when given.

    >>> persistent_grid(10**9, 2048, 132, 3), persistent_grid(5000, 2048, 132, 3), persistent_grid(1, 2048, 132, 3, 7)
    (396, 3, 7)
    """
    if fixed:
        return int(fixed)
    tiles = -(-n // int(tile_elems))
    return max(1, min(sms * blocks_per_sm, tiles))


def stream_params(src: KernelSource, arrays: Mapping[str, Any], n: int, record: Any, budget_ms: float) -> tuple:
    """The arguments of ``src`` in kernel order: each tensor's array (16-byte aligned: kernels move
    16-byte vectors), the element count, the watchdog record and its budget in ns."""
    import numpy as np
    out: list[Any] = []
    for p in src.params:
        if p.kind == "ptr":
            a = arrays[p.resource]
            if a.data.ptr % 16:
                raise PgStudioError(f"tensor {p.resource!r} is not 16-byte aligned; kernels move 16-byte vectors")
            out.append(a)
        elif p.kind == "i64":
            out.append(np.int64(n))
        elif p.kind == "watchdog":
            out.append(record)
        elif p.kind == "u64":
            out.append(np.uint64(int(budget_ms * 1e6)))
        else:
            raise PgStudioError(f"cannot pass kernel parameter {p.name!r} of kind {p.kind!r}; streaming kernels take "
                                "ptr, i64, watchdog and u64 parameters")
    return tuple(out)


class StreamLauncher(Launcher):
    """A loaded streaming kernel with its launch shape and watchdog record."""

    def __init__(self, src: KernelSource, *, blocks_per_sm: int | None = None, budget_ms: float = BUDGET_MS,
                 grid: int | None = None) -> None:
        cp = cupy()
        self.src = src
        self.lk = load(src)
        a = cp.cuda.Device().attributes
        limit = a.get("MaxSharedMemoryPerBlockOptin", 232448)
        if src.smem_bytes > limit:
            raise PgStudioError(f"kernel {src.entry} needs {src.smem_bytes} B of shared memory per block, this GPU "
                                f"allows {limit} B; use fewer or smaller stages")
        self.sms = sm_count()
        self.blocks_per_sm = int(blocks_per_sm or occupancy(self.lk))
        self.budget_ms = float(budget_ms)
        self.fixed_grid = grid
        self.rec = cp.zeros(RECORD_INTS, dtype=cp.int32)

    def grid(self, work: StreamWorkload) -> int:
        """Persistent grid: every SM full (``blocks_per_sm``), never more blocks than tiles."""
        return persistent_grid(work.n, int(self.src.info["tile_elems"]), self.sms, self.blocks_per_sm, self.fixed_grid)

    def args(self, work: StreamWorkload) -> tuple:
        return stream_params(self.src, {**work.inputs, **work.outputs}, work.n, self.rec, self.budget_ms)

    def launch(self, work: StreamWorkload, args: tuple | None = None) -> None:
        self.lk.kernel((self.grid(work),), self.src.block, args or self.args(work), shared_mem=self.src.smem_bytes)

    def reset(self, work: StreamWorkload | None = None) -> None:
        self.rec.data.memset_async(0, self.rec.nbytes)

    def check_watchdog(self) -> None:
        raise_if_hung(self.src, self.rec.get().tolist(), self.budget_ms)


__all__ = ["BUDGET_MS", "StreamLauncher", "StreamWorkload", "blocks_that_fit", "occupancy", "persistent_grid",
           "stream_params"]

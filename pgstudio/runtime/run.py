"""Run a design's kernel on the GPU: launch, verify against the reference, then time it.

``run(design)`` emits (or reuses) the kernel, loads it, draws fresh random inputs, poisons the
outputs (NaN bytes), launches once, checks the watchdog record (``KernelHangError`` in words),
compares every output with the CuPy reference of the same design, and only then times it with
CUDA events: a few warm-up launches, then the median of many.  The result displays as a table
in a notebook.  Default sizes come from the design's problem (``num_elements``).
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..codegen import emit
from ..codegen.ptx import RECORD_INTS
from ..codegen.source import KernelSource
from ..errors import PgStudioError
from ..model.design import Design
from . import data
from ._cupy import cupy, sm_count
from .compile import LoadedKernel, is_loaded, load
from .reference import inputs as input_names
from .reference import outputs as output_names
from .reference import reference
from .verify import Check, VerificationError, compare
from .timing import batch_for, estimate_ms, time_interleaved
from .watchdog import raise_if_hung

#: Default watchdog budget per wait (a healthy wait takes microseconds).
BUDGET_MS = 1000.0

_EMITTED: dict[Any, KernelSource] = {}
_RNG: list[Any] = []


def emit_cached(design: Design, **kw: Any) -> KernelSource:
    """``emit(design, **kw)``, memoised on the (immutable, hashable) design and options."""
    try:
        key = (design, tuple(sorted((k, tuple(sorted(v.items())) if isinstance(v, Mapping) else v)
                                    for k, v in kw.items())))
        hash(key)
    except TypeError:
        return emit(design, **kw)
    src = _EMITTED.get(key)
    if src is None:
        src = _EMITTED[key] = emit(design, **kw)
    return src


def _rng(cp, seed: int | None):
    if seed is not None:
        return cp.random.RandomState(seed)
    if not _RNG:
        _RNG.append(cp.random.RandomState(int.from_bytes(os.urandom(4), "little")))
    return _RNG[0]


@dataclass
class Workload:
    """The arrays one launch reads and writes, shared by every variant of a benchmark."""

    design: Design
    n: int
    dtype: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    _ref: dict[str, Any] | None = None

    @classmethod
    def make(cls, design: Design, n: int, dtype: str, seed: int | None = None) -> "Workload":
        cp = cupy()
        if n < 1:
            raise PgStudioError(f"the element count must be at least 1, got {n}")
        rng = _rng(cp, seed)
        ins = {}
        for name in input_names(design):
            f = rng.standard_normal(n, dtype=cp.float32)
            ins[name] = f if dtype == "float32" else data.from_float32(cp, f, dtype)
        outs = {name: data.empty(cp, n, dtype) for name in output_names(design)}
        return cls(design, n, dtype, ins, outs)

    @property
    def bytes_moved(self) -> int:
        """Each input read once and each output written once."""
        return self.n * data.ITEMSIZE[self.dtype] * (len(self.inputs) + len(self.outputs))

    def poison(self) -> None:
        cp = cupy()
        for a in self.outputs.values():
            data.poison(cp, a)

    def reference(self) -> dict[str, Any]:
        if self._ref is None:
            self._ref = reference(self.design, self.inputs, cupy(), self.dtype)
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


def occupancy(lk: LoadedKernel) -> int:
    """Blocks of ``lk`` that fit on one SM (threads, registers, shared memory)."""
    cp = cupy()
    a = cp.cuda.Device().attributes
    threads = lk.source.block[0] * lk.source.block[1] * lk.source.block[2]
    regs_per_warp = -(-max(lk.num_regs, 1) * 32 // 256) * 256
    by_regs = a.get("MaxRegistersPerMultiprocessor", 65536) // (regs_per_warp * -(-threads // 32))
    by_threads = a.get("MaxThreadsPerMultiProcessor", 2048) // threads
    by_smem = a.get("MaxSharedMemoryPerMultiprocessor", 233472) // (lk.source.smem_bytes + 1024)
    return max(1, min(32, by_regs, by_threads, by_smem))


class Launcher:
    """A loaded kernel with its launch shape and watchdog record."""

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

    def grid(self, n: int) -> int:
        """Persistent grid: every SM full (``blocks_per_sm``), never more blocks than tiles."""
        if self.fixed_grid:
            return int(self.fixed_grid)
        tiles = -(-n // int(self.src.info["tile_elems"]))
        return max(1, min(self.sms * self.blocks_per_sm, tiles))

    def args(self, work: Workload) -> tuple:
        import numpy as np
        arrays = {**work.inputs, **work.outputs}
        out: list[Any] = []
        for p in self.src.params:
            if p.kind == "ptr":
                a = arrays[p.resource]
                if a.data.ptr % 16:
                    raise PgStudioError(f"tensor {p.resource!r} is not 16-byte aligned; kernels move 16-byte vectors")
                out.append(a)
            elif p.kind == "i64":
                out.append(np.int64(work.n))
            elif p.kind == "watchdog":
                out.append(self.rec)
            elif p.kind == "u64":
                out.append(np.uint64(int(self.budget_ms * 1e6)))
            else:  # pragma: no cover - the generator makes no other kinds
                raise PgStudioError(f"cannot pass kernel parameter {p.name!r} of kind {p.kind!r}")
        return tuple(out)

    def launch(self, work: Workload, args: tuple | None = None) -> None:
        self.lk.kernel((self.grid(work.n),), self.src.block, args or self.args(work), shared_mem=self.src.smem_bytes)

    def reset(self) -> None:
        self.rec.data.memset_async(0, self.rec.nbytes)

    def check_watchdog(self) -> None:
        raise_if_hung(self.src, self.rec.get().tolist(), self.budget_ms)

    def verify(self, work: Workload) -> tuple[Check, ...]:
        """Poison, launch once, check the watchdog, compare with the reference."""
        cp = cupy()
        work.poison()
        self.reset()
        self.launch(work)
        cp.cuda.get_current_stream().synchronize()
        self.check_watchdog()
        return work.check(self.src.entry)

    def time(self, work: Workload, warmup: int = 3, repeats: int = 20) -> list[float]:
        """Milliseconds per launch over ``repeats`` timed batches (after ``warmup`` launches), each
        batch back to back behind a GPU hold (``runtime.timing``)."""
        args = self.args(work)
        self.reset()

        def launch() -> None:
            self.launch(work, args)
        times = time_interleaved([("kernel", launch)], repeats, warmup=warmup, batch=batch_for(estimate_ms(launch)))
        self.check_watchdog()
        return times["kernel"]


@dataclass(frozen=True)
class RunResult:
    """A verified, timed run of one kernel."""

    design: str
    entry: str
    n: int
    dtype: str
    median_ms: float
    times_ms: tuple[float, ...]
    bytes_moved: int
    checks: tuple[Check, ...]
    grid: int
    block: int
    smem_bytes: int
    registers: int
    blocks_per_sm: int
    compile_s: float
    cached: bool
    wall_s: float
    extra: tuple[tuple[str, Any], ...] = field(default=())

    @property
    def gbps(self) -> float:
        return self.bytes_moved / (self.median_ms * 1e-3) / 1e9 if self.median_ms > 0 else float("nan")

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def rows(self) -> list[tuple[str, str]]:
        err = max((c.rel_error for c in self.checks), default=float("nan"))
        spread = (f"{min(self.times_ms):.4f} .. {max(self.times_ms):.4f} ms over {len(self.times_ms)} runs"
                  if self.times_ms else "not timed")
        return [
            ("kernel", f"{self.entry} ({self.design})"),
            ("elements", f"{self.n:,} {self.dtype}"),
            ("median time", f"{self.median_ms:.4f} ms" if self.times_ms else "not timed"),
            ("spread", spread),
            ("bandwidth", f"{self.gbps:,.0f} GB/s ({self.bytes_moved / 2**30:.2f} GiB moved)"),
            ("verified", f"{'yes' if self.ok else 'NO'}: rel error {err:.1e} over {len(self.checks)} output(s)"),
            ("launch", f"grid {self.grid} x block {self.block}, {self.smem_bytes} B smem, {self.registers} regs, "
                       f"{self.blocks_per_sm} blocks/SM"),
            ("compile", "cached" if self.cached else f"{self.compile_s * 1e3:.0f} ms NVRTC"),
            ("wall", f"{self.wall_s:.2f} s from design to this result"),
        ]

    def __str__(self) -> str:
        w = max(len(k) for k, _ in self.rows())
        return "\n".join(f"{k.ljust(w)}  {v}" for k, v in self.rows())

def run(design: Design, *, n: int | None = None, seed: int | None = None, verify: bool = True, timing: bool = True,
        warmup: int = 3, repeats: int = 20, budget_ms: float = BUDGET_MS, blocks_per_sm: int | None = None,
        tuning: Mapping[str, Any] | None = None, validate: bool = True, workload: Workload | None = None,
        grid: int | None = None, executor: Any = None) -> RunResult:
    """Compile, verify and time ``design`` on the GPU (see the module docstring).

    ``grid`` fixes the number of blocks (default: a persistent grid filling every SM).  Like
    ``benchmark`` and ``trace`` it runs in a GPU worker process (``executor``: the default worker
    processes, or ``"inline"`` for this process, e.g. to debug), so a kernel that traps raises
    ``KernelFault`` here and the notebook stays usable; a given ``workload`` holds this process's
    GPU arrays, so it runs here.
    """
    from .executor import get_executor
    ex = get_executor(executor)
    if ex.name != "inline" and workload is None:
        from .isolated import on_gpu
        kwargs = dict(n=n, seed=seed, verify=verify, timing=timing, warmup=warmup, repeats=repeats, budget_ms=budget_ms,
                      blocks_per_sm=blocks_per_sm, tuning=dict(tuning) if tuning else None, validate=validate, grid=grid)
        return on_gpu(run, design, kwargs, executor=ex, what="run", progress=False)
    t0 = time.perf_counter()
    src = emit_cached(design, validate=validate, tuning=dict(tuning or {}))
    warm = is_loaded(src)
    launcher = Launcher(src, blocks_per_sm=blocks_per_sm, budget_ms=budget_ms, grid=grid)
    work = workload or Workload.make(design, int(n or src.info["num_elements"]), str(src.info["dtype"]), seed)
    checks = launcher.verify(work) if verify else ()
    times = launcher.time(work, warmup, repeats) if timing else []
    return RunResult(design.name, src.entry, work.n, work.dtype, statistics.median(times) if times else 0.0,
                     tuple(times), work.bytes_moved, checks, launcher.grid(work.n), src.block[0], src.smem_bytes,
                     launcher.lk.num_regs, launcher.blocks_per_sm, 0.0 if warm else launcher.lk.cubin.seconds,
                     warm or launcher.lk.cubin.cached,
                     time.perf_counter() - t0)


__all__ = ["BUDGET_MS", "Launcher", "RunResult", "Workload", "emit_cached", "occupancy", "run"]

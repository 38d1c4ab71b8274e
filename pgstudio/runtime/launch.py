"""One launch / verify / time contract for every kind of kernel, and the result of one run.

A *workload* holds what one launch reads and writes (fresh random inputs, poisoned outputs, the
reference they are compared with); a *launcher* holds one kernel ready to launch and its launch
shape.  Streaming kernels (``stream_run``), GEMM kernels (``gemm_run``) and the null runtime
(``null``: nothing allocated, loaded or launched) implement both, and everything above them --
``run``, ``benchmark``, the explorer's sweeps and tuners -- speaks only this contract:

==========================  ====================================================================
``Launcher.verify(work)``   poison the outputs, zero what a launch counts on (the watchdog record,
                            split-K counters), launch once, wait, read the watchdog
                            (``KernelHangError`` in words), compare every output with the
                            reference: a ``Check`` per output, or ``VerificationError`` -- a
                            kernel is never timed unverified
``Launcher.time(work)``     milliseconds per launch over many launches, batched behind a GPU hold
                            (``runtime.timing``), then the watchdog again
``Workload.rate(ms)``       GB/s of a streaming workload, TFLOP/s of a GEMM one
==========================  ====================================================================

The two rules are written here once.  The null launcher runs the same ``verify`` and ``time``, so a
null run takes every step a GPU run takes, and each step says that nothing ran: its launcher and
workload are ``measured=False``, its checks ``ran=False`` (never ``ok``), its times NaN.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from ..codegen.source import KernelSource
from ..errors import PgStudioError
from ..model.design import Design
from ..model.targets import DTYPE_BYTES
from .timing import CUDA_EVENTS, batch_for, estimate_ms, time_interleaved
from .verify import NOT_RUN, NULL_RUNTIME, Check

STREAM, GEMM = "stream", "gemm"
#: A rate's unit and what one of it per second is: bytes (streaming) or flops (GEMM).
UNITS = {"GB/s": 1e9, "TFLOP/s": 1e12}
UNIT_OF = {STREAM: "GB/s", GEMM: "TFLOP/s"}
#: What a time of the null runtime says in place of a number.
NOT_MEASURED = f"not measured ({NULL_RUNTIME})"


def rate_of(amount: float, ms: float, unit: str) -> float:
    """``amount`` (bytes or flops) per ``ms`` milliseconds in ``unit``; NaN without a time.

    >>> rate_of(2e9, 1.0, "GB/s"), rate_of(2e12, 1.0, "TFLOP/s")
    (2000.0, 2000.0)
    """
    return amount / (ms * 1e-3) / UNITS[unit] if ms > 0 else math.nan


def problem_text(kind: str, shape: tuple[int, ...], dtype: str) -> str:
    """The problem in words: ``"4,194,304 float32 elements"`` or ``"4096x4096x4096 bfloat16"``."""
    if kind == GEMM:
        m, n, k = shape
        return f"{m}x{n}x{k} {dtype}"
    return f"{shape[0]:,} {dtype} elements"


def element_count(n: int) -> int:
    """``n`` as the element count of a streaming workload: at least 1."""
    if n < 1:
        raise PgStudioError(f"the element count must be at least 1, got {n}")
    return int(n)


def stream_bytes(n: int, dtype: str, tensors: int) -> int:
    """Bytes one streaming launch moves: each of ``tensors`` read or written once."""
    return n * DTYPE_BYTES[dtype] * tensors


def gemm_flops(m: int, n: int, k: int) -> float:
    return 2.0 * m * n * k


class Workload:
    """What one launch reads and writes, shared by every contender of a benchmark (module docstring).

    Subclasses set ``kind`` and give ``shape`` -- ``(n,)`` elements or ``(M, N, K)`` -- ``amount``
    (bytes moved or flops of one launch), ``poison`` and ``check``."""

    design: Design
    dtype: str
    kind: str = STREAM
    #: Arrays on a GPU; False for the null runtime's workload, which has none.
    measured: bool = True

    @property
    def shape(self) -> tuple[int, ...]:  # pragma: no cover - interface
        raise NotImplementedError

    @property
    def amount(self) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    @property
    def unit(self) -> str:
        return UNIT_OF[self.kind]

    @property
    def problem(self) -> str:
        return problem_text(self.kind, self.shape, self.dtype)

    def rate(self, ms: float) -> float:
        return rate_of(self.amount, ms, self.unit)

    def poison(self) -> None:  # pragma: no cover - interface
        """Fill every output with NaN, so an element the kernel does not write cannot pass."""
        raise NotImplementedError

    def check(self, label: str = "") -> tuple[Check, ...]:  # pragma: no cover - interface
        """Compare every output with the reference; ``VerificationError`` (naming ``label``) on a mismatch."""
        raise NotImplementedError


class Launcher:
    """One kernel ready to launch over a workload (module docstring).

    Subclasses give ``grid``, ``args`` (the parameters in kernel order, packed once for timing),
    ``launch``, ``reset`` and ``check_watchdog``; ``verify`` and ``time`` are the contract's rules."""

    src: KernelSource
    #: Its launches run on a GPU; False for the null launcher, which runs nothing.
    measured: bool = True
    #: Where its times come from (``timing.CUDA_EVENTS``, or the null runtime's ``NULL_CLOCK``).
    clock: Any = CUDA_EVENTS
    #: The loaded kernel (``compile.LoadedKernel``); None in the null runtime, which loads nothing.
    lk: Any = None
    blocks_per_sm: int = 1

    @property
    def label(self) -> str:
        """How a verification error names this kernel."""
        return self.src.entry

    @property
    def registers(self) -> int:
        return self.lk.num_regs if self.lk is not None else 0

    def grid(self, work: Workload) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def args(self, work: Workload) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def launch(self, work: Workload, args: Any = None) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def reset(self, work: Workload | None = None) -> None:
        """Zero what a launch counts on (a watchdog record, split-K counters) before it runs."""

    def check_watchdog(self) -> None:
        """Raise ``KernelHangError`` in words when the watchdog stopped the last launches."""

    def verify(self, work: Workload) -> tuple[Check, ...]:
        """Poison, launch once, check the watchdog, compare with the reference."""
        work.poison()
        self.reset(work)
        self.launch(work)
        self.clock.synchronize()
        self.check_watchdog()
        return work.check(self.label)

    def time(self, work: Workload, warmup: int = 3, repeats: int = 20) -> list[float]:
        """Milliseconds per launch over ``repeats`` timed batches (after ``warmup`` launches), each
        batch back to back behind a GPU hold (``runtime.timing``)."""
        args = self.args(work)
        self.reset(work)

        def launch() -> None:
            self.launch(work, args)
        times = time_interleaved([("kernel", launch)], repeats, warmup=warmup,
                                 batch=batch_for(estimate_ms(launch, clock=self.clock)), clock=self.clock)
        self.check_watchdog()
        return times["kernel"]


@dataclass(frozen=True)
class RunResult:
    """A verified, timed run of one kernel of either kind; the null runtime's says it ran nothing
    (``measured=False``: NaN times, checks that did not run)."""

    design: str
    entry: str
    problem: str
    dtype: str
    median_ms: float
    times_ms: tuple[float, ...]
    amount: float  # bytes moved (streaming) or flops (GEMM) of one launch
    unit: str  # "GB/s" or "TFLOP/s"
    checks: tuple[Check, ...]
    grid: int
    block: int
    smem_bytes: int
    registers: int
    blocks_per_sm: int
    compile_s: float
    cached: bool
    wall_s: float
    shape: tuple[int, ...] = ()
    measured: bool = True
    extra: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, launcher: Launcher, work: Workload, checks: tuple[Check, ...], times: list[float], *,
           warm: bool, wall_s: float) -> "RunResult":
        """The result of ``launcher``'s run over ``work``; ``warm``: its kernel was loaded before."""
        src, lk = launcher.src, launcher.lk
        compile_s = 0.0 if warm or lk is None else lk.cubin.seconds
        cached = warm or (lk is not None and lk.cubin.cached)
        return cls(work.design.name, src.entry, work.problem, work.dtype,
                   statistics.median(times) if times else 0.0, tuple(times), work.amount, work.unit, tuple(checks),
                   launcher.grid(work), src.block[0], src.smem_bytes, launcher.registers, launcher.blocks_per_sm,
                   compile_s, cached, wall_s, work.shape, launcher.measured and work.measured)

    @property
    def rate(self) -> float:
        """GB/s or TFLOP/s (``unit``) at the median time."""
        return rate_of(self.amount, self.median_ms, self.unit)

    @property
    def gbps(self) -> float:
        return self.rate if self.unit == "GB/s" else math.nan

    @property
    def tflops(self) -> float:
        return self.rate if self.unit == "TFLOP/s" else math.nan

    @property
    def ok(self) -> bool:
        """Every output verified (a check that did not run is not ok)."""
        return all(c.ok for c in self.checks)

    @property
    def verified(self) -> str:
        if any(not c.ran for c in self.checks):
            return NOT_RUN
        err = max((c.rel_error for c in self.checks), default=float("nan"))
        return f"{'yes' if self.ok else 'NO'}: rel error {err:.1e} over {len(self.checks)} output(s)"

    def rows(self) -> list[tuple[str, str]]:
        timed = bool(self.times_ms) and self.measured
        untimed = NOT_MEASURED if self.times_ms else "not timed"
        spread = (f"{min(self.times_ms):.4f} .. {max(self.times_ms):.4f} ms over {len(self.times_ms)} runs"
                  if timed else untimed)
        if self.unit == "GB/s":
            rate = ("bandwidth", f"{self.rate:,.0f} GB/s ({self.amount / 2**30:.2f} GiB moved)")
        else:
            rate = ("throughput", f"{self.rate:,.1f} TFLOP/s ({self.amount / 1e12:.3g} TFLOP)")
        launch = (f"grid {self.grid} x block {self.block}, {self.smem_bytes} B smem, {self.registers} regs, "
                  f"{self.blocks_per_sm} blocks/SM")
        return [
            ("kernel", f"{self.entry} ({self.design})"),
            ("problem", self.problem),
            ("median time", f"{self.median_ms:.4f} ms" if timed else untimed),
            ("spread", spread),
            (rate[0], rate[1] if timed else untimed),
            ("verified", self.verified),
            ("launch", launch if self.measured else f"not launched ({NULL_RUNTIME}); it would be {launch}"),
            ("compile", ("cached" if self.cached else f"{self.compile_s * 1e3:.0f} ms NVRTC") if self.measured
             else f"not loaded ({NULL_RUNTIME})"),
            ("wall", f"{self.wall_s:.2f} s from design to this result"),
        ]

    def __str__(self) -> str:
        w = max(len(k) for k, _ in self.rows())
        return "\n".join(f"{k.ljust(w)}  {v}" for k, v in self.rows())


__all__ = ["GEMM", "Launcher", "NOT_MEASURED", "RunResult", "STREAM", "UNITS", "UNIT_OF", "Workload", "element_count", "gemm_flops",
           "problem_text", "rate_of", "stream_bytes"]

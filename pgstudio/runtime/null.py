"""The null runtime: the launch contract (``runtime.launch``) with nothing allocated, loaded,
launched or timed, so every path above the GPU -- ``run``, ``benchmark``, sweeps, tuning, the
executors' job plumbing, the studio's Compile & Benchmark -- runs on a machine without one.

It imports no CuPy and needs no NVRTC.  Its workload holds no arrays (only the problem's shape,
and for a GEMM the tensor-map shape rules a GPU run would refuse: those it refuses too); its
launcher computes the launch shape the kernel would have on the model's machine
(``analysis.machine.Machine``: an H200's SMs) and launches nothing; its clock reads NaN.  So
nothing it returns can be taken for a measurement: every check is ``ran=False`` (never ``ok``;
it prints "not run (no GPU: null runtime)"), every time NaN, every result and table
``measured=False`` and saying so.  Choose it with ``executor="null"`` (``executor.null``).
"""

from __future__ import annotations

from typing import Any

from ..analysis.machine import Machine
from ..analysis.predict import STREAM_REGISTERS
from ..codegen.source import KernelSource
from ..model.design import Design
from .launch import GEMM, STREAM, Launcher, Workload, element_count, gemm_flops, stream_bytes
from .timing import NULL_CLOCK
from .verify import Check


class NullWorkload(Workload):
    """A problem's shape and output names, with no arrays: ``poison`` does nothing and ``check``
    reports every output as not run."""

    measured = False

    def __init__(self, design: Design, kind: str, shape: tuple[int, ...], dtype: str,
                 outputs: dict[str, int], amount: float) -> None:
        self.design, self.kind, self.dtype = design, kind, dtype
        self._shape, self.outputs, self._amount = tuple(shape), dict(outputs), float(amount)

    @classmethod
    def stream(cls, design: Design, n: int, dtype: str) -> "NullWorkload":
        from .reference import inputs, outputs
        n = element_count(n)
        outs = outputs(design)
        return cls(design, STREAM, (n,), dtype, {o: n for o in outs},
                   stream_bytes(n, dtype, len(inputs(design)) + len(outs)))

    @classmethod
    def gemm(cls, design: Design, src: KernelSource, m: int, n: int, k: int) -> "NullWorkload":
        from .gemm_run import check_maps, dims
        dtype = str(src.info["dtype"])
        check_maps(src, m, n, k, dtype)  # a shape the tensor maps refuse is refused here too
        spaces = dict(src.info["gmem_spaces"])
        outs = {o: dims(spaces[o], m, n, k)[0] * dims(spaces[o], m, n, k)[1] for o in src.info["outputs"]}
        return cls(design, GEMM, (m, n, k), dtype, outs, gemm_flops(m, n, k))

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def amount(self) -> float:
        return self._amount

    def poison(self) -> None:
        pass

    def check(self, label: str = "") -> tuple[Check, ...]:
        return tuple(Check.not_run(name, count) for name, count in self.outputs.items())


class NullLauncher(Launcher):
    """A kernel that is never loaded or launched; its grid is the one it would have on the
    model's machine, its clock ``timing.NULL_CLOCK``."""

    measured = False
    clock = NULL_CLOCK

    def __init__(self, src: KernelSource, *, blocks_per_sm: int | None = None, budget_ms: float | None = None,
                 grid: int | None = None, machine: Machine | None = None) -> None:
        m = machine or Machine()
        self.src, self.sms, self.fixed_grid, self.budget_ms = src, m.sms, grid, budget_ms
        if src.info.get("kind") == GEMM:
            self.blocks_per_sm = 1
        else:
            from .stream_run import blocks_that_fit
            b = src.block
            limits = {"MaxRegistersPerMultiprocessor": m.registers_per_sm, "MaxThreadsPerMultiProcessor": m.threads_per_sm,
                      "MaxSharedMemoryPerMultiprocessor": m.smem_per_sm}
            self.blocks_per_sm = int(blocks_per_sm or blocks_that_fit(b[0] * b[1] * b[2], STREAM_REGISTERS,
                                                                      src.smem_bytes, limits))

    def grid(self, work: Workload) -> int:
        if work.kind == GEMM:
            from .gemm_run import gemm_grid
            m, n, _ = work.shape
            return gemm_grid(m, n, self.src.info["tile"], self.src.info.get("cluster"),
                             (self.src.info.get("split_k") or (1, 0))[0], self.sms, bool(self.src.info.get("stream_k")))
        from .stream_run import persistent_grid
        return persistent_grid(work.shape[0], int(self.src.info["tile_elems"]), self.sms, self.blocks_per_sm,
                               self.fixed_grid)

    def args(self, work: Workload) -> Any:
        return ()

    def launch(self, work: Workload, args: Any = None) -> None:
        pass


__all__ = ["NullLauncher", "NullWorkload"]

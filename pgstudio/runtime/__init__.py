"""The only side effects on a GPU: compile (NVRTC), load (CuPy RawModule), run, verify, time, benchmark.

Importing this package imports neither CuPy nor NVRTC: they load on first use, and a missing CuPy,
GPU or NVRTC becomes one ``GpuUnavailable`` that says so.
"""

from ._cupy import gpu_available
from .bench import BenchTable, benchmark
from .compile import Cubin, compile_cubin, load
from .run import Launcher, RunResult, Workload, run
from .verify import VerificationError

__all__ = ["BenchTable", "Cubin", "Launcher", "RunResult", "VerificationError", "Workload", "benchmark",
           "compile_cubin", "gpu_available", "load", "run"]

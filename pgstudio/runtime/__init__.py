"""The only side effects on a GPU: compile (NVRTC), load (CuPy RawModule), run, verify, time,
benchmark, sweep (``runtime.sweep.sweep``) -- in worker processes by default (``runtime.executor``).

Importing this package imports neither CuPy, NVRTC nor Ray and starts no process: they load on
first use, and a missing CuPy, GPU or NVRTC becomes one ``GpuUnavailable`` that says so.
"""

from ._cupy import gpu_available
from .bench import BenchTable, benchmark
from .compile import Cubin, compile_cubin, load
from .executor import get_executor
from .run import Launcher, RunResult, Workload, run
from .sweep_table import SweepTable, load_sweep
from .verify import VerificationError

__all__ = ["BenchTable", "Cubin", "Launcher", "RunResult", "SweepTable", "VerificationError", "Workload", "benchmark",
           "compile_cubin", "get_executor", "gpu_available", "load", "load_sweep", "run"]

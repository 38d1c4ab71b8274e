"""The only side effects on a GPU: compile (NVRTC), load (CuPy RawModule), run, verify, time and
benchmark -- in worker processes by default (``runtime.executor``).

The runtime times what it is given: which variants to try and which tuning to run belong to the
explorer above it (``pgstudio.explore``), which asks the runtime to time and is never asked.
Importing this package imports neither CuPy, NVRTC nor Ray and starts no process: they load on
first use, and a missing CuPy, GPU or NVRTC becomes one ``GpuUnavailable`` that says so.
"""

from ._cupy import gpu_available
from .bench import BenchTable, benchmark
from .compile import Cubin, compile_cubin, load
from .executor import get_executor
from .run import Launcher, RunResult, Workload, run
from .tuned import Tuned
from .verify import VerificationError

__all__ = ["BenchTable", "Cubin", "Launcher", "RunResult", "Tuned", "VerificationError", "Workload", "benchmark",
           "compile_cubin", "get_executor", "gpu_available", "load", "run"]

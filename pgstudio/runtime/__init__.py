"""The only side effects on a GPU: compile (NVRTC), load (CuPy RawModule), run, verify, time and
benchmark -- in worker processes by default (``runtime.executor``).

The runtime times what it is given: which variants to try and which tuning to run belong to the
explorer above it (``pgstudio.explore``), which asks the runtime to time and is never asked.
Importing this package imports neither CuPy, NVRTC nor Ray and starts no process: they load on
first use, and a missing CuPy, GPU or NVRTC becomes one ``GpuUnavailable`` that says so.

Both kinds of kernel -- streaming and GEMM -- keep one contract (``launch``: ``Workload``,
``Launcher``, ``RunResult``; ``bench_table.BenchTable``), and the null runtime (``null``,
``executor="null"``) keeps it with nothing launched, so everything above the GPU runs without one.
"""

from ._cupy import gpu_available
from .bench import benchmark
from .bench_table import BenchTable
from .compile import Cubin, compile_cubin, load
from .executor import get_executor
from .launch import Launcher, RunResult, Workload
from .run import run
from .tuned import Tuned
from .verify import VerificationError

__all__ = ["BenchTable", "Cubin", "Launcher", "RunResult", "Tuned", "VerificationError", "Workload", "benchmark",
           "compile_cubin", "get_executor", "gpu_available", "load", "run"]

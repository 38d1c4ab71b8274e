"""How a design RUNS, as text: ``emit(design)`` -> ``KernelSource`` (CUDA C++ and its launch shape).

Standard library only: compiling and running the source is the runtime's job.
"""

from .kernel import ARCHES, emit
from .ops import CATALOG, FUNCTIONS, parse_expr
from .source import KernelParam, KernelSource

__all__ = ["ARCHES", "CATALOG", "FUNCTIONS", "KernelParam", "KernelSource", "emit", "parse_expr"]

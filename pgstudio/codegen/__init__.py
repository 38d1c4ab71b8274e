"""How a design RUNS, as text: ``emit(design)`` -> ``KernelSource`` (CUDA C++ and its launch shape).

The generators render text from the plans of ``analysis.buildable``, which decide what can be built
(the ``codegen.*`` rules): a design that validates with no errors always emits.

Standard library only: compiling and running the source is the runtime's job.
"""

from .kernel import ARCHES, emit
from .source import KernelParam, KernelSource

__all__ = ["ARCHES", "KernelParam", "KernelSource", "emit"]

"""The design-space explorer, above the runtime: variants of a design, sweeps over them, their
log and table, and the default tuning a benchmark runs at.

Every variant is a pure design-to-design reshape (``reshape``: stages, bytes per stage, tile
shape, grouping, consumer warps) over the axes of a ``sweep_space.Space``; ``sweep`` compiles
each, and on a GPU verifies and times it, through the runtime's executors (``sweep_jobs``),
keeping a resumable JSON-lines log (``sweep_log``) and returning a ``SweepTable``
(``sweep_table``).  ``tuning`` picks a design's best settings for this GPU by a short sweep or
measured tile search, cached per device, and ``bench.tuned_benchmark`` (``pgstudio.benchmark``)
hands that choice to ``runtime.bench.benchmark``.  The explorer asks the runtime to time; the
runtime never asks the explorer.  Pictures of a sweep are ``render.sweep``'s.

``explore.sweep.sweep`` is the sweep itself (a module of that name, so it is not re-exported here).
Importing this package imports neither CuPy, NVRTC nor Ray and starts no process.
"""

from .bench import choose_tuning, tuned_benchmark
from .sweep_space import Space, Variant, space_for
from .sweep_table import SweepRow, SweepTable, load_sweep
from .tuning import tune_gemm, tune_gemm_design, tune_stream

__all__ = ["Space", "SweepRow", "SweepTable", "Variant", "choose_tuning", "load_sweep", "space_for", "tune_gemm",
           "tune_gemm_design", "tune_stream", "tuned_benchmark"]

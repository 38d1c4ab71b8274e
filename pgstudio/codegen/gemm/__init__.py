"""The GEMM generator: a warp-specialised, persistent tensor-core kernel from a GEMM design.

One concept per module: ``emit.py`` the kernel scope and ``emit_gemm``; ``task.py`` the walk of a
task's resolved plan; ``scheduler.py`` which work unit each persistent block takes; ``mainloop.py``
the operand loads and the MMA's operands; ``sm90.py`` / ``wgmma.py`` and ``sm100.py`` /
``tcgen05.py`` the tensor-core issue per architecture; ``epilogue.py`` the stores; ``prelude.py``
the shared C++ helpers and the watchdog; ``swizzle.py`` the shared-memory layout of a panel.
"""

from .emit import emit_gemm

__all__ = ["emit_gemm"]

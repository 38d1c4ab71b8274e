"""The reference result of a design, computed with the array library from the same design.

Every computed resource's expression (``analysis.expr.compute_expr``: the one checked tree the
kernel was generated from) is evaluated with the library's own ufuncs in float32, independent of
the generated CUDA.  Values that the kernel keeps in shared memory or global memory are rounded
to the element type where the kernel rounds them, so fp16 / bf16 results compare tightly.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..analysis.expr import compute_expr
from ..model.design import Design
from ..model.resource import Memory
from .data import from_float32, to_float32


def functions(xp: Any) -> dict[str, Any]:
    """The grammar's functions with C semantics (fmax / fmin ignore a NaN operand, like fmaxf)."""
    one = xp.float32(1.0)
    zero = xp.float32(0.0)
    return {
        "add": xp.add, "sub": xp.subtract, "mul": xp.multiply, "div": xp.divide, "neg": xp.negative,
        "max": xp.fmax, "min": xp.fmin, "abs": xp.abs, "exp": xp.exp, "log": xp.log, "sqrt": xp.sqrt,
        "tanh": xp.tanh, "sigmoid": lambda x: one / (one + xp.exp(-x)), "relu": lambda x: xp.fmax(x, zero),
    }


def outputs(design: Design) -> tuple[str, ...]:
    """The global tensors the kernel writes, in design order."""
    return tuple(r.name for r in design.resources if r.memory is Memory.GMEM and r.compute.op != "input")


def inputs(design: Design) -> tuple[str, ...]:
    return tuple(r.name for r in design.resources if r.memory is Memory.GMEM and r.compute.op == "input")


def reference(design: Design, values: Mapping[str, Any], xp: Any, dtype: str) -> dict[str, Any]:
    """Each output of ``design`` as float32 values of ``dtype`` precision.

    ``values`` maps every input tensor to its stored elements (as given to the kernel).
    """
    fns = functions(xp)
    cache: dict[str, Any] = {n: to_float32(xp, v, dtype) for n, v in values.items()}

    def value(name: str) -> Any:
        if name not in cache:
            ex = compute_expr(design, name)
            env = {o: value(o) for o in ex.operands}
            v = ex.evaluate(env, fns, xp.float32)
            if not hasattr(v, "shape") or v.shape != next(iter(cache.values())).shape:
                v = xp.broadcast_to(xp.asarray(v, dtype=xp.float32), next(iter(cache.values())).shape)
            # the kernel stores every computed value in the element type (a stage or the output)
            cache[name] = to_float32(xp, from_float32(xp, v.astype(xp.float32, copy=False), dtype), dtype)
        return cache[name]

    return {o: value(o) for o in outputs(design)}


__all__ = ["functions", "inputs", "outputs", "reference"]

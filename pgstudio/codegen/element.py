"""One element of a design's outputs from the input tensors, each produced value computed once.

The tail of a streaming kernel (elements past a tile's last whole 16-byte vector) and CuPy's
elementwise peer compute outputs straight from the input tensors, through every staged value
in between.  Substituting each operand's expression into the next one textually doubles the
text at every stage that reads two values of the stage before (a chain of n such stages holds
2^n copies of its inputs, and NVRTC's time follows the text).  ``element_code`` instead names
every computed value once, as a ``const float`` temporary in dependency order, so the text
grows with the number of resources the outputs depend on.

Every computed value is rounded to the element type, as the kernel's stages (and
``runtime.reference``) round it, so the tail agrees with the main path in fp16 / bf16 too; a
target that nothing else reads is left to the caller's store, which rounds it.

>>> from pgstudio import examples
>>> from pgstudio.codegen.dtypes import dtype
>>> code = element_code(examples.merge_copy(), ["gmem_d"], dtype("float32"), lambda n: f"{n}[i]")
>>> for line in code.lines: print(line)
const float pg_v_gmem_a = gmem_a[i];
const float pg_v_gmem_b = gmem_b[i];
const float pg_v_gmem_d = (pg_v_gmem_a + pg_v_gmem_b);
>>> code.values["gmem_d"]
'pg_v_gmem_d'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..model.design import Design
from ..model.resource import Memory
from .dtypes import DType
from ..analysis.expr import Expr, compute_expr


@dataclass(frozen=True)
class ElementCode:
    """C statements that define the temporaries, and each target's value over them."""

    lines: tuple[str, ...]  # "const float pg_v_<resource> = ...;", inputs and computed values in order
    values: Mapping[str, str]  # target -> its C temporary (or an input's, for a plain copy)


def temporary(name: str) -> str:
    """The C name of ``name``'s value at the current element."""
    return f"pg_v_{name}"


def _is_input(design: Design, name: str) -> bool:
    r = design.resource(name)
    return r.memory is Memory.GMEM and r.compute.op == "input"


class _Exprs(dict):
    """The given expressions, and any other one checked from the design when first needed (only
    the resources the targets depend on are looked at)."""

    def __init__(self, design: Design, given: Mapping[str, Expr]) -> None:
        super().__init__(given)
        self.design = design

    def __missing__(self, name: str) -> Expr:
        ex = self[name] = compute_expr(self.design, name)
        return ex


def _order(design: Design, targets: Sequence[str], exprs: Mapping[str, Expr]) -> list[str]:
    """The resources ``targets`` depend on (targets included), each after its operands.

    Iterative, so a design thousands of stages deep needs no deep recursion.
    """
    order: list[str] = []
    seen: set[str] = set()
    for target in targets:
        stack: list[tuple[str, bool]] = [(target, False)]
        while stack:
            name, expanded = stack.pop()
            if expanded:
                order.append(name)
                continue
            if name in seen:
                continue
            seen.add(name)
            stack.append((name, True))
            if not _is_input(design, name):
                stack.extend((o, False) for o in reversed(exprs[name].operands) if o not in seen)
    return order


def element_code(design: Design, targets: Sequence[str], dt: DType, load: Callable[[str], str],
                 exprs: Mapping[str, Expr] | None = None) -> ElementCode:
    """Statements computing ``targets`` at one element; ``load(input)`` is a C float expression of
    an input tensor's element.  A plain copy adds no temporary (it is its operand's value)."""
    exprs = _Exprs(design, exprs or {})
    order = _order(design, targets, exprs)
    read = {o for n in order if not _is_input(design, n) for o in exprs[n].operands}
    value: dict[str, str] = {}
    lines: list[str] = []
    for name in order:
        if _is_input(design, name):
            value[name] = temporary(name)
            lines.append(f"const float {value[name]} = {load(name)};")
            continue
        ex = exprs[name]
        if len(ex.operands) == 1 and ex.text.strip() == ex.operands[0]:
            value[name] = value[ex.operands[0]]  # a copy holds its operand's (already rounded) value
            continue
        c = ex.to_c({o: value[o] for o in ex.operands})
        value[name] = temporary(name)
        rounded = dt.scalar and (name in read or name not in targets)  # a target's store rounds it
        lines.append(f"const float {value[name]} = {dt.to_float(dt.from_float(c)) if rounded else c};")
    return ElementCode(tuple(lines), {t: value[t] for t in targets})


__all__ = ["ElementCode", "element_code", "temporary"]

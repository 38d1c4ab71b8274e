"""The compute catalog and the small, safe elementwise expression grammar.

A resource's ``Compute`` says what it holds in terms of its dependencies: ``copy`` of its one
dependency, ``store`` of an expression (or a copy of its only dependency), ``elementwise`` of an
expression.  Expressions are user text such as ``"max(smem_a, 0.f) * smem_b"``: they are parsed
with Python's ``ast`` and checked against a grammar that allows only

* operands named after the resources the target is computed from,
* number literals (a C-style ``f`` suffix, ``0.f``, is accepted) that a float32 holds: the
  generated code computes in float32 and writes every literal as a ``float`` constant, and NVRTC
  refuses one out of that type's range (``1e39f``, or ``1e-46f``, which would round to zero), so
  such a literal is refused here, naming the range (``literal_problem``) rather than folded to
  infinity or zero behind the user's back,
* ``+ - * /`` and unary ``-`` / ``+``,
* calls of the fixed functions in ``FUNCTIONS``.

The checked tree is then re-emitted (as CUDA C by the code generators, or evaluated through a
caller's array functions for a reference); user text is never pasted into generated source.  The
catalog helpers (``add``, ``multiply``, ``relu``, ``scale``, ``copy``) build such expressions.

It lives in ``analysis`` because it is a rule before it is a translator: ``validate()`` reports a
bad expression (``compute.expr``) before anyone asks for a kernel, from the same parse that the
generators re-emit, so an expression that validates is one the generators can write.

Standard library only (the runtime evaluates the same tree with CuPy).
"""

from __future__ import annotations

import ast
import math
import re
import struct
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..errors import DesignError
from ..model.diagnostic import Diagnostic, error
from ..model.limits import shown

#: Functions an expression may call: name -> (arity, CUDA C template over float operands).
FUNCTIONS: dict[str, tuple[int, str]] = {
    "max": (2, "fmaxf({0}, {1})"),
    "min": (2, "fminf({0}, {1})"),
    "abs": (1, "fabsf({0})"),
    "exp": (1, "expf({0})"),
    "log": (1, "logf({0})"),
    "sqrt": (1, "sqrtf({0})"),
    "tanh": (1, "tanhf({0})"),
    "sigmoid": (1, "(1.0f / (1.0f + expf(-({0}))))"),
    "relu": (1, "fmaxf({0}, 0.0f)"),
}

#: Compute ops whose value is an elementwise expression over the dependencies.
ELEMENTWISE_OPS = ("copy", "store", "elementwise")

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_UNOPS = {ast.USub: "-", ast.UAdd: "+"}
#: Longest expression text accepted, and deepest nesting (keeps parsing and codegen bounded).
MAX_CHARS = 400
MAX_DEPTH = 24
_FLOAT_F = re.compile(r"(?<![\w.])((?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)[fF](?!\w)")


@dataclass(frozen=True)
class Expr:
    """A checked expression: its source text, the checked tree and the operands it uses."""

    text: str
    tree: ast.expr
    operands: tuple[str, ...]

    def to_c(self, names: Mapping[str, str]) -> str:
        """CUDA C over float values; ``names`` maps each operand to a C variable name."""
        return _to_c(self.tree, names)

    def evaluate(self, env: Mapping[str, Any], fns: Mapping[str, Callable[..., Any]],
                 const: Callable[[float], Any] = float) -> Any:
        """Evaluate with the caller's values and functions (e.g. CuPy arrays and ufuncs).

        ``fns`` maps every name in ``FUNCTIONS`` plus ``add sub mul div neg`` to a callable.
        """
        return _eval(self.tree, env, fns, const)

    def __str__(self) -> str:
        return self.text


def _fail(text: str, why: str, operands: Sequence[str]) -> DesignError:
    allowed = ", ".join(operands) or "none"
    shown = text if len(text) <= 120 else text[:100] + "..."  # one readable line, even for 300 digits
    return DesignError(
        f"expression {shown!r}: {why}", code="compute.expr",
        hint=f"use the operands ({allowed}), number literals, + - * /, and the functions "
             f"{', '.join(f'{k}()' for k in FUNCTIONS)}")


def parse_expr(text: str, operands: Sequence[str]) -> Expr:
    """Check ``text`` against the grammar; ``operands`` are the names it may use."""
    if not isinstance(text, str):
        raise _fail(repr(text), f"expected a string, got {type(text).__name__}", operands)
    if len(text) > MAX_CHARS:
        raise _fail(text[:40] + "...", f"is {len(text)} characters long, at most {MAX_CHARS} are allowed", operands)
    if not text.strip():
        raise _fail(text, "is empty", operands)
    odd = next((c for c in text if c in "#\\" or not " " <= c <= "~"), None)
    if odd is not None:  # '#' starts a Python comment, '\\' joins lines: text the grammar would not see
        raise _fail(text, f"holds {odd!r} (comments, line breaks and non-ASCII text are no part of an expression)",
                    operands)
    clean = _FLOAT_F.sub(r"\1", text)
    try:
        tree = ast.parse(clean.strip(), mode="eval").body
    except SyntaxError as exc:
        raise _fail(text, f"is not a valid expression ({exc.msg})", operands) from None
    used: list[str] = []
    _check(tree, text, tuple(operands), used, 0)
    return Expr(text, tree, tuple(dict.fromkeys(used)))


def _check(node: ast.AST, text: str, operands: tuple[str, ...], used: list[str], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _fail(text, f"nests deeper than {MAX_DEPTH} levels", operands)
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise _fail(text, f"operator {type(node.op).__name__} is not allowed", operands)
        _check(node.left, text, operands, used, depth + 1)
        _check(node.right, text, operands, used, depth + 1)
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNOPS:
            raise _fail(text, f"operator {type(node.op).__name__} is not allowed", operands)
        _check(node.operand, text, operands, used, depth + 1)
    elif isinstance(node, ast.Call):
        fn = node.func.id if isinstance(node.func, ast.Name) else None
        if fn not in FUNCTIONS:
            shown = fn or ast.unparse(node.func)
            raise _fail(text, f"calls {shown!r}, which is not an allowed function", operands)
        if node.keywords:
            raise _fail(text, f"{fn}() takes no keyword arguments", operands)
        arity = FUNCTIONS[fn][0]
        if len(node.args) != arity:
            raise _fail(text, f"{fn}() takes {arity} argument(s), got {len(node.args)}", operands)
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise _fail(text, f"{fn}() cannot take *arguments", operands)
            _check(a, text, operands, used, depth + 1)
    elif isinstance(node, ast.Name):
        if node.id not in operands:
            raise _fail(text, f"names {node.id!r}, which is not an operand", operands)
        used.append(node.id)
    elif isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _fail(text, f"literal {v!r} is not a number", operands)
        why = literal_problem(v)
        if why:
            raise _fail(text, why, operands)
    else:
        raise _fail(text, f"{type(node).__name__} ({ast.unparse(node)!r}) is not allowed", operands)


#: The largest float32, and the smallest positive one (a subnormal): the range of a literal.
FLOAT32_MAX = 3.4028234663852886e38
FLOAT32_TINY = 1.401298464324817e-45


def literal_problem(v: int | float) -> str | None:
    """Why number literal ``v`` cannot be a float32 constant of generated code, or None.

    >>> literal_problem(0.5) is None and literal_problem(3.4028235e38) is None and literal_problem(1e-45) is None
    True
    >>> literal_problem(1e39)
    'literal 1e+39 is outside the float32 range (magnitude at most 3.4028235e+38); write a smaller number'
    >>> literal_problem(1e-46)
    'literal 1e-46 is below the smallest float32 (1.4e-45) and would be 0; write 0.0 or a larger number'
    >>> literal_problem(10 ** 308)
    'literal 10000000... (309 digits) is outside the float32 range (magnitude at most 3.4028235e+38); write a smaller number'
    """
    if isinstance(v, float) and not math.isfinite(v):
        return f"literal {v!r} is not a finite number"
    try:
        stored = struct.unpack("<f", struct.pack("<f", float(v)))[0]  # rounds as a C compiler does
    except OverflowError:  # past the float32 range, or an integer past even a float64
        return (f"literal {shown(v)} is outside the float32 range (magnitude at most {FLOAT32_MAX:.8g}); "
                "write a smaller number")
    if stored == 0 and v != 0:
        return (f"literal {shown(v)} is below the smallest float32 ({FLOAT32_TINY:.2g}) and would be 0; "
                "write 0.0 or a larger number")
    return None


def c_float(v: float) -> str:
    """A finite Python number as a CUDA float literal."""
    r = repr(float(v))
    return r + "f" if ("e" in r or "." in r) else r + ".0f"


def _to_c(node: ast.AST, names: Mapping[str, str]) -> str:
    if isinstance(node, ast.BinOp):
        return f"({_to_c(node.left, names)} {_BINOPS[type(node.op)]} {_to_c(node.right, names)})"
    if isinstance(node, ast.UnaryOp):
        return f"({_UNOPS[type(node.op)]}{_to_c(node.operand, names)})"
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id][1].format(*(_to_c(a, names) for a in node.args))
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.Constant):
        return c_float(node.value)
    raise TypeError(type(node).__name__)  # unreachable for a checked tree


_EVAL_BIN = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}


def _eval(node: ast.AST, env, fns, const):
    if isinstance(node, ast.BinOp):
        return fns[_EVAL_BIN[type(node.op)]](_eval(node.left, env, fns, const), _eval(node.right, env, fns, const))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env, fns, const)
        return fns["neg"](v) if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Call):
        return fns[node.func.id](*(_eval(a, env, fns, const) for a in node.args))
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Constant):
        return const(float(node.value))
    raise TypeError(type(node).__name__)


# -- the catalog ---------------------------------------------------------------------------------

def copy(a: str) -> str:
    return a


def add(a: str, b: str) -> str:
    return f"{a} + {b}"


def multiply(a: str, b: str) -> str:
    return f"{a} * {b}"


def relu(a: str) -> str:
    return f"max({a}, 0.f)"


def scale(a: str, factor: float) -> str:
    number = isinstance(factor, (int, float)) and not isinstance(factor, bool)
    why = literal_problem(factor) if number else f"{factor!r} is not a number"
    if why:
        raise DesignError(f"scale factor: {why}", code="compute.expr",
                          hint="give the factor as a float, e.g. scale('smem_a', 0.5)")
    return f"{a} * {c_float(factor)}"


#: Named compute operations a studio can offer: name -> builder of an expression string.
CATALOG: dict[str, Callable[..., str]] = {"copy": copy, "add": add, "multiply": multiply, "relu": relu,
                                           "scale": scale}


def compute_expr(design: Any, resource: str) -> Expr | None:
    """What ``resource`` computes from its dependencies, as a checked expression.

    ``None`` for a kernel input.  ``copy`` / a ``store`` without an expression copy the one
    dependency; ``store`` / ``elementwise`` with an expression use it.
    """
    r = design.resource(resource)
    deps = design.deps(resource)
    op, text = r.compute.op, r.compute.expr
    if op == "input":
        return None
    if op not in ELEMENTWISE_OPS:
        raise DesignError(f"resource {resource!r} computes {op!r}, which is not elementwise",
                          code="compute.op", hint="elementwise kernels support copy, store and elementwise")
    if not text:
        if len(deps) != 1:
            raise DesignError(
                f"resource {resource!r} computes {op} with no expression but depends on "
                f"{len(deps)} resources ({', '.join(deps) or 'none'})", code="compute.expr",
                hint=f"give Compute({op!r}, expr) an expression over {', '.join(deps) or 'its dependencies'}")
        text = deps[0]
    try:
        return parse_expr(text, deps)
    except DesignError as exc:
        raise DesignError(f"resource {resource!r}: {_message(exc)}", code=exc.code, hint=exc.hint) from None


def _message(exc: DesignError) -> str:
    """The message of ``exc`` without the "; fix: ..." its text ends with."""
    text = str(exc)
    tail = f"; fix: {exc.hint}"
    return text[: -len(tail)] if exc.hint and text.endswith(tail) else text


def compute_exprs(design: Any) -> tuple[dict[str, Expr], list[Diagnostic]]:
    """Every computed resource's checked expression, and a ``compute.*`` diagnostic for each one
    that does not parse (the rule table reports these; the generators read the expressions)."""
    exprs, problems = {}, []
    for r in design.resources:
        if r.compute.op not in ELEMENTWISE_OPS:
            continue  # input, mma (the tensor cores), or an unknown op (the resource rule says so)
        try:
            ex = compute_expr(design, r.name)
        except DesignError as exc:
            problems.append(error(exc.code or "compute.expr", _message(exc), (r.name,), exc.hint))
            continue
        if ex is not None:
            exprs[r.name] = ex
    return exprs, problems


__all__ = ["CATALOG", "ELEMENTWISE_OPS", "Expr", "FLOAT32_MAX", "FLOAT32_TINY", "FUNCTIONS", "add", "c_float",
           "compute_expr", "compute_exprs", "copy", "literal_problem", "multiply", "parse_expr", "relu", "scale"]

"""The elementwise expression grammar: what it accepts, what it rejects and what it re-emits."""

import math
import operator
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgstudio.analysis import expr as ops
from pgstudio.errors import DesignError

OPERANDS = ("smem_a", "smem_b")


def test_an_activation_expression_is_reemitted_as_c():
    ex = ops.parse_expr("max(smem_a, 0.f) * smem_b", OPERANDS)
    assert ex.operands == ("smem_a", "smem_b")
    assert ex.to_c({"smem_a": "x", "smem_b": "y"}) == "(fmaxf(x, 0.0f) * y)"


@pytest.mark.parametrize("text, c", [
    ("smem_a + smem_b", "(a + b)"),
    ("-smem_a / 2", "((-a) / 2.0f)"),
    ("sqrt(abs(smem_a)) - 1e-3", "(sqrtf(fabsf(a)) - 0.001f)"),
    ("tanh(smem_a) * exp(smem_b) + log(2.5f)", "((tanhf(a) * expf(b)) + logf(2.5f))"),
    ("min(smem_a, smem_b)", "fminf(a, b)"),
    ("relu(smem_a)", "fmaxf(a, 0.0f)"),
    ("sigmoid(smem_b)", "(1.0f / (1.0f + expf(-(b))))"),
])
def test_accepted_expressions(text, c):
    assert ops.parse_expr(text, OPERANDS).to_c({"smem_a": "a", "smem_b": "b"}) == c


@pytest.mark.parametrize("text, why", [
    ("__import__('os').system('ls')", "__import__"),
    ("smem_a.__class__", "Attribute"),
    ("open('f')", "'open'"),
    ("smem_c + 1", "'smem_c', which is not an operand"),
    ("smem_a ** 2", "Pow"),
    ("smem_a if smem_b else 0", "IfExp"),
    ("lambda: 1", "Lambda"),
    ("[smem_a]", "List"),
    ("'text'", "not a number"),
    ("True", "not a number"),
    ("max(smem_a)", "takes 2 argument(s), got 1"),
    ("exp(x=smem_a)", "keyword"),
    ("max(*smem_a, 1)", "*arguments"),
    ("1e999 * smem_a", "not a finite number"),
    ("", "is empty"),
    ("smem_a +", "not a valid expression"),
    ('smem_a); asm("trap;"', "not a valid expression"),
    ("smem_a % 2", "Mod"),
    ("smem_a < smem_b", "Compare"),
    ("a" * 500, "at most"),
])
def test_rejected_expressions_say_why(text, why):
    with pytest.raises(DesignError) as info:
        ops.parse_expr(text, OPERANDS)
    assert why in str(info.value)
    assert info.value.code == "compute.expr"
    assert "smem_a, smem_b" in str(info.value)  # the hint lists what is allowed


def test_deep_nesting_is_rejected():
    with pytest.raises(DesignError, match="nests deeper"):
        ops.parse_expr("-" * 60 + "smem_a", OPERANDS)


PY_FNS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
          "neg": operator.neg, "max": max, "min": min, "abs": abs, "exp": math.exp, "log": math.log,
          "sqrt": math.sqrt, "tanh": math.tanh, "sigmoid": lambda x: 1 / (1 + math.exp(-x)),
          "relu": lambda x: max(x, 0.0)}


def test_evaluate_uses_the_callers_functions():
    ex = ops.parse_expr("max(smem_a, 0.f) * smem_b - 1.5 / 3", OPERANDS)
    assert ex.evaluate({"smem_a": -2.0, "smem_b": 4.0}, PY_FNS) == pytest.approx(-0.5)
    assert ex.evaluate({"smem_a": 3.0, "smem_b": 4.0}, PY_FNS) == pytest.approx(11.5)


def test_catalog_builds_checked_expressions():
    assert ops.parse_expr(ops.add("smem_a", "smem_b"), OPERANDS).evaluate({"smem_a": 1.0, "smem_b": 2.0}, PY_FNS) == 3
    assert ops.parse_expr(ops.relu("smem_a"), OPERANDS).evaluate({"smem_a": -1.0}, PY_FNS) == 0
    assert ops.parse_expr(ops.scale("smem_a", 0.5), OPERANDS).evaluate({"smem_a": 3.0}, PY_FNS) == 1.5
    assert ops.parse_expr(ops.multiply("smem_a", "smem_b"), OPERANDS).operands == OPERANDS
    assert set(ops.CATALOG) == {"copy", "add", "multiply", "relu", "scale"}
    with pytest.raises(DesignError, match="not a finite number"):
        ops.scale("smem_a", float("inf"))


_C_TOKEN = re.compile(r"\s*(?:(x|y)\b|(fmaxf|fminf|fabsf|expf|logf|sqrtf|tanhf)\b|(\d+(?:\.\d*)?(?:e[+-]?\d+)?f?)|([-+*/(),]))")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("smem_abxy0123456789.+-*/(),efx \"';:[]{}_%<>!&|^~=#\\")), max_size=60))
def test_any_text_is_rejected_or_reemitted_from_the_grammar_only(text):
    """Arbitrary input never reaches the generated C: it is refused, or rebuilt from allowed tokens."""
    try:
        ex = ops.parse_expr(text, OPERANDS)
    except DesignError:
        return
    c = ex.to_c({"smem_a": "x", "smem_b": "y"})
    pos = 0
    while pos < len(c):
        m = _C_TOKEN.match(c, pos)
        assert m, f"unexpected C at {c[pos:]!r} from {text!r}"
        pos = m.end()


@pytest.mark.parametrize("text", ["max(smem_a, 0.f)\n#define X 1", "smem_a # a comment", "smem_a \\\n + 1",
                                  "smem_\u0430", "smem_a\r+ 1", "smem_a\x00"])
def test_comments_line_breaks_and_non_ascii_text_are_refused(text):
    """Python would drop a comment or join lines before the grammar sees them: text the user wrote
    that would never be compiled is refused, not silently ignored."""
    with pytest.raises(DesignError, match="comments, line breaks and non-ASCII text are no part of an expression"):
        ops.parse_expr(text, OPERANDS)


# -- literals a float32 holds ---------------------------------------------------------------------

@pytest.mark.parametrize("text, why", [
    ("smem_a * 1e39", "literal 1e+39 is outside the float32 range (magnitude at most 3.4028235e+38)"),
    ("smem_a - 3.4028236e38f", "outside the float32 range"),
    ("smem_a + 1e-46", "literal 1e-46 is below the smallest float32 (1.4e-45) and would be 0; write 0.0"),
    ("smem_a * 7e-46f", "below the smallest float32"),
    ("smem_a * 1" + "0" * 308, "literal 10000000... (309 digits) is outside the float32 range"),
    ("-" + "9" * 330 + " + smem_a", "(330 digits) is outside the float32 range"),
])
def test_literals_a_float32_cannot_hold_are_refused_naming_the_range(text, why):
    with pytest.raises(DesignError) as err:
        ops.parse_expr(text, OPERANDS)
    assert err.value.code == "compute.expr" and why in str(err.value)
    assert len(str(err.value).splitlines()) == 1 and len(str(err.value)) < 500  # one readable line


@pytest.mark.parametrize("text, c", [
    ("smem_a * 3.4028235e38", "(a * 3.4028235e+38f)"),  # rounds to the largest float32
    ("smem_a + 1e-45", "(a + 1e-45f)"),  # the smallest float32 (a subnormal)
    ("smem_a * 1.1754944e-38f", "(a * 1.1754944e-38f)"),
    ("smem_a * 0.0", "(a * 0.0f)"),
    ("smem_a * 340282346638528859811704183484516925440", "(a * 3.4028234663852886e+38f)"),
])
def test_literals_at_the_edges_of_float32_are_kept(text, c):
    assert ops.parse_expr(text, OPERANDS).to_c({"smem_a": "a", "smem_b": "b"}) == c


def test_a_scale_factor_a_float32_cannot_hold_is_refused():
    for factor, why in ((1e39, "outside the float32 range"), (10 ** 309, "(310 digits)"), (1e-50, "would be 0")):
        with pytest.raises(DesignError, match=re.escape(why)):
            ops.scale("smem_a", factor)

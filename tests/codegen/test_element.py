"""One output element from the inputs: every produced value is computed once and named, so the
emitted source grows linearly with the depth of a design, and the tail still computes what the
reference computes (the C lines are evaluated here with numpy float32 arithmetic)."""

import re

import pytest

from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.codegen.dtypes import dtype
from pgstudio.codegen.element import element_code
from stream_designs import async_compute

np = pytest.importorskip("numpy")
MODES = ("Merge", "Fork", "FusedMerge")


def _load(name):
    return f"IN[{name!r}]"


def test_every_value_of_a_chain_is_named_once_in_dependency_order():
    d = examples.chain(5)
    code = element_code(d, ["gmem_d"], dtype("float32"), _load)
    names = [re.match(r"const float (\w+) = ", ln).group(1) for ln in code.lines]
    # inputs, then groups 1..4 (group 0 copies the inputs: no temporaries of its own), then D
    assert names == ["pg_v_gmem_a", "pg_v_gmem_b", *(f"pg_v_s{k}_{m}" for k in range(1, 5) for m in "ab"),
                     "pg_v_gmem_d"]
    assert code.values == {"gmem_d": "pg_v_gmem_d"}
    assert code.lines[2] == "const float pg_v_s1_a = (pg_v_gmem_a + pg_v_gmem_b);"
    assert all(ln.count("pg_v_") <= 3 for ln in code.lines)  # each line names its operands, never their expressions


def test_staged_values_are_rounded_where_the_kernel_rounds():
    code = element_code(examples.chain(3), ["gmem_d"], dtype("bfloat16"), _load)
    staged = [ln for ln in code.lines if ln.startswith("const float pg_v_s")]
    assert len(staged) == 4 and all(" = pg_h2f(pg_f2h(" in ln for ln in staged)
    assert "pg_f2h" not in code.lines[-1]  # the output is rounded once, by its store


def _evaluate(code, inputs, dt):
    """Run the C lines with numpy float32 arithmetic (the grammar's C subset), one vector per name."""
    env = {"IN": inputs, "fmaxf": np.fmax, "fminf": np.fmin, "expf": np.exp, "fabsf": np.abs, "logf": np.log,
           "sqrtf": np.sqrt, "tanhf": np.tanh,
           "pg_f2h": lambda v: v.astype(np.float16 if dt == "float16" else np.float32),
           "pg_h2f": lambda v: v.astype(np.float32)}
    if dt == "bfloat16":
        from pgstudio.runtime.data import from_float32, to_float32
        env["pg_f2h"] = lambda v: from_float32(np, np.asarray(v, np.float32), "bfloat16")
        env["pg_h2f"] = lambda v: to_float32(np, v, "bfloat16")
    for ln in code.lines:
        name, c = re.fullmatch(r"const float (\w+) = (.*);", ln).groups()
        py = re.sub(r"(?<![\w.])(\d+\.?\d*(?:e[+-]?\d+)?)f\b", r"np.float32(\1)", c)
        env[name] = np.asarray(eval(py, {"np": np}, env), dtype=np.float32)  # noqa: S307 - our own generated lines
    return env


@pytest.mark.parametrize("dt", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("design", [examples.chain(7, "Fork"), async_compute()], ids=lambda d: d.name)
def test_the_tail_computes_what_the_reference_computes(design, dt):
    from pgstudio.runtime.data import from_float32, to_float32
    from pgstudio.runtime.reference import reference
    rng = np.random.default_rng(7)
    raw = {n: from_float32(np, rng.standard_normal(257).astype(np.float32), dt) for n in ("gmem_a", "gmem_b")}
    code = element_code(design, ["gmem_d"], dtype(dt), _load)
    env = _evaluate(code, {n: to_float32(np, v, dt) for n, v in raw.items()}, dt)
    got = to_float32(np, from_float32(np, env[code.values["gmem_d"]], dt), dt)  # the store rounds
    want = reference(design, raw, np, dt)["gmem_d"]
    if design.name.startswith("chain"):  # + - and power-of-two factors: bit for bit
        assert np.array_equal(got, want)
    else:  # expf here and in the reference may differ in the last bit
        assert np.allclose(got, want, rtol=1e-5 if dt == "float32" else 8e-3, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_emitted_source_grows_linearly_with_the_chain(mode):
    depths = (2, 4, 8, 12, 16, 24, examples.MAX_CHAIN_GROUPS)
    sizes: list[int] = []
    for n in depths:  # deeper only while growth stays linear (an exponential emitter fails at 12, fast)
        sizes.append(len(emit(examples.chain(n, mode, num_stages=2, tile_bytes=512)).code))  # same tile throughout
        per_group = [(b - a) / (m - k) for k, m, a, b in zip(depths, depths[1:], sizes, sizes[1:])]
        assert max(per_group, default=0) <= 1.15 * min(per_group, default=0), (sizes, per_group)
    assert sizes[-1] < 1 << 20  # the deepest chain: under 1 MB of CUDA


def test_the_store_tail_of_a_deep_chain_is_one_line_per_value():
    src = emit(examples.chain(examples.MAX_CHAIN_GROUPS, dtype="bfloat16")).code
    tail = src[src.rindex("elements past the last whole vector"):]
    assert tail.count("pg_ld1(gmem_a") == 1 and tail.count("pg_ld1(gmem_b") == 1
    assert len(max(src.splitlines(), key=len)) < 400

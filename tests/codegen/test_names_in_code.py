"""Design names in generated code: a name that validates is one that compiles, and two names
never become one identifier.

The streaming kernel writes a design's names as they are (``cname`` renames the ones the
generated code already uses, behind a prefix no design name can have); the GEMM kernel writes
them behind fixed prefixes (``g_a``, ``s_ab``, ``x_acc0``).  These tests read the identifiers of
the emitted sources themselves, so a generator change that starts using a new word is caught
here without NVRTC.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from gemm_designs import BUILDERS as GEMM_BUILDERS
from pgstudio import DesignError, GmemTensor, MemoryResource, Task
from pgstudio.analysis.rules import rule_names
from pgstudio.codegen import emit
from pgstudio.codegen.instrument import Instrument
from pgstudio.codegen.kernel import GENERATED_WORDS, RENAMED_PREFIX, TUNING, cname, identifiers
from pgstudio.model.design import Design
from pgstudio.model.names import ALTERNATIVE_TOKENS, CPP_KEYWORDS, CUDA_MACROS, name_problem, suggest_name
from stream_designs import async_compute, cp_async_copy, mixed_merge
from pgstudio import examples

STREAMING = {"merge_copy": examples.merge_copy, "fork_copy": examples.fork_copy,
             "fused_merge_copy": examples.fused_merge_copy, "async_compute": async_compute,
             "cp_async_copy": cp_async_copy, "mixed_merge": mixed_merge}
#: Prefixes behind which the GEMM generator writes a design's names (gmem pointers, stage and
#: phase cursors, pending releases, tensor maps, staged values, epilogue registers, halves).
GEMM_PREFIXES = ("g_", "s_", "ph_", "pend_", "tm_", "v_", "x_", "lo_", "hi_", "done_")
SENTINEL = "zq"


def sentinel_names(d: Design) -> Design:
    """``d`` with every resource, group and task named ``zq<i>`` (through its file)."""
    names = [x.name for x in (*d.resources, *d.groups, *d.tasks)]
    new = {n: f"{SENTINEL}{i}" for i, n in enumerate(names)}
    word = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")\b")

    def walk(x):
        if isinstance(x, str):
            return word.sub(lambda m: new[m.group(0)], x)
        if isinstance(x, list):
            return [walk(v) for v in x]
        if isinstance(x, dict):  # an op word ('store') may also be a task's name
            return {walk(k) if k in new else k: v if k in ("op", "memory", "dtype") else walk(v) for k, v in x.items()}
        return x

    obj = json.loads(d.to_json())
    obj = {**walk({k: v for k, v in obj.items() if k != "name"}), "name": obj["name"]}
    return Design.from_json(json.dumps(obj))


def stream_sources():
    for name, build in STREAMING.items():
        for dt in ("float32", "float16", "bfloat16"):
            d = sentinel_names(build(dtype=dt))
            assert d.validate().ok, (name, dt, [e.code for e in d.validate().errors])
            yield emit(d)
            for knob, values in TUNING.items():
                yield emit(d, tuning={knob: values[-1]})
        yield emit(sentinel_names(build()), instrument=Instrument())


def test_every_word_of_the_streaming_kernel_is_renamed_or_refused_as_a_design_name():
    """A design name equal to any identifier the streaming kernel writes (other than the
    design's own names) is either refused by the name rule or renamed by ``cname``: it can
    never hide a type, helper or built-in, or be a local of the kernel."""
    loose = {}
    for src in stream_sources():
        for w in identifiers(src.code):
            if SENTINEL not in w and name_problem(w) is None and cname(w) == w:
                loose.setdefault(w, src.design)
    assert not loose, f"identifiers of generated code a design could take unrenamed: {sorted(loose)}"


def test_gemm_kernels_write_design_names_behind_prefixes_no_fixed_name_has():
    for name, build in GEMM_BUILDERS.items():
        d = sentinel_names(build())
        assert d.validate().ok, (name, [e.code for e in d.validate().errors])
        for arch in d.targets:
            words = identifiers(emit(d, arch=arch).code)
            named = {w for w in words if SENTINEL in w}
            bare = {w for w in named if not w.startswith(GEMM_PREFIXES) and not w.startswith("pg_")}
            assert not bare, f"{name} {arch}: design names written without a prefix: {sorted(bare)}"
            for w in named:  # prefix + name + at most one digit (a chunk index): one-to-one
                assert re.fullmatch(rf"({'|'.join(GEMM_PREFIXES)}|pg_\w*?){SENTINEL}\d+", w) or \
                    re.fullmatch(rf"({'|'.join(GEMM_PREFIXES)}){SENTINEL}\d+", w[:-1]), w
            fixed = sorted(w for w in words if SENTINEL not in w and w.startswith(GEMM_PREFIXES))
            assert not fixed, f"{name} {arch}: fixed identifiers share a design-name prefix: {fixed}"


def test_renaming_is_one_to_one():
    names = [w for w in GENERATED_WORDS if name_problem(w) is None]
    names += [w + "_" for w in names] + [RENAMED_PREFIX.rstrip("_") + "_" + w for w in names] + ["PG_VEC", "PG_VEC_"]
    names = [n for n in names if name_problem(n) is None]
    assert len({cname(n) for n in names}) == len(set(names))
    assert cname("u32") != cname("u32_") and cname("gmem_a") == "gmem_a"
    assert all(cname(n).startswith(RENAMED_PREFIX) or not cname(n).startswith("pg_") for n in names)


# -- the name rule -----------------------------------------------------------------------------------

REFUSED = [("NULL", "a macro"), ("assert", "a macro"), ("va_start", "a macro"), ("CUDART_VERSION", "a macro"),
           ("cudaStreamDefault", "a macro"), ("NV_IS_DEVICE", "a macro"), ("xor", "alternative token (it means '^')"),
           ("bitand", "alternative token (it means '&')"), ("compl", "alternative token"),
           ("not_eq", "alternative token"), ("static_cast", "a C++ keyword"), ("wchar_t", "a C++ keyword"),
           ("char8_t", "a C++ keyword"), ("co_await", "a C++ keyword"), ("requires", "a C++ keyword"),
           ("_Bool", "reserved by C++"), ("threadIdx", "a CUDA built-in"), ("float4", "a CUDA built-in")]


@pytest.mark.parametrize("name,why", REFUSED)
def test_cpp_words_and_macros_are_refused_as_names_with_the_fix(name, why):
    problem = name_problem(name)
    assert problem and why in problem and name in problem
    with pytest.raises(DesignError) as err:
        GmemTensor(name)
    assert err.value.code == "name.identifier" and f"name {name!r}" in str(err.value)
    assert name_problem(suggest_name(name)) is None and suggest_name(name) in str(err.value)
    for make in (lambda: MemoryResource(name=name), lambda: Task(name, 0, 1)):
        with pytest.raises(DesignError, match="reserved word"):
            make()


def test_every_keyword_token_and_macro_is_refused():
    for word in (*CPP_KEYWORDS, *ALTERNATIVE_TOKENS, *CUDA_MACROS):
        assert name_problem(word), word


@pytest.mark.parametrize("name", ["NULL", "xor", "wchar_t"])
def test_a_file_naming_a_tensor_a_cpp_word_is_refused_at_load_naming_the_field(name):
    text = examples.merge_copy().to_json().replace('"gmem_a"', f'"{name}"')
    with pytest.raises(DesignError) as err:
        Design.from_json(text)
    assert "resources[0].name" in str(err.value) and repr(name) in str(err.value)


def test_the_validation_rule_names_the_field_the_value_and_the_fix():
    """A design built around the constructors' checks (as a studio's raw edit could) is reported
    by ``validate()`` itself."""
    d = examples.merge_copy()
    bad = dataclasses.replace(d.resources[0])
    object.__setattr__(bad, "name", "xor")
    object.__setattr__(d, "resources", (bad, *d.resources[1:]))
    (diag,) = [x for x in rule_names(d) if x.code == "name.identifier"]
    assert diag.message.startswith("resource name 'xor' is a reserved word") and "alternative token" in diag.message
    assert diag.where == ("xor",) and "xor_1" in diag.hint


@pytest.mark.parametrize("name", ["u32", "u32_", "expf", "uint4_", "src", "PG_VEC", "make_uint4"])
def test_names_the_generated_code_uses_are_renamed_not_refused(name):
    d = examples.merge_copy()
    d = Design.from_json(d.to_json().replace('"gmem_b"', f'"{name}"').replace("gmem_b", name))
    assert d.validate().ok
    code = emit(d).code
    assert f"__restrict__ {cname(name)}," in code
    assert (cname(name) == name) == (name in ("u32_", "uint4_"))

"""Valid means it compiles: for random and mutated designs, zero errors from
``validate()`` implies that ``emit`` builds the kernel and NVRTC compiles it for every target
(sm_90a and sm_100a), and a refusal is always a diagnostic code first: ``emit`` on a design with
errors raises ONE ``DesignError`` carrying exactly the errors ``validate()`` reports for that arch.

How it stays affordable on a 2-core CI machine: hypothesis draws the designs (derandomised, no
example database) and every one is validated and emitted; the sources of the valid ones are
compiled once per distinct source text (many designs share one), in a pool of two processes, after
the draw.  ``PGSTUDIO_BUILDABLE_EXAMPLES`` raises the number of designs for a longer local run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gemm_designs import BUILDERS as GEMM_BUILDERS
from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.codegen.kernel import GENERATED_WORDS, RENAMED_PREFIX
from pgstudio.errors import DesignError
from pgstudio.model.config import CooperativeGroup
from pgstudio.model.design import Design
from pgstudio.model.group import PipelineGroup, PipelineGroupMode
from pgstudio.model.kinds import Agent, AsyncProducerOp
from pgstudio.model.names import ALTERNATIVE_TOKENS, CPP_KEYWORDS, CUDA_MACROS, name_problem
from pgstudio.model.problem import INTEGER_KEYS
from pgstudio.model.resource import Compute, Memory
from pgstudio.model.targets import ARCHES
from pgstudio.model.task import Task
from stream_designs import async_compute, cp_async_copy, mixed_merge

pytestmark = [pytest.mark.nvrtc, pytest.mark.timeout(1200)]

EXAMPLES = int(os.environ.get("PGSTUDIO_BUILDABLE_EXAMPLES", "2000"))
SETTINGS = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None, print_blob=True,
                    suppress_health_check=list(HealthCheck))

DTYPES = ("float32", "float16", "bfloat16")
STREAMING = {"merge_copy": examples.merge_copy, "fork_copy": examples.fork_copy,
             "fused_merge_copy": examples.fused_merge_copy, "async_compute": async_compute,
             "cp_async_copy": cp_async_copy, "mixed_merge": mixed_merge}
#: Names a user may well pick that are also words of generated code.
NAMES = ("tile", "base", "src", "dst", "acc", "o", "e", "w", "M", "N", "K", "kt", "row", "x_smem_a", "s_ab",
         "tm_gmem_a", "lane", "warp", "stg", "idx", "data", "out", "bar0", "expf", "fmaxf", "tma_load_2d", "wd_abort",
         "min", "exp")
#: GEMM sizes near the generator's limits: (stages, BM, BN, BK, dtype).
NEAR_GEMM = [(s, bm, bn, bk, dt) for s in (1, 2, 3, 4) for bm in (128, 256) for bn in (64, 128, 256)
             for bk in (32, 64, 128) for dt in ("float16", "bfloat16", "float32") if bm == 128 or bn <= 128]
EXPRS = ("{a}", "{a} + {b}", "max({a}, 0.f) * {b}", "sigmoid({a}) - 0.5", "relu({a} * 2.5e-1)", "-{a} / 3",
         "exp(min({a}, {b}))", "tanh(abs({a}))", "sqrt({a}) + log({b})", "{a} * {a} * {a}", "({a})",
         "open({a})", "{a} + q", "{a} +", "")


# -- the designs: canonical builders with random sizes, then random edits ----------------------------

@st.composite
def base_designs(draw) -> Design:
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(STREAMING)))
        kw = dict(num_stages=draw(st.integers(1, 8)), dtype=draw(st.sampled_from(DTYPES)),
                  tile_bytes=draw(st.sampled_from((16, 48, 256, 1024, 4096, 8192, 16384, 40000))))
        return STREAMING[name](**kw)
    name = draw(st.sampled_from(sorted(GEMM_BUILDERS)))
    if draw(st.integers(0, 9)) < 6:  # sizes near what the generator builds, so many designs are valid
        stages, bm, bn, bk, dtype = draw(st.sampled_from(NEAR_GEMM))
    else:  # anywhere in the grid the corpus spans, and beyond
        stages, bm, bn, bk, dtype = (draw(st.integers(1, 7)), draw(st.sampled_from((64, 128, 192, 256))),
                                     draw(st.sampled_from((64, 96, 128, 192, 256))),
                                     draw(st.sampled_from((32, 64, 96, 128))), draw(st.sampled_from(DTYPES)))
    return GEMM_BUILDERS[name](num_stages=stages, bm=bm, bn=bn, bk=bk, dtype=dtype,
                               split_k=draw(st.sampled_from((1, 1, 2, 3))),
                               m=draw(st.sampled_from((512, 1000, 4096))), n=draw(st.sampled_from((512, 1000, 4096))),
                               k=draw(st.sampled_from((256, 1000, 4096))))


def renamed(d: Design, old: str, new: str) -> Design:
    """``d`` with resource ``old`` called ``new`` everywhere, expressions too (through its file)."""
    word = re.compile(rf"\b{re.escape(old)}\b")

    def walk(x):
        if isinstance(x, str):
            return word.sub(new, x)
        if isinstance(x, list):
            return [walk(v) for v in x]
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        return x

    obj = walk(json.loads(d.to_json()))
    obj["graph"] = {new if k == old else k: v for k, v in obj["graph"].items()}  # keys name resources here only
    return Design.from_json(json.dumps(obj))


def _config(r, **changes):
    return dataclasses.replace(r, pipeline_config=dataclasses.replace(r.pipeline_config, **changes))


def _retask(d: Design, t: Task, **changes) -> Design:
    fields = dict(warp_idx=t.warp_idx, num_warps=t.num_warps, src_resources=t.src_resources,
                  dst_resources=t.dst_resources, schedule=t.schedule)
    return d.with_task(Task.unchecked(t.name, **{**fields, **changes}))


@st.composite
def edits(draw, d: Design) -> Design:
    """One random edit a user (or a studio) could make."""
    kind = draw(st.sampled_from(("targets", "dtype", "stages", "bytes", "group_size", "async_op", "warps", "problem",
                                 "compute", "rename", "ungroup", "drop_task", "mode", "tile")))
    res = draw(st.sampled_from(d.resources))
    piped = [r for r in d.resources if r.pipeline_config is not None]
    if kind == "targets":
        return d.with_targets(*draw(st.sampled_from([("sm_90a",), ("sm_100a",), ARCHES, ARCHES])))
    if kind == "dtype":
        return d.with_resource(dataclasses.replace(res, dtype=draw(st.sampled_from(DTYPES))))
    if kind in ("stages", "bytes", "group_size", "async_op") and piped:
        r = draw(st.sampled_from(piped))
        if kind == "stages":
            return d.with_resource(_config(r, num_stages=draw(st.integers(1, 8))))
        if kind == "bytes":
            return d.with_resource(_config(r, num_bytes=draw(st.sampled_from((0, 16, 100, 2048, 8192, 16384, 32768)))))
        if kind == "async_op":
            return d.with_resource(_config(r, async_producer_op=draw(st.sampled_from(list(AsyncProducerOp)))))
        side = draw(st.sampled_from(("producer_group", "consumer_group")))
        agent = draw(st.sampled_from(list(Agent)))  # a group fits one block: at most 32 warps (model/limits.py)
        group = CooperativeGroup(agent, draw(st.sampled_from((1, 2, 4, 8, 32) if agent is Agent.Warp else (1, 2, 4, 8, 32, 128))))
        return d.with_resource(_config(r, **{side: group}))
    if kind == "warps" and d.tasks:
        t = draw(st.sampled_from(d.tasks))
        return _retask(d, t, warp_idx=draw(st.integers(0, 24)), num_warps=draw(st.sampled_from((1, 2, 3, 4, 8))))
    if kind == "problem" and d.problem:
        key = draw(st.sampled_from([k for k, _ in d.problem]))
        # problem sizes are whole numbers from 0 (model/limits.py refuses -4 when the design is built)
        value = draw(st.one_of(st.sampled_from((8, 32, 64, 96, 100, 128, 256, 0, 4096)), st.just("x"), st.none()))
        return d.replace(problem=[(k, v) for k, v in d.problem if k != key] + ([] if value is None else [(key, value)]))
    if kind == "compute" and d.deps(res.name):
        deps = d.deps(res.name)
        text = draw(st.sampled_from(EXPRS)).format(a=deps[0], b=deps[-1])
        op = draw(st.sampled_from(("copy", "elementwise", "store", "input", "mma", res.compute.op, res.compute.op)))
        return d.with_resource(dataclasses.replace(res, compute=Compute(op, text)))
    if kind == "rename":
        new = draw(st.sampled_from(NAMES))
        if any(x.name == new for x in (*d.resources, *d.groups, *d.tasks)):
            return d
        return renamed(d, res.name, new)
    if kind == "ungroup" and d.groups:
        return examples.ungrouped(d)
    if kind == "drop_task" and d.tasks:
        return d.without_task(draw(st.sampled_from(d.tasks)).name)
    if kind == "mode" and d.groups:
        g = draw(st.sampled_from(d.groups))
        return d.with_group(PipelineGroup.unchecked(g.name, g.members, draw(st.sampled_from(list(PipelineGroupMode))),
                                                    g.pipeline_config))
    if kind == "tile" and res.memory is not Memory.GMEM:
        return d.with_resource(dataclasses.replace(res, tile=tuple(draw(st.lists(st.sampled_from((64, 128, 256)),
                                                                                 min_size=1, max_size=2)))))
    return d


@st.composite
def designs(draw) -> Design:
    d = draw(base_designs())
    d = d.with_targets(*draw(st.sampled_from([ARCHES, ARCHES, ARCHES, ("sm_90a",)])))
    for _ in range(draw(st.sampled_from((0, 0, 0, 0, 1, 1, 1, 2, 2, 3)))):
        d = draw(edits(d))
    return d


# -- the edges: names, literals and counts where they meet C++ --------------------------------------

EDGE_EXAMPLES = int(os.environ.get("PGSTUDIO_EDGE_EXAMPLES", "120"))
EDGE_SETTINGS = settings(SETTINGS, max_examples=EDGE_EXAMPLES)
#: Words no design element may be called: every C++ keyword and alternative token, the macros
#: NVRTC's headers define (and members of their families), reserved forms, CUDA built-ins.
CPP_WORDS = sorted(CPP_KEYWORDS | set(ALTERNATIVE_TOKENS) | CUDA_MACROS |
                   {"CUDART_VERSION", "CUDA_IPC_HANDLE_SIZE", "NV_IS_DEVICE", "cudaStreamDefault", "_Bool", "_Pragma",
                    "threadIdx", "gridDim", "float4", "dim3"})
#: Words the generated code uses that a design may take (renamed in the streaming kernel, behind a
#: prefix in the GEMM kernel), each paired with the name a careless renaming would give it.
TAKEN = sorted(w for w in GENERATED_WORDS if name_problem(w) is None)
PAIRS = ("{w}_", "{w}_", "g_{w}", "x_{w}", "s_{w}", "{w}0")
#: Literals a float32 holds at the edges of its range, all in one expression (one source to compile).
EDGE_OK = ("{a} * 3.4028235e38 - 1e-45f * {b} + 1.1754944e-38 - 340282346638528859811704183484516925440 * 0.0 "
           "+ 16777217 + 7.1e-46")
#: One step past the range, each alone: (text, what the error says).
EDGE_BAD = (("{a} * 1e39", "outside the float32 range"), ("{a} - 3.4028236e38f", "outside the float32 range"),
            ("{a} + 1e-46", "below the smallest float32"), ("{a} * 7e-46f", "below the smallest float32"),
            ("{a} * 1" + "0" * 308, "(309 digits) is outside the float32 range"), ("{a} + 1e400", "not a finite"))


def computed(d: Design):
    """Resources whose value is an expression over their dependencies."""
    return [r for r in d.resources if d.deps(r.name) and r.compute.op in ("copy", "store", "elementwise")]


@st.composite
def edge_edits(draw, d: Design) -> Design:
    """One edit at an edge; a refusal the model makes at once is asserted here."""
    kind = draw(st.sampled_from(("cpp_word", "pair", "pair", "literal", "literal", "literal_bad", "count")))
    if kind == "cpp_word":  # refused where it is given, naming the word and the rule
        word = draw(st.sampled_from(CPP_WORDS))
        with pytest.raises(DesignError) as err:  # a file naming a resource so
            renamed(d, draw(st.sampled_from(d.resources)).name, word)
        assert f"name {word!r}" in str(err.value) and "reserved word" in str(err.value), str(err.value)
        if d.tasks:  # a task, through the API
            t = draw(st.sampled_from(d.tasks))
            with pytest.raises(DesignError, match="reserved word"):
                Task(word, t.warp_idx, t.num_warps)
        return d
    if kind == "pair":  # two names a careless renaming would make one: both kept, distinct
        word = draw(st.sampled_from(TAKEN))
        other = draw(st.sampled_from(PAIRS)).format(w=word)
        if len(d.resources) < 2 or name_problem(other) or any(x.name in (word, other)
                                                              for x in (*d.resources, *d.groups, *d.tasks)):
            return d
        kinds = [m for m in Memory if sum(r.memory is m for r in d.resources) >= 2]
        if not kinds:
            return d
        memory = draw(st.sampled_from(kinds))  # two gmem pointers, or two smem buffers: declared side by side
        first, second = draw(st.permutations([r for r in d.resources if r.memory is memory]))[:2]
        return renamed(renamed(d, first.name, word), second.name, other)
    if kind in ("literal", "literal_bad") and computed(d):
        stored = [r for r in computed(d) if r.compute.op != "copy"]  # mostly outputs: the generators build those
        r = draw(st.sampled_from(stored if stored and draw(st.integers(0, 3)) else computed(d)))
        a, b = d.deps(r.name)[0], d.deps(r.name)[-1]
        op = r.compute.op if r.compute.op != "copy" else "elementwise"
        if kind == "literal":
            return d.with_resource(dataclasses.replace(r, compute=Compute(op, EDGE_OK.format(a=a, b=b))))
        text, why = draw(st.sampled_from(EDGE_BAD))
        bad = d.with_resource(dataclasses.replace(r, compute=Compute(op, text.format(a=a))))
        hits = [e for e in bad.validate().errors if e.code == "compute.expr" and why in e.message]
        assert hits and all(len(e.message) < 400 for e in hits), [e.message for e in bad.validate().errors]
        return bad
    counts = [k for k, v in d.problem if k in INTEGER_KEYS and isinstance(v, int)]
    if kind == "count" and counts:  # a count given as a float: a problem.integer error with its fix
        key = draw(st.sampled_from(counts))
        value = d.problem_dict[key]
        bad = d.replace(problem=[(k, float(v) if k == key else v) for k, v in d.problem])
        hits = [e for e in bad.validate().errors if e.code == "problem.integer"]
        assert any(f"set {key}={value}" == e.hint and f"problem {key} is {float(value)!r}" in e.message
                   for e in hits), [e.message for e in bad.validate().errors]
        with pytest.raises(DesignError, match="expected an integer"):  # a bool is refused when it is given
            d.replace(problem=[(k, True if k == key else v) for k, v in d.problem])
        return bad
    return d


@st.composite
def edge_designs(draw) -> Design:
    d = draw(base_designs())
    d = d.with_targets(*draw(st.sampled_from([ARCHES, ARCHES, ("sm_90a",)])))
    for _ in range(draw(st.sampled_from((0, 0, 0, 1)))):  # mostly the canonical designs: most edges then compile
        d = draw(edits(d))
    for _ in range(draw(st.sampled_from((1, 1, 2)))):
        d = draw(edge_edits(d))
    return d


# -- the property -----------------------------------------------------------------------------------

def _compile(src):
    from pgstudio.runtime.compile import compile_cubin
    try:
        cub = compile_cubin(src)
        return src.key, "" if cub.data[:4] == b"\x7fELF" else "not an ELF cubin"
    except Exception as exc:  # noqa: BLE001 - every refusal is a failure of the property, reported below
        return src.key, f"{type(exc).__name__}: {exc}"


def structure(src) -> tuple[str, str]:
    """A source with its integer literals normalised: designs that differ only in sizes (stages,
    tile bytes, offsets, counts) share one, and NVRTC compiles one of them
    (``PGSTUDIO_BUILDABLE_EXACT=1`` compiles every distinct source instead)."""
    return src.arch, re.sub(r"\b\d+\b", "#", src.code)


def holds(strategy, settings_, examples: int, label: str) -> tuple[Counter, list]:
    """Draw ``examples`` designs from ``strategy``: validate and emit each one (a clean report
    emits for every target, errors raise exactly themselves), then compile every distinct
    structure of the valid ones with NVRTC; returns what was seen and the compiled sources."""
    t0 = time.perf_counter()
    exact = bool(os.environ.get("PGSTUDIO_BUILDABLE_EXACT"))
    chosen: dict = {}  # structure (or source key) -> (KernelSource, the design as JSON)
    keys: set[str] = set()
    seen = Counter()

    @settings_
    @given(strategy)
    def check(design: Design) -> None:
        report = design.validate()  # never raises
        for arch in ARCHES:
            if arch not in design.targets:
                continue
            errors = design.with_targets(arch).validate().errors
            if report.ok:
                assert not errors, f"validate() is clean but {arch} reports {[e.code for e in errors]}"
                src = emit(design, arch=arch)  # must not raise
                keys.add(src.key)
                chosen.setdefault(src.key if exact else structure(src), (src, design.to_json(indent=None)))
                seen[f"valid {src.info['kind']} {arch}"] += 1
                continue
            if not errors:
                continue  # the errors belong to another target
            with pytest.raises(DesignError) as info:  # a refusal is a diagnostic first, never another exception
                emit(design, arch=arch)
            assert info.value.diagnostics == errors and info.value.code == errors[0].code
            assert all(e.code in str(info.value) for e in errors)
            seen[f"refused {arch}"] += 1

    check()
    drawn = time.perf_counter() - t0
    t1 = time.perf_counter()
    todo = sorted((s for s, _ in chosen.values()), key=lambda s: s.info["kind"] != "gemm")  # the slow ones first
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = dict(pool.map(_compile, todo))
    failed = {k: why for k, why in results.items() if why}
    kinds = Counter(f"{s.info['kind']} {s.arch}" for s in todo)
    print(f"\n{label}: {examples} designs drawn, validated and emitted in {drawn:.0f} s: {dict(sorted(seen.items()))}; "
          f"{len(keys)} distinct sources, {len(chosen)} compiled by NVRTC ({dict(sorted(kinds.items()))}) in "
          f"{time.perf_counter() - t1:.0f} s")
    by_key = {s.key: (s, text) for s, text in chosen.values()}
    assert not failed, "\n".join(f"{by_key[k][0].design} ({by_key[k][0].arch}): {why[:2000]}\n  design: {by_key[k][1]}"
                                 for k, why in list(failed.items())[:3])
    return seen, todo


def test_zero_errors_means_emit_and_nvrtc_succeed_for_every_target():
    seen, _ = holds(designs(), SETTINGS, EXAMPLES, "random edits")
    assert min(seen[f"valid {kind} {arch}"] for kind in ("gemm", "stream") for arch in ARCHES) >= EXAMPLES // 20


def test_names_literals_and_counts_at_the_edges_validate_only_when_they_compile():
    seen, compiled = holds(edge_designs(), EDGE_SETTINGS, EDGE_EXAMPLES, "edges")
    # a coverage floor (most edge designs are meant to be refused): a few valid ones of each kind
    # and target reach emit and NVRTC; about 5 in 120 are gemm designs valid for sm_100a
    assert min(seen[f"valid {kind} {arch}"] for kind in ("gemm", "stream") for arch in ARCHES) >= EDGE_EXAMPLES // 40
    assert seen["refused sm_90a"] >= EDGE_EXAMPLES // 10
    for kind in ("gemm", "stream"):  # each edge reached NVRTC for each kind of kernel
        sources = [s.code for s in compiled if s.info["kind"] == kind]
        assert any("3.4028235e+38f" in c and "1e-45f" in c for c in sources), f"no {kind} kernel with edge literals"
        taken = re.compile(rf"\b(?:{RENAMED_PREFIX}|g_|x_)(?:{'|'.join(TAKEN)})\b")
        assert any(taken.search(c) for c in sources), f"no {kind} kernel with a name the generated code uses"

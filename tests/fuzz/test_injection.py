"""The one gate for text entering CUDA: every field of a design file that can reach generated code
is a checked name or word (``model.names``), a member of a fixed set, or an expression parsed by
the expression grammar.  The corpus plants injection text -- quotes, ';', comment ends,
``#include``, backslashes, newlines, ``asm``, ``__global__``, Unicode look-alikes -- into EVERY
field and key of real design files (streaming and GEMM) and requires each to be refused with a
``DesignError`` or to be absent from the code emitted for sm_90a and sm_100a."""

from __future__ import annotations

import json
import pytest

from fuzz_harness import INJECTION as OUTCOMES

from pgstudio import Design, DesignError, GmemTensor, MemoryResource, PipelineGroup, Task, examples
from pgstudio.codegen import emit
from pgstudio.errors import PgStudioError
from pgstudio.model import CapturedSchedule, Compute, Loop, Step
from pgstudio.model.targets import ARCHES

#: Each payload carries a marker that must never show up in generated code.
PAYLOADS = [
    'asm volatile("trap;"); // PGXINJ01',
    '"; asm volatile("trap;"); // PGXINJ02',
    "*/ asm volatile(\"trap;\"); /* PGXINJ03",
    "#include <PGXINJ04>",
    "smem_a\\\nPGXINJ05();",  # a backslash-newline continues a // comment onto the next line
    "smem_a\nPGXINJ06();",
    "smem_a\r\nPGXINJ07();",
    "__global__ void PGXINJ08() {}",
    "smem_\u0430PGXINJ09",  # Cyrillic a
    "PGXINJ10\uff1b",  # fullwidth semicolon
    "smem_a') + PGXINJ11 + ('",
    "smem_a; PGXINJ12",
    "PGXINJ13\x00",
    "smem_a /* PGXINJ14 */",
    "max(smem_a, 0.f)\n#define PGXINJ15 1",  # a Python comment in an expression
]
MARKERS = [f"PGXINJ{i:02d}" for i in range(1, len(PAYLOADS) + 1)]
SEEDS = ["merge_copy", "fork_copy", "merge_gemm_resadd", "fork_gemm_act"]
#: Seeds built for both targets, so the file names them (the default is left out of a file).
BOTH_TARGETS = {"merge_copy", "fork_gemm_act"}


def _at(obj, path):
    for key in path:
        obj = obj[key]
    return obj


def fields(obj, path=()):
    """Every leaf value and every key of a JSON object, as (path, is_key)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield path + (k,), True
            yield from fields(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from fields(v, path + (i,))
    else:
        yield path, False


def planted(obj, path, is_key, payload):
    """The file with ``payload`` at ``path`` (a value, or the key itself); ``obj`` is left as it was."""
    node = obj
    for key in path[:-1]:
        node = node[key]
    last = path[-1]
    if is_key:  # a copy of this one object with the key renamed, in the same place
        parent = obj
        for key in path[:-2]:
            parent = parent[key]
        renamed = {(payload if k == last else k): v for k, v in node.items()}
        if len(path) == 1:
            return json.dumps(renamed)
        parent[path[-2]] = renamed
        try:
            return json.dumps(obj)
        finally:
            parent[path[-2]] = node
    old = node[last]
    node[last] = payload
    try:
        return json.dumps(obj)
    finally:
        node[last] = old


def outcome(text: str, marker: str) -> str:
    """'refused on load', 'refused on emit' or 'absent from code'; fails on anything else."""
    try:
        design = Design.from_json(text)
    except DesignError:
        return "refused on load"
    results = []
    for arch in ARCHES:  # validate=False: what the generator itself does with the text
        try:
            code = emit(design, arch=arch, validate=False).code
        except PgStudioError as exc:
            assert all(line.startswith("  [") for line in str(exc).splitlines()[1:]), str(exc)  # a list, no traceback
            results.append("refused on emit")
            continue
        assert marker not in code, f"{marker} reached the {arch} code"
        results.append("absent from code")
    return "absent from code" if "absent from code" in results else "refused on emit"


@pytest.mark.parametrize("seed", SEEDS)
def test_injection_text_in_every_field_is_refused_or_absent_from_the_code(seed):
    design = examples.example(seed)
    base = json.loads((design.with_targets(*ARCHES) if seed in BOTH_TARGETS else design).to_json())
    assert ("targets" in base) == (seed in BOTH_TARGETS)
    planted_fields = 0
    for path, is_key in fields(base):
        if path[:1] in (("schema",), ("version",)):  # a file with another schema is no design at all
            continue
        value = None if is_key else _at(base, path)
        # text fields get every payload; a number, a bool or a null refuses any text alike: two suffice
        payloads = list(zip(PAYLOADS, MARKERS)) if is_key or isinstance(value, str) else list(zip(PAYLOADS, MARKERS))[:2]
        for payload, marker in payloads:
            OUTCOMES[outcome(planted(base, path, is_key, payload), marker)] += 1
        planted_fields += 1
    assert planted_fields > 100


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_constructors_refuse_injection_text_too(payload):
    """The studio and the Python API build the same objects the loader builds."""
    cfg = examples.merge_copy().resource("smem_a").pipeline_config
    attempts = [
        lambda: Step("acquire", payload),
        lambda: Step("acquire", "smem_a", "member", payload),
        lambda: Step("load", "smem_a", "bare", None, (("arg0", payload),)),
        lambda: Step("load", "smem_a", "bare", None, ((payload, "gmem_a"),)),
        lambda: Loop(0, payload, 1, ()),
        lambda: CapturedSchedule(payload, ()),
        lambda: MemoryResource(payload, cfg),
        lambda: MemoryResource("smem_x", cfg, dtype=payload),
        lambda: MemoryResource("smem_x", cfg, aliases=payload),
        lambda: GmemTensor("gmem_x", compute=Compute(payload)),
        lambda: PipelineGroup.unchecked(payload, []),
        lambda: Task.unchecked(payload, 0, 1),
        lambda: Task.unchecked("t", 0, 1, [payload]),
        lambda: Design(payload),
        lambda: Design("d", problem={payload: 1}),
        lambda: Design("d", problem={"dtype": payload}),
        lambda: Design("d", graph={"smem_a": [payload]}),
    ]
    for attempt in attempts:
        with pytest.raises(DesignError):
            attempt()

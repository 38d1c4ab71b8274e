"""``check(design, max_seconds=S)`` returns within 2 S on the fuzz corpus: the real design files,
their byte mutations and schema edits (``fuzz_harness``), and the slowest designs there are --
every ring at 64 stages, the planted mistakes -- at the shrunk and at the real loop counts (over
100,000 executed steps: unrolling them alone takes seconds).  A check stopped by the clock says
INCOMPLETE, naming the time budget and the step it was in."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import time

import fuzz_harness as H

from pgstudio import examples, mistakes
from pgstudio.analysis.check import check
from pgstudio.errors import PgStudioError
from pgstudio.model.design import Design

S = 0.5
#: Mutated files per source in the sample (each real-count check stops at S at the latest).
SAMPLE = 16
REAL = {"iterations": None, "inner": None}


def _ring(design: Design, stages: int) -> Design:
    for r in design.pipelined:
        cfg = dataclasses.replace(r.pipeline_config, num_stages=stages)
        design = design.with_resource(dataclasses.replace(r, pipeline_config=cfg), design.deps(r.name))
    return design


def _corpus():
    seeds = H.seed_files()
    for name, data in seeds.items():
        yield f"{name}", data, ({}, REAL)
    for name, make in examples.CANONICAL.items():
        yield f"{name} at 64 stages", _ring(make(), 64).to_json().encode(), ({},)
    for name in mistakes.MISTAKES:
        yield f"mistake {name}", mistakes.mistake(name).to_json().encode(), (REAL,)
    names = sorted(seeds)
    rng = random.Random(20261201)
    for i in range(SAMPLE):
        yield f"byte mutation #{i}", H.mutate(seeds[names[i % len(names)]], rng), (REAL,)
    objs = {n: json.loads(d) for n, d in seeds.items()}
    words = sorted({w for o in objs.values() for w in H.names_in(o)})
    rng = random.Random(5)
    for i in range(SAMPLE):
        obj = copy.deepcopy(objs[names[i % len(names)]])
        for _ in range(rng.randint(1, 4)):
            H.schema_edit(obj, rng, words)
        yield f"schema edit #{i}", json.dumps(obj).encode(), (REAL,)


def test_check_returns_within_twice_its_time_budget_on_the_fuzz_corpus():
    slow, stopped, late = [], 0, []
    for label, data, runs in _corpus():
        try:
            design = Design.from_json(data)
        except PgStudioError:
            continue
        for kw in runs:
            t = time.perf_counter()
            try:
                v = check(design, max_seconds=S, **kw)
            except PgStudioError:  # a design the checker cannot run: refused at once
                v = None
            wall = time.perf_counter() - t
            if wall > 2 * S:
                late.append(f"{label} {kw or 'shrunk'}: {wall:.2f} s")
            if v is not None and "time budget" in v.reason:
                stopped += 1
                assert (v.status, v.cause) == ("INCOMPLETE", "budget"), (label, v.summary())
                assert f"max_seconds={S:g}" in v.reason and (" while " in v.reason or "states explored" in v.reason)
            elif wall > 1.5 * S:  # a verdict reached at the budget may take a moment to write
                slow.append(f"{label} {kw or 'shrunk'}: {wall:.2f} s, {v.summary() if v else 'refused'}")
    assert not late, "past 2 * max_seconds:\n" + "\n".join(late)
    assert not slow, "well past max_seconds without saying the time budget stopped it:\n" + "\n".join(slow)
    assert stopped >= 10  # the corpus holds checks the clock stops (else this test proves nothing)

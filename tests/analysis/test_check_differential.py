"""Differential test of the exhaustive checker: on random small designs the reduced search, the
plain breadth-first search and an independent reference (``unrolled_reference.py``: a brute-force
exploration of the unrolled event lists over its own mbarrier model) agree on the status and on
the kind of finding.

Designs: every streaming and GEMM example (each group mode, and the ungrouped twins), 1 or 2
stages, 1 to 3 tiles (GEMM: 1 or 2 tiles of 1 or 2 k tiles), with up to two classic bugs planted: a task's loop of a
different length or parity, a missing or doubled step (release, commit, wait, acquire), two
steps swapped, a release or commit moved earlier, a wrong arrive count, wrong tx bytes, two resources on one buffer.  The checker
runs with the real loop counts (``iterations=None``), so no shrinking is involved; shrinking has
its own tests (``test_loops.py``).

Per design:

* the reference's findings -- which step of which task breaks which rule first on some run, and
  which states where nothing can move are deadlocks or unbalanced ends -- equal those of the
  plain state graph, and the two explore exactly as many states;
* the reduced graph finds a subset of those kinds and finds one exactly when there is one; run
  past violations, it finds the same violating steps and bad end states as the plain graph;
* ``check(method="bfs")`` and ``check()`` report SAFE exactly when the reference finds nothing,
  and otherwise UNSAFE with a kind the reference finds.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from collections import deque
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from pgstudio import examples, mistakes
from pgstudio.analysis.check import check
from pgstudio.analysis.program import unroll
from pgstudio.analysis.reduction import Reducer
from pgstudio.analysis.search import bfs
from pgstudio.analysis.statespace import StateSpace
from pgstudio.model.config import CooperativeGroup
from pgstudio.model.kinds import Agent
from pgstudio.model.schedule import CapturedSchedule, Loop
from pgstudio.model.task import Task
from pgstudio.model.ungroup import ungrouped

import unrolled_reference
from unrolled_reference import reference_findings

#: States the reference may explore per design (a design past it is discarded and another drawn).
REFERENCE_CAP = 10_000
DESIGNS = int(os.environ.get("PGSTUDIO_DIFFERENTIAL_DESIGNS", 500))

BASES = {
    "merge_copy": lambda s: examples.merge_copy(num_stages=s),
    "fork_copy": lambda s: examples.fork_copy(num_stages=s),
    "fused_merge_copy": lambda s: examples.fused_merge_copy(num_stages=s),
    "merge_gemm": lambda s: examples.merge_gemm(num_stages=s),
    "merge_gemm_async_b": lambda s: examples.merge_gemm(num_stages=s, b_producer="async"),
    "fused_merge_gemm": lambda s: examples.fused_merge_gemm(num_stages=s),
}
MUTATIONS = ("bound", "start", "drop", "dup", "swap", "hoist", "count", "bytes", "alias")


def _retask(design, t, nodes):
    sched = CapturedSchedule(t.schedule.name, nodes)
    return design.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources, sched))


def _replace_loop(nodes, old, new):
    return tuple(new if n is old else (Loop(n.start, n.stop, n.step, _replace_loop(n.body, old, new))
                                       if isinstance(n, Loop) else n) for n in nodes)


def _loops(nodes):
    for n in nodes:
        if isinstance(n, Loop):
            yield n
            yield from _loops(n.body)


@st.composite
def designs(draw):
    name = draw(st.sampled_from(sorted(BASES)))
    stages = draw(st.integers(1, 2))
    d = BASES[name](stages)
    if draw(st.booleans()) and not name.startswith("fused"):
        d = ungrouped(d)
    tiles, ktiles = draw(st.integers(1, 2 if "gemm" in name else 3)), draw(st.integers(1, 2))
    d = d.replace(problem={**d.problem_dict, "num_tiles": tiles, "num_k_tiles": ktiles})
    for _ in range(draw(st.integers(0, 2))):
        d = _mutate(d, draw)
    return d


def _mutate(d, draw):
    kind = draw(st.sampled_from(MUTATIONS))
    if kind in ("count", "bytes", "alias"):
        pipelined = list(d.pipelined)
        r = draw(st.sampled_from(pipelined))
        cfg = r.pipeline_config
        if kind == "alias":
            smem = [x for x in pipelined if x.memory.value == "smem" and x.name != r.name and r.memory.value == "smem"]
            if not smem:
                return d
            return d.with_resource(dataclasses.replace(r, aliases=draw(st.sampled_from(smem)).name), d.deps(r.name))
        if kind == "bytes":
            cfg = dataclasses.replace(cfg, num_bytes=draw(st.sampled_from([cfg.num_bytes // 2, cfg.num_bytes * 2])))
        else:
            side = draw(st.sampled_from(["producer_group", "consumer_group"]))
            n = getattr(cfg, side).num_threads
            cfg = dataclasses.replace(cfg, **{side: CooperativeGroup(Agent.Thread, draw(st.sampled_from(
                [max(1, n // 2), 2 * n, n + 1])))})
        return d.with_resource(dataclasses.replace(r, pipeline_config=cfg), d.deps(r.name))
    t = draw(st.sampled_from(d.tasks))
    loops = list(_loops(t.schedule.nodes))
    loop = draw(st.sampled_from(loops))
    if kind == "bound":  # a loop of another length (or parity)
        new = Loop(loop.start, draw(st.integers(0, 3)), loop.step, loop.body)
    elif kind == "start":
        new = Loop(draw(st.integers(1, 2)), loop.stop, loop.step, loop.body)
    else:
        body = list(loop.body)
        if not body:
            return d
        j = draw(st.integers(0, len(body) - 1))
        if kind == "hoist":  # a release or commit moved before the step in front of it
            ends = [i for i, n in enumerate(body) if not isinstance(n, Loop) and n.op in ("release", "commit")]
            if not ends:
                return d
            i = draw(st.sampled_from(ends))
            body.insert(max(0, i - draw(st.integers(1, 2))), body.pop(i))
        elif kind == "drop":
            del body[j]
        elif kind == "dup":
            body.insert(j, body[j])
        elif j + 1 < len(body):
            body[j], body[j + 1] = body[j + 1], body[j]
        new = Loop(loop.start, loop.stop, loop.step, tuple(body))
    return _retask(d, t, _replace_loop(t.schedule.nodes, loop, new))


def first_findings(space: StateSpace, reduced: bool) -> tuple[set[tuple], int]:
    """Where the runs of the checker's state graph (plain, or its stubborn-set reduction) stop,
    in the reference's terms (``unrolled_reference.Reference.explore``), and the states seen."""
    reducer = Reducer(space) if reduced else None
    init = space.initial()
    seen = {init}
    queue = deque([init])
    found: set[tuple] = set()
    while queue:
        s = queue.popleft()
        agents = space.agents(s)
        enabled = [a for a in agents if space.enabled(s, a)]
        if not enabled:
            v = space.terminal(s)
            if v is not None:
                found.add((v.kind, s.pcs))
            continue
        for a in reducer.ample(s, agents, enabled) if reducer else enabled:
            nxt, bad = space.fire(s, a)
            if bad is not None:
                found.add((bad.kind, space.tasks[a], s.pcs[a]))
            elif nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return found, len(seen)


def compare(design) -> set[str] | None:
    """Run the reference and the checker's searches on ``design``; assert they agree (module
    docstring).  Returns the kinds the reference finds (None: too big for the reference)."""
    ref, ref_states, capped = reference_findings(design, REFERENCE_CAP)
    if capped:
        return None
    kinds = {f[0] for f in ref}
    space = StateSpace(unroll(design, iterations=None, inner=None))
    plain, plain_states = first_findings(space, reduced=False)
    assert plain == ref, f"{design.name}: only the checker: {plain - ref}; only the reference: {ref - plain}"
    assert plain_states == ref_states
    reduced, reduced_states = first_findings(space, reduced=True)
    assert {f[0] for f in reduced} <= kinds and bool(reduced) == bool(ref), (design.name, reduced, kinds)
    assert reduced_states <= plain_states
    full = bfs(space, explore_all=True, max_states=REFERENCE_CAP * 4)
    if not full.capped:  # run past violations, the reduction keeps every violating step
        assert set(bfs(space, reduced=True, explore_all=True, max_states=REFERENCE_CAP * 4).found) == set(full.found)
    for method in ("bfs", "reduced"):
        v = check(design, iterations=None, inner=None, method=method, max_states=REFERENCE_CAP * 2)
        assert v.status == ("UNSAFE" if ref else "SAFE"), (method, v.summary(), kinds)
        assert v.kind is None or v.kind in kinds, (method, v.kind, kinds)
    return kinds


@settings(max_examples=DESIGNS, deadline=None, derandomize=not os.environ.get("PGSTUDIO_DIFFERENTIAL_RANDOM"),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(designs())
def test_reduced_plain_and_reference_agree(design):
    ref = compare(design)
    assume(ref is not None)  # too big for the reference: draw another (only compared designs count)
    for kind in sorted(ref) or ["SAFE"]:
        event(kind)  # pytest --hypothesis-show-statistics prints how often each was compared


@pytest.mark.parametrize("name", sorted(mistakes.MISTAKES))
def test_every_kind_of_finding_is_compared(name):
    """The planted mistakes, one per kind, through the same comparison (tiny sizes)."""
    build, kind = mistakes.MISTAKES[name]
    design = build(num_stages=2)
    design = design.replace(problem={**design.problem_dict, "num_tiles": 3, "num_k_tiles": 2})
    assert kind in (compare(design) or ())


def test_unbalanced_and_safe_are_compared():
    d = examples.merge_copy(num_stages=2)
    d = d.replace(problem={**d.problem_dict, "num_tiles": 3})
    assert compare(d) == set()
    store = d.task("store")
    loop = store.schedule.nodes[0]
    d = _retask(d, store, (Loop(loop.start, 2, loop.step, loop.body),))  # consumes one tile fewer
    assert compare(d) == {"unbalanced"}


def test_the_reference_is_independent_of_the_checker():
    """The reference may use the model, the protocol table, the resolver and the layout, never the
    checker's unrolling, state space, rules or search."""
    tree = ast.parse(Path(unrolled_reference.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    checker = {f"pgstudio.analysis.{m}" for m in ("program", "loops", "statespace", "violations", "search",
                                                  "reduction", "check", "mbarrier", "simulate")}
    assert imported and not imported & checker, imported & checker

"""Design lookups (``model/lookup.py``): O(1) indexes that answer exactly what a scan in design
order answers, first match included, on valid and on wrong designs."""

import time

from pgstudio import GmemTensor, PipelineGroup, Task, examples
from pgstudio.model.design import Design


def scan(design):
    """The answers of a scan over the design's lists (what the lookups replaced)."""
    names = [r.name for r in design.resources] + ["ghost"]
    return {
        "resource": {n: next((r for r in design.resources if r.name == n), None) for n in names},
        "group_of": {n: next((g for g in design.groups if n in g.member_names), None) for n in names},
        "producers": {n: tuple(t for t in design.tasks if n in t.dst_resources) for n in names},
        "consumers": {n: tuple(t for t in design.tasks if n in t.src_resources) for n in names},
        "deps": {n: dict(design.graph).get(n, ()) for n in names},
        "dependents": {n: tuple(k for k, deps in design.graph if n in deps) for n in names},
    }


def lookups(design):
    names = [r.name for r in design.resources] + ["ghost"]
    return {
        "resource": {n: design.resource(n) if design.has_resource(n) else None for n in names},
        "group_of": {n: design.group_of(n) for n in names},
        "producers": {n: design.producers(n) for n in names},
        "consumers": {n: design.consumers(n) for n in names},
        "deps": {n: design.deps(n) for n in names},
        "dependents": {n: design.dependents(n) for n in names},
    }


def test_every_canonical_design_and_a_chain_answer_as_a_scan_does():
    for design in [*(b() for b in examples.CANONICAL.values()), examples.chain(5, "Fork", width=3)]:
        assert lookups(design) == scan(design), design.name


def test_a_wrong_design_with_duplicates_answers_the_first_match():
    d = examples.merge_copy()
    extra = GmemTensor("gmem_a", dtype="float16")  # a second 'gmem_a'
    twice = PipelineGroup.unchecked("ba", [d.resource("smem_b"), d.resource("smem_a")])  # smem_a in two groups
    again = Task.unchecked("store", 12, 1, ["smem_a"], ["gmem_d"])  # a second task 'store'
    wrong = Design(d.name, (*d.resources, extra), (*d.graph, ("gmem_d", ("smem_b",))), (*d.groups, twice),
                   (*d.tasks, again), d.problem)
    assert lookups(wrong) == scan(wrong)
    assert wrong.resource("gmem_a").dtype == "float32" and wrong.group_of("smem_a").name == "ab"
    assert wrong.task("store").warp_idx == 4


def test_edits_make_new_designs_with_their_own_index():
    d = examples.merge_copy()
    assert d.has_resource("smem_a")
    e = d.without_resource("smem_a")
    assert not e.has_resource("smem_a") and d.has_resource("smem_a") and e.group_of("smem_a") is None


def _best(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def test_validate_grows_about_linearly_with_the_design():
    """4x the resources may cost at most 10x the time (a scan per lookup made it about 16x)."""
    small, large = examples.chain(31, "Merge", width=2), examples.chain(31, "Merge", width=8)
    assert len(large.resources) / len(small.resources) > 3.8
    ratio = _best(large.validate) / _best(small.validate)
    assert ratio < 10, ratio

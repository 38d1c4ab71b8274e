"""The generators' CUDA grows with what a design writes, never with its trip counts, and
``codegen.source_size`` estimates it from above: every kernel these designs emit is at most the
estimate (and not far below it), and the estimate admits every canonical design and the widest
chain that fits shared memory."""

from __future__ import annotations

import dataclasses

import pytest

from pgstudio import examples
from pgstudio.analysis.buildable.source_size import MAX_SOURCE_BYTES, source_size
from pgstudio.codegen import emit
from pgstudio.examples.chain import chain
from pgstudio.model.schedule import CapturedSchedule, Loop
from pgstudio.model.targets import ARCHES


def repeated(d, times: int):
    """Every task runs its tile loop's body ``times`` times per tile."""
    for t in d.tasks:
        s = t.schedule
        lp = s.nodes[0]
        d = d.with_task(dataclasses.replace(t, schedule=CapturedSchedule(
            s.name, (Loop(lp.start, lp.stop, lp.step, lp.body * times),))))
    return d


def long_store(d, terms: int = 20):
    """The output's expression ``terms`` products long (about 400 characters: the grammar's limit)."""
    out = next(r for r in d.resources if r.memory.value == "gmem" and r.compute.expr)
    expr = " + ".join(["(smem_a * smem_b)"] * terms)
    return d.with_resource(dataclasses.replace(out, compute=dataclasses.replace(out.compute, expr=expr)),
                           d.deps(out.name))


CORPUS = {
    **{name: make for name, make in examples.CANONICAL.items()},
    **{f"{name} ungrouped": (lambda make=make: examples.ungrouped(make())) for name, make in examples.CANONICAL.items()},
    **{f"chain {g}x{w} {mode}": (lambda g=g, w=w, mode=mode: chain(g, mode=mode, width=w))
       for g, w in ((1, 2), (4, 5), (16, 2), (31, 7)) for mode in ("Merge", "Fork", "FusedMerge")},
    **{f"{name} x{k}": (lambda name=name, k=k: repeated(examples.example(name), k))
       for name in ("merge_copy", "fork_copy", "fused_merge_copy") for k in (2, 16, 128)},
    "merge_copy x16, long store": lambda: long_store(repeated(examples.merge_copy(), 16)),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_estimate_bounds_the_kernel_from_above(name):
    d = CORPUS[name]()
    assert d.validate().ok, str(d.validate())
    est = source_size(d).bytes
    longest = max(len(emit(d, arch=arch).code) for arch in ARCHES)
    assert longest <= est <= 1.6 * longest, (longest, est)


def test_every_canonical_design_and_the_widest_chain_are_well_inside_the_limit():
    for name in examples.CANONICAL:
        assert source_size(examples.example(name)).bytes < MAX_SOURCE_BYTES // 20, name
    assert source_size(chain(31, width=7)).bytes < MAX_SOURCE_BYTES


def test_a_repeated_body_past_the_limit_is_refused_with_the_values():
    d = repeated(examples.merge_copy(), 512)
    size = source_size(d)
    assert size.bytes > MAX_SOURCE_BYTES and size.biggest == "store"
    (diag,) = [x for x in d.validate().errors if x.code == "codegen.source_size"]
    assert f"{size.steps:,} schedule steps" in diag.message and diag.where == ("store",)
    assert "repeating it" in diag.hint


def _size(d, arch: str) -> int:
    return len(emit(d, arch=arch).code)


@pytest.mark.parametrize("arch", ARCHES)
def test_trip_counts_cost_nothing_loops_stay_loops(arch):
    """A problem 1,000 times larger changes literals only: the tile and k loops are C loops."""
    small, big = examples.merge_copy(num_elements=1 << 20), examples.merge_copy(num_elements=1 << 30)
    assert abs(_size(big, arch) - _size(small, arch)) < 64
    small, big = examples.merge_gemm(m=512, n=512, k=512), examples.merge_gemm(m=16384, n=16384, k=16384)
    assert abs(_size(big, arch) - _size(small, arch)) < 64


@pytest.mark.parametrize("arch", ARCHES)
def test_stages_cost_a_line_per_slot_at_most(arch):
    """The streaming kernel initialises each ring in a C loop; the GEMM writes one line per barrier
    slot, as many as the stages shared memory holds."""
    s2, s64 = chain(8, num_stages=2), chain(8, num_stages=64)
    assert s64.validate().ok
    assert _size(s64, arch) - _size(s2, arch) < 2000  # comments naming the ring's stages
    g2 = examples.merge_gemm(num_stages=2, bk=32, bn=64)
    g12 = examples.merge_gemm(num_stages=12, bk=32, bn=64)
    assert g12.validate().ok
    per_stage = (_size(g12, arch) - _size(g2, arch)) / 10
    assert 0 < per_stage < 400

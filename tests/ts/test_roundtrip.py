"""The round trip: a design -> its TS script -> TS accepts it -> pgstudio reads it back, unchanged;
and a TS script -> pgstudio's design -> the barrier layout TS computes for it."""

from pathlib import Path

import pytest

from pgstudio import barrier_layout, examples, smem_layout
from pgstudio.analysis.layout import BARRIER_BYTES
from pgstudio.ts import load, to_ts
from ts_side import SMALL, run_ts_script

TUTORIAL = Path(__file__).resolve().parents[2] / "examples" / "ts" / "gemm_mainloop.py"


@pytest.mark.parametrize("name", list(examples.CANONICAL))
def test_each_canonical_design_comes_back_from_its_ts_script(name, tmp_path):
    design = examples.example(name)
    script = tmp_path / f"{name}_ts.py"
    script.write_text(design.to_ts())
    assert load(script).to_json() == design.to_json()


@pytest.mark.parametrize("name", list(examples.CANONICAL))
@pytest.mark.parametrize("variant", ["ungrouped", "derived"])
def test_ungrouped_twins_and_derived_schedules_come_back_too(name, variant, tmp_path):
    from pgstudio.model.derive import derive_design
    design = examples.example(name)
    design = examples.ungrouped(design) if variant == "ungrouped" else derive_design(design, replace_attached=True)
    script = tmp_path / f"{name}_{variant}.py"
    script.write_text(to_ts(design))
    assert load(script).to_json() == design.to_json()


def test_to_ts_and_the_method_are_one_exporter():
    design = examples.merge_gemm()
    assert design.to_ts() == to_ts(design)


def test_a_ts_script_comes_back_from_its_export(tmp_path):
    first = load(TUTORIAL)
    script = tmp_path / "again.py"
    script.write_text(first.to_ts())
    assert load(script).to_json() == first.to_json()


def _ts_barriers(ts_globals, design):
    """Per group of ``design``: TS's barrier count of the group object the script built."""
    return {g.name: ts_globals[g.name].num_barriers_per_stage * ts_globals[g.name].pipeline_config.num_stages
            for g in design.groups}


def _assert_layout_matches_ts(design, ts_globals):
    # Every group: the barriers TS lays out are pgstudio's ((N+1)S, or 2S for FusedMerge).
    assert _ts_barriers(ts_globals, design) == {g.name: barrier_layout(g).num_barriers for g in design.groups}
    # Merged bytes per group agree where TS has bytes: its factories of non-TMA producers take
    # none (docs/ts.md: a known difference), so TS sums the TMA members' bytes.
    for g in design.groups:
        tma = [m for m in g.members if m.pipeline_config.producer_kind.value == "tma"]
        want = g.merged_config.num_bytes if len(tma) == len(g.members) else sum(m.stage_bytes for m in tma)
        assert ts_globals[g.name].pipeline_config.num_bytes == want, g.name
        if any(m.stage_bytes for m in g.members if m not in tma):  # docs/ts.md row 11, as a difference
            assert ts_globals[g.name].pipeline_config.num_bytes != g.merged_config.num_bytes
    # Known difference (docs/ts.md, row 10): TS's SmemAllocator reserves twice a group's barrier bytes.
    alloc = ts_globals["smem_allocator"]
    grouped = sum(barrier_layout(g).num_barriers for g in design.groups) * BARRIER_BYTES
    layout = smem_layout(design)
    assert alloc.barrier_smem_bytes == layout.barrier_bytes + grouped != layout.barrier_bytes
    # Data: the same 1024-byte aligned buffers, aliased views sharing one.
    assert alloc.total_smem_bytes == layout.data_bytes


@pytest.mark.ts
@pytest.mark.parametrize("name", list(SMALL))
def test_ts_accepts_each_export_and_pgstudio_reads_it_back_unchanged(name, tmp_path):
    design = examples.example(name, **SMALL[name])
    script = tmp_path / f"{name}_ts.py"
    script.write_text(to_ts(design))
    ts_globals = run_ts_script(str(script))  # TS's TaskManager raises ValueError if it rejects
    assert type(ts_globals["task_manager"]).__module__.startswith("cutlass.experimental.task_scheduling")
    assert load(script).to_json() == design.to_json()
    _assert_layout_matches_ts(design, ts_globals)


@pytest.mark.ts
def test_the_tutorial_under_ts_and_under_pgstudio_has_the_same_barriers():
    ts_globals = run_ts_script(str(TUTORIAL))
    design = load(TUTORIAL)
    _assert_layout_matches_ts(design, ts_globals)
    assert [t.name for t in ts_globals["tasks"]] == [t.name for t in design.tasks]


def test_a_ts_store_of_two_resources_without_an_expression_is_taken_and_listed(tmp_path):
    """TS stores have no expression: a script storing from two resources is valid TS, so import
    takes it, and what pgstudio needs to compute the store is a pgstudio finding, not a refusal."""
    from pgstudio import examples
    text = examples.merge_copy().to_ts()
    assert 'expr="smem_a + smem_b"' in text
    script = tmp_path / "no_expr.py"
    script.write_text(text.replace('expr="smem_a + smem_b"', 'expr=""'))
    design = load(script)
    assert design.resource("gmem_d").compute.expr == ""
    assert "compute.expr" in {e.code for e in design.validate().errors}

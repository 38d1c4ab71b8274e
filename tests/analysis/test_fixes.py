"""One-click fixes are data on diagnostics (``Diagnostic.fixes``): each names a pure edit of
``model.edits``; applying it removes the finding it is attached to.  Checked on every rule case of
``test_rules`` whose diagnostic carries a fix."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pgstudio import examples
from pgstudio.model import Agent, CooperativeGroup
from pgstudio.model import edits as E
from pgstudio.model.diagnostic import Fix

_spec = importlib.util.spec_from_file_location("rule_cases", Path(__file__).with_name("test_rules.py"))
_rules = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_rules)
CASES = _rules.CASES
FIXED = [c for c in CASES if any(d.fixes for d in c[2](c[1]()).validate().errors if d.code == c[3])]


def test_many_rules_carry_a_fix():
    assert {c[3] for c in FIXED} >= {"config.arrive_count", "group.num_stages", "group.collapsed_kind",
                                      "group.collapsed_size", "task.warps", "schedule.collapsed_member",
                                      "graph.edge_unrealised", "group.collapsed_task"}


@pytest.mark.parametrize("case_id,base,mutate,code,phrases", FIXED, ids=[c[0] for c in FIXED])
def test_each_fix_removes_its_finding(case_id, base, mutate, code, phrases):
    bad = mutate(base())
    hits = [d for d in bad.validate().errors if d.code == code and d.fixes]
    for diag in hits:
        for fx in diag.fixes:
            assert isinstance(fx, Fix) and fx.label and fx.edit in E.FIX_EDITS
            fixed = E.apply_fix(bad, fx)
            left = [d for d in fixed.validate().errors if d.code == code and d.where == diag.where]
            assert not left, f"{fx.label}: still {left}"


def test_a_warp_form_gets_warps_not_threads():
    """The issue's case: a consumer agent of Warp, a 2-warp task; the fix says 2 Warps, not 64 threads."""
    d = examples.merge_copy()
    d = E.set_task(d, "store", num_warps=2)
    diag = next(x for x in d.validate().errors if x.code == "config.arrive_count")
    assert "2 Warps (64 threads)" in diag.hint and "64 threads" not in diag.hint.replace("(64 threads)", "")
    fx = diag.fixes[0]
    assert fx.label == "set smem_a's consumer_group to 2 Warps (64 threads)"
    fixed = E.apply_fix(d, fx)
    assert fixed.resource("smem_a").pipeline_config.consumer_group == CooperativeGroup(Agent.Warp, 2)


def test_rederive_fixes_a_hand_schedule_after_a_mode_switch():
    d = E.set_group(examples.merge_gemm(), "ab", mode="FusedMerge")
    errors = d.validate().errors
    assert {x.code for x in errors} == {"schedule.collapsed_member"}
    labels = {fx.label for x in errors for fx in x.fixes}
    assert labels == {"re-derive task mma's schedule"}
    fixed = E.apply_fix(d, errors[0].fixes[0])
    assert fixed.validate().ok


def test_an_unknown_edit_is_a_clear_error():
    with pytest.raises(E.EditError, match="names edit 'drop_table'"):
        E.apply_fix(examples.merge_copy(), Fix("x", "drop_table"))


# -- the codegen.* rules (tests/analysis/buildable/test_codegen_rules.py holds one case per code) ---------
_cg_spec = importlib.util.spec_from_file_location("codegen_rule_cases",
                                                  Path(__file__).with_name("buildable") / "test_codegen_rules.py")
_codegen = importlib.util.module_from_spec(_cg_spec)
_cg_spec.loader.exec_module(_codegen)
CODEGEN_FIXED = [c for c in _codegen.CASES if any(d.fixes for d in c[2](c[1]()).validate().errors if d.code == c[3])]


def test_codegen_rules_with_a_mechanical_fix_carry_it():
    """Every codegen.* finding whose fix follows from the design (a tile's bytes, a rounded size, the
    tiles of a new BM / BN / BK, a free warpgroup, a pipeline type, a dtype) carries it."""
    assert {c[0] for c in CODEGEN_FIXED} >= {
        "dtype_mix", "tile_uniform", "tile_bytes", "tile_elems", "acc_type", "operand_type", "umma_tile",
        "problem_stride", "bk_swizzle", "bn_tile", "bm_rows", "bm_sm100", "tmem_columns", "mma_warpgroup",
        "accumulator_registers", "launch_registers", "operand_dtype", "tile_dtype", "stage_bytes", "output_dtype",
        "task_warpgroup"}


@pytest.mark.parametrize("case_id,base,mutate,code,phrases", CODEGEN_FIXED, ids=[c[0] for c in CODEGEN_FIXED])
def test_each_codegen_fix_makes_the_design_buildable_again(case_id, base, mutate, code, phrases):
    """Each case is a valid design with one edit the generator cannot build; its one-click fix
    removes the finding and leaves a design the rules (and so the generators) accept."""
    bad = mutate(base())
    for diag in [d for d in bad.validate().errors if d.code == code and d.fixes]:
        for fx in diag.fixes:
            assert fx.edit in E.FIX_EDITS and fx.label.startswith(("set ", "make ", "give ", "move "))
            fixed = E.apply_fix(bad, fx)
            report = fixed.validate()
            assert report.ok, f"{fx.label}: {report}"


def test_a_new_bk_reshapes_every_tile_in_its_space():
    d = _codegen.gemm(bk=48)  # a 96-byte row: no swizzled panel
    diag = next(x for x in d.validate().errors if x.code == "codegen.bk_swizzle")
    (fx,) = diag.fixes
    assert fx.label == "set BK to 64 (tiles follow: smem_a 128x64, smem_b 64x128, tmem_c 128x128)"
    fixed = E.apply_fix(d, fx)
    p = fixed.problem_dict
    assert (p["BK"], p["num_k_tiles"]) == (64, p["K"] // 64)
    smem_b = fixed.resource("smem_b")
    assert smem_b.tile == (64, 128) and smem_b.pipeline_config.num_bytes == 64 * 128 * 2


def test_the_mma_task_moves_to_free_whole_warpgroups():
    d = _codegen.retask(_codegen.gemm(), "mma", warp_idx=14)
    fx = next(x for x in d.validate().errors if x.code == "codegen.mma_warpgroup").fixes[0]
    fixed = E.apply_fix(d, fx)
    mma = fixed.task("mma")
    assert mma.warp_idx % 4 == 0 and mma.num_warps == 8
    others = {w for t in fixed.tasks if t.name != "mma" for w in t.warps}
    assert not others & set(mma.warps)

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
                                      "graph.edge_unrealised"}


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

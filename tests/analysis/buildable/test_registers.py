"""A design's setmaxnreg layout (``SETMAXNREG_<task>`` problem keys): the registers each warpgroup
runs with, the block's budget they share, and the fix of each finding."""

from __future__ import annotations

import pytest

from pgstudio import examples
from pgstudio.analysis.buildable.registers import check_registers, register_layout
from pgstudio.model import edits as E

#: merge_gemm's 12 warps: 384 threads launch with 168 registers each, 64512 in all.
LAYOUT = {"SETMAXNREG_load_a": 40, "SETMAXNREG_load_b": 40, "SETMAXNREG_epilogue": 40, "SETMAXNREG_mma": 232}


def gemm(**keys):
    d = examples.merge_gemm(num_stages=3, bm=128, bn=128, bk=64)
    return d.replace(problem={**d.problem_dict, **keys})


def codes(d):
    return [x.code for x in d.validate().errors]


def test_the_layout_and_its_budget():
    lay = register_layout(gemm(**LAYOUT))
    assert (lay.launch, lay.threads, lay.budget) == (168, 384, 64512)
    assert lay.per_warpgroup == (40, 232, 232) and lay.used == lay.budget
    assert lay.changes() == {0: 40, 1: 232, 2: 232}
    assert lay.text() == ("warpgroup 0 (load_a, load_b, epilogue) 40 x 128 threads, "
                          "warpgroups 1..2 (mma) 232 x 256 threads")
    assert gemm(**LAYOUT).validate().ok
    assert register_layout(gemm()) is None and check_registers(gemm()) == []


def test_the_budget_is_what_the_block_launched_with_not_more():
    assert codes(gemm(**{**LAYOUT, "SETMAXNREG_mma": 240})) == ["codegen.register_budget"]
    # 8 more for the MMA warpgroups fit once the others give 8 more back (still 64512 in all)
    assert codes(gemm(**{**LAYOUT, "SETMAXNREG_mma": 240, "SETMAXNREG_load_a": 24, "SETMAXNREG_load_b": 24,
                         "SETMAXNREG_epilogue": 24})) == []
    # a warpgroup that asks for nothing keeps the launch count (168) and counts so
    assert codes(gemm(SETMAXNREG_mma=176)) == ["codegen.register_budget"]  # warpgroup 0 gives nothing back
    only_mma = gemm(SETMAXNREG_mma=168)
    assert register_layout(only_mma).changes() == {} and only_mma.validate().ok


@pytest.mark.parametrize("value,near", [(230, 224), (300, 256), (8, 24), (232.5, 232), (0, 24), ("many", None)])
def test_values_setmaxnreg_cannot_take(value, near):
    (diag,) = [x for x in gemm(**{**LAYOUT, "SETMAXNREG_mma": value}).validate().errors]
    assert diag.code == "codegen.setmaxnreg" and f"SETMAXNREG_mma is {value!r}" in diag.message
    assert [f.label for f in diag.fixes] == ([f"set SETMAXNREG_mma to {near} (setmaxnreg's nearest value)"]
                                             if near else [])


def test_the_mma_warpgroups_keep_room_for_their_accumulators_on_sm_90a():
    d = examples.merge_gemm()  # BN=256: 128 fp32 accumulators per MMA thread
    low = d.replace(problem={**d.problem_dict, **{**LAYOUT, "SETMAXNREG_mma": 144}})
    (diag,) = low.validate().errors
    assert diag.code == "codegen.setmaxnreg"
    assert "SETMAXNREG_mma is 144, but each of its threads holds 128 fp32 accumulators" in diag.message
    assert "set SETMAXNREG_mma to at least 152" in diag.hint
    assert low.with_targets("sm_100a").validate().ok  # sm_100a: the accumulator is in tensor memory


CASES = {
    "value": gemm(**{**LAYOUT, "SETMAXNREG_mma": 230}),
    "warpgroup": gemm(**{**LAYOUT, "SETMAXNREG_load_b": 48}),
    "half_a_warpgroup": gemm(SETMAXNREG_load_a=40, SETMAXNREG_mma=232),
    "unknown_task": gemm(**LAYOUT, SETMAXNREG_store=40),
    "budget": gemm(**{**LAYOUT, "SETMAXNREG_mma": 256}),
    "accumulators": gemm(**{**LAYOUT, "SETMAXNREG_mma": 64}),
    "stream": examples.merge_copy().replace(problem={**examples.merge_copy().problem_dict, "SETMAXNREG_store": 64}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_finding_has_a_fix_that_removes_it(case):
    bad = CASES[case]
    found = [x for x in bad.validate().errors if x.code in ("codegen.setmaxnreg", "codegen.register_budget")]
    assert found and all(x.fixes for x in found), found
    fixed = bad
    for x in found:
        for fx in x.fixes:
            fixed = E.apply_fix(fixed, fx)
    assert fixed.validate().ok, str(fixed.validate())


def test_the_unknown_task_and_the_fix_that_drops_its_key():
    (diag,) = CASES["unknown_task"].validate().errors
    assert "problem key SETMAXNREG_store asks registers for task 'store', which is not in the design" in diag.message
    assert [f.label for f in diag.fixes] == ["set the problem without SETMAXNREG_store"]
    assert "SETMAXNREG_store" not in E.apply_fix(CASES["unknown_task"], diag.fixes[0]).problem_dict

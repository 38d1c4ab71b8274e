"""Diagnostics ordered by cause: every rule runs in one pass (the codegen.* rules too), the root
cause comes first with its fix, and what follows from it sits under it and names it."""

from __future__ import annotations

from pgstudio import examples
from pgstudio.analysis.causes import consequences
from pgstudio.errors import DesignError
from pgstudio.model import edits as E
from pgstudio.model.derive import adopt_derived, derive_design


def studio_edit(design, edit, *args, **kwargs):
    """An edit as the studio makes it: derived schedules follow the design."""
    return derive_design(edit(adopt_derived(design), *args, **kwargs))


def fork_gemm():
    return studio_edit(examples.merge_gemm(), E.set_group, "ab", mode="Fork")


def test_fork_on_the_gemm_template_puts_the_collapsed_task_first_with_a_fix():
    report = fork_gemm().validate()
    first, *rest = report.errors
    assert first.code == "group.collapsed_task" and not first.caused_by
    assert first.fixes, "the root cause carries the fix"
    # ... the two loaders each arm the shared full barrier: a round completes two phases of it
    assert [d.code for d in rest] == ["schedule.role", "schedule.bracket", "schedule.role", "schedule.bracket",
                                      "schedule.phase_lead"]
    assert all(d.caused_by == first.key for d in rest)  # each names the root ...
    assert consequences(report.diagnostics, first) == rest  # ... and sits right under it
    assert "(follows from [group.collapsed_task])" in str(rest[0])
    try:
        report.raise_if_errors()
    except DesignError as exc:
        assert exc.code == "group.collapsed_task"  # the API raises the root, not an echo of it


def test_each_fork_fix_gives_a_valid_design_and_says_what_it_does():
    d = fork_gemm()
    root = d.validate().errors[0]
    labels = [fx.label for fx in root.fixes]
    assert labels[0] == "let task load_a produce smem_a and smem_b (task load_b merged into it)"
    assert any(x.startswith("make group ab a Merge") for x in labels)
    merged = E.apply_fix(d, root.fixes[0])
    assert merged.validate().ok, str(merged.validate())
    assert [t.name for t in merged.tasks if "smem_b" in t.dst_resources] == ["load_a"]
    assert merged.group("ab").mode.value == "Fork"  # the user's choice stays
    for fx in root.fixes[1:]:
        assert E.apply_fix(d, fx).validate().ok, fx.label


def test_a_schedule_written_by_hand_is_its_own_root():
    """The Fork on the example's hand-written schedules: the steps the user wrote are wrong in their
    own right (each with its re-derive fix), not echoes of the group."""
    d = E.set_group(examples.merge_gemm(), "ab", mode="Fork")
    errors = d.validate().errors
    assert not any(x.caused_by for x in errors)
    assert {x.code for x in errors} >= {"group.collapsed_task", "schedule.collapsed_member"}


def test_codegen_rules_run_in_the_same_pass_as_the_structural_ones():
    """A slip of the MMA task's first warp (4 -> 2): the overlap and the warpgroup rule of the
    generator are reported at once, the generator's under the overlap it follows from."""
    d = studio_edit(examples.merge_gemm(), E.set_task, "mma", warp_idx=2)
    errors = d.validate().errors
    assert [x.code for x in errors] == ["task.warps", "codegen.mma_warpgroup"]
    assert errors[1].caused_by == errors[0].key


def test_a_valid_design_has_no_consequences():
    for name in ("merge_gemm", "fork_gemm_act", "merge_copy"):
        assert not any(x.caused_by for x in examples.example(name).validate().diagnostics)

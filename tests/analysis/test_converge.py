"""Fixes that converge: what the studio offers is tried on the design first, the way back to the
last valid design comes first, and following the first fix of a one-field slip reaches a valid
design within two clicks without touching what the user did not change.  Each button does what
its text says."""

from __future__ import annotations

import random
import re

import pytest

from pgstudio import examples
from pgstudio.analysis.converge import _RESOURCE_FIELDS, _shown, changed_fields, offered, revert_fixes
from pgstudio.analysis.validate import validate
from pgstudio.model import edits as E
from pgstudio.model.derive import derive_design
from pgstudio.model.protocol import PipelineGroupMode

TEMPLATES = [label for label, name in examples.TEMPLATES.items() if name is not None]
DTYPES = ("float16", "bfloat16", "float32")
#: Slips drawn at random per template (beside the near ones, which are all walked).
RANDOM_SLIPS = 25


def start(label: str):
    return derive_design(examples.template(label))


def slipped(design, edit, *args, **kwargs):
    """A slip as the studio makes it: the edit, then the derived schedules follow."""
    return derive_design(edit(design, *args, **kwargs))


def slips(d, rng: random.Random):
    """(what, edit, args, kwargs): one field of the design changed -- the near values of each field,
    and random values drawn from ``rng``."""
    for t in d.tasks:
        for w in {t.warp_idx - 2, t.warp_idx - 1, t.warp_idx + 1, t.warp_idx + 2, t.warp_idx + 4, rng.randrange(0, 24)}:
            if w >= 0 and w != t.warp_idx:
                yield f"task {t.name} warp_idx {t.warp_idx} -> {w}", E.set_task, (t.name,), {"warp_idx": w}
        for n in {t.num_warps - 1, t.num_warps + 1, 2 * t.num_warps, rng.randrange(1, 13)}:
            if n >= 1 and n != t.num_warps:
                yield f"task {t.name} num_warps {t.num_warps} -> {n}", E.set_task, (t.name,), {"num_warps": n}
    for g in d.groups:
        for m in PipelineGroupMode:
            if m is not g.mode:
                yield f"group {g.name} mode {g.mode} -> {m}", E.set_group, (g.name,), {"mode": m.value}
    for r in d.pipelined:
        s = r.pipeline_config.num_stages
        for n in {s - 1, s + 1, rng.randrange(1, 9)}:
            if n >= 1 and n != s:
                yield f"{r.name} num_stages {s} -> {n}", E.set_resource, (r.name,), {"num_stages": n}
        for dt in DTYPES:
            if dt != r.dtype:
                yield f"{r.name} dtype {r.dtype} -> {dt}", E.set_resource, (r.name,), {"dtype": dt}
    for key in ("BM", "BN", "BK"):
        v = d.problem_dict.get(key)
        if isinstance(v, int):
            for n in {v * 2, v // 2, rng.choice((16, 32, 48, 64, 96, 128, 192, 256))}:
                if n >= 1 and n != v:
                    yield f"problem {key} {v} -> {n}", E.update_problem, (), {key: n}


def first_offered(design, last_valid):
    """The first fix of the first error that has one (the top button of the diagnostics pane)."""
    for diag in offered(design, validate(design), last_valid).errors:
        if diag.fixes:
            return diag.fixes[0]
    return None


def assert_does_what_it_says(before, fx, after):
    """The label's promise, read back from the design the fix gave."""
    label = fx.label
    if m := re.fullmatch(r"move task (\w+)(?: back)? to warp (\d+)", label):
        assert after.task(m[1]).warp_idx == int(m[2]), label
    elif m := re.fullmatch(r"give task (\w+) warps (\d+)\.\.(\d+) .*", label):
        t = after.task(m[1])
        assert (t.warp_idx, t.warp_idx + t.num_warps - 1) == (int(m[2]), int(m[3])), label
    elif m := re.fullmatch(r"give task (\w+) back its (\d+) warps?", label):
        assert after.task(m[1]).num_warps == int(m[2]), label
    elif m := re.fullmatch(r"set group (\w+)'s mode back to (\w+)", label):
        assert after.group(m[1]).mode.value == m[2], label
    elif m := re.fullmatch(r"set (\w+) back to (\d+)", label):
        assert after.problem_dict[m[1]] == int(m[2]), label
    elif m := re.fullmatch(r"set (\w+)'s (\w+) back to (.+)", label):
        assert _shown(_RESOURCE_FIELDS[m[2]](after.resource(m[1]))) == m[3], label
    assert after != before, f"{label}: the design did not change"


def walk(label: str, rng: random.Random):
    base = start(label)
    assert validate(base).ok
    for what, edit, args, kwargs in slips(base, rng):
        try:
            bad = slipped(base, edit, *args, **kwargs)
        except E.EditError:
            continue
        if not validate(bad).ok:
            yield base, what, bad


@pytest.mark.parametrize("label", TEMPLATES)
def test_the_first_fix_of_a_slip_leads_back_within_two_clicks(label):
    """Every one-field slip of a template that makes an error: following the first offered fix (the
    studio knows the template as the last valid design) gives a valid design in at most two clicks,
    changing no field but the slipped one, and every button on the way does what it says."""
    walked = 0
    for base, what, bad in walk(label, random.Random(label)):
        walked += 1
        touched = changed_fields(bad, base)
        design, clicks = bad, []
        while not validate(design).ok:
            assert len(clicks) < 2, f"{what}: still {validate(design).codes()} after {clicks}"
            fx = first_offered(design, base)
            assert fx is not None, f"{what}: no fix offered for {validate(design).codes()} after {clicks}"
            fixed = E.apply_fix(design, fx)
            assert_does_what_it_says(design, fx, fixed)
            design, clicks = fixed, clicks + [fx.label]
        assert changed_fields(design, base) <= touched, f"{what}: {clicks} changed {changed_fields(design, base)}"
    assert walked >= 5, f"only {walked} slips of {label!r} make an error"


@pytest.mark.parametrize("label", TEMPLATES)
def test_no_offered_fix_leaves_a_new_error_another_one_avoids(label):
    """Without any history (a design loaded from a file): each offered fix removes its finding;
    where one fix of a finding adds no error, none of its offered fixes adds one."""
    for _, what, bad in walk(label, random.Random(label)):
        report = offered(bad)
        now = {d.key for d in report.errors}
        for diag in report.errors:
            added = []
            for fx in diag.fixes:
                after = {d.key for d in validate(E.apply_fix(bad, fx)).errors}
                assert diag.key not in after, f"{what}: {fx.label} leaves {diag.code}"
                added.append(after - now)
            assert not any(added) or all(added), f"{what}: {diag.code} offers {[f.label for f in diag.fixes]}"


def test_the_mma_warp_slip_is_undone_in_one_click():
    """The MMA task's first warp 4 -> 2 on the GEMM template: once "move the epilogue to warp 10",
    then the MMA onto warps 12..19, then BN = 128.  Now the first button puts the MMA back."""
    base = start("GEMM mainloop: D = A @ B")
    bad = slipped(base, E.set_task, "mma", warp_idx=2)
    fx = first_offered(bad, base)
    assert fx.label == "move task mma back to warp 4"
    assert E.apply_fix(bad, fx).validate().ok
    # a design with no history (read from a file): the nearest move of the two overlapping tasks
    fx = first_offered(bad, None)
    assert fx.label == "move task mma to warp 4"
    assert E.apply_fix(bad, fx).validate().ok


def test_the_warpgroup_hint_says_what_its_button_does():
    base = start("GEMM mainloop: D = A @ B")
    bad = slipped(slipped(base, E.set_task, "mma", warp_idx=2), E.set_task, "epilogue", warp_idx=10)
    diag = next(d for d in bad.validate().errors if d.code == "codegen.mma_warpgroup")
    (fx,) = diag.fixes
    assert fx.label == "give task mma warps 12..19 (2 warpgroups)"
    assert "warps 12..19 (warp_idx=12, num_warps=8)" in diag.hint
    assert_does_what_it_says(bad, fx, E.apply_fix(bad, fx))


def test_fork_on_the_gemm_template_offers_the_way_back_first_and_the_fork_next():
    base = start("GEMM mainloop: D = A @ B")
    bad = slipped(base, E.set_group, "ab", mode="Fork")
    root = offered(bad, None, base).errors[0]
    labels = [fx.label for fx in root.fixes]
    assert root.code == "group.collapsed_task"
    assert labels[0] == "set group ab's mode back to Merge"
    assert "let task load_a produce smem_a and smem_b (task load_b merged into it)" in labels
    assert not any(x.startswith("make group ab a Merge") for x in labels)  # the same design: offered once


def test_reverts_name_each_changed_field_once():
    base = start("GEMM mainloop: D = A @ B")
    d = slipped(slipped(base, E.set_resource, "smem_a", num_stages=5), E.update_problem, BK=32)
    labels = [fx.label for fx in revert_fixes(d, base)]
    assert "set smem_a's num_stages back to 3" in labels and "set BK back to 64" in labels
    assert ("problem", "BK") in changed_fields(d, base) and ("smem_a", "num_stages") in changed_fields(d, base)
    assert revert_fixes(base, base) == [] and revert_fixes(d, None) == []

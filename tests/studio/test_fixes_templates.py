"""New designs from templates, schedules that follow the design, and one-click fixes through the
studio's widgets (headless: widget values and button clicks, no browser)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pgstudio import examples
from pgstudio.analysis.layout import barrier_layout
from pgstudio.model import PipelineGroupMode

pytest.importorskip("ipywidgets")
from pgstudio.studio import Studio  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fix_buttons import fix_button  # noqa: E402


@pytest.mark.parametrize("label", list(examples.TEMPLATES))
def test_every_template_opens_valid_with_its_problem_visible(tmp_path, label):
    s = Studio(folder=tmp_path, debounce=0)
    editor = s.editors["design"]
    editor.template.value = label
    editor.new.click()
    name = examples.TEMPLATES[label]
    if name is None:  # nothing to build yet: the one problem says what to add first
        assert s.report.codes() == ["codegen.no_tasks"], str(s.report)
        assert "empty (no resources, groups or tasks yet)" in s.title.value
        return
    assert s.report.ok, str(s.report)
    assert s.design.name == name
    shown = editor.problem_text
    for key in (("M", "N", "K", "BM", "BN", "BK", "dtype") if "gemm" in name else ("num_elements", "dtype")):
        assert f"{key}=" in shown, shown
    s.undo()
    assert s.design.name == "my_design"


def test_schedules_follow_a_mode_switch(tmp_path):
    """00_studio's first try-it: the GEMM's ab group from Merge to FusedMerge, no error."""
    s = Studio(examples.merge_gemm(), folder=tmp_path, debounce=0)
    before = barrier_layout(s.design).num_barriers
    groups = s.editors["groups"]
    groups.select("ab")
    groups.mode.value = "FusedMerge"
    assert s.design.group("ab").mode is PipelineGroupMode.FusedMerge
    assert s.report.ok and not s.report.diagnostics, str(s.report)
    after = barrier_layout(s.design).num_barriers
    stages = s.design.resource("smem_a").pipeline_config.num_stages
    assert before - after == stages  # (N + 1) S -> 2 S for N = 2 members
    assert f"{after} barriers" in s.status.value


def test_a_hand_schedule_an_edit_breaks_offers_rederive(tmp_path):
    s = Studio(examples.merge_copy(), folder=tmp_path, debounce=0)
    d = s.design
    hand = examples.merge_store_schedule(d.resource("gmem_d"), d.group("ab"))
    assert s.attach_schedule("store", hand)
    s.set_group("ab", mode="FusedMerge")
    assert "schedule.collapsed_member" in s.report.codes()
    fix_button(s, "re-derive task store's schedule").click()
    assert s.report.ok and "fixed: re-derive task store's schedule" in s.message_text
    s.undo()
    assert "schedule.collapsed_member" in s.report.codes()


def test_mistake_then_one_click_fix_in_the_forms_units(tmp_path):
    s = Studio(examples.merge_copy(), folder=tmp_path, debounce=0)
    tasks = s.editors["tasks"]
    tasks.select("store")
    tasks.num_warps.value = 2
    texts = " ".join(s.diagnostics.texts)
    assert "config.arrive_count" in texts and "fix: set consumer_group to 2 Warps (64 threads)" in texts
    assert "set smem_a's consumer_group to 2 Warps (64 threads)" in s.diagnostics.fix_labels
    fix_button(s, "set smem_a's consumer_group to 2 Warps (64 threads)").click()
    fix_button(s, "set smem_b's consumer_group to 2 Warps (64 threads)").click()
    assert s.report.ok, str(s.report)
    resources = s.editors["resources"]
    resources.select("smem_a")
    assert (resources.c_size.value, resources.c_agent.value) == (2, "Warp")


def test_diagnostics_collapse_and_stay_bounded(tmp_path):
    s = Studio(examples.merge_copy(), folder=tmp_path, debounce=0)
    for _ in range(6):
        s.add_resource()
    pane = s.diagnostics
    assert pane.body.layout.max_height and pane.body.layout.overflow == "auto"
    pane.toggle.value = False
    assert pane.body.layout.display == "none" and pane.toggle.description == "show"
    pane.toggle.value = True
    assert pane.body.layout.display is None

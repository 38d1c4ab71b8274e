"""The diagnostics pane shows the root cause first with its fix and what follows from it indented
under it; its first button leads back to the last valid design; the status line claims no barrier
saving for a design with errors (headless: widget values and button clicks, no browser)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pgstudio import examples

pytest.importorskip("ipywidgets")
from pgstudio.studio import Studio  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fix_buttons import fix_button  # noqa: E402


def fork_on_gemm(tmp_path):
    s = Studio(examples.merge_gemm(), folder=tmp_path, debounce=0)
    groups = s.editors["groups"]
    groups.select("ab")
    groups.mode.value = "Fork"
    return s


def test_fork_on_the_gemm_shows_the_collapsed_task_first_and_its_echoes_under_it(tmp_path):
    s = fork_on_gemm(tmp_path)
    rows = [r for r in s.diagnostics.rows if r.diag is not None]
    texts = s.diagnostics.texts
    assert "group.collapsed_task" in texts[0] and "root cause of the 5 below" in texts[0]
    assert all("follows from <code>group.collapsed_task</code>" in t for t in texts[1:]) and len(texts) == 6
    assert any("schedule.phase_lead" in t for t in texts[1:])  # two arrivals per round on a count of 1: an echo
    assert rows[0].widget.layout.margin == "0" and all(r.widget.layout.margin == "0 0 0 28px" for r in rows[1:])
    assert "1 root cause" in s.diagnostics.head.value
    assert s.diagnostics.fix_labels[0] == "set group ab's mode back to Merge"  # the top button: the way back
    assert "grouping saves" not in s.status.value  # no saving is claimed for a design with errors


def test_the_fork_fix_keeps_the_fork(tmp_path):
    s = fork_on_gemm(tmp_path)
    fix_button(s, "let task load_a produce smem_a and smem_b (task load_b merged into it)").click()
    assert s.report.ok, str(s.report)
    assert s.design.group("ab").mode.value == "Fork" and not any(t.name == "load_b" for t in s.design.tasks)
    assert "grouping saves" in s.status.value


def test_a_warp_slip_is_put_back_by_the_first_button(tmp_path):
    s = Studio(examples.merge_gemm(), folder=tmp_path, debounce=0)
    tasks = s.editors["tasks"]
    tasks.select("mma")
    tasks.warp_idx.value = 2
    assert s.report.codes() == ["task.warps", "codegen.mma_warpgroup"]  # one pass: the generator's rule too
    first = s.diagnostics.fix_labels[0]
    assert first == "move task mma back to warp 4"
    fix_button(s, first).click()
    assert s.report.ok and s.design.task("mma").warp_idx == 4
    assert s.design.task("epilogue").warp_idx == 2  # what the user did not touch stays

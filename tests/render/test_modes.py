"""The teaching figure: the same members ungrouped, as a Merge, a Fork and a FusedMerge, side by
side with their barrier counts; shared sets span every member row; a mode the members cannot form
says why."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from pgstudio import (MemoryResource, PipelineGroup, barrier_layout, create_tma_async_pipeline_cfg,  # noqa: E402
                      create_tma_umma_pipeline_cfg, examples)
from pgstudio.render._shapes import patch_rects  # noqa: E402
from pgstudio.render.modes import MODES, formula, modes_figure, modes_svg  # noqa: E402


def _texts(fig):
    return {t.get_gid(): t.get_text() for t in fig.axes[0].texts if t.get_gid()}


def test_counts_are_the_layouts_of_the_groups_and_follow_the_formulas():
    design = examples.merge_gemm()
    group = design.group("ab")
    fig = modes_figure(group)
    texts = _texts(fig)
    n, s = len(group.members), group.merged_config.num_stages
    expected = {"ungrouped": 2 * n * s, "Merge": (n + 1) * s, "Fork": (n + 1) * s, "FusedMerge": 2 * s}
    for mode in MODES:  # what barrier_layout says for a group of that mode, built the ordinary way
        members = [MemoryResource(m.name, m.pipeline_config) for m in group.members]
        built = PipelineGroup(name="g", members=members, mode=mode)
        built.release_members()
        assert barrier_layout(built).num_barriers == expected[mode]
    for name, count in expected.items():
        assert texts[f"count-{name}"] == f"{count} barriers"
        assert texts[f"formula-{name}"] == formula(name, n, s)
    assert texts["note-Merge-2"] == "once: group.release()" and texts["note-Fork-2"] == "once: group.commit()"
    assert texts["note-FusedMerge-1"] == "shared: full + empty"
    title = next(t.get_text() for t in fig.texts if t.get_gid() == "title")
    assert title == "smem_a, smem_b (3 stages): ungrouped 12, Merge 9, Fork 9, FusedMerge 6 barriers"


def test_a_shared_set_spans_every_member_row_and_an_own_set_one():
    fig = modes_figure(examples.merge_gemm().group("ab"))
    heights = sorted({round(y1 - y0, 6) for p in fig.axes[0].patches for _, _, y0, y1 in patch_rects(p)})
    assert len(heights) == 2 and heights[1] > 2 * heights[0]  # one row high, or both rows high
    texts = _texts(fig)
    assert texts["set-Merge-shared_empty"] == "shared" and texts["set-Merge-full_0"] == ""
    assert texts["set-FusedMerge-shared_full"] == "shared"


def test_a_mode_the_members_cannot_form_says_why():
    x = MemoryResource("smem_x", create_tma_async_pipeline_cfg(num_stages=4, num_bytes=8192))
    y = MemoryResource("smem_y", create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=8192))
    texts = _texts(modes_figure([x, y]))
    assert texts["count-Fork"] == "12 barriers"
    for mode in ("Merge", "FusedMerge"):
        words = texts[f"count-{mode}"].replace("\n", " ")
        assert words.startswith(f"not allowed: a {mode} collapses the consumer side")
    with pytest.raises(ValueError, match="at least two pipelined resources"):
        modes_figure([x])


def test_svg_keeps_text():
    svg = modes_svg(examples.fused_merge_copy().group("ab"))
    assert svg.count("<svg") == 1 and "FusedMerge" in svg and "barriers" in svg

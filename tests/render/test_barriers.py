"""The barrier-layout picture: one cell per slot with its stage, arrive count (threads and warps),
tx bytes, iterations and wait parity, in shared-memory order, grouped into barrier sets with their
arrivers, waiters and the resources they guard; a design's data buffers per stage."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from matplotlib.colors import to_hex  # noqa: E402

from pgstudio import barrier_layout, examples, ungrouped  # noqa: E402
from pgstudio.render import style  # noqa: E402
from pgstudio.render._figure import to_png, to_svg  # noqa: E402
from pgstudio.render._shapes import patch_rects  # noqa: E402
from pgstudio.render.barriers import CELL_H, barrier_figure, comparison_figure, layout_svg, owner_kind  # noqa: E402


def _texts(fig):
    return {t.get_gid(): t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid()}


def _cells(fig, prefix="slots-"):
    """{(x0, y0): (face, edge)} of every cell rectangle in the patches whose id starts with prefix."""
    out = {}
    for ax in fig.axes:
        for p in ax.patches:
            if (p.get_gid() or "").startswith(prefix):
                for x0, x1, y0, _y1 in patch_rects(p):
                    assert abs(x1 - x0 - 1.0) < 1e-9 or prefix.startswith("strips")
                    out[(round(x0, 6), round(y0, 6))] = (to_hex(p.get_facecolor()), to_hex(p.get_edgecolor()))
    return out


@pytest.mark.parametrize("name", ["merge_gemm", "fork_copy", "fused_merge_copy", "merge_gemm_resadd"])
def test_one_cell_per_slot_with_stage_arrive_count_and_tx(name):
    layout = barrier_layout(examples.example(name))
    fig = barrier_figure(layout)
    texts = {t.get_gid(): t for t in fig.axes[0].texts if t.get_gid()}
    cells = _cells(fig)
    assert len(cells) == layout.num_barriers
    xs = {}
    sets = {s.name: s for s in layout.sets}
    for slot in layout.slots:
        tx = style.fmt_bytes(slot.tx_bytes) if slot.tx_bytes else "0"
        label = texts[f"slot-{slot.index}"]
        stages = sets[slot.set].stages
        its = ",".join(str(slot.stage + r * stages) for r in range(3))
        # consumers wait on full with parity r & 1; producers on empty with its complement
        parity = "0,1,0" if style.role_of(slot.barrier) == "full" else "1,0,1"
        warps = f"{slot.arrive_count // 32} warps" if slot.arrive_count >= 64 else (
            "1 warp" if slot.arrive_count == 32 else f"{slot.arrive_count} thread" + "s" * (slot.arrive_count != 1))
        assert label.get_text() == (f"stage {slot.stage}\narrive {slot.arrive_count}\n({warps})\ntx {tx}\n"
                                    f"iters {its}\nparity {parity}")
        assert texts[f"offset-{slot.index}"].get_text() == str(slot.offset)
        # the label sits in the middle of its cell, and the cell has the stage and role colours
        cx, cy = label.get_position()
        key = (round(cx - 0.5, 6), round(cy - CELL_H / 2, 6))
        assert cells[key] == (style.stage_colour(slot.stage).lower(), style.role_colour(slot.barrier).lower())
        xs[slot.index] = cx
    for s in layout.sets:  # the cells of a set are adjacent, in shared-memory order
        run = [xs[i] for i in range(s.first, s.first + s.stages)]
        assert all(abs(b - a - 1.0) < 1e-9 for a, b in zip(run, run[1:]))


def test_sets_are_labelled_with_their_arrivers_and_waiters():
    layout = barrier_layout(examples.fused_merge_gemm())
    texts = _texts(barrier_figure(layout))
    for s in layout.sets:
        assert texts[f"set-{s.name}"] == f"{s.label} x{s.stages}"
        assert texts[f"tasks-{s.name}"] == f"arrive: {', '.join(s.arrivers)}\nwait: {', '.join(s.waiters)}"
    assert texts["set-ab.shared_full"] == f"shared_full x{layout.sets[0].stages}"
    assert texts["tasks-ab.shared_full"].startswith("arrive: load_a, load_b\n")
    assert texts["row-ab"] == "ab"


def test_sets_say_what_they_guard_and_a_design_shows_its_buffers_by_stage():
    from pgstudio.analysis.layout import smem_layout

    design = examples.fork_gemm_act()
    fig = barrier_figure(design)
    texts = _texts(fig)
    layout = barrier_layout(design)
    assert texts["guards-fa.shared_full"] == "guards smem_a, smem_act"
    assert texts["guards-fa.empty_1"] == "guards smem_act"
    act = next(s for s in layout.slots if s.set == "fa.empty_1")
    assert "\n(4 warps)\n" in texts[f"slot-{act.index}"]  # the act task's 128 threads are 4 warps
    smem = smem_layout(design)
    cells = _cells(fig, "buffers-")
    for buf in smem.buffers:
        label = texts[f"buffer-{buf.resource}"]
        assert label == buf.resource + (f" (view of {buf.alias_of})" if buf.alias_of else "")
        for stage in range(buf.stages):
            start = buf.offset + stage * buf.stage_bytes
            text = next(t for t in fig.axes[0].texts if t.get_gid() == f"buffer-{buf.resource}-{stage}")
            assert text.get_text() == f"[{start // 1024}K, {(start + buf.stage_bytes) // 1024}K)"
            cx, cy = text.get_position()  # the stage's bytes sit in a cell of the stage's colour
            assert cells[(round(cx - 0.5, 6), round(cy - 0.18, 6))][0] == style.stage_colour(stage).lower()
    assert not any(k.startswith("buffer-") for k in _texts(barrier_figure(layout)))


def test_a_group_alone_draws_without_task_lines():
    design = examples.merge_copy()
    fig = barrier_figure(design.group("ab"))
    texts = _texts(fig)
    assert not any(k.startswith("tasks-") for k in texts)
    assert len(_cells(fig)) == 12
    assert owner_kind(list(barrier_layout(design.group("ab")).sets)) == "Merge group"


@pytest.mark.parametrize("build,group,kind", [(examples.merge_copy, "ab", "Merge group"),
                                              (examples.fork_copy, "xy", "Fork group"),
                                              (examples.fused_merge_copy, "ab", "FusedMerge group")])
def test_the_owner_kind_is_the_mode_whose_shared_barriers_it_has(build, group, kind):
    d = build()
    layout = barrier_layout(d)
    assert owner_kind([s for s in layout.sets if s.owner == d.group(group).name]) == kind
    member = d.group(group).member_names[0]
    assert owner_kind([s for s in barrier_layout(ungrouped(d)).sets if s.owner == member]) == "ungrouped"


def test_long_owners_wrap_at_set_boundaries():
    layout = barrier_layout(examples.merge_gemm())
    fig = barrier_figure(layout, max_cells=4)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels.count("ab (cont.)") == 2  # full_0 | full_1 | shared_empty: three rows of 4
    assert len(_cells(fig)) == layout.num_barriers


def test_comparison_says_how_many_barriers_grouping_saves():
    design = examples.fused_merge_copy()
    grouped, alone = barrier_layout(design), barrier_layout(ungrouped(design))
    fig = comparison_figure(design)
    title = fig.texts[0].get_text()
    assert f"saves {alone.num_barriers - grouped.num_barriers} barriers" in title
    assert f"{grouped.num_barriers} instead of {alone.num_barriers}" in title
    assert len(_cells(fig, "p0-slots-")) == grouped.num_barriers
    assert len(_cells(fig, "p1-slots-")) == alone.num_barriers
    assert len(_cells(fig, "strips-")) == grouped.num_barriers + alone.num_barriers
    texts = _texts(fig)  # the grouped panel shows the buffers once; the twin's guard lines name them
    assert "p0-buffer-smem_a" in texts and not any(k.startswith("p1-buffer-") for k in texts)
    caption = next(t for t in fig.texts if t.get_gid() == "caption")
    chars = max(len(line) for line in caption.get_text().splitlines())  # wrapped inside the figure, none cut off
    assert caption.get_text().count("\n") >= 1 and chars * 7 * 0.56 / 72 < fig.get_figwidth()


def test_legend_explains_roles_and_stages():
    design = examples.merge_gemm_resadd()
    fig = barrier_figure(design)
    labels = [t.get_text() for t in fig.texts if (t.get_gid() or "").startswith("legend-")]
    assert labels[:2] == ["full barrier (producer arrives)", "empty barrier (consumer arrives)"]
    deepest = max(s.stages for s in barrier_layout(design).sets)
    assert labels[2:] == [f"stage {s}" for s in range(deepest)]


def test_svg_and_png_output():
    layout = barrier_layout(examples.merge_copy())
    svg = layout_svg(layout)
    assert svg.count("<svg") == 1 and "shared_empty x4" in svg  # text stays text
    assert svg == layout_svg(layout)  # deterministic
    assert to_png(barrier_figure(layout)).startswith(b"\x89PNG")
    assert to_svg(comparison_figure(examples.merge_copy())).count("<svg") == 1


def test_a_cluster_and_the_sm100a_mma_done_barriers_show_in_the_figure():
    layout = barrier_layout(examples.merge_gemm(cluster=(1, 2)).with_targets("sm_90a", "sm_100a"))
    fig = barrier_figure(layout)
    texts = _texts(fig)
    assert texts["set-ab.shared_empty"] == "shared_empty x3 (2 blocks)"
    assert texts["tasks-ab.shared_empty"].startswith("arrive: mma + peer mma (mapa)\n")
    assert texts["set-tmem_c.mma_done"] == "mma_done x1"
    assert texts["tasks-tmem_c.mma_done"] == "arrive: mma (tcgen05.commit)\nwait: mma"
    assert texts["row-tmem_c [sm_100a]"] == "tmem_c [sm_100a]"
    done = layout.internal_slots[0]
    assert texts[f"offset-{done.index}"] == str(done.offset) == str(layout.num_bytes + 8)  # past the TMEM slot
    assert "arrive 2" in texts[f"slot-{layout.slot('ab.shared_empty', 0).index}"]
    assert owner_kind(list(layout.internal)) == "sm_100a generator"

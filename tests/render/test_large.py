"""Pictures of large designs stay readable and cheap: a barrier layout past ``COMPACT_SLOTS`` is
drawn compact (cells without per-cell text, one label per set, the comparison as strips), a
timeline draws at most ``MAX_FLIP_ROWS`` rows of phase flips -- and both still show every slot."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from pgstudio import barrier_layout, examples  # noqa: E402
from pgstudio.analysis.simulate import simulate  # noqa: E402
from pgstudio.render._shapes import patch_rects  # noqa: E402
from pgstudio.render.barriers import COMPACT_SLOTS, barrier_figure, comparison_figure  # noqa: E402
from pgstudio.render.timeline import MAX_FLIP_ROWS, timeline_figure  # noqa: E402


def _texts(fig):
    return [t for ax in fig.axes for t in ax.texts] + list(fig.texts)


def _cells(fig, prefix):
    return sum(len(patch_rects(p)) for ax in fig.axes for p in ax.patches if (p.get_gid() or "").startswith(prefix))


def test_a_large_layout_is_drawn_compact_with_every_slot_and_one_label_per_set():
    design = examples.chain(31, "Merge", width=4)
    layout = barrier_layout(design)
    assert layout.num_barriers > COMPACT_SLOTS
    fig = barrier_figure(design)
    assert _cells(fig, "slots-") == layout.num_barriers  # every slot is still a cell
    labels = {t.get_gid(): t.get_text() for t in _texts(fig) if (t.get_gid() or "").startswith("set-")}
    assert len(labels) == len(layout.sets)
    first = layout.sets[0]
    assert first.tx_bytes == 256  # a bulk copy of s0_a's 256-byte tile
    assert labels[f"set-{first.name}"] == f"{first.label} x{first.stages} n{first.init_count} tx 256 B"
    assert not any((t.get_gid() or "").startswith(("slot-", "tasks-")) for t in _texts(fig))
    assert len(_texts(fig)) < 2 * len(layout.sets) + 3 * 31 + 10  # per set and row, never per slot


def test_the_comparison_of_a_large_design_is_its_strips():
    design = examples.chain(31, "Fork", width=4)
    grouped, alone = barrier_layout(design), barrier_layout(examples.ungrouped(design))
    fig = comparison_figure(design)
    assert _cells(fig, "strips-") == grouped.num_barriers + alone.num_barriers
    assert len(_texts(fig)) <= 12  # strip labels, headings, title, caption, legend: none per slot
    assert f"grouping saves {alone.num_barriers - grouped.num_barriers} barriers" in fig.texts[0].get_text()


def test_a_small_layout_keeps_its_per_cell_text():
    fig = barrier_figure(examples.merge_copy())
    assert sum((t.get_gid() or "").startswith("slot-") for t in _texts(fig)) == barrier_layout(examples.merge_copy()).num_barriers


def test_a_timeline_with_many_barrier_sets_draws_the_first_flip_rows_and_says_how_many_more():
    design = examples.chain(31, "Merge", width=3)
    tl = simulate(design, iterations=2, inner=1)
    sets = {e.barrier for e in tl.events if e.kind == "phase_flip" and e.barrier}
    assert len(sets) > MAX_FLIP_ROWS
    fig = timeline_figure(tl)
    rows = [t for t in _texts(fig) if (t.get_gid() or "").startswith("fliprow-")]
    assert len(rows) == MAX_FLIP_ROWS
    titles = " ".join(ax.get_title(loc="left") for ax in fig.axes)
    assert f"(the first {MAX_FLIP_ROWS}; {len(sets) - MAX_FLIP_ROWS} more sets not drawn)" in titles

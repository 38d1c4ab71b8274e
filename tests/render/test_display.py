"""Rich display: a bare Design / Report / BarrierLayout / Timeline / verdict in a notebook cell
shows a summary and its picture (inline in the HTML, which front ends prefer, and as SVG)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("graphviz")

from pgstudio import barrier_layout, examples  # noqa: E402
from pgstudio.analysis.diagnostics import Report  # noqa: E402
from pgstudio.analysis.display import inline_svg, verdict_bundle  # noqa: E402
from pgstudio.model.task import Task  # noqa: E402


def _has_picture(bundle, marker):
    assert bundle["image/svg+xml"].count("<svg") == 1
    html = bundle["text/html"]
    assert "<svg" in html and "<?xml" not in html and "<!DOCTYPE" not in html
    assert marker in bundle["image/svg+xml"] and marker in html


def test_design_shows_its_graph_and_a_summary():
    design = examples.merge_gemm()
    bundle = design._repr_mimebundle_()
    _has_picture(bundle, "cluster_ab")
    assert design.summary() in bundle["text/plain"]
    assert "valid" in bundle["text/html"] and "<details>" in bundle["text/html"]


def test_an_invalid_design_shows_its_errors_in_the_picture():
    d = examples.merge_gemm()
    t, warp = d.task("load_b"), d.task("load_a").warp_idx
    d = d.with_task(Task.unchecked("load_b", warp, 1, t.src_resources, t.dst_resources, t.schedule))
    bundle = d._repr_mimebundle_()
    _has_picture(bundle, f"both use warp {warp}")
    assert "1 error(s)" in bundle["text/html"]


def test_report_shows_the_graph_of_its_design():
    report = examples.fork_copy().validate()
    bundle = report._repr_mimebundle_()
    _has_picture(bundle, "cluster_xy")
    assert bundle["text/plain"] == str(report)
    orphan = Report("orphan", ())  # no design attached: the table only
    plain = orphan._repr_mimebundle_()
    assert "image/svg+xml" not in plain and "no problems found" in plain["text/html"]


def test_barrier_layout_shows_its_cells():
    layout = barrier_layout(examples.merge_copy())
    bundle = layout._repr_mimebundle_()
    _has_picture(bundle, "shared_empty x4")
    assert bundle["text/plain"] == layout.table()


def test_timeline_shows_its_lanes(hand_timeline):
    tl = hand_timeline()
    bundle = tl._repr_mimebundle_()
    _has_picture(bundle, "load_a")
    assert bundle["text/plain"].startswith(tl.summary())


def test_verdict_with_a_witness_trace_shows_it(hand_timeline):
    @dataclass
    class Verdict:
        witness: object

        def summary(self):
            return "deadlock after 3 steps"

    bundle = verdict_bundle(Verdict(hand_timeline(iterations=2)))
    _has_picture(bundle, "store")
    assert "deadlock after 3 steps" in bundle["text/html"]
    assert "image/svg+xml" not in verdict_bundle("no deadlock, no race")


def test_without_the_render_extra_tables_still_show(monkeypatch):
    monkeypatch.setitem(sys.modules, "pgstudio.render.graph", None)  # import fails as if not installed
    bundle = examples.merge_copy()._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "no picture" in bundle["text/html"] and "pgstudio[render]" in bundle["text/html"]


def test_a_failing_picture_never_breaks_the_cell(monkeypatch):
    import pgstudio.render.barriers as barriers

    def boom(layout):
        raise RuntimeError("drawing exploded")

    monkeypatch.setattr(barriers, "layout_svg", boom)
    bundle = barrier_layout(examples.merge_copy())._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "drawing exploded" in bundle["text/html"] and "shared_empty" in bundle["text/html"]


def test_inline_svg_drops_the_prolog():
    html = inline_svg('<?xml version="1.0"?>\n<!DOCTYPE svg>\n<!-- x -->\n<svg width="1"></svg>')
    assert html.endswith('<svg width="1"></svg></div>') and "<?xml" not in html

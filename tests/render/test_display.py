"""Rich display: a bare Design / Report / BarrierLayout / Timeline / verdict in a notebook cell
shows a summary and its picture (inline in the HTML, which front ends prefer, and as SVG).

The values know nothing of display; ``render.display`` holds every view and registers them with
IPython by type name."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("graphviz")

from pgstudio import barrier_layout, examples  # noqa: E402
from pgstudio.analysis.diagnostics import Report  # noqa: E402
from pgstudio.render.display import DISPLAYS, bundle, inline_svg, register, verdict_bundle  # noqa: E402
from pgstudio.model.task import Task  # noqa: E402


def _has_picture(views, marker):
    assert views["image/svg+xml"].count("<svg") == 1
    html = views["text/html"]
    assert "<svg" in html and "<?xml" not in html and "<!DOCTYPE" not in html
    assert marker in views["image/svg+xml"] and marker in html


def test_design_shows_its_graph_and_a_summary():
    design = examples.merge_gemm()
    views = bundle(design)
    _has_picture(views, "cluster_ab")
    assert design.summary() in views["text/plain"]
    assert "valid" in views["text/html"] and "<details>" in views["text/html"]


def test_an_invalid_design_shows_its_errors_in_the_picture():
    d = examples.merge_gemm()
    t, warp = d.task("load_b"), d.task("load_a").warp_idx
    d = d.with_task(Task.unchecked("load_b", warp, 1, t.src_resources, t.dst_resources, t.schedule))
    views = bundle(d)
    _has_picture(views, f"both use warp {warp}")
    assert "1 error(s)" in views["text/html"]


def test_report_shows_the_graph_of_its_design():
    report = examples.fork_copy().validate()
    views = bundle(report)
    _has_picture(views, "cluster_xy")
    assert views["text/plain"] == str(report)
    orphan = Report("orphan", ())  # no design attached: the table only
    plain = bundle(orphan)
    assert "image/svg+xml" not in plain and "no problems found" in plain["text/html"]


def test_barrier_layout_shows_its_cells():
    layout = barrier_layout(examples.merge_copy())
    views = bundle(layout)
    _has_picture(views, "shared_empty x4")
    assert views["text/plain"] == layout.table()


def test_timeline_shows_its_lanes(hand_timeline):
    tl = hand_timeline()
    views = bundle(tl)
    _has_picture(views, "load_a")
    assert views["text/plain"].startswith(tl.summary())


def test_verdict_with_a_witness_trace_shows_it(hand_timeline):
    @dataclass
    class Verdict:
        witness: object

        def summary(self):
            return "deadlock after 3 steps"

    views = verdict_bundle(Verdict(hand_timeline(iterations=2)))
    _has_picture(views, "store")
    assert "deadlock after 3 steps" in views["text/html"]
    assert "image/svg+xml" not in verdict_bundle("no deadlock, no race")


def test_without_the_render_extra_tables_still_show(monkeypatch):
    monkeypatch.setitem(sys.modules, "pgstudio.render.graph", None)  # import fails as if not installed
    views = bundle(examples.merge_copy())
    assert "image/svg+xml" not in views
    assert "no picture" in views["text/html"] and "pgstudio[render]" in views["text/html"]


def test_a_failing_picture_never_breaks_the_cell(monkeypatch):
    import pgstudio.render.barriers as barriers

    def boom(layout):
        raise RuntimeError("drawing exploded")

    monkeypatch.setattr(barriers, "layout_svg", boom)
    views = bundle(barrier_layout(examples.merge_copy()))
    assert "image/svg+xml" not in views
    assert "drawing exploded" in views["text/html"] and "shared_empty" in views["text/html"]


def test_inline_svg_drops_the_prolog():
    html = inline_svg('<?xml version="1.0"?>\n<!DOCTYPE svg>\n<!-- x -->\n<svg width="1"></svg>')
    assert html.endswith('<svg width="1"></svg></div>') and "<?xml" not in html


def test_every_view_names_a_type_that_exists():
    import importlib
    for (module, name), _view in DISPLAYS.items():
        assert isinstance(getattr(importlib.import_module(module), name), type), (module, name)


def test_a_notebook_shell_shows_pgstudio_values_with_their_pictures():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    register(shell)
    data, _ = shell.display_formatter.format(barrier_layout(examples.merge_copy()))
    assert "image/svg+xml" in data and "shared_empty" in data["text/html"]
    data, _ = shell.display_formatter.format(examples.fork_copy().validate())
    assert "cluster_xy" in data["image/svg+xml"]

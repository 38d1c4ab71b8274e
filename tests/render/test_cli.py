"""``pgstudio render`` and the demo step write the pictures; nothing else in render writes files."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("graphviz")

from pgstudio import cli, examples  # noqa: E402
from pgstudio.render import cli as render_cli  # noqa: E402

STEMS = ("graph", "barriers", "barriers_vs_ungrouped")


@pytest.fixture
def design_file(tmp_path):
    path = tmp_path / "merge_gemm.json"
    path.write_text(examples.merge_gemm().to_json())
    return path


def test_render_writes_svg_and_png_and_says_when_there_is_no_simulator(design_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pgstudio.analysis.simulate", None)  # as if the simulator were absent
    out = tmp_path / "pics"
    assert cli.main(["render", str(design_file), "--out", str(out)]) == 0
    for stem in STEMS:
        assert (out / f"{stem}.svg").read_text().count("<svg") == 1
        assert (out / f"{stem}.png").read_bytes().startswith(b"\x89PNG")
    assert not (out / "timeline.svg").exists()
    printed = capsys.readouterr().out
    assert render_cli.NO_SIMULATOR in printed and f"wrote {out / 'graph.svg'}" in printed


def test_render_writes_the_timeline_when_one_is_simulated(design_file, tmp_path, monkeypatch, hand_timeline):
    calls = []

    def fake(design, iterations, inner):
        calls.append((design.name, iterations, inner))
        return hand_timeline(iterations=iterations), ""

    monkeypatch.setattr(render_cli, "simulated", fake)
    out = tmp_path / "pics"
    assert cli.main(["render", str(design_file), "--out", str(out), "--iterations", "3", "--no-png"]) == 0
    assert calls == [("merge_gemm", 3, 4)]
    assert "load_a" in (out / "timeline.svg").read_text()
    assert not list(out.glob("*.png"))


def test_render_with_the_real_simulator(design_file, tmp_path):
    pytest.importorskip("pgstudio.analysis.simulate")
    out = tmp_path / "pics"
    assert cli.main(["render", str(design_file), "--out", str(out), "--iterations", "4", "--no-png"]) == 0
    assert (out / "timeline.svg").read_text().count("<svg") == 1


def test_render_rejects_a_missing_file_cleanly(tmp_path, capsys):
    assert cli.main(["render", str(tmp_path / "nope.json"), "--out", str(tmp_path)]) == 2
    assert "no design file" in capsys.readouterr().err


def test_demo_hook_writes_the_pictures_of_each_design(tmp_path, monkeypatch):
    cli.build_parser()  # loads pgstudio.render.cli, which registers the hook
    assert render_cli.demo_pictures in cli.DEMO_HOOKS
    monkeypatch.setitem(sys.modules, "pgstudio.analysis.simulate", None)
    render_cli.demo_pictures("fork_copy", examples.fork_copy(), tmp_path)
    for stem in STEMS:
        assert (tmp_path / "fork_copy" / f"{stem}.svg").exists()


def test_render_highlights_an_element_and_rejects_an_unknown_one(design_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pgstudio.analysis.simulate", None)
    out = tmp_path / "pics"
    assert cli.main(["render", str(design_file), "--out", str(out), "--no-png", "--highlight", "ab"]) == 0
    assert "#F1C40F" in (out / "graph.svg").read_text().upper()  # the highlight colour
    assert cli.main(["render", str(design_file), "--out", str(out), "--highlight", "nope"]) == 2
    err = capsys.readouterr().err
    assert "'nope' names no resource, group or task" in err and "smem_a" in err

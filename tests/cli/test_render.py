"""``pgstudio render`` and the demo write the pictures; the render stage itself writes no files."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("graphviz")

from pgstudio import cli, examples  # noqa: E402
from pgstudio.cli import demo as demo_cli  # noqa: E402
from pgstudio.cli import render as render_cli  # noqa: E402

STEMS = ("graph", "barriers", "barriers_vs_ungrouped", "timeline")


@pytest.fixture
def design_file(tmp_path):
    path = tmp_path / "merge_gemm.json"
    path.write_text(examples.merge_gemm().to_json())
    return path


def test_render_writes_svg_and_png_of_every_picture(design_file, tmp_path, capsys):
    out = tmp_path / "pics"
    assert cli.main(["render", str(design_file), "--out", str(out), "--iterations", "3"]) == 0
    for stem in STEMS:
        assert (out / f"{stem}.svg").read_text().count("<svg") == 1
        assert (out / f"{stem}.png").read_bytes().startswith(b"\x89PNG")
    assert f"wrote {out / 'graph.svg'}" in capsys.readouterr().out
    assert "load_a" in (out / "timeline.svg").read_text()


def test_render_svg_only(design_file, tmp_path):
    out = tmp_path / "pics"
    assert cli.main(["render", str(design_file), "--out", str(out), "--iterations", "4", "--no-png"]) == 0
    assert (out / "timeline.svg").read_text().count("<svg") == 1
    assert not list(out.glob("*.png"))


def test_a_design_that_cannot_be_simulated_still_gets_its_other_pictures(tmp_path, capsys):
    from pgstudio import mistakes
    path = tmp_path / "bad.json"
    path.write_text(mistakes.mismatched_iterations().to_json())
    written, notes = render_cli.write_pictures(mistakes.mismatched_iterations(), tmp_path / "pics", png=False)
    stems = {p.stem for p in written}
    assert {"graph", "barriers"} <= stems
    if "timeline" not in stems:  # a design the simulator refuses says why instead
        assert notes and notes[0].startswith("timeline skipped")


def test_render_rejects_a_missing_file_cleanly(tmp_path, capsys):
    assert cli.main(["render", str(tmp_path / "nope.json"), "--out", str(tmp_path)]) == 2
    assert "no design file" in capsys.readouterr().err


def test_the_demo_writes_the_pictures_of_each_design(tmp_path, capsys):
    said: set[str] = set()
    demo_cli.pictures("fork_copy", examples.fork_copy(), tmp_path, said)
    for stem in STEMS:
        assert (tmp_path / "fork_copy" / f"{stem}.svg").exists()
    assert "pictures:" in capsys.readouterr().out


def test_render_highlights_an_element_and_rejects_an_unknown_one(design_file, tmp_path, capsys):
    out = tmp_path / "pics"
    assert cli.main(["render", str(design_file), "--out", str(out), "--no-png", "--highlight", "ab"]) == 0
    assert "#F1C40F" in (out / "graph.svg").read_text().upper()  # the highlight colour
    assert cli.main(["render", str(design_file), "--out", str(out), "--highlight", "nope"]) == 2
    err = capsys.readouterr().err
    assert "'nope' names no resource, group or task" in err and "smem_a" in err

"""Every "Try it" sentence of every notebook is done by a test: its stated numbers are computed in
notebooks/_build.py, and doing what it says -- an edit to a code cell, run again; or, in the
studio, a click -- gives those numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nbbuild import builder

from pgstudio import examples
from pgstudio.analysis.layout import barrier_layout

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipywidgets")
from pgstudio.studio import Studio  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _all_try_its():
    build = builder()
    return [(name, t) for name in build.NOTEBOOKS for t in build.try_its(name)]


def test_every_try_it_sentence_is_a_tested_one():
    """A "Try it" in any notebook is either a TryIt (replayed below) or 00_studio's widget walk."""
    build = builder()
    tested = {t.text for _, t in _all_try_its()}
    for name in build.NOTEBOOKS:
        for cell in build.notebook(build.NOTEBOOKS[name]).cells:
            if cell.cell_type == "markdown" and "try it" in cell.source.lower():
                assert cell.source in tested or cell.source.startswith("Try it: in **Groups**, switch `ab`"), \
                    f"{name}: an untested try-it sentence: {cell.source[:80]!r}"
    assert len(tested) >= 5 and {n for n, _ in _all_try_its()} >= {"01_barrier_basics", "02_merge", "03_fork",
                                                                     "04_fused_merge"}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name,try_it", _all_try_its(), ids=lambda x: x if isinstance(x, str) else x.new)
def test_try_it_does_what_it_says(name, try_it):
    build = builder()
    for number in re.findall(r"\d+", " ".join(try_it.expect)):
        assert number in try_it.text, f"the sentence does not state {number}"
    nb = build.notebook(build.NOTEBOOKS[name])
    index = {c.source: i for i, c in enumerate(nb.cells)}
    edit = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and try_it.cell in c.source)
    show = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and try_it.shows in c.source)
    assert nb.cells[edit].source.count(try_it.old) == 1 and edit <= show < index[try_it.text]
    # before: the committed run does not already show the numbers (the edit makes the difference)
    before = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4).cells[show]
    assert not all(e in _text(before) for e in try_it.expect)
    nb.cells[edit].source = nb.cells[edit].source.replace(try_it.old, try_it.new)
    nb.cells = nb.cells[:show + 1]
    after = build.run(nb).cells[show]
    for expected in try_it.expect:
        assert expected in _text(after), f"after the edit, cell {show} shows {_text(after)[:500]!r}"


def _text(cell) -> str:
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", []))


def test_studio_try_it_switch_to_fused_merge(tmp_path):
    build = builder()
    before, after, errors = build.TRY_IT
    text = next(c for c in build.NOTEBOOKS["00_studio"] if isinstance(c, str) and c.startswith("md:Try it"))
    assert f"drop from\n{before} to {after}" in text or f"drop from {before} to {after}" in text.replace("\n", " ")
    s = Studio(examples.merge_gemm(), folder=tmp_path, debounce=0)  # the notebook's cell
    assert barrier_layout(s.design).num_barriers == before
    groups = s.editors["groups"]
    groups.select("ab")
    groups.mode.value = "FusedMerge"  # what the sentence asks
    assert barrier_layout(s.design).num_barriers == after and f"{after} barriers" in s.status.value
    assert len(s.report.errors) == errors == 0
    s.editors["resources"].select("smem_b")
    s.editors["resources"].pipeline.value = "TmaAsync"  # the sentence's second half: a diagnostic appears
    assert "group.collapsed_kind" in s.report.codes()

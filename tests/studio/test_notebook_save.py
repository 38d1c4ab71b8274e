"""The save hook that ``pgstudio lab`` / ``make lab`` gives JupyterLab: a notebook saved after the
studio's cell ran holds what a committed run holds (no widget view, no widget state, no timings),
checked through jupyter_server's own contents manager with the hook configured as the command line
configures it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pgstudio.studio import _notebook_save as S

nbformat = pytest.importorskip("nbformat")
contents = pytest.importorskip("jupyter_server.services.contents.filemanager")
from traitlets.config import Config  # noqa: E402  (after the skip: traitlets comes with jupyter_server)

STUDIO = Path(__file__).resolve().parents[2] / "notebooks" / "00_studio.ipynb"


def _as_lab_saves_it(nb):
    """The committed notebook as JupyterLab sends it after its first cell ran (ipywidgets 8)."""
    ran = copy.deepcopy(nb)
    cell = next(c for c in ran.cells if c.cell_type == "code")
    cell.outputs[0].data[S.WIDGET] = {"model_id": "5d1c0f", "version_major": 2, "version_minor": 0}
    cell.metadata["execution"] = {"iopub.execute_input": "2025-01-01T00:00:00Z"}
    ran.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {"5d1c0f": {}}, "version_major": 2}}
    ran.metadata["language_info"]["version"] = "3.12.3"
    return ran


def test_a_save_from_lab_writes_the_committed_file(tmp_path):
    committed = STUDIO.read_text()
    nb = nbformat.reads(committed, as_version=4)
    config = Config()
    config.ContentsManager.pre_save_hook = S.SERVER_ARGS[0].split("=", 1)[1]  # what the flag sets
    cm = contents.FileContentsManager(root_dir=str(tmp_path), config=config)
    cm.save({"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(_as_lab_saves_it(nb)))},
            "00_studio.ipynb")
    saved = nbformat.read(tmp_path / "00_studio.ipynb", as_version=4)
    assert S.run_traces(saved) == []
    assert saved.metadata == nb.metadata and saved.cells == nb.cells  # byte for byte what is committed, as data


def test_without_the_hook_the_same_save_is_a_run():
    traces = S.run_traces(_as_lab_saves_it(nbformat.read(STUDIO, as_version=4)))
    assert traces == ["widget state in the notebook's metadata", "the running Python's version in the notebook's metadata",
                      "widget views in cell 1", "execution timings in cell 1"]


def test_a_widget_without_html_says_what_it_is_and_streams_join():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("w")
    cell.outputs = [nbformat.v4.new_output("display_data", data={S.WIDGET: {"model_id": "x"}, "text/plain": "VBox()"}),
                    nbformat.v4.new_output("stream", name="stdout", text="a"),
                    nbformat.v4.new_output("stream", name="stdout", text="b\n")]
    nb.cells = [cell]
    S.tidy(nb)
    assert cell.outputs[0].data == {"text/plain": S.NO_WIDGET}
    assert [o.get("text") for o in cell.outputs[1:]] == ["ab\n"]


def test_other_files_are_saved_as_they_are():
    model = {"type": "file", "format": "text", "content": "x"}
    S.pre_save_hook(model, "notes.txt")
    assert model == {"type": "file", "format": "text", "content": "x"}
    odd = {"type": "notebook", "format": "json", "content": None}  # nothing to tidy: no crash, no change
    S.pre_save_hook(odd, "x.ipynb")
    assert odd["content"] is None

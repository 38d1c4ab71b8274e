"""The teaching notebooks: built from notebooks/_build.py, committed without outputs on the python3
kernel, and every one runs top to bottom (GPU cells explain themselves where there is no GPU)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
EXPECTED = ["00_studio", "01_barrier_basics", "02_merge", "03_fork", "04_fused_merge", "05_mixes",
            "06_compile_and_benchmark", "07_mistakes"]


def _builder():
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOKS / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_notebook_is_there_and_built_from_the_generator(capsys):
    assert NAMES == [f"{n}.ipynb" for n in EXPECTED]
    assert _builder().main(["--check"]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs_on_python3(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(name, tmp_path):
    """Executed in a copy, so autosave files and the like stay out of the repository."""
    shutil.copy(NOTEBOOKS / name, tmp_path / name)
    nb = nbformat.read(tmp_path / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError with the cell and its traceback on the first failure
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    texts = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.output_type == "stream")
    assert "Traceback" not in texts

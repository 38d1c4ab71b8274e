"""The teaching notebooks: built from notebooks/_build.py, committed WITH the outputs of a CPU run on
the python3 kernel (readable without running them), every one runs top to bottom, and its outputs
are what the committed file shows -- compared by structure (same cells, same output types, same
text modulo timings and addresses), so stale outputs fail here and `make notebooks` refreshes them."""

from __future__ import annotations

import copy
import functools
import os
import re
import subprocess
from pathlib import Path

import pytest
from nbbuild import builder

from pgstudio.studio._notebook_save import run_traces, tidy

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
NAMES = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
EXPECTED = ["00_studio", "01_barrier_basics", "02_merge", "03_fork", "04_fused_merge", "05_mixes",
            "06_compile_and_benchmark", "07_mistakes"]
#: Size limits of committed notebooks (figures are SVG with text kept as text).
MAX_KIB, MAX_TOTAL_KIB = 600, 2048


@functools.lru_cache(maxsize=None)
def executed(name: str):
    """The notebook as _build.py makes it, run now (once per test session)."""
    return builder().executed(name)


def committed(name: str):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def test_every_notebook_is_there_and_built_from_the_generator(capsys):
    assert NAMES == EXPECTED
    assert builder().main(["--check"]) == 0, capsys.readouterr().out


def _head_version(name: str):
    """The notebook as the last commit holds it, or None (not a git checkout, or new)."""
    try:
        text = subprocess.run(["git", "show", f"HEAD:notebooks/{name}.ipynb"], cwd=ROOT, capture_output=True,
                              text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return nbformat.reads(text, as_version=4)


def ran_it(name: str, nb) -> str:
    """"" for a file as one tidy run leaves it; else what a run in Jupyter left in it, and whether
    its content (outputs tidied) is still the last commit's -- "you ran it", not stale outputs."""
    traces = run_traces(nb)
    if not traces:
        return ""
    head = _head_version(name)
    build = builder()
    same = head is not None and build.outline(tidy(copy.deepcopy(nb))) == build.outline(tidy(head))
    content = ("its content is the committed run's, so `git checkout notebooks/{name}.ipynb` restores it" if same else
               "and its outputs differ from the last commit's in content too: run `make notebooks` to rebuild it"
               ).format(name=name)
    return (f"{name}.ipynb was saved after a run in Jupyter ({'; '.join(traces)}): {content} "
            "(JupyterLab from `make lab` or `pgstudio lab` saves notebooks without widget views and state)")


@pytest.mark.parametrize("name", EXPECTED)
def test_committed_with_the_outputs_of_a_run(name):
    nb = committed(name)
    you_ran_it = ran_it(name, nb)
    assert not you_ran_it, you_ran_it
    stale = f"{name}.ipynb does not hold the outputs of one clean run; run `make notebooks`"
    assert nb.metadata["kernelspec"]["name"] == "python3", stale
    code = [c for c in nb.cells if c.cell_type == "code"]
    outputs = [o for c in code for o in c.outputs]
    assert outputs and not any(o.output_type == "error" for o in outputs), stale
    assert not any("image/png" in o.get("data", {}) for o in outputs), stale  # SVG: small, text stays text


def test_a_run_in_jupyter_is_told_from_stale_outputs(tmp_path):
    """What JupyterLab saves after the studio's cell ran (a widget view, widget state, the Python
    version, a second run's count) is named as a run, and tidied away it leaves the committed file."""
    nb = committed("00_studio")
    assert ran_it("00_studio", nb) == ""
    ran = copy.deepcopy(nb)
    first = next(c for c in ran.cells if c.cell_type == "code")
    first.execution_count = 2
    first.outputs[0].data[builder().WIDGET] = {"model_id": "1f0e", "version_major": 2, "version_minor": 0}
    ran.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    ran.metadata["language_info"]["version"] = "3.12.1"
    said = ran_it("00_studio", ran)
    for words in ("saved after a run in Jupyter", "widget views in cell", "widget state", "Python's version",
                  "execution counts"):
        assert words in said
    head = _head_version("00_studio")
    if head is not None and builder().outline(tidy(head)) == builder().outline(nb):  # the file is as committed
        assert "git checkout notebooks/00_studio.ipynb" in said  # only a run differs: not stale
        first.outputs[0].data["text/plain"] = "pgstudio studio: something else"
        assert "run `make notebooks`" in ran_it("00_studio", ran)  # the content differs too: stale
    clean = tidy(copy.deepcopy(ran))
    assert clean.metadata == nb.metadata and builder().WIDGET not in clean.cells[ran.cells.index(first)].outputs[0].data


def test_committed_notebooks_stay_small():
    sizes = {n: (NOTEBOOKS / f"{n}.ipynb").stat().st_size / 1024 for n in EXPECTED}
    assert max(sizes.values()) < MAX_KIB and sum(sizes.values()) < MAX_TOTAL_KIB, sizes


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_runs(name):
    """Run in a scratch copy with no GPU visible, so autosave files stay out of the repository."""
    nb = executed(name)  # raises CellExecutionError with the cell and its traceback on the first failure
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    assert "Traceback" not in "".join(o.get("text", "") for o in outputs if o.output_type == "stream")


def _first_difference(a: list, b: list) -> str:
    if len(a) != len(b):
        return f"{len(a)} cells now, {len(b)} committed"
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"cell {i} ({x[1][:60]!r}...): now {x[2]!r:.400} / committed {y[2]!r:.400}"
    return ""


@pytest.mark.nvrtc  # the committed outputs show compiled kernels: without NVRTC the compile cells differ
@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", EXPECTED)
def test_committed_outputs_are_current(name):
    build = builder()
    nb = committed(name)
    now, then = build.outline(executed(name)), build.outline(tidy(copy.deepcopy(nb)))
    assert now == then, (ran_it(name, nb) or
                         f"{name}.ipynb has stale outputs: {_first_difference(now, then)}; run `make notebooks`")


def test_outline_ignores_timings_addresses_and_flushes_but_not_numbers():
    build = builder()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="sm_90a: 20,560 B cubin in 0.12 s\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="<object at 0x7f3a>")]
    other = nbformat.v4.new_code_cell("x")
    other.outputs = [nbformat.v4.new_output("stream", name="stdout",
                                            text="sm_90a: 20,560 B cubin in 0.31 s\n<object at 0x55>")]
    nb1, nb2 = nbformat.v4.new_notebook(cells=[cell]), nbformat.v4.new_notebook(cells=[other])
    assert build.outline(nb1) == build.outline(nb2)
    other.outputs[0].text = "sm_90a: 20,561 B cubin in 0.31 s\n<object at 0x55>"
    assert build.outline(nb1) != build.outline(nb2)  # a real number is compared
    assert build.normalise("31794 ns, period 3579.8 ns") == "31794 ns, period 3579.8 ns"  # simulated time is kept


@pytest.mark.parametrize("name", EXPECTED)
def test_gpu_cells_show_a_recording_or_say_there_is_none(name):
    """Where a notebook would time a design on a GPU, the committed run (no GPU) shows what a GPU
    run recorded, labelled with the device and the date -- or says plainly that none exists."""
    from pgstudio.runtime import recorded

    nb = committed(name)
    cells = [c for c in nb.cells if c.cell_type == "code" and "timed_or_compiled(examples." in c.source
             and not c.source.startswith("from pgstudio import runtime")]
    for c in cells:
        design = re.search(r"timed_or_compiled\(examples\.(\w+)\(\)\)", c.source).group(1)
        text = "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")
        rec = recorded.load(design, NOTEBOOKS / recorded.FOLDER)
        if rec is None:
            assert f"no recording of {design} exists yet" in text
        else:
            assert rec.label() in text and rec.table in text and "recorded on " in text
        assert "no GPU here" in text


def test_every_design_a_notebook_times_is_recordable():
    """benchmarks/notebooks.py --record reads the same list the notebooks use."""
    names = builder().recorded_designs()
    assert {"merge_gemm", "fork_gemm_act", "fused_merge_gemm", "merge_copy"} <= set(names)
    from pgstudio import examples
    for n in names:
        examples.example(n)  # every one is a canonical design by name


def test_no_committed_recording_is_invented():
    """A recording holds a GPU run's table: the device is an NVIDIA GPU and the table has timings."""
    from pgstudio.runtime import recorded

    for path in sorted((NOTEBOOKS / recorded.FOLDER).glob("*.json")) if (NOTEBOOKS / recorded.FOLDER).is_dir() else []:
        rec = recorded.load(path.stem, path.parent)
        assert rec.device.startswith("NVIDIA") and "median" in rec.table and rec.command == recorded.COMMAND


def test_the_docs_figures_are_current():
    """The documentation's teaching figures are written by `make notebooks`, shown by the page
    that explains them, and show what pgstudio draws now."""
    pytest.importorskip("matplotlib")
    build = builder()
    for rel, (page, draw) in build.FIGURES.items():
        link = os.path.relpath(ROOT / rel, (ROOT / page).parent)
        assert f"]({link})" in (ROOT / page).read_text(), f"{page} does not show {rel}"
        texts = re.compile(r">([^<>]+)</text>")
        assert texts.findall((ROOT / rel).read_text()) == texts.findall(draw()), f"{rel} is stale; run make notebooks"


@pytest.mark.parametrize("name", EXPECTED)
def test_no_cell_rebinds_a_name_another_cell_imported(name):
    """A notebook whose cells import one name from two places breaks on a re-run: the exercises'
    ``check`` imported bare hid the checker's ``check`` (a TypeError when its cell ran again)."""
    import ast

    sources: dict[str, set[str]] = {}
    for cell in committed(name).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    sources.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
    clashes = {n: sorted(s) for n, s in sources.items() if len(s) > 1}
    assert not clashes, f"{name}: one name imported from two places: {clashes}"

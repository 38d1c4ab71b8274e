"""The studio in a real browser (Debian chromium + Playwright): served by Voila, and once in
JupyterLab.  A user opens it, adds a resource, groups two resources into a Merge, sees the barrier
picture change, makes the mix invalid, sees the error, fixes it and sees the error go."""

from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(150)]

APP = textwrap.dedent("""\
    from pgstudio import examples
    from pgstudio.model import ungrouped
    from pgstudio.model.derive import derive_design
    from pgstudio.studio import Studio
    studio = Studio(derive_design(ungrouped(examples.merge_copy()), replace_attached=True), autosave=False)
    studio""")


def write_app(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(APP)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "studio_app.ipynb"
    nbformat.write(nb, path)
    return path


def tab(page, title: str) -> None:
    page.locator(".pg-studio .lm-TabBar-tab", has_text=title).first.click()


def studio_flow(page, shot: Path) -> None:
    from playwright.sync_api import expect

    status = page.locator(".pg-studio .pg-status")
    diagnostics = page.locator(".pg-studio .pg-diagnostics")
    barriers = page.locator(".pg-studio .pg-pane-barriers")
    expect(status).to_contain_text("valid", timeout=30_000)
    expect(status).to_contain_text("16 barriers")

    tab(page, "Barriers")
    expect(barriers).to_contain_text("16 barriers")
    picture_before = barriers.locator("img").get_attribute("src")

    # add a resource: it appears in the list and the checker says nothing uses it yet
    page.locator("button.jupyter-button", has_text="Add resource").click()
    expect(page.locator(".pg-resource-list select")).to_contain_text("smem_1")
    expect(diagnostics).to_contain_text("pipeline.endpoints")
    expect(barriers).to_contain_text("24 barriers")

    # a Merge group of smem_a and smem_b: the barrier picture changes
    tab(page, "Groups")
    page.locator("button.jupyter-button", has_text="New group").click()
    expect(diagnostics).to_contain_text("group.members")
    page.locator(".pg-group-members select").select_option(["smem_a", "smem_b"])
    expect(barriers).to_contain_text("20 barriers")
    expect(barriers).to_contain_text("grouping saves 4")
    picture_grouped = barriers.locator("img").get_attribute("src")
    assert picture_grouped != picture_before
    expect(diagnostics).not_to_contain_text("group.members")

    # an invalid mix: smem_b's consumer becomes an MMA (umma) while smem_a's is threads (async)
    tab(page, "Resources")
    resources = page.locator(".pg-resource-list select")
    resources.select_option(index=_index(resources, "smem_b"))
    page.locator(".pg-resource-pipeline select").select_option("TmaUmma")
    expect(diagnostics).to_contain_text("group.collapsed_kind")
    expect(diagnostics).to_contain_text("fix:")
    page.screenshot(path=str(shot.with_name(shot.stem + "-error.png")), full_page=True)

    # fix it: the error goes
    page.locator(".pg-resource-pipeline select").select_option("TmaAsync")
    expect(diagnostics).not_to_contain_text("group.collapsed_kind")
    expect(diagnostics).to_contain_text("pipeline.endpoints")  # only the unused smem_1 is left
    # the same design as before the mistake: the same barrier picture
    expect(barriers.locator("img")).to_have_attribute("src", picture_grouped)
    page.screenshot(path=str(shot), full_page=True)


def _index(select, name: str) -> int:
    """Index of the option for resource ``name`` (labels read "smem_b  ·  smem, TmaAsync ...")."""
    texts = select.locator("option").all_inner_texts()
    for i, text in enumerate(texts):
        if text.replace("\xa0", " ").split(" ")[0] == name:
            return i
    raise AssertionError(f"no option for {name!r} in {texts}")


def test_studio_in_voila(voila, page, tmp_path, artifacts):
    url = voila(write_app(tmp_path))
    page.goto(url)
    page.locator("button.jupyter-button", has_text="Add resource").wait_for(state="visible", timeout=60_000)
    studio_flow(page, artifacts / "studio-voila.png")


@pytest.mark.timeout(300)
def test_studio_in_jupyterlab(lab, page, tmp_path, artifacts):
    root = tmp_path / "root"
    root.mkdir()
    write_app(root)
    base = lab(root)
    page.goto(f"{base}/lab/tree/studio_app.ipynb?token=pgstudio-test&reset")
    page.wait_for_selector('.jp-Notebook-ExecutionIndicator[data-status="idle"]', timeout=60_000)
    run_cell_until_studio_shows(page)
    studio_flow(page, artifacts / "studio-jupyterlab.png")


def run_cell_until_studio_shows(page, attempts: int = 3) -> None:
    """Run the notebook's cell and wait for the studio.  On a loaded machine Lab can report the
    kernel idle before the notebook panel takes commands, so a run that shows nothing is tried
    again (through the command, then by Shift+Enter in the cell); each wait is bounded."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    button = page.locator("button.jupyter-button", has_text="Add resource")
    for attempt in range(attempts):
        if attempt % 2 == 0:
            # fire and forget: awaiting the command's promise inside evaluate() has no timeout
            page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        else:
            page.locator(".jp-Cell .jp-InputArea-editor").first.click()
            page.keyboard.press("Shift+Enter")
        try:
            button.wait_for(state="visible", timeout=45_000)
            return
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise

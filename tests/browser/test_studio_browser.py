"""The studio in a real browser (Debian chromium + Playwright): served by Voila, and once in
JupyterLab.  A user starts a new design from the GEMM template (a Merge of A and B), makes a
mistake (smem_b's stages), fixes it with the diagnostic's one-click button, switches the group to
FusedMerge, compiles (no GPU here: it says so), then zooms, hovers and clicks the timeline; a click
marks the schedule step and the generated source line.  Screenshots of each step are kept."""

from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

APP = textwrap.dedent("""\
    from pgstudio.studio import Studio
    studio = Studio(autosave=False)
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

    def snap(step: str) -> None:
        page.screenshot(path=str(shot.with_name(f"{shot.stem}-{step}.png")), full_page=True)

    status = page.locator(".pg-studio .pg-status")
    diagnostics = page.locator(".pg-studio .pg-diagnostics")
    # an empty design: nothing to build yet, and the one problem says what to add first
    expect(diagnostics).to_contain_text("has no tasks", timeout=30_000)

    # a new design from the GEMM template: a Merge of A and B, every problem symbol visible
    tab(page, "Design")
    page.locator(".pg-template select").select_option("GEMM mainloop: D = A @ B")
    page.locator("button.jupyter-button", has_text="New design").click()
    expect(status).to_contain_text("11 barriers")
    expect(page.locator(".pg-problem-BK input")).to_have_value("64")
    snap("1-template")

    # a mistake: smem_b gets 2 stages while smem_a has 3
    tab(page, "Resources")
    resources = page.locator(".pg-resource-list select")
    resources.select_option(index=_index(resources, "smem_b"))
    stages = page.locator(".pg-resource-stages input")
    stages.fill("2")
    stages.press("Enter")
    expect(diagnostics).to_contain_text("group.num_stages")
    fix = page.locator(".pg-fix-button", has_text="set smem_b's num_stages back to 3")
    expect(fix).to_be_visible()
    snap("2-mistake")

    # the one-click fix
    fix.click()
    expect(diagnostics).to_contain_text("no problems found")
    expect(status).to_contain_text("11 barriers")

    # FusedMerge: the schedules follow, 11 -> 8 barriers, still valid
    tab(page, "Groups")
    page.locator(".pg-group-mode button", has_text="FusedMerge").click()
    expect(status).to_contain_text("8 barriers")
    expect(diagnostics).to_contain_text("no problems found")
    snap("3-fused")

    # compile (no GPU here: it compiles and says so)
    tab(page, "Compile")
    page.locator(".pg-bench-button").click()
    log = page.locator(".pg-studio .pg-eta")
    expect(log).to_contain_text("4/4", timeout=120_000)
    expect(page.locator(".pg-studio")).to_contain_text("compiled for")
    snap("4-compile")

    # the timeline: hover, zoom, click
    tab(page, "Timeline")
    plot = page.locator(".pg-pane-timeline .js-plotly-plot")
    expect(plot).to_be_visible(timeout=30_000)
    # in JupyterLab the pane can sit below the notebook's fold: bring it into the viewport, where
    # the mouse can reach it (bounding boxes are viewport coordinates)
    plot.scroll_into_view_if_needed()
    bars = page.locator(".pg-pane-timeline .trace.bars .point path")
    bars.first.wait_for(state="visible", timeout=30_000)  # the pane's figure exists before its data arrives
    drag = page.locator(".pg-pane-timeline .nsewdrag").first
    box = settled_box(page, drag)

    def wide_bar_centre() -> tuple[float, float]:
        """The centre of the widest bar (Plotly's drag layer sits on top: point the mouse there)."""
        boxes = [b for b in (bars.nth(i).bounding_box() for i in range(min(bars.count(), 60))) if b]
        b = max(boxes, key=lambda b: b["width"])
        return b["x"] + b["width"] / 2, b["y"] + b["height"] / 2

    page.mouse.move(*wide_bar_centre())
    expect(page.locator(".pg-pane-timeline .hovertext").first).to_contain_text("iteration", timeout=10_000)
    snap("5-hover")
    before = plot.evaluate("el => el._fullLayout.xaxis.range.slice()")
    x0, y0 = box["x"] + box["width"] * 0.2, box["y"] + box["height"] * 0.5
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x0 + box["width"] * 0.25, y0, steps=8)
    page.mouse.up()
    page.wait_for_function("el => el._fullLayout.xaxis.range[1] - el._fullLayout.xaxis.range[0] < "
                           f"{(before[1] - before[0]) * 0.6}", arg=plot.element_handle(), timeout=10_000)
    snap("6-zoom")
    reset_zoom(page, plot, drag)
    page.mouse.click(*wide_bar_centre())
    details = page.locator(".pg-pane-timeline .pg-details")
    expect(details).to_contain_text("schedule of task", timeout=15_000)
    expect(details).to_contain_text("generated CUDA, line")
    expect(details.locator("mark").first).to_be_visible()
    page.screenshot(path=str(shot), full_page=True)


def settled_box(page, locator, timeout_s: float = 15.0) -> dict:
    """The bounding box of ``locator`` once the plot has its final size.  The figure widget is on
    the page, at its empty size (a plot area 2 px high), before its data and the pane's fit arrive;
    a box read then puts every later mouse position in the margin, outside the drag layer."""
    import time

    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        box = locator.bounding_box()
        if box and box["height"] > 40 and box == last:
            return box
        last = box
        page.wait_for_timeout(250)
    raise AssertionError(f"the timeline's plot area did not settle within {timeout_s} s (last box {last})")


def reset_zoom(page, plot, drag, attempts: int = 3) -> None:
    """Double-click on the plot area (Plotly's drag layer) resets the zoom; ready when the x axis
    spans well beyond the zoomed range (Plotly's relayout has landed).  On a loaded machine two
    clicks can arrive too far apart to count as a double-click, so an unanswered one is tried
    again; each wait is bounded."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    zoomed = plot.evaluate("el => el._fullLayout.xaxis.range[1] - el._fullLayout.xaxis.range[0]")
    for attempt in range(attempts):
        box = settled_box(page, drag)
        page.mouse.dblclick(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
        try:
            page.wait_for_function("([el, w]) => el._fullLayout.xaxis.range[1] - el._fullLayout.xaxis.range[0] > 1.5 * w",
                                   arg=[plot.element_handle(), zoomed], timeout=10_000)
            return
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise


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
    page.locator("button.jupyter-button", has_text="New design").wait_for(state="attached", timeout=60_000)
    studio_flow(page, artifacts / "studio-voila.png")


@pytest.mark.timeout(360)
def test_studio_in_jupyterlab(lab, page, tmp_path, artifacts):
    root = tmp_path / "root"
    root.mkdir()
    notebook = write_app(root).name
    page.goto(lab(root, notebook))  # its kernel is running: Lab attaches, no "Select Kernel" dialog
    try:
        wait_until_notebook_ready(page, notebook)
        # fire and forget: awaiting the command's promise inside evaluate() would have no timeout
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        page.locator(".pg-studio .pg-status").wait_for(state="visible", timeout=120_000)
    except Exception:
        page.screenshot(path=str(artifacts / "studio-jupyterlab-not-ready.png"), full_page=True)
        raise
    studio_flow(page, artifacts / "studio-jupyterlab.png")


#: True once the notebook at ``path`` is Lab's current widget, its file is loaded, and its kernel
#: is connected and idle: the state in which 'notebook:run-all-cells' runs its cell.
_READY = """(path) => {
  const app = window.jupyterapp;
  const w = app && app.shell.currentWidget;
  if (!w || !w.context || w.context.path !== path || !w.context.isReady || !w.content) return false;
  const kernel = w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!kernel && w.sessionContext.isReady && kernel.connectionStatus === 'connected'
    && kernel.status === 'idle' && w.content.widgets.length > 0;
}"""

#: What Lab shows instead, for the failure message: its state and any modal dialog's text.
_STATE = """(path) => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  const dialog = document.querySelector('.jp-Dialog');
  return {widget: w ? (w.context ? w.context.path : w.id) : null, ready: !!(w && w.context && w.context.isReady),
          kernel: k ? k.status + '/' + k.connectionStatus : null, dialog: dialog ? dialog.innerText : null};
}"""


def wait_until_notebook_ready(page, path: str, timeout_ms: int = 90_000) -> None:
    """Wait for Lab's own readiness signals (see ``_READY``), not for time to pass; a modal dialog
    over the notebook fails at once with its text, since a click would land behind it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.wait_for_function("() => !!window.jupyterapp", timeout=timeout_ms)
    try:
        page.wait_for_function(f"(path) => !!document.querySelector('.jp-Dialog') || ({_READY})(path)", arg=path,
                               timeout=timeout_ms)
    except PlaywrightTimeout:
        raise AssertionError(f"JupyterLab did not get ready: {page.evaluate(_STATE, path)}") from None
    state = page.evaluate(_STATE, path)
    if state["dialog"] is not None:
        raise AssertionError(f"JupyterLab shows a modal dialog over the notebook: {state}")

"""The studio in a real browser (Debian chromium + Playwright), served by Voila and by JupyterLab;
the two share every step below, and screenshots of each step are kept under ``artifacts``.

The walk: a user starts a new design from the GEMM template (a Merge of A and B), checks that it
fits a 1280 x 800 laptop (Lab with its file browser open) and a 1920 screen, makes a mistake
(smem_b's stages) and fixes it with the diagnostic's one-click button, slips a warp index and
follows the first offered fix back to a valid design, switches the group to Fork (the root
cause comes first and its fix makes the design valid), then to FusedMerge, compiles (no GPU
here: it says so), and zooms, hovers and clicks the timeline.

The restore walk: a notebook that builds its studio from a design and edits it at once (as
00_studio does); the user switches the group to FusedMerge, reloads the page (Voila) or runs
every cell again (Lab, once before and once after a reload): the restore offer appears, the
autosave file is untouched until then, and restoring brings the edit back.

Every wait is for a condition, bounded; none sleeps for a fixed time to let the page catch up.
"""

from __future__ import annotations

import contextlib
import json
import re
import textwrap
import time
from pathlib import Path
from typing import Callable, Iterator

import nbformat
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

#: Waits for the kernel's side of an edit (a redraw, a new studio) on a loaded machine.
SLOW_MS = 90_000

APP = textwrap.dedent("""\
    from pgstudio.studio import Studio
    studio = Studio(autosave=False)
    studio""")

#: A notebook like 00_studio: a studio built from a design and edited by the next cell at once.
RESTORE_APP = [
    textwrap.dedent("""\
        from pgstudio import examples
        from pgstudio.studio import Studio
        runs = globals().get("runs", 0) + 1  # how often these cells ran in this kernel
        studio = Studio(examples.merge_gemm(), name="walk")
        studio"""),
    textwrap.dedent("""\
        from pgstudio import domain_loop, schedule

        @schedule
        def drain(tmem_c, gmem_d):
            with domain_loop(0, "num_tiles", 1):
                tmem_c.try_wait()
                tmem_c.wait()
                gmem_d.store(val=tmem_c.read())
                tmem_c.release()

        studio.attach_schedule("epilogue", drain)
        print(f"every cell ran: {studio.design.name}, run {runs}")"""),
]


def done(run: int) -> str:
    """What the notebook's last cell prints on its ``run``-th run in one kernel."""
    return f"every cell ran: merge_gemm, run {run}"


def write_notebook(folder: Path, cells: list[str], name: str = "studio_app.ipynb") -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / name
    nbformat.write(nb, path)
    return path


def write_app(folder: Path) -> Path:
    return write_notebook(folder, [APP])


# -- small helpers ---------------------------------------------------------------------------
def wait_until(check: Callable[[], object], what: str, timeout_s: float = 60.0, every_s: float = 0.25):
    """Poll ``check()`` until it returns something true (returned); fail naming ``what``."""
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as exc:  # noqa: BLE001 - a file being replaced, a page redrawing
            last = exc
        else:
            if last:
                return last
        time.sleep(every_s)
    raise AssertionError(f"{what}: not so within {timeout_s} s (last: {last!r})")


class Walk:
    """The locators and steps both walks use on one page; ``snap(step)`` keeps a screenshot."""

    def __init__(self, page, shot: Path) -> None:
        self.page, self.shot = page, shot
        studio = page.locator(".pg-studio").last
        self.studio = studio
        self.status = studio.locator(".pg-status")
        self.message = studio.locator(".pg-message")
        self.diagnostics = studio.locator(".pg-diagnostics")
        self.banner = studio.locator(".pg-restore")

    def snap(self, step: str) -> None:
        self.page.screenshot(path=str(self.shot.with_name(f"{self.shot.stem}-{step}.png")), full_page=True)

    @contextlib.contextmanager
    def failure_shot(self) -> Iterator[None]:
        """On a failure, keep a screenshot of the page as it was."""
        try:
            yield
        except BaseException:
            with contextlib.suppress(Exception):
                self.snap("failed")
            raise

    def tab(self, title: str) -> None:
        tab = self.studio.locator(".lm-TabBar-tab", has_text=title).first
        tab.click()
        from playwright.sync_api import expect
        expect(tab).to_have_class(_has("lm-mod-current"))

    def valid(self, barriers: int | None = None) -> None:
        from playwright.sync_api import expect
        expect(self.diagnostics).to_contain_text("no problems found", timeout=SLOW_MS)
        expect(self.status).to_contain_text("valid", timeout=SLOW_MS)
        if barriers is not None:
            expect(self.status).to_contain_text(f"{barriers} barriers", timeout=SLOW_MS)

    def mode_button(self, name: str):
        """The first group's mode button ``name`` (by value: the text "Merge" is in "FusedMerge" too)."""
        return self.studio.locator(f'.pg-group-mode button[data-value="{name}"]')

    def mode(self, name: str) -> None:
        """Click a group mode (the Groups tab's first group)."""
        from playwright.sync_api import expect
        self.tab("Groups")
        button = self.mode_button(name)
        button.click()
        expect(button).to_have_class(_has("mod-active"), timeout=SLOW_MS)

    def diagnostics_text(self) -> str:
        return self.diagnostics.inner_text()

    def click_fix(self, fix) -> str:
        """Click a one-click fix button; returns once the diagnostics have been redrawn."""
        before = self.diagnostics_text()
        label = fix.inner_text().strip()
        fix.click()
        self.page.wait_for_function("([el, before]) => el.innerText !== before",
                                    arg=[self.diagnostics.element_handle(), before], timeout=SLOW_MS)
        return label


def _has(cls: str):
    return re.compile(rf"(^|\s){re.escape(cls)}(\s|$)")


def _index(select, name: str) -> int:
    """Index of the option for element ``name`` (labels read "smem_b  ·  smem, TmaAsync ...")."""
    texts = select.locator("option").all_inner_texts()
    for i, text in enumerate(texts):
        if text.replace("\xa0", " ").split(" ")[0] == name:
            return i
    raise AssertionError(f"no option for {name!r} in {texts}")


# -- the walk ---------------------------------------------------------------------------------
def studio_flow(page, shot: Path, *, sidebar: bool = False) -> None:
    """The walk (see the module docstring); ``sidebar``: Lab's file browser must be open."""
    from playwright.sync_api import expect

    w = Walk(page, shot)
    with w.failure_shot():
        # an empty design: nothing to build yet, and the one problem says what to add first
        expect(w.diagnostics).to_contain_text("has no tasks", timeout=SLOW_MS)

        # a new design from the GEMM template: a Merge of A and B, every problem symbol visible
        w.tab("Design")
        w.studio.locator(".pg-template select").select_option("GEMM mainloop: D = A @ B")
        w.studio.locator("button.jupyter-button", has_text="New design").click()
        expect(w.status).to_contain_text("11 barriers", timeout=SLOW_MS)
        expect(w.studio.locator(".pg-problem-BK input")).to_have_value("64")
        w.snap("1-template")

        layout_check(w, 1280, 800, sidebar=sidebar)
        layout_check(w, 1920, 1080, sidebar=sidebar)
        page.set_viewport_size({"width": 1400, "height": 1000})

        resource_slip(w)
        warp_slip(w)
        fork_fix(w)

        # FusedMerge: the schedules follow, 11 -> 8 barriers, still valid
        w.mode("FusedMerge")
        w.valid(8)
        w.snap("5-fused")

        # compile (no GPU here: it compiles and says so)
        w.tab("Compile")
        w.studio.locator(".pg-bench-button").click()
        expect(w.studio.locator(".pg-eta")).to_contain_text("4/4", timeout=180_000)
        expect(w.studio).to_contain_text("compiled for")
        w.snap("6-compile")

        timeline_walk(w)
        page.screenshot(path=str(shot), full_page=True)


def resource_slip(w: Walk) -> None:
    """smem_b gets 2 stages while smem_a has 3; the first offered fix puts the 3 back."""
    from playwright.sync_api import expect

    w.tab("Resources")
    resources = w.studio.locator(".pg-resource-list select")
    resources.select_option(index=_index(resources, "smem_b"))
    stages = w.studio.locator(".pg-resource-stages input")
    expect(stages).to_have_value("3")
    stages.fill("2")
    stages.press("Enter")
    expect(w.diagnostics).to_contain_text("group.num_stages", timeout=SLOW_MS)
    expect(w.status).not_to_contain_text("grouping saves")  # no saving claimed for a broken design
    first = w.diagnostics.locator(".pg-fix-button:visible").first
    expect(first).to_have_text("set smem_b's num_stages back to 3")
    w.snap("2-mistake")
    w.click_fix(first)
    w.valid(11)
    expect(stages).to_have_value("3")


def warp_slip(w: Walk) -> None:
    """The MMA task's first warp 4 -> 2 (over the epilogue's warps): following the first offered
    fix reaches a valid design within two clicks, with the slipped field back at 4 and no other
    task moved."""
    from playwright.sync_api import expect

    w.tab("Tasks")
    tasks = w.studio.locator(".pg-task-list select")
    before = tasks.locator("option").all_inner_texts()
    tasks.select_option(index=_index(tasks, "mma"))
    warp = w.studio.locator(".pg-task-warp input")
    expect(warp).to_have_value("4")
    warp.fill("2")
    warp.press("Enter")
    expect(w.diagnostics).not_to_contain_text("no problems found", timeout=SLOW_MS)
    expect(w.diagnostics).to_contain_text("task.warps")
    w.snap("3-warp-slip")
    clicked = []
    for _ in range(2):
        clicked.append(w.click_fix(w.diagnostics.locator(".pg-fix-button:visible").first))
        if "no problems found" in w.diagnostics_text():
            break
    w.valid(11)
    expect(warp).to_have_value("4")
    assert tasks.locator("option").all_inner_texts() == before, f"the fixes {clicked} moved other tasks"


def fork_fix(w: Walk) -> None:
    """Fork on the GEMM: the collapsed task is the root cause, first, with the echoes under it;
    its fix (load_a produces both tiles) makes the design valid, still a Fork.  Undo twice
    returns to the Merge."""
    from playwright.sync_api import expect

    w.mode("Fork")
    expect(w.diagnostics).to_contain_text("group.collapsed_task", timeout=SLOW_MS)
    rows = w.diagnostics.locator(".pg-diag")
    expect(rows.first).to_contain_text("group.collapsed_task")
    expect(rows.first).to_contain_text("root cause of the")
    for i in range(1, rows.count()):
        expect(rows.nth(i)).to_contain_text("follows from group.collapsed_task")
    w.snap("4-fork")
    root_fixes = w.diagnostics.locator(".pg-fix-button:visible")
    expect(root_fixes.first).to_be_visible()
    w.click_fix(w.diagnostics.locator(".pg-fix-button", has_text="let task load_a produce smem_a and smem_b"))
    w.valid()
    expect(w.mode_button("Fork")).to_have_class(_has("mod-active"))
    expect(w.status).to_contain_text("grouping saves")
    undo = w.studio.locator("button.jupyter-button", has_text="Undo")
    undo.click()
    expect(w.diagnostics).to_contain_text("group.collapsed_task", timeout=SLOW_MS)
    undo.click()
    w.valid(11)
    expect(w.mode_button("Merge")).to_have_class(_has("mod-active"))


def timeline_walk(w: Walk) -> None:
    """The timeline: hover, zoom, reset, click (the click marks the schedule step and the source line)."""
    from playwright.sync_api import expect

    page = w.page
    w.tab("Timeline")
    plot = w.studio.locator(".pg-pane-timeline .js-plotly-plot")
    expect(plot).to_be_visible(timeout=SLOW_MS)
    # in JupyterLab the pane can sit below the notebook's fold: bring it into the viewport, where
    # the mouse can reach it (bounding boxes are viewport coordinates)
    plot.scroll_into_view_if_needed()
    bars = w.studio.locator(".pg-pane-timeline .trace.bars .point path")
    bars.first.wait_for(state="visible", timeout=SLOW_MS)  # the pane's figure exists before its data arrives
    drag = w.studio.locator(".pg-pane-timeline .nsewdrag").first
    box = settled_box(page, drag)

    def wide_bar_centre() -> tuple[float, float]:
        """The centre of the widest bar (Plotly's drag layer sits on top: point the mouse there)."""
        boxes = [b for b in (bars.nth(i).bounding_box() for i in range(min(bars.count(), 60))) if b]
        b = max(boxes, key=lambda b: b["width"])
        return b["x"] + b["width"] / 2, b["y"] + b["height"] / 2

    page.mouse.move(*wide_bar_centre())
    expect(w.studio.locator(".pg-pane-timeline .hovertext").first).to_contain_text("iteration", timeout=30_000)
    w.snap("7-hover")
    before = plot.evaluate("el => el._fullLayout.xaxis.range.slice()")
    x0, y0 = box["x"] + box["width"] * 0.2, box["y"] + box["height"] * 0.5
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x0 + box["width"] * 0.25, y0, steps=8)
    page.mouse.up()
    page.wait_for_function("el => el._fullLayout.xaxis.range[1] - el._fullLayout.xaxis.range[0] < "
                           f"{(before[1] - before[0]) * 0.6}", arg=plot.element_handle(), timeout=30_000)
    w.snap("8-zoom")
    reset_zoom(page, plot, drag)
    page.mouse.click(*wide_bar_centre())
    details = w.studio.locator(".pg-pane-timeline .pg-details")
    expect(details).to_contain_text("schedule of task", timeout=SLOW_MS)
    expect(details).to_contain_text("generated CUDA, line")
    expect(details.locator("mark").first).to_be_visible()


def settled_box(page, locator, timeout_s: float = 30.0, min_height: float = 40) -> dict:
    """The bounding box of ``locator`` once it has stopped changing (two reads 250 ms apart
    agree).  The figure widget is on the page at its empty size (a plot area 2 px high) before its
    data and the pane's fit arrive; a box read then puts every later mouse position in the margin."""
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        box = locator.bounding_box()
        if box and box["height"] > min_height and box == last:
            return box
        last = box
        page.wait_for_timeout(250)
    raise AssertionError(f"{locator} did not settle within {timeout_s} s (last box {last})")


def settled_boxes(page, pane, parts: tuple[str, ...], timeout_s: float = 30.0) -> dict[str, dict]:
    """The boxes of the first element of each of ``parts`` inside ``pane``, read in one go (so a
    scroll of the page between two reads cannot move one against the other), once two reads
    250 ms apart agree."""
    js = ("([pane, parts]) => Object.fromEntries(parts.map(p => { const el = pane.querySelector(p);"
          " if (!el) return [p, null]; const r = el.getBoundingClientRect();"
          " return [p, {x: r.x, y: r.y, width: r.width, height: r.height}]; }))")
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        boxes = page.evaluate(js, [pane.element_handle(), list(parts)])
        if all(boxes.values()) and boxes == last:
            return boxes
        last = boxes
        page.wait_for_timeout(250)
    raise AssertionError(f"{parts} in {pane} did not settle within {timeout_s} s (last boxes {last})")


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


# -- the layout ------------------------------------------------------------------------------
#: What keeps ``el`` from being seen whole, as sentences ([] when nothing): no size, reaching
#: outside the viewport's width, text wider than its box, or cut off by an ancestor that clips
#: (any overflow but visible) -- a horizontal scroll bar counts as clipping too, except in a
#: picture's own frame (``scrolls``), which scrolls a graph too wide to draw legibly.
_CLIPPED = """([el, scrolls]) => {
  const r = el.getBoundingClientRect(), out = [], vw = document.documentElement.clientWidth;
  const f = (x) => x.toFixed(0);
  if (r.width < 1 || r.height < 1) return [`has no size (${f(r.width)} x ${f(r.height)})`];
  if (r.left < -0.5 || r.right > vw + 0.5) out.push(`reaches outside the viewport (${f(r.left)}..${f(r.right)} of ${vw})`);
  if (!scrolls && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
    out.push(`its content is wider than its box (${el.scrollWidth} > ${el.clientWidth})`);
  for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
    if (getComputedStyle(a).overflowX === 'visible') continue;
    const b = a.getBoundingClientRect(), lo = b.left + a.clientLeft, hi = lo + a.clientWidth;
    if (r.left < lo - 0.5 || r.right > hi + 0.5)
      out.push(`cut off by <${a.tagName.toLowerCase()} class="${a.className}"> (${f(r.left)}..${f(r.right)} outside ${f(lo)}..${f(hi)})`);
  }
  return out;
}"""

#: The font size, in screen pixels, of every text of the dependency graph's nodes.
_NODE_TEXT_PX = """(svg) => Array.from(svg.querySelectorAll('g.node text')).map((t) => {
  const m = t.getScreenCTM();
  return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
})"""


def apart(a: dict, b: dict) -> bool:
    """Two bounding boxes share no area."""
    return (a["y"] >= b["y"] + b["height"] or b["y"] >= a["y"] + a["height"]
            or a["x"] >= b["x"] + b["width"] or b["x"] >= a["x"] + a["width"])


def inside(a: dict, b: dict, slack: float = 0.5) -> bool:
    """Box ``a`` lies within box ``b``."""
    return (a["x"] >= b["x"] - slack and a["y"] >= b["y"] - slack and a["x"] + a["width"] <= b["x"] + b["width"] + slack
            and a["y"] + a["height"] <= b["y"] + b["height"] + slack)


def assert_whole(locator, what: str, scrolls: bool = False) -> None:
    """Every element ``locator`` matches is on screen whole (``_CLIPPED``)."""
    n = locator.count()
    assert n, f"{what}: not on the page"
    for i in range(n):
        problems = locator.nth(i).evaluate(f"(el) => ({_CLIPPED})([el, {str(scrolls).lower()}])")
        assert not problems, f"{what}: " + "; ".join(problems)


def layout_check(w: Walk, width: int, height: int, *, sidebar: bool) -> None:
    """At ``width`` x ``height`` (Lab's file browser open when ``sidebar``): editors and pictures
    side by side, nothing clipped (the template row, the file bar, the sweep pane and its
    results), the timeline as wide as its pane, the graph's node text at least 10 px."""
    from playwright.sync_api import expect

    page = w.page
    page.set_viewport_size({"width": width, "height": height})
    if sidebar:
        browser = page.locator("#filebrowser")
        expect(browser).to_be_visible()
        assert browser.bounding_box()["width"] >= 200, "Lab's file browser is not open at its usual width"
    left = settled_box(page, w.studio.locator(".pg-left"))
    right = settled_box(page, w.studio.locator(".pg-right"))
    assert right["x"] >= left["x"] + left["width"] - 1 and abs(right["y"] - left["y"]) < 20, (
        f"at {width} px the pictures ({right}) are not beside the editors ({left})")
    assert right["width"] >= 0.45 * (left["width"] + right["width"]), f"the pictures get {right['width']:.0f} px only"

    assert_whole(w.studio.locator(".lm-TabBar-tab"), "a tab")
    w.tab("Design")
    template_row = w.studio.locator(".pg-left .widget-hbox", has=page.locator(".pg-template"))
    assert_whole(template_row.get_by_text("template", exact=True), "the 'template' label")
    assert_whole(w.studio.locator(".pg-template select"), "the template menu")
    assert_whole(w.studio.locator("button.jupyter-button", has_text="New design"), "New design")
    bar = w.studio.locator(".pg-file-bar")
    for name in ("Save", "Load"):
        assert_whole(bar.locator("button.jupyter-button", has_text=re.compile(rf"^\s*{name}\s*$")), name)
    assert_whole(bar.locator(".widget-upload"), "Upload JSON")

    # the graph: node text legible
    w.tab("Graph")
    graph = w.studio.locator(".pg-pane-graph svg").first
    expect(graph).to_be_visible(timeout=SLOW_MS)
    sizes = graph.evaluate(_NODE_TEXT_PX)
    assert sizes and min(sizes) >= 10, f"at {width} px the graph's node text is {min(sizes or [0]):.1f} px (< 10 px)"
    assert_whole(w.studio.locator(".pg-pane-graph .pg-fig"), "the graph's frame", scrolls=True)

    # the timeline: as wide as its pane (and again after the window changed)
    w.tab("Timeline")
    w.studio.locator(".pg-pane-timeline .trace.bars .point path").first.wait_for(state="visible", timeout=SLOW_MS)
    page.wait_for_function(
        "(pane) => { const s = pane.querySelector('.main-svg'); if (!s) return false;"
        " return Math.abs(s.getBoundingClientRect().width - pane.clientWidth) <= Math.max(12, 0.03 * pane.clientWidth); }",
        arg=w.studio.locator(".pg-pane-timeline").element_handle(), timeout=30_000)
    assert_whole(w.studio.locator(".pg-pane-timeline .main-svg").first, "the timeline")
    boxes = settled_boxes(page, w.studio.locator(".pg-pane-timeline"), (".legend", ".xtitle", ".nsewdrag", ".main-svg"))
    legend, figure = boxes[".legend"], boxes[".main-svg"]
    for part in (".xtitle", ".nsewdrag"):
        assert apart(legend, boxes[part]), f"at {width} px the timeline's legend {legend} overlaps its {part} {boxes[part]}"
    assert inside(legend, figure), f"at {width} px the timeline's legend {legend} reaches out of its figure {figure}"

    # the sweep pane: its fields and Defaults, then a small compile-only sweep's results
    w.tab("Sweep")
    sweep = w.studio.locator(".pg-sweep")
    assert_whole(sweep.locator("button.jupyter-button", has_text="Defaults"), "Defaults")
    assert_whole(sweep.locator("button.jupyter-button", has_text="Run sweep"), "Run sweep")
    if not sweep.locator(".pg-sweep-results table").count():
        sweep.locator(".pg-sweep-stages input").fill("3")
        sweep.locator(".pg-sweep-tiles input").fill("128x128x64")
        sweep.get_by_text("compile only").click()
        sweep.locator(".pg-sweep-executor select").select_option("inline")
        sweep.locator("button.jupyter-button", has_text="Run sweep").click()
        expect(sweep.locator(".pg-sweep-results table")).to_be_visible(timeout=180_000)
    assert_whole(sweep.locator(".pg-sweep-results b").first, "the sweep's summary")
    assert_whole(sweep.locator(".pg-sweep-results svg").first.locator(".."), "the sweep's heatmap frame", scrolls=True)
    assert_whole(sweep.locator(".pg-sweep-results th"), "a column of the sweep's table")
    w.snap(f"layout-{width}")


# -- the restore walk ---------------------------------------------------------------------------
def autosaved_modes(path: Path) -> list[str]:
    """The group mode of each version in the autosave file, newest first."""
    doc = json.loads(path.read_text())
    return [v["design"]["groups"][0]["mode"] for v in sorted(doc["versions"], key=lambda v: v["saved"], reverse=True)]


def restore_flow(page, shot: Path, autosave: Path, reopens: list[tuple[str, Callable[[], None], int]]) -> None:
    """First visit: the notebook's design, nothing offered; switch to FusedMerge (autosaved).
    Then for each ``(name, reopen, run)``: ``reopen()`` starts a new studio (a reload, Run All;
    the notebook's ``run``-th run in its kernel), which offers the FusedMerge design and leaves the
    autosave file as it was until restore is chosen; restoring brings it back (8 barriers), and
    the earlier visits stay in the file."""
    from playwright.sync_api import expect

    w = Walk(page, shot)
    with w.failure_shot():
        expect(page.get_by_text(done(1))).to_be_visible(timeout=SLOW_MS)
        expect(w.status).to_contain_text("11 barriers", timeout=SLOW_MS)
        expect(w.banner).to_be_hidden()
        wait_until(lambda: autosaved_modes(autosave) == ["Merge"], f"the notebook's design autosaved to {autosave}")

        w.mode("FusedMerge")
        w.valid(8)
        wait_until(lambda: autosaved_modes(autosave)[0] == "FusedMerge", "the edit autosaved")
        w.snap("1-edited")

        for step, (name, reopen, run) in enumerate(reopens, start=2):
            before = autosave.read_bytes()
            visits = len(autosaved_modes(autosave))
            reopen()
            w = Walk(page, shot)
            expect(page.get_by_text(done(run))).to_be_visible(timeout=180_000)  # the notebook's own edit ran
            expect(w.banner).to_be_visible(timeout=SLOW_MS)
            expect(w.banner).to_contain_text("An autosaved design from an earlier visit was found")
            expect(w.message).to_contain_text("attached a schedule to task 'epilogue'")
            expect(w.status).to_contain_text("11 barriers", timeout=SLOW_MS)  # the notebook's design, as yet
            assert autosave.read_bytes() == before, f"after {name} the autosave was written before the offer"
            w.snap(f"{step}-{name}-offer")
            w.banner.locator("button.jupyter-button", has_text="Restore it").click()
            expect(w.banner).to_be_hidden(timeout=SLOW_MS)
            expect(w.message).to_contain_text("restored the autosave of")
            w.valid(8)
            w.tab("Groups")
            expect(w.mode_button("FusedMerge")).to_have_class(_has("mod-active"))
            kept = min(visits + 1, 5)
            wait_until(lambda kept=kept: autosaved_modes(autosave)[0] == "FusedMerge"
                       and len(autosaved_modes(autosave)) == kept,
                       f"after {name} the restored design autosaved as a new visit, the earlier ones kept")
            w.snap(f"{step}-{name}-restored")
        page.screenshot(path=str(shot), full_page=True)


# -- Voila -----------------------------------------------------------------------------------
def open_voila(page, url: str) -> None:
    """Voila runs the notebook before the page's load event: wait for the studio, not for load."""
    page.goto(url, wait_until="commit", timeout=SLOW_MS)
    page.locator(".pg-studio .pg-status").first.wait_for(state="visible", timeout=180_000)


def test_studio_in_voila(voila, page, tmp_path, artifacts):
    open_voila(page, voila(write_app(tmp_path)))
    studio_flow(page, artifacts / "studio-voila.png")


def test_restore_after_reload_in_voila(voila, page, tmp_path, artifacts):
    url = voila(write_notebook(tmp_path, RESTORE_APP))
    open_voila(page, url)

    def reload() -> None:
        page.reload(wait_until="commit", timeout=SLOW_MS)
        page.locator(".pg-studio .pg-status").first.wait_for(state="visible", timeout=180_000)

    restore_flow(page, artifacts / "restore-voila.png", tmp_path / "walk.pgstudio-autosave.json",
                 [("reload", reload, 1)])  # a fresh kernel each visit


# -- JupyterLab ------------------------------------------------------------------------------
def open_lab(page, url: str, notebook: str, shot: Path) -> None:
    page.goto(url, timeout=SLOW_MS)  # its kernel is running: Lab attaches, no "Select Kernel" dialog
    try:
        wait_until_notebook_ready(page, notebook)
        run_all(page)
    except Exception:
        page.screenshot(path=str(shot.with_name(f"{shot.stem}-not-ready.png")), full_page=True)
        raise


def run_all(page) -> None:
    """Lab's "Run All"; fire and forget (awaiting the command's promise inside evaluate() would
    have no timeout); returns once a studio's status line is on the page."""
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.locator(".pg-studio .pg-status").first.wait_for(state="visible", timeout=180_000)


def test_studio_in_jupyterlab(lab, page, tmp_path, artifacts):
    root = tmp_path / "root"
    root.mkdir()
    notebook = write_app(root).name
    open_lab(page, lab(root, notebook), notebook, artifacts / "studio-jupyterlab.png")
    studio_flow(page, artifacts / "studio-jupyterlab.png", sidebar=True)


def test_restore_after_run_all_and_reload_in_jupyterlab(lab, page, tmp_path, artifacts):
    root = tmp_path / "root"
    root.mkdir()
    notebook = write_notebook(root, RESTORE_APP).name
    shot = artifacts / "restore-jupyterlab.png"
    open_lab(page, lab(root, notebook), notebook, shot)

    def again() -> None:  # "Run All" in the same kernel: a new studio object, a new visit
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

    def reload_and_run_all() -> None:
        page.reload(timeout=SLOW_MS)
        wait_until_notebook_ready(page, notebook)
        again()

    restore_flow(page, shot, root / "walk.pgstudio-autosave.json",  # one kernel: runs 2 and 3
                 [("run-all", again, 2), ("reload-run-all", reload_and_run_all, 3)])


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


def wait_until_notebook_ready(page, path: str, timeout_ms: int = 120_000) -> None:
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

"""``Studio``: the notebook front end -- thin views over ONE Design value.

Every edit (from a widget, a diagnostic's one-click fix or Python) is a pure function
``Design -> Design`` (``model.edits``);
the result has its derived schedules re-derived (``model.derive``), becomes the current design
of the undo history and is autosaved; the editors are refilled at once, and the analysis panes
(diagnostics, graph, barrier layout, timeline, checker, CUDA source) are redrawn once edits pause
for a moment (debounced).  The studio keeps no state of its own besides that history: what it
shows is always computed from ``studio.design``.

    from pgstudio.studio import Studio
    from pgstudio import examples
    Studio(examples.merge_gemm())        # display it in a notebook cell
"""

from __future__ import annotations

import os
from pathlib import Path
from html import escape
from typing import Any, Callable

import ipywidgets as W

from ..errors import DesignError
from ..model.derive import adopt_derived, derive_design
from ..model.design import Design
from ..model.ungroup import ungrouped
from ..model import edits as E
from . import _sweep
from ._bench_pane import BenchPane
from ._debounce import Debouncer
from ._design_editor import DesignEditor
from ._diagnostics_pane import DiagnosticsPane
from ._edge_editor import EdgeEditor
from ._figures import BarrierPane, TimelinePane
from ._file_bar import FileBar
from ._files import autosave_stem, load_design, parse_design, save_design
from ._group_editor import GroupEditor
from ._history import History
from ._resource_editor import ResourceEditor
from ._restore import Keeper
from ._snapshot import Snapshot
from ._task_editor import TaskEditor
from ._ui import CSS, button
from ._views import ViewPanes

__all__ = ["Studio"]

#: Seconds of quiet after an edit before the panes are redrawn (inside a running kernel).
DEBOUNCE_S = 0.15
#: The editors' width (at most, at least) and the pictures' width below which the two stack.
EDITORS_PX, EDITORS_MIN_PX, PICTURES_PX = 400, 360, 380


class Studio:
    """See the module docstring.

    ``design``: what to open (default: the newest autosave, else an empty design).  When an
    earlier visit autosaved something else, the studio offers it (restore / discard / keep both)
    and writes no autosave until one is chosen.
    ``name``: names the autosave file ``<name>.pgstudio-autosave.json`` in ``folder`` (default:
    the working directory, i.e. next to the notebook); a name that is not a plain file name gets
    a hash of itself (``_files.autosave_stem``), so the file stays in ``folder`` and two names
    never share one.  The file keeps the last few visits (``_autosave``).  ``autosave=False``
    turns it off.
    ``iterations``: domain-loop iterations the checker explores.  ``lazy``: draw only the pane
    on screen after an edit.
    """

    def __init__(self, design: Design | None = None, *, name: str = "studio", autosave: bool = True,
                 folder: str | os.PathLike | None = None, debounce: float = DEBOUNCE_S, iterations: int = 2,
                 lazy: bool = True) -> None:
        self.iterations = iterations
        self.folder = Path(folder) if folder is not None else Path.cwd()
        self.message = W.HTML()
        self._keeper = Keeper(name, folder, say=self.say, open_design=self.set_design, enabled=autosave)
        if design is None:
            design = self._keeper.latest()
        start = design if design is not None else E.blank_design()
        try:
            start = derive_design(adopt_derived(start))
        except Exception:  # an odd design still opens; the diagnostics say what is wrong
            pass
        self._history = History(start)
        self._snapshot: Snapshot | None = None
        self._last_valid: Design | None = None  # the last design shown valid: one-click fixes lead back to it

        self.title = W.HTML()
        self.status = W.HTML()
        self.undo_button = button("Undo", self.undo, icon="undo", tip="undo the last edit", width="90px")
        self.redo_button = button("Redo", self.redo, icon="repeat", tip="redo", width="90px")
        current = lambda: self.design  # noqa: E731  (editors read the one value through this)
        self.banner = self._keeper.banner
        self.files = FileBar(current, save=self.save, load=self.load, load_bytes=self.load_bytes)
        self.editors = {
            "resources": ResourceEditor(current, add=self.add_resource, remove=self.remove_resource,
                                        rename=self.rename_resource, change=self.set_resource),
            "edges": EdgeEditor(add=self.add_edge, remove=self.remove_edge),
            "groups": GroupEditor(current, add=self.add_group, remove=self.remove_group, change=self.set_group),
            "tasks": TaskEditor(current, add=self.add_task, remove=self.remove_task, change=self.set_task,
                                use_derived=self.use_derived_schedule),
            "design": DesignEditor(rename=self.rename_design, set_problem_value=self.set_problem_value,
                                   open_template=self.new_design, derive_all=self.derive_all, ungroup=self.ungroup),
        }
        self.editor_tabs = W.Tab(children=[e.widget for e in self.editors.values()],
                                 titles=[e.title for e in self.editors.values()])
        self.diagnostics = DiagnosticsPane(highlight=self.highlight, apply_fix=self.apply_fix)
        self.bench = BenchPane(current)
        self.timeline = TimelinePane(self.mark, folder=lambda: self.folder, executor=lambda: self.bench.executor)
        self.barriers = BarrierPane(self.mark)
        self.views = ViewPanes(self.bench.widget, lazy=lazy,
                               interactive={"timeline": self.timeline, "barriers": self.barriers})
        self.sweep = _sweep.attach(current, self.views.tab)  # the Sweep tab (stages x bytes x groupings)
        header = W.HBox([W.VBox([self.title, self.status]),
                         W.HBox([self.undo_button, self.redo_button], layout=W.Layout(min_width="190px"))],
                        layout=W.Layout(justify_content="space-between", align_items="center"))
        # side by side from about 800 px -- a 1280 px laptop with JupyterLab's file browser open
        # leaves the output about 850 px -- editors 360-400 px, pictures the rest; stacked below that
        left = W.VBox([self.editor_tabs, self.files.widget], layout=W.Layout(flex=f"0 1 {EDITORS_PX}px",
                                                                             min_width=f"{EDITORS_MIN_PX}px"))
        right = W.VBox([self.views.widget], layout=W.Layout(flex=f"1 1 {PICTURES_PX}px", min_width="0"))
        left.add_class("pg-left")
        right.add_class("pg-right")
        main = W.HBox([left, right], layout=W.Layout(width="100%", flex_flow="row wrap"))
        main.add_class("pg-main")
        self.widget = W.VBox([
            W.HTML(CSS), header, self.message, self.banner.widget, self.diagnostics.widget, main,
        ])
        self.widget.add_class("pg-studio")
        self.status.add_class("pg-status")
        self.message.add_class("pg-message")
        self._debouncer = Debouncer(debounce, self._redraw)
        self._refresh_editors()
        self._redraw()
        if self._keeper.path is not None and autosave_stem(name) != name:
            self.say(f"autosave name {name!r} is saved as {self._keeper.path.name!r} (a file name keeps to "
                     f"letters, digits, '_' and '-'; the rest is a hash of the name)")
        self._keeper.offer(self.design)

    @property
    def autosave_file(self) -> Path | None:
        """The autosave file, None when autosave is off."""
        return self._keeper.path

    # -- the one value ------------------------------------------------------------------------
    @property
    def design(self) -> Design:
        """The current design (the studio's only truth)."""
        return self._history.current

    @property
    def snapshot(self) -> Snapshot:
        """The analysis of the current design (redraws first if an edit is pending)."""
        self.refresh()
        assert self._snapshot is not None
        return self._snapshot

    @property
    def report(self) -> Any:
        return self.snapshot.report

    @property
    def message_text(self) -> str:
        """The last message, as plain text (for tests and scripts)."""
        import re
        from html import unescape
        return unescape(re.sub(r"<[^>]+>", "", self.message.value))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget; for a page shown without a running kernel (a notebook on GitHub, an HTML
        export), a line of HTML and text that says what the studio holds and how to use it."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        snap = self.snapshot
        text = (f"pgstudio studio: {self.design.summary()}; {snap.status()}; {snap.barrier_counts()}. "
                "The studio is interactive: run this notebook in JupyterLab (or `make studio`) to use it.")
        return {**bundle, "text/plain": text, "text/html": f"<p class='pgstudio'>{escape(text)}</p>"}

    # -- applying edits -----------------------------------------------------------------------
    def say(self, text: str, bad: bool = False) -> None:
        cls = "pg-msg pg-msg-bad" if bad else "pg-msg"
        self.message.value = f"<div class='{cls}'>{escape(text)}</div>" if text else ""

    def edit(self, fn: Callable[..., Design], *args: Any, what: str = "", **kwargs: Any) -> bool:
        """Apply ``fn(design, *args, **kwargs)``; a problem becomes a message.  True when applied."""
        try:
            new = fn(self.design, *args, **kwargs)
        except (DesignError, ValueError, KeyError, TypeError) as exc:
            self.say(exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc), bad=True)
            self._refresh_editors()  # put back the widget value the edit refused
            return False
        self.set_design(new, what)
        return True

    def set_design(self, design: Design, what: str = "") -> None:
        """Make ``design`` current (undoable), re-derive its derived schedules, autosave, redraw."""
        try:
            design = derive_design(design)
        except Exception as exc:  # keep the edit; say why its schedules were not derived
            self.say(f"{what}; schedules not derived: {exc}", bad=True)
            what = ""
        self._history.push(design)
        self._after_change(what)

    def _after_change(self, what: str) -> None:
        if what:
            self.say(what)
        self._autosave()
        self._refresh_editors()
        self._debouncer.trigger()

    def undo(self) -> None:
        if self._history.can_undo:
            self._history.undo()
            self._after_change("undone")

    def redo(self) -> None:
        if self._history.can_redo:
            self._history.redo()
            self._after_change("redone")

    def refresh(self) -> None:
        """Redraw now if an edit is waiting for the debounce."""
        if self._debouncer.pending or self._snapshot is None or self._snapshot.design is not self.design:
            self._debouncer.cancel()
            self._redraw()

    def redraw_all(self) -> None:
        """Recompute the analysis and draw every pane, the hidden ones too (benchmarks use it)."""
        self._debouncer.cancel()
        self._redraw(everything=True)

    def highlight(self, element: str | None) -> None:
        """Mark ``element`` (a resource, group or task) in the dependency graph and show it."""
        self.views.set_highlight(element)
        self.views.show("graph")

    def mark(self, element: str | None) -> None:
        """Mark ``element`` in the dependency graph without leaving the pane on screen (a click
        in the timeline or the barrier layout: the graph shows it when opened)."""
        self.views.highlight = element
        self.views.stale.add("graph")

    # -- editors: one method per action, each a pure edit -----------------------------------
    def add_resource(self, name: str | None = None) -> bool:
        return self.edit(E.new_resource, name, what="added a resource")

    def rename_resource(self, old: str, new: str) -> bool:
        return self.edit(E.rename_resource, old, new, what=f"renamed resource {old!r} to {new!r}")

    def set_resource(self, name: str, **fields: Any) -> bool:
        what = ", ".join(f"{k}={v}" for k, v in fields.items())
        return self.edit(E.set_resource, name, what=f"resource {name!r}: {what}", **fields)

    def remove_resource(self, name: str) -> bool:
        return self.edit(E.remove_resource, name, what=f"removed resource {name!r}")

    def add_edge(self, dep: str, resource: str) -> bool:
        return self.edit(E.add_edge, dep, resource, what=f"added edge {dep} -> {resource}")

    def remove_edge(self, dep: str, resource: str) -> bool:
        return self.edit(E.remove_edge, dep, resource, what=f"removed edge {dep} -> {resource}")

    def add_group(self, name: str | None = None, members: Any = (), mode: Any = "Merge") -> bool:
        return self.edit(E.add_group, name, list(members), mode, what="added a group")

    def set_group(self, name: str, **fields: Any) -> bool:
        what = ", ".join(f"{k}={v}" for k, v in fields.items())
        return self.edit(E.set_group, name, what=f"group {name!r}: {what}", **fields)

    def remove_group(self, name: str) -> bool:
        return self.edit(E.remove_group, name, what=f"removed group {name!r}")

    def add_task(self, name: str | None = None, num_warps: int = 1) -> bool:
        return self.edit(E.add_task, name, num_warps, what="added a task")

    def set_task(self, name: str, **fields: Any) -> bool:
        what = ", ".join(f"{k}={v}" for k, v in fields.items())
        return self.edit(E.set_task, name, what=f"task {name!r}: {what}", **fields)

    def remove_task(self, name: str) -> bool:
        return self.edit(E.remove_task, name, what=f"removed task {name!r}")

    def attach_schedule(self, task: str, schedule: Any) -> bool:
        """Use a schedule written in Python with ``@schedule`` for ``task`` (see ``_edits``)."""
        return self.edit(E.attach_schedule, task, schedule, what=f"attached a schedule to task {task!r}")

    def use_derived_schedule(self, task: str) -> bool:
        return self.edit(E.use_derived_schedule, task, what=f"task {task!r}: schedule derived from the design")

    def derive_all(self) -> bool:
        return self.edit(lambda d: derive_design(d, replace_attached=True), what="every schedule derived")

    def ungroup(self) -> bool:
        return self.edit(ungrouped, what="removed every group (per-resource barriers)")

    def rename_design(self, name: str) -> bool:
        return self.edit(E.rename_design, name, what=f"design renamed to {name!r}")

    def set_problem(self, text: str) -> bool:
        return self.edit(E.set_problem, text, what="problem shape changed")

    def set_problem_value(self, key: str, value: Any) -> bool:
        return self.edit(E.set_problem_value, key, value, what=f"problem: {key}={value}")

    def new_design(self, template: str) -> bool:
        """Replace the design by a new one from ``examples.TEMPLATES`` (undo brings the old back)."""
        from .. import examples
        return self.edit(lambda d: examples.template(template), what=f"new design from template {template!r}")

    def open_example(self, name: str | None) -> bool:
        from .. import examples
        if name is None:
            return self.edit(lambda d: E.blank_design(), what="opened an empty design")
        return self.edit(lambda d: adopt_derived(examples.example(name)), what=f"opened example {name!r}")

    def apply_fix(self, fix: Any) -> bool:
        """Apply a diagnostic's one-click ``Fix`` (what its button in the Diagnostics pane does)."""
        return self.edit(E.apply_fix, fix, what=f"fixed: {fix.label}")

    def fixes(self) -> list:
        """Every one-click fix the current diagnostics offer, in order."""
        return [fx for d in self.report.diagnostics for fx in d.fixes]

    # -- files ------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> bool:
        ok, text = save_design(self.design, path)
        self.say(text, bad=not ok)
        return ok

    def load(self, path: str | os.PathLike) -> bool:
        design, text = load_design(path)
        if design is None:
            self.say(text, bad=True)
            return False
        self.set_design(design, text)
        return True

    def load_bytes(self, data: bytes, source: str = "upload") -> bool:
        design, text = parse_design(data, source)
        if design is None:
            self.say(text, bad=True)
            return False
        self.set_design(design, text)
        return True

    def _autosave(self) -> None:
        self._keeper.save(self.design)

    def restore_autosave(self) -> bool:
        """Open the offered autosave (undo returns to what was on screen); False if none is offered."""
        return self._keeper.restore()

    # -- compile and benchmark --------------------------------------------------------------
    def compile_and_benchmark(self) -> Any:
        """What the Compile & Benchmark button does; returns the results (or None)."""
        return self.bench.run()

    # -- drawing ----------------------------------------------------------------------------
    def _refresh_editors(self) -> None:
        d = self.design
        for e in self.editors.values():
            e.refresh(d)
        self.files.refresh(d)
        facts = d.summary().split(": ", 1)[-1]
        self.title.value = (f"<span class='pg-title'>pgstudio studio</span> &nbsp;·&nbsp; design "
                            f"<b>{escape(d.name)}</b> &nbsp;<span class='pg-note'>{escape(facts)}</span>")
        self.undo_button.disabled = not self._history.can_undo
        self.redo_button.disabled = not self._history.can_redo

    def _redraw(self, everything: bool | None = None) -> None:
        snap = Snapshot(self.design, self.iterations, last_valid=self._last_valid)
        self._snapshot = snap
        if snap.report.ok:
            self._last_valid = self.design
        if snap.report.ok and not snap.report.warnings:
            badge = "<span class='pg-ok'>✔ valid</span>"
        else:
            cls = "pg-bad" if snap.errors else "pg-warn"
            badge = f"<span class='{cls}'>✖ {escape(snap.status())}</span>"
        guess = snap.predicted_text()
        self.status.value = (f"{badge} &nbsp; <span class='pg-note'>{escape(snap.barrier_counts())}. "
                             f"{escape(snap.smem_text())}" + (f". {escape(guess)}" if guess else "") + "</span>")
        self.diagnostics.update(snap)
        if self.views.highlight is not None and not _names(self.design, self.views.highlight):
            self.views.highlight = None
        self.views.update(snap, everything)
        self.bench.design_changed(self.design)


def _names(design: Design, element: str) -> bool:
    return any(x.name == element for x in (*design.resources, *design.groups, *design.tasks))

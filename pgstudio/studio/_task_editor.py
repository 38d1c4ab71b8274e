"""Tasks: warp range, consumed (src) and produced (dst) resources, and the schedule -- derived
from the design, or attached from Python with ``Studio.attach_schedule``."""

from __future__ import annotations

from html import escape
from typing import Any, Callable

import ipywidgets as W

from ..model.derive import is_derived
from ._list_editor import ListEditor
from ._ui import Sync, button, row, section



def describe(t: Any) -> str:
    last = t.warp_idx + t.num_warps - 1
    warps = f"warp {t.warp_idx}" if t.num_warps == 1 else f"warps {t.warp_idx}..{last}"
    return f"{t.name}  ·  {warps}"


class TaskEditor(ListEditor):
    kind = "tasks"
    keep_last = False
    describe = staticmethod(describe)
    title = "Tasks"

    def __init__(self, current: Callable[[], Any], *, add: Callable[[], Any], remove: Callable[[str], Any],
                 change: Callable[..., Any], use_derived: Callable[[str], Any]) -> None:
        """``current()``: the design; ``add`` / ``remove(name)`` / ``change(name, warp_idx=, num_warps=, src=, dst=,
        new_name=)`` / ``use_derived(name)``: edits."""
        self.current, self._add_element, self._remove_task, self._change = current, add, remove, change
        self._use_derived = use_derived
        self.sync = Sync()
        self.list = W.Select(options=[], rows=6, layout=W.Layout(width="100%"))
        self.add = button("Add task", self._add, icon="plus", tip="a task on the next free warp")
        self.remove = button("Remove task", self._remove, icon="trash")
        self.name = W.Text(continuous_update=False, layout=W.Layout(width="200px"))
        self.warp_idx = W.BoundedIntText(min=0, max=63, layout=W.Layout(width="80px"))
        self.num_warps = W.BoundedIntText(min=1, max=32, layout=W.Layout(width="80px"))
        self.src = W.SelectMultiple(options=[], rows=5, layout=W.Layout(width="170px"))
        self.dst = W.SelectMultiple(options=[], rows=5, layout=W.Layout(width="170px"))
        self.derive = button("Derive it instead", self._derive, icon="magic",
                             tip="drop the attached @schedule; derive the schedule from the design", width="170px")
        self.schedule_head = W.HTML()
        self.schedule = W.HTML()
        s = self.sync
        s.on(self.list, lambda v: self.show(self.current()))
        s.on(self.name, self._rename)
        s.on(self.warp_idx, lambda v: self._change(self.selected, warp_idx=v))
        s.on(self.num_warps, lambda v: self._change(self.selected, num_warps=v))
        s.on(self.src, lambda v: self._change(self.selected, src=list(v)))
        s.on(self.dst, lambda v: self._change(self.selected, dst=list(v)))
        for widget, cls in ((self.list, "pg-task-list"), (self.warp_idx, "pg-task-warp"), (self.num_warps, "pg-task-num-warps"),
                            (self.src, "pg-task-src"), (self.dst, "pg-task-dst")):
            widget.add_class(cls)
        self.form = W.VBox([
            row("name", self.name),
            row("first warp", self.warp_idx, W.HTML("&nbsp;warps"), self.num_warps),
            W.HBox([W.VBox([W.HTML("<b>consumes</b> (src_resources)"), self.src]),
                    W.VBox([W.HTML("<b>produces</b> (dst_resources)"), self.dst])]),
            self.schedule_head, self.derive,
            self.schedule,
        ])
        self.empty = W.HTML("<div class='pg-note'>No task yet: press <b>Add task</b>, then pick what it consumes "
                            "and produces; its schedule is derived.</div>")
        self.widget = W.VBox([section("Tasks (warp roles)"), self.list, W.HBox([self.add, self.remove]),
                              self.form, self.empty])

    def _add(self) -> None:
        self._add_with(self._add_element)

    def _remove(self) -> None:
        self._remove_with(self._remove_task)

    def _rename(self, new: str) -> None:
        self._rename_with(lambda old, new: self._change(old, new_name=new), new)

    def _derive(self) -> None:
        if self.selected:
            self._use_derived(self.selected)

    def show(self, design: Any) -> None:
        name = self.selected
        has = name is not None and any(t.name == name for t in design.tasks)
        self.form.layout.display = None if has else "none"
        self.empty.layout.display = "none" if has else None
        self.remove.disabled = not has
        if not has:
            return
        t = design.task(name)
        names = [r.name for r in design.resources]
        with self.sync():
            self.name.value = t.name
            self.warp_idx.value = min(t.warp_idx, self.warp_idx.max)
            self.num_warps.value = max(1, min(t.num_warps, self.num_warps.max))
            for widget, chosen in ((self.src, t.src_resources), (self.dst, t.dst_resources)):
                options = names + [c for c in chosen if c not in names]
                if list(widget.options) != options:
                    widget.options = options
                widget.value = tuple(chosen)
        derived = is_derived(t.schedule)
        self.derive.layout.display = "none" if derived else None
        if derived:
            self.schedule_head.value = ("<b>schedule</b> <span class='pg-note'>derived from the graph, groups and "
                                        "tasks (attach your own with studio.attach_schedule)</span>")
        else:
            self.schedule_head.value = (f"<b>schedule</b> <span class='pg-note'>attached: "
                                        f"{escape(t.schedule.name)} (written with @schedule)</span>&nbsp;")
        text = t.schedule.text() if t.schedule is not None else "(no schedule)"
        self.schedule.value = f"<pre class='pg-pre'>{escape(text)}</pre>"

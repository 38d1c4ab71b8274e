"""Groups: pick members, pick Merge / Fork / FusedMerge, rename, remove."""

from __future__ import annotations

from html import escape
from typing import Any, Callable

import ipywidgets as W

from ..model.kinds import Role, Side
from ..model.protocol import PipelineGroupMode
from ..model.schedule import TRY_OPS
from ._list_editor import ListEditor
from ._ui import Sync, button, row, section


MODES = [m.value for m in PipelineGroupMode]


def what(mode: PipelineGroupMode) -> str:
    """One line on a mode, read off the protocol table: its collapsed side, shared barriers and the
    ops its group object takes."""
    side = mode.collapsed_side
    shape = "N producers → 1 consumer" if side is Side.CONSUMER else "1 producer → N consumers"
    barriers = ", ".join(f"one shared {r} barrier" if r in mode.shared_barriers else f"per-member {r} barriers"
                         for r in Role)
    ops = " and ".join(f"group.{op}()" for op in mode.group_ops if op not in TRY_OPS)
    count = "2·S" if len(mode.shared_barriers) == len(Role) else "(N+1)·S"
    return f"{shape}: {barriers}; the {side} task calls {ops} once. {count} barriers."


def describe(g: Any) -> str:
    return f"{g.name}  ·  {g.mode.value} ({', '.join(g.member_names) or 'no members'})"


class GroupEditor(ListEditor):
    kind = "groups"
    keep_last = True
    describe = staticmethod(describe)
    title = "Groups"

    def __init__(self, current: Callable[[], Any], *, add: Callable[[], Any], remove: Callable[[str], Any],
                 change: Callable[..., Any]) -> None:
        """``current()``: the design; ``add()`` / ``remove(name)`` / ``change(name, mode=, members=, new_name=)``: edits."""
        self.current, self._add_element, self._remove_group, self._change = current, add, remove, change
        self.sync = Sync()
        self.list = W.Select(options=[], rows=5, layout=W.Layout(width="100%"))
        self.new = button("New group", self._new, icon="plus", tip="a new Merge group; then pick its members")
        self.remove = button("Remove group", self._remove, icon="trash", tip="members keep their own barriers")
        self.name = W.Text(continuous_update=False, layout=W.Layout(width="200px"))
        self.mode = W.ToggleButtons(options=MODES, style={"button_width": "auto"})
        self.members = W.SelectMultiple(options=[], rows=6, layout=W.Layout(width="260px"))
        self.info = W.HTML()
        s = self.sync
        s.on(self.list, lambda v: self.show(self.current()))
        s.on(self.name, self._rename)
        s.on(self.mode, lambda v: self._change(self.selected, mode=v))
        s.on(self.members, lambda v: self._change(self.selected, members=list(v)))
        for widget, cls in ((self.list, "pg-group-list"), (self.name, "pg-group-name"), (self.mode, "pg-group-mode"),
                            (self.members, "pg-group-members")):
            widget.add_class(cls)
        self.form = W.VBox([
            row("name", self.name),
            row("mode", self.mode),
            row("members", self.members, tip="ctrl / shift + click to pick several pipelined resources"),
            self.info,
        ])
        self.empty = W.HTML("<div class='pg-note'>No group: every resource has its own full and empty barriers. "
                            "Press <b>New group</b> to share one side.</div>")
        self.widget = W.VBox([section("Pipeline groups"), self.list, W.HBox([self.new, self.remove]),
                              self.form, self.empty])

    def _new(self) -> None:
        self._add_with(self._add_element)

    def _remove(self) -> None:
        self._remove_with(self._remove_group)

    def _rename(self, new: str) -> None:
        self._rename_with(lambda old, new: self._change(old, new_name=new), new)

    def show(self, design: Any) -> None:
        name = self.selected
        has = name is not None and any(g.name == name for g in design.groups)
        self.form.layout.display = None if has else "none"
        self.empty.layout.display = "none" if has else None
        self.remove.disabled = not has
        if not has:
            return
        g = design.group(name)
        pipelined = [r.name for r in design.resources if r.pipeline_config is not None]
        options = pipelined + [m for m in g.member_names if m not in pipelined]
        with self.sync():
            self.name.value = g.name
            self.mode.value = g.mode.value
            if list(self.members.options) != options:
                self.members.options = options
            self.members.value = tuple(m for m in g.member_names if m in options)
        self.info.value = f"<div class='pg-note'>{escape(what(g.mode))}</div>"

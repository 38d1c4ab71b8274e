"""Resources: add, rename, remove; memory, pipeline type, stages, bytes or tile shape, the
producer / consumer cooperative groups, what the resource computes, and views (aliases)."""

from __future__ import annotations

from typing import Any, Callable

import ipywidgets as W

from ..model.kinds import Agent, AsyncProducerOp, PipelineType
from ..model.limits import MAX_STAGE_BYTES, MAX_STAGES, MAX_THREADS
from ..model.resource import COMPUTE_OPS, DTYPES, Memory
from ..model import edits as E
from ._list_editor import ListEditor
from ._ui import Sync, button, row, section, set_options


PIPELINES = [E.NOT_PIPELINED, *(t.value for t in PipelineType)]
NONE = "(none)"


def describe(r: Any) -> str:
    cfg = r.pipeline_config
    if cfg is None:
        return f"{r.name}  ·  {r.memory}"
    return f"{r.name}  ·  {r.memory}, {cfg.pipeline_type}, {cfg.num_stages} st × {cfg.num_bytes} B"


class ResourceEditor(ListEditor):
    kind = "resources"
    keep_last = False
    describe = staticmethod(describe)
    title = "Resources"

    def __init__(self, current: Callable[[], Any], *, add: Callable[[], Any], remove: Callable[[str], Any],
                 rename: Callable[[str, str], Any], change: Callable[..., Any]) -> None:
        """``current()``: the design; ``add`` / ``remove(name)`` / ``rename(old, new)`` / ``change(name, **field)``: edits."""
        self.current, self._add_element, self._remove_resource, self._rename_resource = current, add, remove, rename
        self._change = change
        self.sync = Sync()
        small = W.Layout(width="90px")
        self.list = W.Select(options=[], rows=9, layout=W.Layout(width="100%"))
        self.add = button("Add resource", self._add, icon="plus", tip="add a pipelined shared-memory tile")
        self.remove = button("Remove", self._remove, icon="trash", tip="remove the selected resource everywhere")
        self.name = W.Text(continuous_update=False, layout=W.Layout(width="200px"))
        self.memory = W.Dropdown(options=[m.value for m in Memory], layout=W.Layout(width="110px"))
        self.pipeline = W.Dropdown(options=PIPELINES, layout=W.Layout(width="130px"))
        self.stages = W.BoundedIntText(min=1, max=MAX_STAGES, layout=small)
        self.nbytes = W.BoundedIntText(min=0, max=MAX_STAGE_BYTES, step=16, layout=W.Layout(width="110px"))
        self.tile = W.Text(placeholder="e.g. 128x64", continuous_update=False, layout=W.Layout(width="110px"))
        self.dtype = W.Dropdown(options=list(DTYPES), layout=W.Layout(width="110px"))
        self.compute = W.Dropdown(options=list(COMPUTE_OPS), layout=W.Layout(width="110px"))
        self.expr = W.Text(placeholder="expression over dependencies", continuous_update=False,
                           layout=W.Layout(width="220px"))
        self.p_size = W.BoundedIntText(min=1, max=MAX_THREADS, layout=small)
        self.p_agent = W.Dropdown(options=[a.value for a in Agent], layout=W.Layout(width="90px"))
        self.c_size = W.BoundedIntText(min=1, max=MAX_THREADS, layout=small)
        self.c_agent = W.Dropdown(options=[a.value for a in Agent], layout=W.Layout(width="90px"))
        self.async_op = W.Dropdown(options=[o.value for o in AsyncProducerOp], layout=W.Layout(width="130px"))
        self.aliases = W.Dropdown(options=[NONE], layout=W.Layout(width="160px"))

        s = self.sync
        s.on(self.list, lambda v: self.show(self.current()))
        s.on(self.name, self._rename)
        fields = {"memory": self.memory, "pipeline_type": self.pipeline, "num_stages": self.stages,
                  "num_bytes": self.nbytes, "tile": self.tile, "dtype": self.dtype, "compute": self.compute,
                  "expr": self.expr, "producer_size": self.p_size, "producer_agent": self.p_agent,
                  "consumer_size": self.c_size, "consumer_agent": self.c_agent, "async_producer_op": self.async_op}
        for key, widget in fields.items():
            s.on(widget, lambda v, key=key: self._set(key, v))
        s.on(self.aliases, lambda v: self._set("aliases", None if v == NONE else v))
        for widget, cls in ((self.list, "pg-resource-list"), (self.name, "pg-resource-name"),
                            (self.pipeline, "pg-resource-pipeline"), (self.stages, "pg-resource-stages")):
            widget.add_class(cls)

        self.pipe_rows = W.VBox([
            row("stages", self.stages, W.HTML("<span style='white-space:nowrap'>&nbsp;bytes/stage&nbsp;</span>"), self.nbytes,
                tip="num_stages and num_bytes of the pipeline config"),
            row("producer group", self.p_size, self.p_agent,
                tip="cooperative group that arrives on the full barrier (threads or warps)"),
            row("consumer group", self.c_size, self.c_agent,
                tip="cooperative group that arrives on the empty barrier (threads or warps)"),
            row("async producer", self.async_op, tip="AsyncThread: threads store; AsyncLoad: cp.async"),
        ])
        self.form = W.VBox([
            row("name", self.name, tip="press Enter to rename it everywhere"),
            row("memory", self.memory),
            row("pipeline", self.pipeline, tip="producer kind + consumer kind; none: not staged"),
            self.pipe_rows,
            row("tile", self.tile, W.HTML("&nbsp;dtype&nbsp;"), self.dtype,
                tip="tile shape; sets bytes / stage of a pipelined resource"),
            row("computes", self.compute, self.expr),
            row("view of", self.aliases, tip="aliases: this resource views another's buffer (a Fork of one copy)"),
        ])
        self.empty = W.HTML("<div class='pg-note'>No resource yet: press <b>Add resource</b>.</div>")
        self.widget = W.VBox([
            section("Resources"),
            self.list, W.HBox([self.add, self.remove]),
            self.form, self.empty,
        ])

    def _add(self) -> None:
        self._add_with(self._add_element)

    def _remove(self) -> None:
        self._remove_with(self._remove_resource)

    def _rename(self, new: str) -> None:
        self._rename_with(self._rename_resource, new)

    def _set(self, key: str, value: Any) -> None:
        if self.selected:
            self._change(self.selected, **{key: value})

    def show(self, design: Any) -> None:
        """Fill the form from the selected resource."""
        name = self.selected
        has = name is not None and design.has_resource(name)
        self.form.layout.display = None if has else "none"
        self.empty.layout.display = "none" if has else None
        self.remove.disabled = not has
        if not has:
            return
        r = design.resource(name)
        cfg = r.pipeline_config
        with self.sync():
            self.name.value = r.name
            self.memory.value = r.memory.value
            self.pipeline.value = cfg.pipeline_type.value if cfg else E.NOT_PIPELINED
            self.pipeline.disabled = r.memory is Memory.GMEM
            self.pipe_rows.layout.display = None if cfg else "none"
            if cfg:
                self.stages.value = cfg.num_stages
                self.nbytes.value = cfg.num_bytes
                self.p_size.value, self.p_agent.value = cfg.producer_group.size, cfg.producer_group.agent.value
                self.c_size.value, self.c_agent.value = cfg.consumer_group.size, cfg.consumer_group.agent.value
                self.async_op.value = cfg.async_producer_op.value
                self.async_op.disabled = cfg.producer_kind.value != "async"
            self.tile.value = "x".join(map(str, r.tile))
            self.dtype.value = r.dtype if r.dtype in DTYPES else DTYPES[0]
            self.compute.value = r.compute.op if r.compute.op in COMPUTE_OPS else COMPUTE_OPS[0]
            self.expr.value = r.compute.expr
            others = [x.name for x in design.resources if x.name != r.name]
            set_options(self.aliases, [NONE, *others], r.aliases if r.aliases in others else NONE)

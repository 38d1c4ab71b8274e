"""``ungrouped(design)``: the same design with every group removed (per-resource barriers).

Per-resource barriers (each resource its own full and empty barriers) are always correct, so this
is the baseline a grouping is measured against. Schedules are rewritten: ``group.member.op()``
becomes ``member.op()``, and a collapsed step on the group object becomes the same step on every
member (``group.try_wait(); group.wait()`` becomes ``a.try_wait(); a.wait(); b.try_wait();
b.wait()``). Members that were views of one buffer (an aliased Fork) get their own buffers, and
each is loaded by a copy of the bracket's load, because without the shared barrier each needs its
own bytes.
"""

from __future__ import annotations

import dataclasses

from .design import Design
from .schedule import CapturedSchedule, Loop, Step, TRY_OPS
from .task import Task

__all__ = ["ungrouped"]


def _rewrite(nodes, groups) -> tuple:
    out: list = []
    i = 0
    nodes = list(nodes)
    while i < len(nodes):
        node = nodes[i]
        if isinstance(node, Loop):
            out.append(Loop(node.start, node.stop, node.step, _rewrite(node.body, groups)))
        elif node.via == "group" and node.target in groups:
            members = groups[node.target]
            nxt = nodes[i + 1] if i + 1 < len(nodes) else None
            if node.op in TRY_OPS and isinstance(nxt, Step) and nxt.via == "group" and nxt.target == node.target \
                    and nxt.op == TRY_OPS[node.op]:
                for m in members:
                    out += [Step(node.op, m), Step(nxt.op, m)]
                i += 1
            else:
                out += [Step(node.op, m) for m in members]
        elif node.via == "member":
            out.append(Step(node.op, node.target, "bare", None, node.args))
        else:
            out.append(node)
        i += 1
    return tuple(out)


def _add_alias_loads(nodes, aliased: set[str]) -> tuple:
    """Before each commit of an aliased member with no load of its own, copy the bracket's load."""
    out: list = []
    last_load: Step | None = None
    loaded: set[str] = set()
    for node in nodes:
        if isinstance(node, Loop):
            out.append(Loop(node.start, node.stop, node.step, _add_alias_loads(node.body, aliased)))
            continue
        if node.op == "load":
            last_load = node
            loaded.add(node.target)
        if node.op == "commit" and node.target in aliased and node.target not in loaded and last_load is not None:
            out.append(Step("load", node.target, "bare", None, last_load.args))
        if node.op == "commit":
            loaded.discard(node.target)
        out.append(node)
    return tuple(out)


def ungrouped(design: Design) -> Design:
    """See the module docstring."""
    groups = {g.name: g.member_names for g in design.groups}
    aliased = {r.name for r in design.resources if r.aliases}
    resources = [dataclasses.replace(r, aliases=None) if r.aliases else r for r in design.resources]
    tasks = []
    for t in design.tasks:
        sched = t.schedule
        if sched is not None:
            nodes = _add_alias_loads(_rewrite(sched.nodes, groups), aliased)
            sched = CapturedSchedule(sched.name, nodes)
        tasks.append(Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources, sched))
    return design.replace(name=f"{design.name}_ungrouped", resources=resources, groups=(), tasks=tasks)

"""Edits of resources and of the dependency graph's edges."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ..config import CooperativeGroup, PipelineConfig
from ..design import Design
from ..group import PipelineGroup
from ..kinds import Agent, AsyncProducerOp, OpKind, PipelineType
from ..resource import RESOURCE_CLASSES, Compute, Memory, Resource
from ..targets import DTYPE_BYTES
from ..task import Task
from .common import (ASYNC_DEFAULT_THREADS, DEFAULT_COMPUTE, EditError, NEW_STAGES, NEW_TILE, NOT_PIPELINED,
                     _rename_in_schedule, check_new_name, unique_name)

__all__ = [
    "default_group",
    "new_resource",
    "rename_resource",
    "parse_tile",
    "tile_bytes",
    "set_resource",
    "remove_resource",
    "add_edge",
    "remove_edge",
    "edges",
]

# -- resources ---------------------------------------------------------------------------------

def _expected_async_threads(d: Design, name: str, side: str) -> int:
    tasks = d.producers(name) if side == "producer" else d.consumers(name)
    return tasks[0].num_threads if len(tasks) == 1 else ASYNC_DEFAULT_THREADS


def default_group(d: Design, name: str, side: str, kind: OpKind) -> CooperativeGroup:
    """The cooperative group a side of ``kind`` needs: one elected thread for tma / umma, every
    thread of the task for async (semantics.md section 2)."""
    if kind is OpKind.ASYNC:
        threads = _expected_async_threads(d, name, side)
        if threads % 32 == 0:
            return CooperativeGroup(Agent.Warp, threads // 32)
        return CooperativeGroup(Agent.Thread, threads)
    return CooperativeGroup(Agent.Thread, 1)


def new_resource(d: Design, name: str | None = None) -> Design:
    """A shared-memory tile pipelined TmaAsync, 4 stages of 2048 float32, not yet used by a task."""
    name = check_new_name(d, name, "resource") if name else unique_name(d, "smem")
    nbytes = NEW_TILE[0] * DTYPE_BYTES["float32"]
    cfg = PipelineConfig(PipelineType.TmaAsync, NEW_STAGES, nbytes, CooperativeGroup(Agent.Thread, 1),
                         CooperativeGroup(Agent.Warp, ASYNC_DEFAULT_THREADS // 32))
    return d.with_resource(RESOURCE_CLASSES["smem"](name, cfg, Compute("copy"), "float32", NEW_TILE))


def rename_resource(d: Design, old: str, new: str) -> Design:
    """Rename everywhere: graph, groups, tasks, aliases and attached schedules."""
    new = check_new_name(d, new, "resource", old)
    if new == old:
        return d
    r = d.resource(old)
    renamed = {old: dataclasses.replace(r, name=new)}
    for x in d.resources:
        if x.aliases == old:
            renamed[x.name] = dataclasses.replace(renamed.get(x.name, x), aliases=new)

    def fix(x: Resource) -> Resource:
        return renamed.get(x.name, x)

    resources = [fix(x) for x in d.resources]
    graph = [(new if k == old else k, tuple(new if v == old else v for v in deps)) for k, deps in d.graph]
    groups = [PipelineGroup.unchecked(g.name, [fix(m) for m in g.members], g.mode, g.pipeline_config) for g in d.groups]
    tasks = [Task.unchecked(t.name, t.warp_idx, t.num_warps, [new if s == old else s for s in t.src_resources],
                            [new if s == old else s for s in t.dst_resources], _rename_in_schedule(t.schedule, old, new))
             for t in d.tasks]
    return d.replace(resources=resources, graph=graph, groups=groups, tasks=tasks)


def parse_tile(text: str) -> tuple[int, ...]:
    """``"128x64"`` (or ``"128, 64"``) -> (128, 64); empty -> ()."""
    parts = [p for p in text.replace(",", "x").replace("*", "x").replace(" ", "").lower().split("x") if p]
    try:
        tile = tuple(int(p) for p in parts)
    except ValueError:
        raise EditError(f"tile shape {text!r} is not a list of whole numbers", code="resource.tile",
                        hint="write it like 128x64") from None
    if any(x <= 0 for x in tile):
        raise EditError(f"tile shape {text!r} has a size <= 0", code="resource.tile", hint="write it like 128x64")
    return tile


def tile_bytes(tile: Sequence[int], dtype: str) -> int:
    n = 1
    for x in tile:
        n *= x
    return n * DTYPE_BYTES.get(dtype, 4)


def _int(value: Any, what: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(str(value).strip())
        except ValueError:
            raise EditError(f"{what} {value!r} is not a whole number", code="edit.value",
                            hint=f"give a whole number >= {low}") from None
    if value < low:
        raise EditError(f"{what} is {value}, expected a whole number >= {low}", code="edit.value",
                        hint=f"give a whole number >= {low}")
    return value


def set_resource(d: Design, name: str, **fields: Any) -> Design:
    """Change fields of one resource.  Accepted: memory, pipeline_type ("none" for not pipelined),
    num_stages, num_bytes, tile (text or sizes; also sets num_bytes of a pipelined resource),
    dtype, compute, expr, producer_size, producer_agent, consumer_size, consumer_agent,
    async_producer_op, aliases ("" or None for none)."""
    r = d.resource(name)
    cfg = r.pipeline_config
    memory = Memory(fields.pop("memory", r.memory))
    compute, expr = r.compute.op, r.compute.expr
    if memory is not r.memory and compute == DEFAULT_COMPUTE[r.memory]:
        compute = DEFAULT_COMPUTE[memory]
    compute = fields.pop("compute", compute)
    expr = fields.pop("expr", expr)
    dtype = fields.pop("dtype", r.dtype)
    tile = r.tile
    if "tile" in fields:
        t = fields.pop("tile")
        tile = parse_tile(t) if isinstance(t, str) else tuple(t)
    aliases = fields.pop("aliases", r.aliases) or None
    if "pipeline_type" in fields:
        ptype = fields.pop("pipeline_type")
        if ptype in (None, NOT_PIPELINED):
            cfg = None
        else:
            ptype = PipelineType(ptype)
            old = cfg or PipelineConfig(ptype, NEW_STAGES, tile_bytes(tile, dtype) if tile else 0,
                                        default_group(d, name, "producer", ptype.producer_kind),
                                        default_group(d, name, "consumer", ptype.consumer_kind))
            groups = {}
            for side in ("producer", "consumer"):
                keep = cfg is not None and cfg.pipeline_type.kind(side) is ptype.kind(side)
                groups[side] = old.group(side) if keep else default_group(d, name, side, ptype.kind(side))
            cfg = PipelineConfig(ptype, old.num_stages, old.num_bytes, groups["producer"], groups["consumer"],
                                 old.async_producer_op)
    if memory is Memory.GMEM:
        cfg = None
    if cfg is not None:
        stages = _int(fields.pop("num_stages"), "num_stages", 0) if "num_stages" in fields else cfg.num_stages
        nbytes = _int(fields.pop("num_bytes"), "num_bytes", 0) if "num_bytes" in fields else cfg.num_bytes
        if tile != r.tile or dtype != r.dtype:
            nbytes = tile_bytes(tile, dtype) if tile else nbytes
        groups = {}
        for side in ("producer", "consumer"):
            old = cfg.group(side)
            size = _int(fields.pop(f"{side}_size"), f"{side} group size", 0) if f"{side}_size" in fields else old.size
            agent = Agent(fields.pop(f"{side}_agent", old.agent))
            groups[side] = CooperativeGroup(agent, size)
        op = AsyncProducerOp(fields.pop("async_producer_op", cfg.async_producer_op))
        cfg = PipelineConfig(cfg.pipeline_type, stages, nbytes, groups["producer"], groups["consumer"], op)
    else:
        for key in ("num_stages", "num_bytes", "producer_size", "producer_agent", "consumer_size", "consumer_agent",
                    "async_producer_op"):
            fields.pop(key, None)
    if fields:
        raise EditError(f"unknown resource field(s): {', '.join(sorted(fields))}", code="edit.field")
    new = RESOURCE_CLASSES[memory.value](name, cfg, Compute(compute, expr), dtype, tile, aliases)
    d = d.with_resource(new)
    if r.memory is not memory or (r.pipeline_config is None) != (cfg is None):
        d = _refresh_group_members(d, name)
    return d


def _refresh_group_members(d: Design, name: str) -> Design:
    """Groups hold resource objects: point them at the design's current one."""
    new = d.resource(name)
    groups = [PipelineGroup.unchecked(g.name, [new if m.name == name else m for m in g.members], g.mode,
                                      g.pipeline_config) for g in d.groups]
    return d.replace(groups=groups)


def remove_resource(d: Design, name: str) -> Design:
    d.resource(name)
    d = d.without_resource(name)
    resources = [dataclasses.replace(r, aliases=None) if r.aliases == name else r for r in d.resources]
    return d.replace(resources=resources)


# -- edges ---------------------------------------------------------------------------------------

def add_edge(d: Design, dep: str, resource: str) -> Design:
    """``resource`` is computed from ``dep``."""
    for x in (dep, resource):
        d.resource(x)
    if dep == resource:
        raise EditError(f"a resource cannot depend on itself ({dep!r})", code="graph.self", hint="pick two resources")
    deps = d.deps(resource)
    if dep in deps:
        return d
    graph = [(k, v) for k, v in d.graph if k != resource]
    graph.append((resource, (*deps, dep)))
    return d.replace(graph=_ordered_graph(d, graph))


def remove_edge(d: Design, dep: str, resource: str) -> Design:
    graph = [(k, tuple(x for x in v if not (k == resource and x == dep))) for k, v in d.graph]
    return d.replace(graph=[(k, v) for k, v in graph if v or k != resource])


def _ordered_graph(d: Design, graph: list) -> list:
    order = {r.name: i for i, r in enumerate(d.resources)}
    return sorted(graph, key=lambda kv: order.get(kv[0], len(order)))


def edges(d: Design) -> list[tuple[str, str]]:
    """(dep, resource) pairs, in graph order."""
    return [(dep, k) for k, deps in d.graph for dep in deps]



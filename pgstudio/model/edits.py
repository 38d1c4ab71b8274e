"""Every edit of a design, as a pure function ``Design -> Design``.

The studio's editors only collect values and call these; a diagnostic's one-click ``Fix`` names
one of them (``FIX_EDITS``); tests call them directly, without widgets.
They build resources, groups and tasks through the ``unchecked`` paths and the ``Design`` edit
helpers, so a design may hold a wrong state while the user is still editing (the diagnostics
pane says what is wrong).  An edit that cannot be expressed at all (a name that is not an
identifier, a negative warp index) raises ``EditError`` with a message for the user.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Sequence

from ..errors import DesignError
from .config import CooperativeGroup, PipelineConfig
from .derive import derive_design
from .design import Design
from .diagnostic import Fix
from .group import PipelineGroup
from .kinds import Agent, AsyncProducerOp, OpKind, PipelineType
from .names import name_problem
from .problem import gemm_units
from .protocol import PipelineGroupMode
from .resource import RESOURCE_CLASSES, Compute, Memory, Resource
from .schedule import CapturedSchedule, Loop, Step
from .targets import DTYPE_BYTES
from .task import Task

__all__ = [
    "NOT_PIPELINED",
    "DEFAULT_COMPUTE",
    "ASYNC_DEFAULT_THREADS",
    "EditError",
    "unique_name",
    "check_new_name",
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
    "add_group",
    "set_group",
    "remove_group",
    "add_task",
    "set_task",
    "merge_tasks",
    "remove_task",
    "attach_schedule",
    "use_derived_schedule",
    "rename_design",
    "parse_problem",
    "problem_text",
    "set_problem",
    "derived_problem",
    "set_problem_value",
    "blank_design",
    "set_resources",
    "update_problem",
    "set_stage_bytes",
    "retile_gemm",
    "FIX_EDITS",
    "apply_fix",
]

#: Bytes per element of each dtype (tile shape -> bytes per stage).
#: Pipeline types offered by the editor; "none" means not pipelined.
NOT_PIPELINED = "none"
#: Default compute op per memory (what a fresh resource of that memory holds).
DEFAULT_COMPUTE = {Memory.GMEM: "input", Memory.SMEM: "copy", Memory.TMEM: "mma"}
#: A fresh pipelined resource: one tma copy of 2048 float32 per stage, 4 stages.
NEW_STAGES, NEW_TILE = 4, (2048,)
ASYNC_DEFAULT_THREADS = 128


class EditError(DesignError):
    """An edit the studio cannot express; the message is shown to the user."""


# -- names -------------------------------------------------------------------------------------

def _names_in_use(d: Design) -> set[str]:
    return {x.name for x in (*d.resources, *d.groups, *d.tasks)}


def unique_name(d: Design, base: str) -> str:
    """``base_1``, ``base_2`` ... : the first that no resource, group or task has."""
    used = _names_in_use(d)
    i = 1
    while f"{base}_{i}" in used:
        i += 1
    return f"{base}_{i}"


def check_new_name(d: Design, new: str, what: str, old: str | None = None) -> str:
    new = (new or "").strip()
    problem = name_problem(new)
    if problem:
        raise EditError(f"{what} {problem}", code="name.identifier", hint="use a name like 'smem_a'")
    if new != old and new in _names_in_use(d):
        raise EditError(f"{what} name {new!r} is already used in design {d.name!r}; names must be unique",
                        code="design.duplicate_name", hint="pick another name")
    return new


def _rename_steps(nodes: Sequence[Any], old: str, new: str) -> tuple:
    out = []
    for n in nodes:
        if isinstance(n, Loop):
            out.append(Loop(n.start, n.stop, n.step, _rename_steps(n.body, old, new)))
        else:
            def sub(x):
                return (new if x == old else x)
            out.append(Step(n.op, sub(n.target), n.via, sub(n.group) if n.group else n.group,
                            tuple((k, sub(v)) for k, v in n.args)))
    return tuple(out)


def _rename_in_schedule(s: CapturedSchedule | None, old: str, new: str) -> CapturedSchedule | None:
    return None if s is None else CapturedSchedule(s.name, _rename_steps(s.nodes, old, new))


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


# -- groups --------------------------------------------------------------------------------------

def add_group(d: Design, name: str | None = None, members: Iterable[str] = (),
              mode: PipelineGroupMode | str = PipelineGroupMode.Merge) -> Design:
    name = check_new_name(d, name, "group") if name else unique_name(d, "group")
    return d.with_group(PipelineGroup.unchecked(name, [d.resource(m) for m in members], PipelineGroupMode(mode)))


def set_group(d: Design, name: str, *, members: Iterable[str] | None = None, mode: PipelineGroupMode | str | None = None,
              new_name: str | None = None) -> Design:
    g = d.group(name)
    mems = [d.resource(m) for m in members] if members is not None else [d.resource(m.name) if d.has_resource(m.name) else m
                                                                          for m in g.members]
    mode = PipelineGroupMode(mode) if mode is not None else g.mode
    new = check_new_name(d, new_name, "group", name) if new_name is not None else name
    group = PipelineGroup.unchecked(new, mems, mode, g.pipeline_config)
    groups = [group if x.name == name else x for x in d.groups]
    tasks = d.tasks
    if new != name:
        tasks = [Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources,
                                _rename_in_schedule(t.schedule, name, new)) for t in d.tasks]
    return d.replace(groups=groups, tasks=tasks)


def remove_group(d: Design, name: str) -> Design:
    d.group(name)
    return d.without_group(name)


# -- tasks ---------------------------------------------------------------------------------------

def add_task(d: Design, name: str | None = None, num_warps: int = 1) -> Design:
    """A task on the first free warps, with no resources yet (its schedule is derived)."""
    name = check_new_name(d, name, "task") if name else unique_name(d, "task")
    first = max((t.warp_idx + t.num_warps for t in d.tasks), default=0)
    return d.with_task(Task.unchecked(name, first, num_warps))


def set_task(d: Design, name: str, *, new_name: str | None = None, warp_idx: Any = None, num_warps: Any = None,
             src: Iterable[str] | None = None, dst: Iterable[str] | None = None) -> Design:
    t = d.task(name)
    new = check_new_name(d, new_name, "task", name) if new_name is not None else name
    w = _int(warp_idx, f"task {name!r}: warp_idx", 0) if warp_idx is not None else t.warp_idx
    n = _int(num_warps, f"task {name!r}: num_warps", 1) if num_warps is not None else t.num_warps
    task = Task.unchecked(new, w, n, list(src) if src is not None else t.src_resources,
                          list(dst) if dst is not None else t.dst_resources, t.schedule)
    return d.replace(tasks=[task if x.name == name else x for x in d.tasks])


def merge_tasks(d: Design, into: str, others: Iterable[str]) -> Design:
    """Task ``into`` takes over the resources of ``others`` (which go): one task then drives what
    they drove, on ``into``'s warps, with a derived schedule covering all of it."""
    t = d.task(into)
    gone = [d.task(n) for n in others if n != into]
    src = list(dict.fromkeys([*t.src_resources, *(r for g in gone for r in g.src_resources)]))
    dst = list(dict.fromkeys([*t.dst_resources, *(r for g in gone for r in g.dst_resources)]))
    for g in gone:
        d = d.without_task(g.name)
    return d.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, src, dst, None))


def remove_task(d: Design, name: str) -> Design:
    d.task(name)
    return d.without_task(name)


def attach_schedule(d: Design, task: str, schedule: Any) -> Design:
    """Attach a schedule written in Python: a ``@schedule`` function (its parameters are bound
    by name to the design's resources and groups), a bound one, or a ``CapturedSchedule``."""
    from ..errors import ScheduleError
    from ..model.capture import BoundSchedule, Schedule

    t = d.task(task)
    if isinstance(schedule, Schedule):
        pool: dict[str, Any] = {r.name: r for r in d.resources}
        pool.update({g.name: g for g in d.groups})
        for g in d.groups:  # a grouped resource is passed as group.member
            for m in g.member_names:
                if m in pool and g.member_names:
                    pool[m] = g.member(m)
        missing = [p for p in schedule.parameters() if p not in pool]
        if missing:
            raise EditError(f"schedule {schedule.name!r}: parameter(s) {', '.join(map(repr, missing))} name no "
                            f"resource or group of design {d.name!r} (have {', '.join(sorted(pool))})",
                            code="schedule.binding", hint="name the parameters after resources / groups, "
                            "or pass a bound schedule: my_schedule(studio.design.resource('smem_a'), ...)")
        schedule = schedule(*[pool[p] for p in schedule.parameters()])
    if isinstance(schedule, BoundSchedule):
        try:
            schedule = schedule.capture().schedule
        except ScheduleError as exc:
            raise EditError(str(exc), code=exc.code) from None
    if not isinstance(schedule, CapturedSchedule):
        raise EditError(f"cannot attach {type(schedule).__name__} as a schedule", code="task.schedule",
                        hint="pass a @schedule function, a bound one, or a CapturedSchedule")
    return d.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources, schedule))


def use_derived_schedule(d: Design, task: str) -> Design:
    """Drop an attached schedule: the task's schedule is derived again."""
    t = d.task(task)
    return d.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources, None))


# -- the design itself ---------------------------------------------------------------------------

def rename_design(d: Design, name: str) -> Design:
    problem = name_problem((name or "").strip())
    if problem:
        raise EditError(f"design {problem}", code="name.identifier", hint="use a name like 'my_gemm'")
    return d.replace(name=name.strip())


def parse_problem(text: str) -> tuple[tuple[str, Any], ...]:
    """``"num_tiles=64, num_k_tiles=8, dtype=float16"`` -> pairs (numbers become ints)."""
    out = []
    for part in text.replace(";", ",").replace("\n", ",").split(","):
        part = part.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key.isidentifier() or not value:
            raise EditError(f"problem entry {part!r} is not name=value", code="edit.problem",
                            hint="write it like num_tiles=64, num_k_tiles=8")
        try:
            out.append((key, int(value)))
        except ValueError:
            try:
                out.append((key, float(value)))
            except ValueError:
                out.append((key, value))
    return tuple(out)


def problem_text(d: Design) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.problem)


def set_problem(d: Design, text: str) -> Design:
    return d.replace(problem=derived_problem(parse_problem(text)))


#: Problem symbols that follow from others: GEMM tiles from M / N / K and the tile shape,
#: streaming tiles from the element counts.  An edit of a source symbol recomputes them.
def derived_problem(problem: Iterable[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
    """``problem`` with ``num_tiles`` / ``num_k_tiles`` recomputed from M, N, K, BM, BN, BK and SPLIT_K
    (a GEMM, ``problem.gemm_units``) or from num_elements and tile_elems (streaming), where those are whole numbers > 0."""
    p = dict(problem)

    def whole(*keys: str) -> bool:
        return all(isinstance(p.get(k), int) and not isinstance(p.get(k), bool) and p[k] > 0 for k in keys)

    splits = p["SPLIT_K"] if whole("SPLIT_K") else 1
    if whole("M", "N", "BM", "BN"):
        p["num_tiles"] = gemm_units(p["M"], p["N"], 1, p["BM"], p["BN"], 1, splits)[0]
    elif whole("num_elements", "tile_elems"):
        p["num_tiles"] = -(-p["num_elements"] // p["tile_elems"])
    if whole("K", "BK"):
        p["num_k_tiles"] = gemm_units(1, 1, p["K"], 1, 1, p["BK"], splits)[1]
    return tuple(p.items())


def set_problem_value(d: Design, key: str, value: Any) -> Design:
    """Set one problem symbol (text is read as a number when it is one); the symbols that follow
    from it are recomputed (``derived_problem``).  An empty value removes the symbol."""
    key = (key or "").strip()
    if not key.isidentifier():
        raise EditError(f"problem symbol {key!r} is not an identifier", code="edit.problem",
                        hint="use a name like M, BK or num_tiles")
    pairs = [(k, v) for k, v in d.problem if k != key]
    text = str(value).strip()
    if text:
        parsed = parse_problem(f"{key}={text}")[0][1]
        pairs = [(k, parsed if k == key else v) for k, v in d.problem] if key in d.problem_dict else [*pairs, (key, parsed)]
    return d.replace(problem=derived_problem(pairs))


def blank_design(name: str = "my_design") -> Design:
    """What ``Studio()`` opens when there is nothing to restore: an empty design of 64 tiles."""
    return Design(name, problem={"num_tiles": 64})


# -- fixes -----------------------------------------------------------------------------------------

#: The edits a diagnostic's ``Fix`` may name (``Fix.edit``): pure functions ``Design -> Design``.
def set_resources(d: Design, names: Iterable[str], **fields: Any) -> Design:
    """``set_resource(name, **fields)`` for each of ``names`` (one fix that changes several)."""
    for name in names:
        d = set_resource(d, name, **fields)
    return d


def update_problem(d: Design, **values: Any) -> Design:
    """``set_problem_value`` for each symbol; the symbols that follow are recomputed once each."""
    for key, value in values.items():
        d = set_problem_value(d, key, value)
    return d


def set_stage_bytes(d: Design, names: Iterable[str], num_bytes: int) -> Design:
    """The stages of ``names`` at ``num_bytes``: a one-dimensional tile follows (that many bytes of
    its dtype), and so does a streaming problem's ``tile_elems`` (and the ``num_tiles`` after it)."""
    names = tuple(names)
    for name in names:
        r = d.resource(name)
        elems, rest = divmod(num_bytes, DTYPE_BYTES.get(r.dtype, 1))
        tile = (elems,) if len(r.tile) <= 1 and r.dtype in DTYPE_BYTES and not rest else r.tile
        d = set_resource(d, name, tile=tile, num_bytes=num_bytes)
    dtypes = {d.resource(n).dtype for n in names}
    if "tile_elems" in d.problem_dict and len(dtypes) == 1 and dtypes <= set(DTYPE_BYTES):
        d = set_problem_value(d, "tile_elems", num_bytes // DTYPE_BYTES[dtypes.pop()])
    return d


def retile_gemm(d: Design, bm: int, bn: int, bk: int, spaces: Iterable[tuple[str, str]]) -> Design:
    """A GEMM design at a ``bm`` x ``bn`` x ``bk`` tile: the problem's BM, BN, BK (and the tile
    counts that follow), and each ``(resource, space)`` tile reshaped to its space -- "MK" is
    BM x BK, "KN" BK x BN, "NK" BN x BK, "MN" BM x BN -- with its bytes following its shape."""
    block = {"M": bm, "N": bn, "K": bk}
    d = update_problem(d, BM=bm, BN=bn, BK=bk)
    for name, space in spaces:
        d = set_resource(d, name, tile=tuple(block[x] for x in space))
    return d


FIX_EDITS = {f.__name__: f for f in (set_resource, set_resources, set_group, set_task, merge_tasks, remove_edge,
                                     use_derived_schedule, update_problem, retile_gemm, set_stage_bytes)}


def apply_fix(d: Design, fix: Fix) -> Design:
    """The design with ``fix`` applied, its derived schedules derived afresh (a fix that changes a
    group or a task changes what the derived schedules must say)."""
    try:
        edit = FIX_EDITS[fix.edit]
    except KeyError:
        raise EditError(f"fix {fix.label!r} names edit {fix.edit!r}, expected one of {', '.join(FIX_EDITS)}",
                        code="edit.fix") from None
    return derive_design(edit(d, *fix.args, **dict(fix.kwargs)))

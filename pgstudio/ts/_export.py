"""``to_ts(design)``: a readable TS script of a design, that TS's constructors and TaskManager accept.

The script has, in order: the problem shape; one resource class per resource (its work methods,
stubs to fill with CuTe DSL code) over a ``PgResource`` base that keeps what pgstudio knows and TS
does not (memory, element type, tile, what it computes, the buffer it views); the configs and
resources; the groups; the work queue of a persistent design; one ``@schedule`` function per
distinct schedule (tasks whose schedules differ only in their resources share one); the tasks;
the dependency graph; the SMEM allocator; the ``TaskManager``.  ``_convert.py`` documents the
schedule mapping, of which this module writes the inverse, so ``load(to_ts(d))`` gives ``d`` back.

A design that TS cannot express is refused with ``DesignError`` (code ``ts.export``) naming what:
a Fork of distinct buffers (TS forks one buffer), a schedule with two loops at one level or loops
three deep, a persistent design whose tasks loop over different tile counts, a work input that is
neither a value read in the schedule nor a global-memory tensor, a name the script itself uses.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DesignError
from ..model.config import PipelineConfig
from ..model.design import Design
from ..model.group import PipelineGroupMode
from ..model.kinds import AsyncProducerOp, OpKind, PipelineType
from ..model.resource import Memory, Resource
from ..model.schedule import PRODUCER_WORK, Loop, Step
from ._cooperative import CooperativeGroup

#: Names the script defines or imports itself; a design element may not take one.
RESERVED = frozenset({
    "dataclass", "Agent", "CooperativeGroup", "PipelineOp", "consumer_work", "domain_loop", "producer_work",
    "schedule", "work_tile_loop", "PipelineGroupMode", "TileSchedulerType", "SmemAllocation", "SmemAllocator",
    "PipelineGroup", "MemoryResource", "PipelineConfig", "TaskLocalVariable", "TileSchedulerConfig", "WorkQueue",
    "Task", "TaskManager", "design_name", "problem", "num_work_tiles", "PgResource", "tasks",
    "resource_dependency_graph", "smem_allocator", "task_manager", "resource", "stage_info", "self",
})
#: PgResource's defaults: a resource writes only the fields that differ.
DEFAULTS = {"memory": "smem", "dtype": "float32", "tile": (), "compute": "copy", "expr": "", "aliases": None,
            "stage_bytes": 0}
#: The work queue's bookkeeping at the end of each work tile (TS's persistent idiom).
NEXT_TILE = ("try_wait", "wait", "get_and_advance_work_tile", "release")


def _refuse(what: str, hint: str) -> DesignError:
    return DesignError(f"ts: {what}", code="ts.export", hint=hint)


def _lit(value: Any) -> str:
    """A Python literal, strings in double quotes (the house style of the script)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        inner = ", ".join(_lit(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def _bound(value: Any) -> str:
    return f"problem[{_lit(value)}]" if isinstance(value, str) else repr(value)


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) + "Resource"


# -- configs ----------------------------------------------------------------------------------

def _factory_call(cfg: PipelineConfig, where: str, indent: str) -> str:
    t = cfg.pipeline_type
    args = [f"num_stages={cfg.num_stages}"]
    if t.producer_kind is OpKind.TMA:
        args.append(f"num_bytes={cfg.num_bytes}")
    args += [f"producer_group={CooperativeGroup.text(cfg.producer_group)}",
             f"consumer_group={CooperativeGroup.text(cfg.consumer_group)}"]
    if t is not PipelineType.TmaAsync:
        args.append("cta_layout_vmnk=None")
    if cfg.async_producer_op is AsyncProducerOp.AsyncLoad:
        if t not in (PipelineType.AsyncAsync, PipelineType.AsyncUmma):
            raise _refuse(f"{where}: a {t} pipeline with async_producer_op=AsyncLoad cannot be written in TS (only "
                          f"async producers take producer_op)", "use AsyncThread for a non-async producer")
        args.append("producer_op=PipelineOp.AsyncLoad")
    kinds = f"{t.producer_kind.value}_{t.consumer_kind.value}"
    sizes = [a for a in args if a.startswith(("num_", "producer_group"))]
    rest = [a for a in args if a not in sizes]
    pad = f",\n{indent}    "
    return f"PipelineConfig.create_{kinds}_pipeline_cfg(\n{indent}    " + ", ".join(sizes) + pad + ", ".join(rest) + ")"


# -- schedules --------------------------------------------------------------------------------

@dataclass
class _Shape:
    """A task's schedule in TS's shape: steps before, the tile loop's head / domain loop / tail, after."""

    pre: list
    head: list
    loop: Loop
    tail: list
    post: list
    tiles: Any = None  # the work-tile count of a persistent schedule


def _split_one_loop(nodes: tuple, where: str) -> tuple[list, Loop | None, list]:
    loops = [i for i, n in enumerate(nodes) if isinstance(n, Loop)]
    if len(loops) > 1:
        raise _refuse(f"{where} has {len(loops)} loops side by side; TS allows one domain_loop per schedule",
                      "merge the loops, or split the work into two tasks")
    if not loops:
        return list(nodes), None, []
    i = loops[0]
    return list(nodes[:i]), nodes[i], list(nodes[i + 1:])


def _shape(schedule, where: str, persistent: bool) -> _Shape:
    pre, outer, post = _split_one_loop(schedule.nodes, where)
    if not persistent:
        loop = outer or Loop(0, 1, 1, tuple(pre + post))
        if outer is None:
            pre, post = [], []
        if any(isinstance(n, Loop) for n in loop.body):
            raise _refuse(f"{where} nests loops", "keep one loop level, or make the outer loop the work-tile loop")
        return _Shape(pre, [], loop, [], post)
    if outer is None or (outer.start, outer.step) != (0, 1):
        raise _refuse(f"{where} has no outer loop from 0 in steps of 1; a persistent TS design loops every task over "
                      f"its work tiles", "loop the task over the tiles: Loop(0, num_tiles, 1)")
    head, inner, tail = _split_one_loop(outer.body, where)
    if inner is None:
        inner, head, tail = Loop(0, 1, 1, tuple(head + tail)), [], []
    if any(isinstance(n, Loop) for n in inner.body):
        raise _refuse(f"{where} nests loops three deep; TS has a work-tile loop and one domain loop",
                      "flatten the innermost loop")
    return _Shape(pre, head, inner, tail, post, outer.stop)


@dataclass
class _Template:
    """One task's schedule written over parameters: what tasks with the same function share."""

    name: str
    params: list[tuple]  # ("bare", res) | ("member", res, group) | ("group", group) | ("queue",)
    lines: list[str]  # body lines over {0}, {1} ... parameter placeholders
    pyname: str = ""  # the Python function that writes it

    @property
    def key(self) -> tuple:
        return self.name, tuple(k[0] for k in self.params), tuple(self.lines)


@dataclass
class _Writer:
    design: Design
    persistent: bool
    queue: str
    params: list[tuple] = field(default_factory=list)
    latest: dict[str, str] = field(default_factory=dict)  # resource -> variable of its latest read
    used_reads: set = field(default_factory=set)

    def param(self, key: tuple) -> str:
        if key not in self.params:
            self.params.append(key)
        return "{" + str(self.params.index(key)) + "}"

    def target(self, step: Step) -> str:
        if step.via == "group":
            return self.param(("group", step.target))
        if step.via == "member":
            return self.param(("member", step.target, step.group))
        return self.param(("bare", step.target))

    def pipelined(self, name: str) -> bool:
        return self.design.has_resource(name) and self.design.resource(name).pipeline_config is not None

    def steps(self, steps: list, indent: str, where: str, uses: dict) -> list[str]:
        out = []
        for step in steps:
            head = self.target(step)
            if step.op == "read":
                var = f"{head}_value"
                self.latest[step.target] = var
                out.append(f"{indent}{var} = {head}.read()" if id(step) in uses else f"{indent}{head}.read()")
            elif step.op in PRODUCER_WORK:
                pos, kw = [], []
                for key, value in step.args:
                    token = self.token(value, step, indent, out, where)
                    (pos.append(token) if key.startswith("arg") and key[3:].isdigit() else kw.append(f"{key}={token}"))
                out.append(f"{indent}{head}.{uses.get(('method', id(step)), step.op)}({', '.join(pos + kw)})")
            else:
                out.append(f"{indent}{head}.{step.op}()")
        return out

    def token(self, value: str, step: Step, indent: str, out: list, where: str) -> str:
        if not self.design.has_resource(value):
            raise _refuse(f"{where}: {step} takes {value!r}, which is not a resource; TS passes values between work "
                          f"calls only as tokens", "pass a value read from a resource")
        if not self.pipelined(value):  # a global-memory read, spelled as TS spells it
            head = self.param(("bare", value))
            var = f"{head}_value"
            out.append(f"{indent}{var} = {head}.read()")
            return var
        if value not in self.latest:
            raise _refuse(f"{where}: {step} takes {value!r} without reading it first; TS routes values as tokens of "
                          f"consumer work", f"read it first: v = {value}.read(), then pass v")
        return self.latest[value]


def _uses(steps: list) -> dict:
    """Which reads' values a later work step takes (the latest read of each resource)."""
    latest: dict[str, int] = {}
    used: dict = {}
    for step in steps:
        if step.op == "read":
            latest[step.target] = id(step)
        elif step.op in PRODUCER_WORK:
            for _, value in step.args:
                if value in latest:
                    used[latest[value]] = True
    return used


def _template(task, shape: _Shape, design: Design, persistent: bool, methods: dict) -> _Template:
    """The schedule of ``task`` as TS lines over parameters.  ``persistent``: in a work-tile loop;
    otherwise the head and tail steps (one tile per CTA) sit before and after the domain loop."""
    where = f"task {task.name!r} (schedule {task.schedule.name!r})"
    w = _Writer(design, persistent, "")
    flat = [*shape.pre, *shape.head, *shape.loop.body, *shape.tail, *shape.post]
    uses = _uses(flat)
    for step in flat:
        if step.op in PRODUCER_WORK:
            uses[("method", id(step))] = methods[(step.target, step.op, tuple(k for k, _ in step.args))]
    lines = w.steps(shape.pre, "    ", where, uses)
    indent = "    "
    if persistent:
        lines.append("    with work_tile_loop({queue}):")
        indent = "        "
    lines += w.steps(shape.head, indent, where, uses)
    loop = shape.loop
    lines.append(f"{indent}with domain_loop({_bound(loop.start)}, {_bound(loop.stop)}, {_bound(loop.step)}):")
    lines += w.steps(list(loop.body), indent + "    ", where, uses) or [f"{indent}    pass"]
    lines += w.steps(shape.tail, indent, where, uses)
    if persistent:
        lines += [f"{indent}{{queue}}.{op}()" for op in NEXT_TILE]
    lines += w.steps(shape.post, "    ", where, uses)
    params = w.params + ([("queue",)] if persistent else [])
    return _Template(task.schedule.name, params, lines)


def _methods(design: Design) -> dict:
    """(resource, op, input names) -> method name: one method per distinct signature (TS routes
    every declared input of a work method, so each call site needs its own signature)."""
    seen: dict = {}
    count: dict = {}
    for task in design.tasks:
        for step in task.schedule.steps() if task.schedule else ():
            if step.op in PRODUCER_WORK:
                key = (step.target, step.op, tuple(k for k, _ in step.args))
                if key not in seen:
                    n = count.get(key[:2], 0) + 1
                    count[key[:2]] = n
                    seen[key] = step.op if n == 1 else f"{step.op}_{n}"
    return seen


def _reads(design: Design) -> set[str]:
    """Resources some schedule reads (or passes as a global-memory input): they get ``read``."""
    out: set[str] = set()
    for task in design.tasks:
        for step in task.schedule.steps() if task.schedule else ():
            if step.op == "read":
                out.add(step.target)
            if step.op in PRODUCER_WORK:
                out.update(v for _, v in step.args if design.has_resource(v))
    return out


# -- the script -------------------------------------------------------------------------------

def _check(design: Design) -> None:
    report = design.validate()
    errors = [d for d in report.errors if not d.code.startswith("codegen.")]
    if errors:
        raise _refuse(f"design {design.name!r} has {len(errors)} error(s), first: {errors[0].message}",
                      "export writes designs TS accepts: fix the errors first (pgstudio check)")
    for g in design.groups:
        if g.mode is PipelineGroupMode.Fork and not g.merged_config.aliased:
            raise _refuse(f"Fork {g.name!r} has members in distinct buffers; TS forks one buffer (its members view "
                          f"the buffer one producer loads once)", "declare the members as views of one buffer "
                          "(aliases=) or use per-resource barriers")
        cfg = g.pipeline_config
        if cfg is not None and cfg.pipeline_type.producer_kind is not OpKind.TMA and cfg.num_bytes:
            raise _refuse(f"group {g.name!r}: an explicit {cfg.pipeline_type} config with num_bytes cannot be written "
                          f"in TS (its factory takes no bytes)", "drop the explicit config; the group derives it")
    names = [r.name for r in design.resources] + [g.name for g in design.groups]
    clash = sorted(set(names) & RESERVED)
    if clash:
        raise _refuse(f"{', '.join(map(repr, clash))} is a name the TS script uses itself", "rename it")


def _resource_doc(r: Resource, design: Design) -> str:
    where = {Memory.GMEM: "global memory", Memory.SMEM: "shared memory", Memory.TMEM: "tensor memory"}[r.memory]
    what = f"{r.compute.op}({r.compute.expr})" if r.compute.expr else r.compute.op
    deps = design.deps(r.name)
    return f"{r.name}: {where}, {r.dtype}, {what}" + (f" of {', '.join(deps)}" if deps else "")


def _fields(r: Resource) -> list[str]:
    values = {"memory": r.memory.value, "dtype": r.dtype, "tile": tuple(r.tile), "compute": r.compute.op,
              "expr": r.compute.expr, "aliases": r.aliases,
              "stage_bytes": r.stage_bytes if r.pipeline_config is not None
              and r.pipeline_config.pipeline_type.producer_kind is not OpKind.TMA else 0}
    return [f"{k}={_lit(v)}" for k, v in values.items() if v != DEFAULTS[k]]


def _resource_class(r: Resource, design: Design, methods: dict, reads: set[str]) -> list[str]:
    lines = ["", "", "@dataclass(kw_only=True)", f"class {_camel(r.name)}(PgResource):",
             f'    """{_resource_doc(r, design)}."""']
    for (target, op, keys), method in methods.items():
        if target == r.name:
            params = "".join(f", {k}" for k in keys)
            lines += ["", "    @producer_work", f"    def {method}(self, stage_info{params}):", "        ..."]
    if r.name in reads:
        lines += ["", '    @consumer_work(returns="value")', "    def read(self, stage_info):", "        ..."]
    return lines


BASE = '''

@dataclass(kw_only=True)
class PgResource(MemoryResource):
    """A resource as pgstudio describes it: where it lives, its element type and tile, what it
    computes and the buffer it views.  TS does not use these fields; pgstudio reads them back."""

    memory: str = "smem"
    dtype: str = "float32"
    tile: tuple = ()
    compute: str = "copy"
    expr: str = ""
    aliases: str | None = None
    stage_bytes: int = 0  # bytes per stage of a pipeline whose TS factory takes none
    value: TaskLocalVariable = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.value = TaskLocalVariable(dtype=int, default=0, docs="what a consumer work call read")
        cfg = self.pipeline_config
        per_stage = self.stage_bytes or (cfg.num_bytes if cfg is not None else 0)
        owns_buffer = self.memory == "smem" and cfg is not None and self.aliases is None and per_stage > 0
        self.smem_data = [SmemAllocation(self.name, size_bytes=per_stage * cfg.num_stages, alignment=1024)] \\
            if owns_buffer else []

    def get_smem_requirements(self):
        return self.smem_data'''


def to_ts(design: Design) -> str:
    """The TS script of ``design`` (module docstring)."""
    _check(design)
    for task in design.tasks:
        if task.schedule is None:
            raise _refuse(f"task {task.name!r} has no schedule", "give every task a schedule")
    nested = any(isinstance(n, Loop) for t in design.tasks
                 for top in t.schedule.nodes if isinstance(top, Loop) for n in top.body)
    shapes = {t.name: _shape(t.schedule, f"task {t.name!r} (schedule {t.schedule.name!r})", nested)
              for t in design.tasks}
    tiles = {s.tiles for s in shapes.values()}
    if nested and len(tiles) > 1:
        counts = ", ".join(map(repr, sorted(tiles, key=str)))
        raise _refuse(f"the tasks loop over different work-tile counts ({counts}); a TS work queue hands every task "
                      f"the same tiles", "loop every task over the same tiles")
    # One tile per CTA with head / tail steps is TS's non-persistent shape; more tiles need the queue.
    one_tile = nested and tiles == {1} and any(s.head or s.tail for s in shapes.values()) \
        and not any(s.pre or s.post for s in shapes.values())
    persistent = nested and not one_tile
    taken = {*RESERVED, *(r.name for r in design.resources), *(g.name for g in design.groups)}
    queue = "work_queue"
    while queue in taken:
        queue += "_"
    methods = _methods(design)
    templates = [(t, _template(t, shapes[t.name], design, persistent, methods)) for t in design.tasks]
    out = [_header(design, persistent, tiles.pop() if persistent else None)]
    reads = _reads(design)
    out.append(BASE)
    for r in design.resources:
        out += _resource_class(r, design, methods, reads)
    out += ["", "", "# -- resources " + "-" * 87]
    for r in design.resources:
        args = ", ".join([f'name="{r.name}"', *_fields(r)])
        if r.pipeline_config is None:
            out.append(f"{r.name} = {_camel(r.name)}({args})")
        else:
            cfg = _factory_call(r.pipeline_config, f"resource {r.name!r}", "    ")
            out.append(f"{r.name} = {_camel(r.name)}({args},\n    pipeline_config={cfg})")
    for g in design.groups:
        args = [f'name="{g.name}"', f"members=[{', '.join(g.member_names)}]", f"mode=PipelineGroupMode.{g.mode.value}"]
        if g.pipeline_config is not None:
            args.append("pipeline_config=" + _factory_call(g.pipeline_config, f"group {g.name!r}", "    "))
        out.append(f"{g.name} = PipelineGroup({', '.join(args)})")
    if persistent:
        out += ["", "# The persistent loop over work tiles: TS's WorkQueue hands each CTA its next tile.",
                "# Its scheduler parameters (PersistentTileSchedulerParams) are CuTe DSL objects: the kernel's.",
                f'{queue} = WorkQueue(name="{queue}", tile_scheduler_config=TileSchedulerConfig('
                f"TileSchedulerType.StaticPersistent, None))"]
    out += ["", "", "# -- schedules " + "-" * 87]
    out += _schedules(templates, taken, queue)
    out += _tasks(templates, queue, persistent)
    out += _graph(design, queue, persistent)
    out += _allocator(design)
    return "\n".join(out) + "\n"


def _header(design: Design, persistent: bool, work_tiles: Any) -> str:
    problem = "{" + ", ".join(f"{_lit(k)}: {_lit(v)}" for k, v in design.problem) + "}"
    imports = [
        "from dataclasses import dataclass", "",
        "from cutlass.pipeline import Agent, CooperativeGroup" + (", PipelineOp" if _uses_async_load(design) else ""),
        "from cutlass.experimental.task_scheduling import consumer_work, domain_loop, producer_work, schedule"
        + (", work_tile_loop" if persistent else ""),
        "from cutlass.experimental.task_scheduling.enums import PipelineGroupMode"
        + (", TileSchedulerType" if persistent else ""),
        "from cutlass.experimental.task_scheduling.memory import SmemAllocation, SmemAllocator",
        "from cutlass.experimental.task_scheduling.pipeline_group import PipelineGroup",
        "from cutlass.experimental.task_scheduling.resources import MemoryResource, PipelineConfig, TaskLocalVariable"
        + (", TileSchedulerConfig, WorkQueue" if persistent else ""),
        "from cutlass.experimental.task_scheduling.task import Task",
        "from cutlass.experimental.task_scheduling.task_manager import TaskManager",
    ]
    lines = [f'"""{design.name}: a CUTLASS Task Scheduling (TS) script written by pgstudio (pgstudio export-ts).',
             "",
             "Run it where TS is installed (pip install nvidia-cutlass-dsl): TS builds its resources, groups,",
             "schedules and tasks, and TaskManager checks them on a CPU.  The work methods are stubs: fill them",
             "with CuTe DSL code (TMA copies, MMAs, stores) to run the kernel.  `pgstudio import-ts` reads it back.",
             "",
             "TS counts a CooperativeGroup's size in threads (arrivals) whatever its agent, so a group of two",
             "warps is written CooperativeGroup(Agent.Warp, 64).",
             '"""', "", *imports, "",
             "# pgstudio reads these three names back; TS does not use them.  Loop bounds use the problem shape.",
             f'design_name = "{design.name}"', f"problem = {problem}"]
    if persistent:
        lines.append(f"num_work_tiles = {_lit(work_tiles)}")
    return "\n".join(lines)


def _uses_async_load(design: Design) -> bool:
    cfgs = [r.pipeline_config for r in design.resources] + [g.pipeline_config for g in design.groups]
    return any(c is not None and c.async_producer_op is AsyncProducerOp.AsyncLoad for c in cfgs)


def _param_names(tpl: _Template, task, shared: bool) -> list[str]:
    names: list[str] = []
    for key in tpl.params:
        if key[0] == "queue":
            base = "work_queue"
        elif not shared:
            base = key[1]
        elif key[0] == "group":
            base = "group"
        else:
            base = "dst" if key[1] in task.dst_resources else "src" if key[1] in task.src_resources else "res"
        name, n = base, 2
        while name in names:
            name, n = f"{base}{n}", n + 1
        names.append(name)
    return names


def _schedules(templates: list, taken: set, queue: str) -> list[str]:
    out: list[str] = []
    functions: dict[tuple, str] = {}
    used: set[str] = set(taken)
    count: dict[tuple, int] = {}
    for _, tpl in templates:
        count[tpl.key] = count.get(tpl.key, 0) + 1
    for task, tpl in templates:
        if tpl.key in functions:
            tpl.pyname = functions[tpl.key]
            continue
        params = _param_names(tpl, task, shared=count[tpl.key] > 1)
        pyname, n = tpl.name, 2
        while pyname in used:
            pyname, n = f"{tpl.name}_{n}", n + 1
        used.add(pyname)
        functions[tpl.key] = tpl.pyname = pyname
        body = [line.format(*params, queue=params[-1] if params else queue) for line in tpl.lines]
        head = f"def {pyname}({', '.join(params)}):"
        if pyname == tpl.name:
            out += ["", "", "@schedule", head, *body]
        else:  # a second schedule of one name: keep the name pgstudio knows it by
            out += ["", "", head, *body, f'{pyname}.__name__ = "{tpl.name}"  # the schedule\'s name in pgstudio',
                    f"{pyname} = schedule({pyname})"]
    return out


def _call_arg(key: tuple, queue: str) -> str:
    if key[0] == "queue":
        return queue
    if key[0] == "member":
        return f"{key[2]}.{key[1]}"
    return key[1]


def _tasks(templates: list, queue: str, persistent: bool) -> list[str]:
    out = ["", "", "# -- tasks " + "-" * 91, "tasks = ["]
    for task, tpl in templates:
        src = [*task.src_resources, *([queue] if persistent else [])]
        call = f"{tpl.pyname}({', '.join(_call_arg(k, queue) for k in tpl.params)})"
        out.append(f'    Task(name="{task.name}", src_resources=[{", ".join(src)}], '
                   f'dst_resources=[{", ".join(task.dst_resources)}],\n'
                   f"         warp_idx={task.warp_idx}, num_warps={task.num_warps}, schedule={call}),")
    out.append("]")
    return out


def _graph(design: Design, queue: str, persistent: bool) -> list[str]:
    out = ["resource_dependency_graph = {"]
    out += [f"    {k}: [{', '.join(deps)}]," for k, deps in design.graph]
    if persistent:
        out.append(f"    {queue}: [],")
    out.append("}")
    return out


def _allocator(design: Design) -> list[str]:
    pipelined = [r.name for r in design.resources if r.pipeline_config is not None]
    out = ["", "# Shared memory: data buffers, then barriers (a group owns its members' barriers).",
           "smem_allocator = SmemAllocator()"]
    if pipelined:
        out += [f"for resource in ({', '.join(pipelined)}{',' if len(pipelined) == 1 else ''}):",
                "    smem_allocator.add_resource(resource)"]
    out += [f"smem_allocator.add_pipeline_group({g.name})" for g in design.groups]
    out += ["smem_allocator.compute_layout()", "",
            "task_manager = TaskManager(tasks=tasks, resource_dependency_graph=resource_dependency_graph,",
            "                           smem_allocator=smem_allocator, verbose=False)",
            'print(f"TaskManager accepted {design_name}: {len(tasks)} tasks")']
    return out


def run_export_ts(design_path: str, out: str | None = None) -> int:
    """``pgstudio export-ts design.json [--out script.py]``: write the design's TS script (to
    stdout without ``--out``)."""
    from ..errors import PgStudioError
    p = Path(design_path)
    if not p.is_file():
        raise PgStudioError(f"no design file at {design_path!r}")
    text = to_ts(Design.from_json(p.read_bytes()))
    ast.parse(text)  # what we write is Python
    if out:
        Path(out).write_text(text)
        print(f"wrote {out}")
    else:
        print(text, end="")
    return 0


__all__ = ["RESERVED", "run_export_ts", "to_ts"]

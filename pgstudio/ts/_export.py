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

from typing import Any

from ..analysis.validate import validate
from ..model.config import PipelineConfig
from ..model.design import Design
from ..model.group import PipelineGroupMode
from ..model.kinds import AsyncProducerOp, OpKind, PipelineType
from ..model.resource import Memory, Resource
from ..model.schedule import Loop
from ._agents import WARP_GROUPS, warp_groups_text
from ._cooperative import CooperativeGroup
from ._export_schedule import call_arg, reads, schedule_functions, shape, template, work_methods
from ._script_text import BUILTIN_NAMES, SCRIPT_NAMES, integer, lit, member, name, refuse

#: Names the script defines or imports itself; a design element may not take one.
RESERVED = SCRIPT_NAMES | BUILTIN_NAMES
#: PgResource's defaults: a resource writes only the fields that differ.
DEFAULTS = {"memory": "smem", "dtype": "float32", "tile": (), "compute": "copy", "expr": "", "aliases": None,
            "stage_bytes": 0}


def _camel(word: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in word.split("_") if part) + "Resource"


# -- configs ----------------------------------------------------------------------------------

def _factory_call(cfg: PipelineConfig, where: str, indent: str) -> str:
    t = cfg.pipeline_type
    t = PipelineType(member(getattr(t, "value", t), tuple(p.value for p in PipelineType), f"{where}: pipeline type"))
    args = [f"num_stages={integer(cfg.num_stages, f'{where}: num_stages')}"]
    if t.producer_kind is OpKind.TMA:
        args.append(f"num_bytes={integer(cfg.num_bytes, f'{where}: num_bytes')}")
    args += [f"producer_group={CooperativeGroup.text(cfg.producer_group)}",
             f"consumer_group={CooperativeGroup.text(cfg.consumer_group)}"]
    args.append("cta_layout_vmnk=(1, 1, 1, 1)")  # one CTA; TS's resource set-up reads a shape on every factory
    if cfg.async_producer_op is AsyncProducerOp.AsyncLoad:
        if t not in (PipelineType.AsyncAsync, PipelineType.AsyncUmma):
            raise refuse(f"{where}: a {t} pipeline with async_producer_op=AsyncLoad cannot be written in TS (only "
                          f"async producers take producer_op)", "use AsyncThread for a non-async producer")
        args.append("producer_op=PipelineOp.AsyncLoad")
    kinds = f"{t.producer_kind.value}_{t.consumer_kind.value}"
    sizes = [a for a in args if a.startswith(("num_", "producer_group"))]
    rest = [a for a in args if a not in sizes]
    pad = f",\n{indent}    "
    return f"PipelineConfig.create_{kinds}_pipeline_cfg(\n{indent}    " + ", ".join(sizes) + pad + ", ".join(rest) + ")"


# -- the script -------------------------------------------------------------------------------

def _check(design: Design) -> None:
    report = validate(design)
    errors = [d for d in report.errors if not d.code.startswith("codegen.")]
    if errors:
        raise refuse(f"design {design.name!r} has {len(errors)} error(s), first: {errors[0].message}",
                      "export writes designs TS accepts: fix the errors first (pgstudio check)")
    for g in design.groups:
        if g.mode is PipelineGroupMode.Fork and not g.merged_config.aliased:
            raise refuse(f"Fork {g.name!r} has members in distinct buffers; TS forks one buffer (its members view "
                          f"the buffer one producer loads once)", "declare the members as views of one buffer "
                          "(aliases=) or use per-resource barriers")
        cfg = g.pipeline_config
        if cfg is not None and cfg.pipeline_type.producer_kind is not OpKind.TMA and cfg.num_bytes:
            raise refuse(f"group {g.name!r}: an explicit {cfg.pipeline_type} config with num_bytes cannot be written "
                          f"in TS (its factory takes no bytes)", "drop the explicit config; the group derives it")
    _check_names(design)


def _check_names(design: Design) -> None:
    """Every name the script writes as Python is a checked name (``_script_text``)."""
    name(design.name, "design name")
    classes: dict[str, str] = {}
    for r in design.resources:
        name(r.name, "resource name")
        cls = _camel(r.name)
        if cls in classes or cls in RESERVED:
            raise refuse(f"resources {classes.get(cls, cls)!r} and {r.name!r} both give the class name {cls!r}",
                         "rename one of them")
        classes[cls] = r.name
        if r.aliases is not None:
            name(r.aliases, f"resource {r.name!r}: aliases")
    for g in design.groups:
        name(g.name, "group name")
        for m in g.member_names:
            name(m, f"group {g.name!r}: member name")
    for t in design.tasks:
        name(t.name, "task name")
        integer(t.warp_idx, f"task {t.name!r}: warp_idx")
        integer(t.num_warps, f"task {t.name!r}: num_warps")
        for r in (*t.src_resources, *t.dst_resources):
            name(r, f"task {t.name!r}: resource name")
    for k, deps in design.graph:
        for x in (k, *deps):
            name(x, "graph resource name")
    for k, v in design.problem:
        lit(k, "problem key")
        lit(v, f"problem[{k!r}]")


def _resource_doc(r: Resource, design: Design) -> str:
    """The class docstring: checked names and fixed words only (the free text -- dtype, compute op,
    expression -- is in the fields below it, as literals)."""
    where = {Memory.GMEM: "global memory", Memory.SMEM: "shared memory", Memory.TMEM: "tensor memory"}[r.memory]
    deps = [name(x, f"resource {r.name!r}: input name") for x in design.deps(r.name)]
    return f"{r.name}: {where}" + (f", computed from {', '.join(deps)}" if deps else "")


def _fields(r: Resource) -> list[str]:
    values = {"memory": r.memory.value, "dtype": r.dtype, "tile": tuple(r.tile), "compute": r.compute.op,
              "expr": r.compute.expr, "aliases": r.aliases,
              "stage_bytes": r.stage_bytes if r.pipeline_config is not None
              and r.pipeline_config.pipeline_type.producer_kind is not OpKind.TMA else 0}
    return [f"{k}={lit(v, f'resource {r.name!r}: {k}')}" for k, v in values.items() if v != DEFAULTS[k]]


def _resource_class(r: Resource, design: Design, methods: dict, reads: set[str]) -> list[str]:
    lines = ["", "", "@dataclass(kw_only=True)", f"class {_camel(r.name)}(PgResource):",
             f'    """{_resource_doc(r, design)}."""']
    for (target, _op, keys), method in methods.items():
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
            raise refuse(f"task {task.name!r} has no schedule", "give every task a schedule")
    nested = any(isinstance(n, Loop) for t in design.tasks
                 for top in t.schedule.nodes if isinstance(top, Loop) for n in top.body)
    shapes = {t.name: shape(t.schedule, f"task {t.name!r} (schedule {t.schedule.name!r})", nested)
              for t in design.tasks}
    tiles = {s.tiles for s in shapes.values()}
    if nested and len(tiles) > 1:
        counts = ", ".join(map(repr, sorted(tiles, key=str)))
        raise refuse(f"the tasks loop over different work-tile counts ({counts}); a TS work queue hands every task "
                      f"the same tiles", "loop every task over the same tiles")
    # One tile per CTA with head / tail steps is TS's non-persistent shape; more tiles need the queue.
    one_tile = nested and tiles == {1} and any(s.head or s.tail for s in shapes.values()) \
        and not any(s.pre or s.post for s in shapes.values())
    persistent = nested and not one_tile
    taken = {*RESERVED, *(r.name for r in design.resources), *(g.name for g in design.groups)}
    queue = "work_queue"
    while queue in taken:
        queue += "_"
    methods = work_methods(design)
    templates = [(t, template(t, shapes[t.name], design, persistent, methods)) for t in design.tasks]
    out = [_header(design, persistent, tiles.pop() if persistent else None)]
    read_by = reads(design)
    out.append(BASE)
    for r in design.resources:
        out += _resource_class(r, design, methods, read_by)
    out += ["", "", "# -- resources " + "-" * 87]
    for r in design.resources:
        args = ", ".join([f"name={lit(r.name)}", *_fields(r)])
        if r.pipeline_config is None:
            out.append(f"{r.name} = {_camel(r.name)}({args})")
        else:
            cfg = _factory_call(r.pipeline_config, f"resource {r.name!r}", "    ")
            out.append(f"{r.name} = {_camel(r.name)}({args},\n    pipeline_config={cfg})")
    for g in design.groups:
        mode = member(g.mode.value, tuple(m.value for m in PipelineGroupMode), f"group {g.name!r}: mode")
        args = [f"name={lit(g.name)}", f"members=[{', '.join(g.member_names)}]", f"mode=PipelineGroupMode.{mode}"]
        if g.pipeline_config is not None:
            args.append("pipeline_config=" + _factory_call(g.pipeline_config, f"group {g.name!r}", "    "))
        out.append(f"{g.name} = PipelineGroup({', '.join(args)})")
    if persistent:
        out += ["", "# The persistent loop over work tiles: TS's WorkQueue hands each CTA its next tile.",
                "# Its scheduler parameters (PersistentTileSchedulerParams) are CuTe DSL objects: the kernel's.",
                f'{queue} = WorkQueue(name="{queue}", tile_scheduler_config=TileSchedulerConfig('
                f"TileSchedulerType.StaticPersistent, None))"]
    out += ["", "", "# -- schedules " + "-" * 87]
    out += schedule_functions(templates, taken, queue)
    out += _tasks(templates, queue, persistent)
    out += _graph(design, queue, persistent)
    out += _allocator(design)
    return "\n".join(out) + "\n"


def _header(design: Design, persistent: bool, work_tiles: Any) -> str:
    problem = "{" + ", ".join(f"{lit(k, 'problem key')}: {lit(v, 'problem value')}" for k, v in design.problem) + "}"
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
             "Every CooperativeGroup is written with Agent.Thread and its thread count (a group of two warps",
             "is CooperativeGroup(Agent.Thread, 64)): TS's checks and TS's barrier initialisation read it alike.",
             '"""', "", *imports, "",
             "# pgstudio reads these names back; TS does not use them.  Loop bounds use the problem shape.",
             f"design_name = {lit(design.name)}", f"problem = {problem}"]
    if persistent:
        lines.append(f"num_work_tiles = {lit(work_tiles)}")
    warps = warp_groups_text(design)
    if warps:
        table = ", ".join(f"{lit(name(k, 'warp group owner'))}: [{', '.join(lit(s) for s in v)}]"
                          for k, v in warps.items())
        lines += ["# The cooperative groups pgstudio counts in warps (each written above as its thread count).",
                  f"{WARP_GROUPS} = {{{table}}}"]
    return "\n".join(lines)


def _uses_async_load(design: Design) -> bool:
    cfgs = [r.pipeline_config for r in design.resources] + [g.pipeline_config for g in design.groups]
    return any(c is not None and c.async_producer_op is AsyncProducerOp.AsyncLoad for c in cfgs)


def _tasks(templates: list, queue: str, persistent: bool) -> list[str]:
    out = ["", "", "# -- tasks " + "-" * 91, "tasks = ["]
    for task, tpl in templates:
        src = [*task.src_resources, *([queue] if persistent else [])]
        call = f"{tpl.pyname}({', '.join(call_arg(k, queue) for k in tpl.params)})"
        out.append(f'    Task(name={lit(task.name)}, src_resources=[{", ".join(src)}], '
                   f'dst_resources=[{", ".join(task.dst_resources)}],\n'
                   f"         warp_idx={lit(task.warp_idx)}, num_warps={lit(task.num_warps)}, schedule={call}),")
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


__all__ = ["RESERVED", "to_ts"]

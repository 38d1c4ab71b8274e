"""Design <-> JSON, with a schema version.

Loading never executes anything: no pickle, no eval, schedules are plain step lists.  Malformed
input, unknown fields, unknown versions and values outside the value domain (``limits``: a file
larger than 8 MB, more than 1024 resources, 0 or a billion stages, NaN in the problem, a 10,000
character name) are rejected with ``DesignError`` naming the field path
(``resources[2].pipeline_config: num_stages is 0, ...``), before anything large is built.  A
well-formed file holding a wrong design (a bad group, a schedule breaking a rule) loads, so
``validate()`` can say what is wrong: every command handles such a file.

``Design.to_json`` / ``Design.from_json`` call these functions and pass the class to build, so
this module needs no import of ``design`` (the two would otherwise import each other).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ..errors import DesignError
from .config import CooperativeGroup, PipelineConfig
from .group import PipelineGroup
from .kinds import Agent, AsyncProducerOp, PipelineType
from .limits import (MAX_ARGS, MAX_FILE_BYTES, MAX_GROUPS, MAX_PROBLEM_ENTRIES, MAX_RESOURCES, MAX_STEPS, MAX_TASKS,
                     MAX_TEXT_CHARS, check_count)
from .names import check_word, name_problem
from .problem import HINT as PROBLEM_HINT
from .problem import entry_problem
from .protocol import PipelineGroupMode
from .resource import RESOURCE_CLASSES, Compute
from .schedule import ALL_OPS, VIAS, CapturedSchedule, Loop, Step
from .targets import DEFAULT_TARGETS
from .task import Task

__all__ = ["SCHEMA", "VERSION", "design_to_dict", "design_to_json", "design_from_dict", "design_from_json"]

SCHEMA = "pgstudio.design"
VERSION = 1


# -- writing -----------------------------------------------------------------------------------

def _group_json(g: CooperativeGroup) -> dict:
    return {"agent": g.agent.value, "size": g.size}


def _config_json(c: PipelineConfig | None) -> dict | None:
    if c is None:
        return None
    return {"pipeline_type": c.pipeline_type.value, "num_stages": c.num_stages, "num_bytes": c.num_bytes,
            "producer_group": _group_json(c.producer_group), "consumer_group": _group_json(c.consumer_group),
            "async_producer_op": c.async_producer_op.value}


def _node_json(n) -> dict:
    if isinstance(n, Loop):
        return {"loop": [n.start, n.stop, n.step], "body": [_node_json(b) for b in n.body]}
    return {"op": n.op, "target": n.target, "via": n.via, "group": n.group, "args": [list(a) for a in n.args]}


def design_to_dict(d: Any) -> dict:
    targets = {} if d.targets == DEFAULT_TARGETS else {"targets": list(d.targets)}  # optional key
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "name": d.name,
        "problem": dict(d.problem),
        **targets,
        "resources": [{"name": r.name, "memory": r.memory.value, "dtype": r.dtype, "tile": list(r.tile),
                       "aliases": r.aliases, "compute": {"op": r.compute.op, "expr": r.compute.expr},
                       "pipeline_config": _config_json(r.pipeline_config)} for r in d.resources],
        "graph": {k: list(v) for k, v in d.graph},
        "groups": [{"name": g.name, "mode": g.mode.value, "members": list(g.member_names),
                    "pipeline_config": _config_json(g.pipeline_config)} for g in d.groups],
        "tasks": [{"name": t.name, "warp_idx": t.warp_idx, "num_warps": t.num_warps,
                   "src_resources": list(t.src_resources), "dst_resources": list(t.dst_resources),
                   "schedule": None if t.schedule is None else
                   {"name": t.schedule.name, "nodes": [_node_json(n) for n in t.schedule.nodes]}} for t in d.tasks],
    }


def design_to_json(d: Any, indent: int | None = 2) -> str:
    return json.dumps(design_to_dict(d), indent=indent)


# -- reading -----------------------------------------------------------------------------------

class _Reader:
    """Typed access to a JSON object, naming the path of anything wrong."""

    def __init__(self, obj: Any, path: str) -> None:
        if not isinstance(obj, dict):
            raise DesignError(f"{path or 'design file'}: expected an object, got {type(obj).__name__}", code="json.type")
        self.obj, self.path = obj, path

    def _p(self, key: str) -> str:
        return f"{self.path}.{_key(key)}" if self.path else _key(key)

    def only(self, *allowed: str) -> None:
        unknown = sorted(set(self.obj) - set(allowed))
        if unknown:
            raise DesignError(f"{self._p(unknown[0])}: unknown field; allowed here: {', '.join(allowed)}",
                              code="json.unknown_field", hint="remove it (a newer pgstudio may have written it)")

    def get(self, key: str, kind: type | tuple, default: Any = ..., check: Callable[[Any], str | None] | None = None) -> Any:
        if key not in self.obj:
            if default is ...:
                raise DesignError(f"{self._p(key)}: missing field", code="json.missing")
            return default
        value = self.obj[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if (bool not in kinds and isinstance(value, bool)) or not isinstance(value, kinds):
            names = " or ".join(k.__name__ if k is not type(None) else "null" for k in kinds)
            raise DesignError(f"{self._p(key)}: expected {names}, got {_show(value)}", code="json.type")
        if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
            raise DesignError(f"{self._p(key)}: {len(value)} characters, expected at most {MAX_TEXT_CHARS}",
                              code="json.value", hint="shorten it")
        if check is not None:
            problem = check(value)
            if problem:
                raise DesignError(f"{self._p(key)}: {problem}", code="json.value")
        return value

    def enum(self, key: str, enum: type, default: Any = ...) -> Any:
        value = self.get(key, str, default)
        if isinstance(value, enum):
            return value
        try:
            return enum(value)
        except ValueError:
            allowed = ", ".join(e.value for e in enum)
            raise DesignError(f"{self._p(key)}: {value!r} is not one of {allowed}", code="json.value") from None


def _key(key: str) -> str:
    """A field name for a message path: as is when it is a plain name, else quoted and shortened
    (a key of the file may hold a newline, an escape sequence or a megabyte)."""
    return key if key.isidentifier() and len(key) <= 64 else _show(key)


def _show(value: Any) -> str:
    """A short quote of a JSON value for a message (a file may hold megabytes in one field)."""
    text = json.dumps(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _list(r: _Reader, key: str, high: int, default: Any = ...) -> list:
    """A list field of at most ``high`` items (checked before anything is built from it)."""
    items = r.get(key, list, default)
    check_count(len(items), r._p(key), high, "json.size")
    return items


def _at(path: str, build: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``build(*args, **kwargs)``: one element, naming ``path`` in any DesignError its constructor raises."""
    try:
        return build(*args, **kwargs)
    except DesignError as exc:
        raise DesignError(f"{path}: {exc}", code=exc.code or "json.value") from None


def _name_check(v: str) -> str | None:
    return name_problem(v)


def _names(r: _Reader, key: str) -> list[str]:
    items = _list(r, key, MAX_RESOURCES, [])
    for i, x in enumerate(items):
        if not isinstance(x, str) or len(x) > MAX_TEXT_CHARS:
            raise DesignError(f"{r._p(key)}[{i}]: expected a name, got {_show(x)}", code="json.type")
    return items


def _cgroup(obj: Any, path: str) -> CooperativeGroup:
    r = _Reader(obj, path)
    r.only("agent", "size")
    agent, size = r.enum("agent", Agent), r.get("size", int)
    return _at(path, lambda: CooperativeGroup(agent, size))


def _config(obj: Any, path: str) -> PipelineConfig | None:
    if obj is None:
        return None
    r = _Reader(obj, path)
    r.only("pipeline_type", "num_stages", "num_bytes", "producer_group", "consumer_group", "async_producer_op")
    fields = dict(
        pipeline_type=r.enum("pipeline_type", PipelineType), num_stages=r.get("num_stages", int),
        num_bytes=r.get("num_bytes", int), producer_group=_cgroup(r.get("producer_group", dict), f"{path}.producer_group"),
        consumer_group=_cgroup(r.get("consumer_group", dict), f"{path}.consumer_group"),
        async_producer_op=r.enum("async_producer_op", AsyncProducerOp, AsyncProducerOp.AsyncThread))
    return _at(path, lambda: PipelineConfig(**fields))


def _node(obj: Any, path: str):
    r = _Reader(obj, path)
    if "loop" in r.obj:
        r.only("loop", "body")
        bounds = r.get("loop", list)
        if len(bounds) != 3 or not all(isinstance(b, (int, str)) and not isinstance(b, bool) for b in bounds):
            raise DesignError(f"{path}.loop: expected [start, stop, step] of integers or symbol names", code="json.value")
        body = _list(r, "body", MAX_STEPS)
        nodes = tuple(_node(b, f"{path}.body[{i}]") for i, b in enumerate(body))
        return _at(path, lambda: Loop(*bounds, nodes))
    r.only("op", "target", "via", "group", "args")
    op = r.get("op", str, check=lambda v: None if v in ALL_OPS else f"{v!r} is not one of {', '.join(ALL_OPS)}")
    via = r.get("via", str, "bare", check=lambda v: None if v in VIAS else f"{v!r} is not one of {', '.join(VIAS)}")
    args = _list(r, "args", MAX_ARGS, [])
    pairs = []
    for i, a in enumerate(args):
        if not (isinstance(a, list) and len(a) == 2 and all(isinstance(x, str) and len(x) <= MAX_TEXT_CHARS for x in a)):
            raise DesignError(f"{path}.args[{i}]: expected [name, value] strings", code="json.type")
        pairs.append(tuple(a))
    target, group = r.get("target", str), r.get("group", (str, type(None)), None)
    return _at(path, lambda: Step(op, target, via, group, tuple(pairs)))


def design_from_dict(obj: Any, design_class: type) -> Any:
    """A design from its JSON object, each part read by its own reader below; every refusal names
    the path of the field (``resources[2].tile``), the value and what was expected."""
    r = _Reader(obj, "")
    r.only("schema", "version", "name", "problem", "targets", "resources", "graph", "groups", "tasks")
    schema = r.get("schema", str)
    if schema != SCHEMA:
        raise DesignError(f"schema: {schema!r} is not a pgstudio design (expected {SCHEMA!r})", code="json.schema")
    version = r.get("version", int)
    if version != VERSION:
        raise DesignError(f"version: {version} is not supported (this pgstudio reads version {VERSION})",
                          code="json.version", hint="upgrade pgstudio to read newer files")
    problem = _problem(r)
    resources = {}
    for i, ro in enumerate(_list(r, "resources", MAX_RESOURCES, [])):
        res = _resource(ro, f"resources[{i}]")
        if res.name in resources:
            raise DesignError(f"resources[{i}].name: {res.name!r} appears twice", code="json.value")
        resources[res.name] = res
    graph = _graph(r)

    def resource(name: str, path: str):
        if name not in resources:
            raise DesignError(f"{path}: {name!r} is not a resource of this file (have {', '.join(resources) or 'none'})",
                              code="json.reference")
        return resources[name]

    groups = []
    for i, go in enumerate(_list(r, "groups", MAX_GROUPS, [])):
        gr = _Reader(go, f"groups[{i}]")
        gr.only("name", "mode", "members", "pipeline_config")
        members = [resource(m, f"groups[{i}].members[{j}]") for j, m in enumerate(_names(gr, "members"))]
        gname, mode = gr.get("name", str, check=_name_check), gr.enum("mode", PipelineGroupMode)
        gcfg = _config(gr.get("pipeline_config", (dict, type(None)), None), f"groups[{i}].pipeline_config")
        groups.append(_at(f"groups[{i}]", PipelineGroup.unchecked, gname, members, mode, gcfg))
    tasks = [_task(to, f"tasks[{i}]") for i, to in enumerate(_list(r, "tasks", MAX_TASKS, []))]
    name = r.get("name", str, check=_name_check)
    targets = _names(r, "targets") if "targets" in r.obj else DEFAULT_TARGETS
    return _at("design", lambda: design_class(name, resources.values(), graph, groups, tasks, problem, targets))


def _problem(r: "_Reader") -> dict:
    problem = r.get("problem", dict, {})
    check_count(len(problem), "problem", MAX_PROBLEM_ENTRIES, "json.size")
    for k, v in problem.items():
        if not isinstance(v, (int, float, str)) or isinstance(v, bool):
            raise DesignError(f"problem.{_key(k)}: expected a number or a string, got {_show(v)}", code="json.type")
        why = entry_problem(k, v)
        if why:
            raise DesignError(f"problem.{_key(k)}: {why}", code="json.value", hint=PROBLEM_HINT)
    return problem


def _resource(ro: Any, path: str) -> Any:
    rr = _Reader(ro, path)
    rr.only("name", "memory", "dtype", "tile", "aliases", "compute", "pipeline_config")
    name = rr.get("name", str, check=_name_check)
    memory = rr.get("memory", str, check=lambda v: None if v in RESOURCE_CLASSES else
                    f"{v!r} is not one of {', '.join(RESOURCE_CLASSES)}")
    comp = _Reader(rr.get("compute", dict, {"op": "copy"}), f"{path}.compute")
    comp.only("op", "expr")
    op, expr = comp.get("op", str), comp.get("expr", str, "")
    compute = _at(f"{path}.compute", Compute, op, expr)
    tile = rr.get("tile", list, [])
    if not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in tile):
        raise DesignError(f"{path}.tile: expected positive integers, got {_show(tile)}", code="json.type")
    fields = dict(
        name=name, pipeline_config=_config(rr.get("pipeline_config", (dict, type(None)), None), f"{path}.pipeline_config"),
        compute=compute, dtype=rr.get("dtype", str, "float32"),
        tile=tuple(tile), aliases=rr.get("aliases", (str, type(None)), None))
    return _at(path, RESOURCE_CLASSES[memory], **fields)


def _graph(r: "_Reader") -> dict:
    graph = {}
    graph_obj = r.get("graph", dict, {})
    check_count(len(graph_obj), "graph", MAX_RESOURCES, "json.size")
    for k, deps in graph_obj.items():
        if not isinstance(deps, list) or not all(isinstance(x, str) for x in deps):
            raise DesignError(f"graph.{_key(k)}: expected a list of resource names", code="json.type")
        check_count(len(deps), f"graph.{_key(k)}", MAX_RESOURCES, "json.size")
        for x in (k, *deps):
            _at(f"graph.{_key(k)}", check_word, x, "name", "graph.unknown")
        graph[k] = deps
    return graph


def _task(to: Any, path: str) -> Any:
    tr = _Reader(to, path)
    tr.only("name", "warp_idx", "num_warps", "src_resources", "dst_resources", "schedule")
    so = tr.get("schedule", (dict, type(None)), None)
    sched = None
    if so is not None:
        sr = _Reader(so, f"{path}.schedule")
        sr.only("name", "nodes")
        sname = sr.get("name", str)
        nodes = tuple(_node(n, f"{path}.schedule.nodes[{j}]") for j, n in enumerate(_list(sr, "nodes", MAX_STEPS)))
        sched = _at(f"{path}.schedule", CapturedSchedule, sname, nodes)
    args = (tr.get("name", str, check=_name_check), tr.get("warp_idx", int), tr.get("num_warps", int),
            _names(tr, "src_resources"), _names(tr, "dst_resources"), sched)
    return _at(path, Task.unchecked, *args)


def design_from_json(text: str | bytes, design_class: type) -> Any:
    if len(text) > MAX_FILE_BYTES:
        raise DesignError(f"design file has {len(text)} bytes, expected at most {MAX_FILE_BYTES} (a design file "
                          f"is a few kB)", code="json.size", hint="check that the file is the design you meant")
    try:
        obj = json.loads(text)
    except (ValueError, TypeError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8, huge ints, deep nesting
        raise DesignError(f"design file is not valid JSON: {exc}", code="json.syntax",
                          hint="fix the file or load a saved copy") from None
    try:
        return design_from_dict(obj, design_class)
    except RecursionError:
        raise DesignError("design file nests domain loops too deeply", code="json.value") from None

"""Design <-> JSON: round trips, a schema version, and loading that rejects bad input with the
field path and never executes anything."""

import ast
import copy
import json
from pathlib import Path

import pytest

import pgstudio
from pgstudio import Design, DesignError, PipelineGroup, PipelineGroupMode, Task, ungrouped
from pgstudio import examples
from pgstudio.examples import CANONICAL
from pgstudio.model import serialize


def merge_copy():
    return examples.merge_copy(num_stages=4, tile_bytes=8192)


@pytest.mark.parametrize("twin", [False, True], ids=["grouped", "ungrouped"])
@pytest.mark.parametrize("name", list(CANONICAL))
def test_round_trip_of_every_canonical_design(name, twin):
    design = CANONICAL[name]()
    if twin:
        design = ungrouped(design)
    text = design.to_json()
    back = Design.from_json(text)
    assert back == design
    assert back.to_json() == text
    assert Design.from_json(text.encode()) == design  # bytes too
    assert back.validate().codes() == design.validate().codes() == []


def test_a_wrong_design_round_trips_and_still_says_what_is_wrong():
    d = merge_copy()
    wrong = d.with_group(PipelineGroup.unchecked("ab", [d.resource("smem_a")], PipelineGroupMode.Fork))
    back = Design.from_json(wrong.to_json())
    assert back == wrong and "group.members" in back.validate().codes()


def test_the_file_names_its_schema_and_version():
    obj = json.loads(merge_copy().to_json())
    assert (obj["schema"], obj["version"]) == ("pgstudio.design", 1)
    assert list(obj) == ["schema", "version", "name", "problem", "resources", "graph", "groups", "tasks"]


def test_targets_are_an_optional_key():
    d = merge_copy()
    assert d.targets == ("sm_90a",) and "targets" not in json.loads(d.to_json())  # the default is not written
    both = d.with_targets("sm_90a", "sm_100a")
    obj = json.loads(both.to_json())
    assert obj["targets"] == ["sm_90a", "sm_100a"] and list(obj)[4] == "targets"
    assert Design.from_json(both.to_json()) == both
    odd = Design.from_json(json.dumps({**obj, "targets": ["sm_80"]}))  # loads; validate() says what is wrong
    assert odd.targets == ("sm_80",) and "design.targets" in odd.validate().codes()
    with pytest.raises(DesignError, match="targets\\[0\\]: expected a name"):
        Design.from_json(json.dumps({**obj, "targets": [90]}))


def base():
    return json.loads(merge_copy().to_json())


def edit(path_fn):
    obj = base()
    path_fn(obj)
    return json.dumps(obj)


def _set(keys, value):
    def apply(obj):
        target = obj
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
    return apply


def _del(keys):
    def apply(obj):
        target = obj
        for k in keys[:-1]:
            target = target[k]
        del target[keys[-1]]
    return apply


BAD = [
    ("not json", "{", "json.syntax", "design file is not valid JSON"),
    ("not utf-8", b"\xff\xfe{", "json.syntax", "design file is not valid JSON"),
    ("a list", "[]", "json.type", "design file: expected an object, got list"),
    ("top field", edit(_set(["colour"], "red")), "json.unknown_field", "colour: unknown field; allowed here: schema"),
    ("nested field", edit(_set(["resources", 2, "pipeline_config", "colour"], 1)), "json.unknown_field",
     "resources[2].pipeline_config.colour: unknown field"),
    ("group field", edit(_set(["groups", 0, "extra"], 1)), "json.unknown_field", "groups[0].extra: unknown field"),
    ("step field", edit(_set(["tasks", 0, "schedule", "nodes", 0, "body", 0, "x"], 1)), "json.unknown_field",
     "tasks[0].schedule.nodes[0].body[0].x: unknown field"),
    ("version", edit(_set(["version"], 2)), "json.version", "version: 2 is not supported (this pgstudio reads version 1)"),
    ("version type", edit(_set(["version"], "1")), "json.type", 'version: expected int, got "1"'),
    ("schema", edit(_set(["schema"], "other.tool")), "json.schema", "schema: 'other.tool' is not a pgstudio design"),
    ("missing", edit(_del(["resources", 2, "name"])), "json.missing", "resources[2].name: missing field"),
    ("stages type", edit(_set(["resources", 2, "pipeline_config", "num_stages"], "4")), "json.type",
     'resources[2].pipeline_config.num_stages: expected int, got "4"'),
    ("bool for int", edit(_set(["tasks", 0, "num_warps"], True)), "json.type", "tasks[0].num_warps: expected int, got true"),
    ("group size", edit(_set(["resources", 2, "pipeline_config", "consumer_group", "size"], 1.5)), "json.type",
     "resources[2].pipeline_config.consumer_group.size: expected int, got 1.5"),
    ("agent", edit(_set(["resources", 2, "pipeline_config", "consumer_group", "agent"], "Block")), "json.value",
     "resources[2].pipeline_config.consumer_group.agent: 'Block' is not one of Thread, Warp"),
    ("ptype", edit(_set(["resources", 2, "pipeline_config", "pipeline_type"], "TmaTma")), "json.value",
     "resources[2].pipeline_config.pipeline_type: 'TmaTma' is not one of AsyncAsync"),
    ("mode", edit(_set(["groups", 0, "mode"], "Zip")), "json.value", "groups[0].mode: 'Zip' is not one of Merge, Fork"),
    ("memory", edit(_set(["resources", 0, "memory"], "disk")), "json.value", "resources[0].memory: 'disk' is not one of"),
    ("tile", edit(_set(["resources", 2, "tile"], [0])), "json.type", "resources[2].tile: expected positive integers"),
    ("resource name", edit(_set(["resources", 0, "name"], "gmem a")), "json.value",
     "resources[0].name: name 'gmem a' is not an identifier"),
    ("group name", edit(_set(["groups", 0, "name"], "class")), "json.value", "groups[0].name: name 'class' is a reserved word"),
    ("task name", edit(_set(["tasks", 1, "name"], "load-b")), "json.value", "tasks[1].name: name 'load-b' is not an identifier"),
    ("design name", edit(_set(["name"], "my design")), "json.value", "name: name 'my design' is not an identifier"),
    ("problem key", edit(_set(["problem", "num tiles"], 3)), "json.value", "problem.\"num tiles\": name 'num tiles' is not an identifier"),
    ("problem value", edit(_set(["problem", "num_tiles"], [1])), "json.type", "problem.num_tiles: expected a number or a string"),
    ("duplicate", edit(lambda o: o["resources"].append(copy.deepcopy(o["resources"][0]))), "json.value",
     "resources[5].name: 'gmem_a' appears twice"),
    ("member ref", edit(_set(["groups", 0, "members"], ["smem_a", "smem_q"])), "json.reference",
     "groups[0].members[1]: 'smem_q' is not a resource of this file"),
    ("member type", edit(_set(["groups", 0, "members"], ["smem_a", 3])), "json.type", "groups[0].members[1]: expected a name"),
    ("graph", edit(_set(["graph", "gmem_d"], "smem_a")), "json.type", "graph.gmem_d: expected a list of resource names"),
    ("op", edit(_set(["tasks", 0, "schedule", "nodes", 0, "body", 0, "op"], "spin")), "json.value",
     "tasks[0].schedule.nodes[0].body[0].op: 'spin' is not one of try_acquire"),
    ("via", edit(_set(["tasks", 0, "schedule", "nodes", 0, "body", 0, "via"], "magic")), "json.value",
     "tasks[0].schedule.nodes[0].body[0].via: 'magic' is not one of bare, member, group"),
    ("loop", edit(_set(["tasks", 0, "schedule", "nodes", 0, "loop"], [0, 1.5, 1])), "json.value",
     "tasks[0].schedule.nodes[0].loop: expected [start, stop, step]"),
    ("args", edit(_set(["tasks", 0, "schedule", "nodes", 0, "body", 2, "args"], [["arg0"]])), "json.type",
     "tasks[0].schedule.nodes[0].body[2].args[0]: expected [name, value] strings"),
    ("warp_idx", edit(_set(["tasks", 0, "warp_idx"], -1)), "task.warps", "tasks[0]: task 'load_a': warp_idx is -1"),
    ("tasks type", edit(_set(["tasks"], {})), "json.type", "tasks: expected list, got {}"),
]


@pytest.mark.parametrize("text,code,phrase", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_files_are_rejected_naming_the_field(text, code, phrase):
    with pytest.raises(DesignError) as err:
        Design.from_json(text)
    assert err.value.code == code, str(err.value)
    assert phrase in str(err.value)


def test_deep_nesting_is_a_clear_error():
    deep = '{"a":' * 100000 + "1" + "}" * 100000
    with pytest.raises(DesignError, match="not valid JSON"):
        Design.from_json(deep)


def test_loading_executes_nothing(tmp_path):
    marker = tmp_path / "ran"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    obj = base()
    obj["resources"][4]["compute"]["expr"] = payload
    design = Design.from_json(json.dumps(obj))
    design.validate()
    design.to_json()
    assert not marker.exists()
    assert design.resource("gmem_d").compute.expr == payload  # kept as plain text
    assert isinstance(design.task("load_a").schedule, pgstudio.CapturedSchedule)
    for plant in (lambda o: o["tasks"][0]["schedule"].__setitem__("name", payload),
                  lambda o: o["problem"].__setitem__("dtype", payload)):
        obj = base()
        plant(obj)
        with pytest.raises(DesignError):  # too long for a name: refused, never run
            Design.from_json(json.dumps(obj))
    assert not marker.exists()


def test_the_loader_uses_no_pickle_eval_or_exec():
    tree = ast.parse(Path(serialize.__file__).read_text())
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    imports = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not names & {"eval", "exec", "compile", "__import__", "getattr"}
    assert not (imports | modules) & {"pickle", "marshal", "shelve", "importlib", "yaml"}


def test_tasks_in_a_file_are_not_captured_again():
    d = Design.from_json(merge_copy().to_json())
    assert all(isinstance(t, Task) and t.schedule is not None for t in d.tasks)

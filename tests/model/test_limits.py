"""The value domain (``model/limits.py``): a file holding a value no design can have is refused
on load with the field's path, the value and the range; the constructors refuse it too, so the
studio and the Python API cannot make what a file cannot hold."""

import copy
import json

import pytest

from pgstudio import Design, DesignError, GmemTensor, MemoryResource, Task, examples
from pgstudio.model import CapturedSchedule, Compute, Loop, Step
from pgstudio.model import limits as L

BASE = json.loads(examples.merge_copy().to_json())


def planted(path, value):
    obj = copy.deepcopy(BASE)
    *head, last = path
    node = obj
    for key in head:
        node = node[key]
    node[last] = value
    return json.dumps(obj)


CFG = ["resources", 2, "pipeline_config"]
LOOP = ["tasks", 0, "schedule", "nodes", 0, "loop"]
BODY = ["tasks", 0, "schedule", "nodes", 0, "body"]

# (id, file text, code, phrases the message must hold)
CASES = [
    ("stages 0", planted(CFG + ["num_stages"], 0), "config.num_stages",
     ["resources[2].pipeline_config: num_stages is 0, expected an integer from 1 to 64", "fix:"]),
    ("stages negative", planted(CFG + ["num_stages"], -3), "config.num_stages", ["num_stages is -3"]),
    ("stages huge", planted(CFG + ["num_stages"], 10 ** 9), "config.num_stages", ["num_stages is 1000000000"]),
    ("bytes negative", planted(CFG + ["num_bytes"], -16), "config.num_bytes",
     ["num_bytes is -16, expected an integer from 0 to 1048575"]),
    ("bytes huge", planted(CFG + ["num_bytes"], 10 ** 12), "config.num_bytes", ["num_bytes is 1000000000000"]),
    ("group size huge", planted(CFG + ["consumer_group", "size"], 10 ** 9), "config.group_size",
     ["resources[2].pipeline_config.consumer_group: cooperative group size (Warp) is 1000000000, expected an integer "
      "from 1 to 32"]),
    ("group size 0", planted(CFG + ["producer_group", "size"], 0), "config.group_size", ["size (Thread) is 0"]),
    ("problem NaN", planted(["problem", "alpha"], float("nan")), "json.value",
     ["problem.alpha: value is nan, expected a finite number"]),
    ("problem count NaN", planted(["problem", "num_elements"], float("nan")), "json.value",
     ["problem.num_elements: value is nan, expected a finite number"]),
    ("problem inf", planted(["problem", "num_tiles"], float("inf")), "json.value", ["problem.num_tiles: value is inf"]),
    ("problem negative", planted(["problem", "num_tiles"], -5), "json.value",
     ["problem.num_tiles: value is -5, expected an integer from 0 to 1099511627776"]),
    ("problem huge", planted(["problem", "num_tiles"], 10 ** 15), "json.value", ["value is 1000000000000000"]),
    ("problem text", planted(["problem", "dtype"], "f" * 65), "json.value", ["has 65 characters, expected at most 64"]),
    ("problem key", planted(["problem", "x" * 70], 1), "json.value", ["has 70 characters, expected at most 64"]),
    ("warps huge", planted(["tasks", 0, "num_warps"], 10 ** 6), "task.warps",
     ["tasks[0]: task 'load_a': num_warps is 1000000, expected an integer from 1 to 32"]),
    ("warp_idx beyond the block", planted(["tasks", 0, "warp_idx"], 40), "task.warps", ["warp_idx is 40"]),
    ("tile extent", planted(["resources", 2, "tile"], [10 ** 9]), "resource.tile",
     ["resources[2]: resource 'smem_a': tile extent is 1000000000, expected an integer from 1 to 65536"]),
    ("tile rank", planted(["resources", 2, "tile"], [1] * 5), "resource.tile", ["tile has 5 dimensions, expected at most 4"]),
    ("loop step 0", planted(LOOP, [0, "num_tiles", 0]), "schedule.loop",
     ["tasks[0].schedule.nodes[0]: domain_loop step is 0, expected an integer from 1 to"]),
    ("loop stop negative", planted(LOOP, [0, -1, 1]), "schedule.loop", ["domain_loop stop is -1"]),
    ("loop bound name", planted(LOOP, [0, "n" * 100, 1]), "schedule.loop", ["has 100 characters, expected at most 64"]),
    ("long name", planted(["resources", 0, "name"], "g" * 2000), "json.value",
     ["resources[0].name: 2000 characters, expected at most 1024"]),
    ("long expression", planted(["resources", 4, "compute", "expr"], "a+" * 5000), "json.value",
     ["resources[4].compute.expr: 10000 characters, expected at most 1024"]),
    ("too many resources", planted(["resources"], [BASE["resources"][0]] * (L.MAX_RESOURCES + 1)), "json.size",
     ["resources: 1025 is more than the limit of 1024"]),
    ("too many steps", planted(BODY, [BASE["tasks"][0]["schedule"]["nodes"][0]["body"][0]] * (L.MAX_STEPS + 1)),
     "json.size", ["tasks[0].schedule.nodes[0].body: 16385 is more than the limit of 16384"]),
    ("too many args", planted(BODY + [2, "args"], [["a", "gmem_a"]] * (L.MAX_ARGS + 1)), "json.size",
     ["args: 65 is more than the limit of 64"]),
    ("file too large", json.dumps({**BASE, "name": "x", "pad": " " * L.MAX_FILE_BYTES}), "json.size",
     ["design file has", "expected at most 8388608"]),
]


@pytest.mark.parametrize("text,code,phrases", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_value_outside_its_range_is_refused_on_load(text, code, phrases):
    with pytest.raises(DesignError) as err:
        Design.from_json(text)
    assert err.value.code == code, str(err.value)
    for phrase in phrases:
        assert phrase in str(err.value)
    assert "\n" not in str(err.value) and len(str(err.value)) < 400  # one line, however large the value


def test_loops_nested_too_deep_are_refused():
    node = {"op": "acquire", "target": "smem_a", "via": "member", "group": "ab", "args": []}
    for _ in range(L.MAX_LOOP_DEPTH + 1):
        node = {"loop": [0, 1, 1], "body": [node]}
    with pytest.raises(DesignError, match="domain loops nest more than 8 deep") as err:
        Design.from_json(planted(["tasks", 0, "schedule", "nodes"], [node]))
    assert err.value.code == "schedule.size"


def test_the_boundary_values_load():
    for path, value in ((CFG + ["num_stages"], L.MAX_STAGES), (["problem", "num_tiles"], 0),
                        (["tasks", 0, "num_warps"], L.MAX_WARPS), (["problem", "alpha"], -1.5)):
        assert Design.from_json(planted(path, value)).name == "merge_copy"


def test_the_constructors_hold_the_same_domain():
    """The studio and the Python API build the same dataclasses the loader builds."""
    with pytest.raises(DesignError, match="tile extent is 0"):
        MemoryResource("smem_x", tile=(0,))
    with pytest.raises(DesignError, match="compute expression has 2000 characters"):
        GmemTensor("gmem_x", compute=Compute("store", "a" * 2000))
    with pytest.raises(DesignError, match="aliases name 'not a name' is not an identifier"):
        MemoryResource("smem_x", aliases="not a name")
    with pytest.raises(DesignError, match="domain_loop step is 0"):
        Loop(0, 8, 0, ())
    with pytest.raises(DesignError, match="steps: 16385 is more than the limit of 16384"):
        CapturedSchedule("s", tuple(Step("acquire", "smem_a") for _ in range(L.MAX_STEPS + 1)))
    with pytest.raises(DesignError, match="problem entry 'n': value is nan"):
        Design("d", problem={"n": float("nan")})
    with pytest.raises(DesignError, match="tasks: 1025 is more than the limit of 1024"):
        Design("d", tasks=[Task(f"t{i}", 0, 1) for i in range(L.MAX_TASKS + 1)])


def test_every_canonical_design_is_inside_the_domain():
    for name, build in examples.CANONICAL.items():
        d = build()
        assert Design.from_json(d.to_json()) == d, name

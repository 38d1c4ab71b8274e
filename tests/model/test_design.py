"""Design: one immutable value holding resources, graph, groups, tasks and problem; edits return
new designs; ``validate()`` reports every problem at once, even for wrong groups and schedules."""

import dataclasses

import pytest

from pgstudio import (Design, DesignError, MemoryResource, PipelineGroup, PipelineGroupMode, Task,
                      create_tma_async_pipeline_cfg, create_tma_umma_pipeline_cfg, domain_loop, schedule)
from pgstudio import examples


def merge_copy():
    return examples.merge_copy(num_stages=4, tile_bytes=8192, num_elements=1 << 24)


def merge_gemm():
    return examples.merge_gemm(num_stages=4, bm=128, bn=128, bk=64)


def test_lookups():
    d = merge_copy()
    assert d.resource("smem_a").pipeline_config.num_stages == 4
    assert d.group("ab").mode is PipelineGroupMode.Merge
    assert d.task("store").num_warps == 4
    assert d.group_of("smem_b").name == "ab" and d.group_of("gmem_a") is None
    assert d.deps("gmem_d") == ("smem_a", "smem_b") and d.dependents("smem_a") == ("gmem_d",)
    assert [t.name for t in d.producers("smem_a")] == ["load_a"]
    assert [t.name for t in d.consumers("smem_a")] == ["store"]
    assert [r.name for r in d.pipelined] == ["smem_a", "smem_b"]
    assert d.num_warps == max(t.warp_idx + t.num_warps for t in d.tasks) >= 6
    assert d.problem_dict["num_tiles"] == (1 << 24) // 2048
    assert d.summary() == f"design 'merge_copy': 5 resources (2 pipelined), ab:Merge, 3 tasks, {d.num_warps} warps"


@pytest.mark.parametrize("kind,name,listing", [
    ("resource", "smem_z", "resources: gmem_a, gmem_b, smem_a, smem_b, gmem_d"),
    ("group", "cd", "groups: ab"),
    ("task", "mma", "tasks: load_a, load_b, store"),
])
def test_lookups_of_missing_names_say_what_exists(kind, name, listing):
    with pytest.raises(DesignError) as err:
        getattr(merge_copy(), kind)(name)
    assert f"has no {kind} {name!r}; {listing}" in str(err.value)


def test_a_design_is_immutable_and_holds_only_resources():
    d = merge_copy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.name = "x"
    with pytest.raises(DesignError, match="is not a resource") as err:
        Design("d", ["smem_a"])
    assert err.value.code == "design.resources"


def test_replacing_a_resource_updates_its_group():
    d = merge_copy()
    bigger = MemoryResource("smem_a", create_tma_async_pipeline_cfg(num_stages=4, num_bytes=16384),
                            d.resource("smem_a").compute, tile=(4096,))
    e = d.with_resource(bigger)
    assert e.resource("smem_a") is bigger and e.group("ab").members[0] is bigger
    assert [r.name for r in e.resources] == [r.name for r in d.resources]  # same place
    assert e.deps("smem_a") == ("gmem_a",) and d.resource("smem_a") is not bigger  # d unchanged
    # the group accepts members of different sizes; only the streaming generator wants one tile size
    assert e.validate().codes() == ["codegen.tile_uniform"]


def test_adding_and_removing_resources():
    d = merge_copy()
    extra = MemoryResource("smem_c", create_tma_async_pipeline_cfg(num_stages=2, num_bytes=1024))
    e = d.with_resource(extra, deps=[d.resource("gmem_a")])
    assert e.resources[-1] is extra and e.deps("smem_c") == ("gmem_a",)
    assert "graph.unused" in e.validate().codes()  # in the graph but no task uses it
    f = d.without_resource("smem_b")
    assert not f.has_resource("smem_b")
    assert f.group("ab").member_names == ("smem_a",)
    assert f.task("store").src_resources == ("smem_a",) and f.deps("gmem_d") == ("smem_a",)
    assert "group.members" in f.validate().codes()  # a one-member group is now wrong, and said so


def test_group_and_task_edits():
    d = merge_copy()
    no_group = d.without_group("ab")
    assert no_group.groups == () and "schedule.unknown_group" in no_group.validate().codes()
    back = no_group.with_group(d.group("ab"))
    assert back.groups == d.groups and back.validate().ok
    moved = d.with_task(Task("store", 28, 4, ["smem_a", "smem_b"], ["gmem_d"], d.task("store").schedule))
    assert [t.name for t in moved.tasks] == [t.name for t in d.tasks] and moved.task("store").warp_idx == 28
    assert moved.num_warps == 32 and moved.validate().ok
    assert [t.name for t in d.without_task("load_b").tasks] == ["load_a", "store"]


def test_validate_reports_every_problem_of_wrong_groups_and_schedules_at_once():
    d = merge_gemm()
    a, b = d.resource("smem_a"), d.resource("smem_b")
    three_stage_b = MemoryResource("smem_b", create_tma_umma_pipeline_cfg(num_stages=3, num_bytes=16384))
    mma = d.task("mma")
    bad_group = PipelineGroup.unchecked("ab", [a, three_stage_b], PipelineGroupMode.Merge)

    @schedule
    def member_release(acc, group):
        with domain_loop(0, "num_tiles", 1):
            acc.acquire()
            group.smem_a.try_wait()
            group.smem_b.wait()
            acc.mma(group.smem_a.read(), group.smem_b.read())
            group.smem_a.release()
            group.smem_b.release()
            acc.commit()

    bad_task = Task.unchecked("mma", mma.warp_idx, mma.num_warps, [a, b], ["tmem_c"],
                              member_release(d.resource("tmem_c"), bad_group))
    wrong = d.with_resource(three_stage_b).with_group(bad_group).with_task(bad_task)
    report = wrong.validate()
    codes = report.codes()
    for code in ("group.num_stages", "schedule.collapsed_member", "schedule.try_order"):
        assert code in codes, str(report)
    assert not report.ok and len(report.errors) >= 4
    assert any("'smem_a'=4, 'smem_b'=3" in e.message for e in report.errors)
    assert report.about("mma") and all("mma" in e.where for e in report.about("mma"))
    with pytest.raises(DesignError):
        report.raise_if_errors()

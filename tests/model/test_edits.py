"""The studio's edits as pure functions: each produces the Design it should (no widgets)."""

import pytest

from pgstudio import DesignError, examples
from pgstudio.model import Agent, PipelineGroupMode, PipelineType, domain_loop, schedule, ungrouped
from pgstudio.model.derive import derive_design
from pgstudio.model import edits as E


@pytest.fixture
def gemm():
    return examples.merge_gemm()


def test_new_resource_is_a_pipelined_tile_with_a_fresh_name(gemm):
    d = E.new_resource(gemm)
    r = d.resources[-1]
    assert (r.name, r.memory.value, r.pipeline_config.pipeline_type) == ("smem_1", "smem", PipelineType.TmaAsync)
    assert r.pipeline_config.num_bytes == 2048 * 4 and r.tile == (2048,)
    assert E.new_resource(d).resources[-1].name == "smem_2"
    codes = d.validate().codes()
    assert codes.count("pipeline.endpoints") == 2  # no producer task and no consumer task yet


def test_rename_reaches_graph_groups_tasks_and_attached_schedules(gemm):
    d = E.rename_resource(gemm, "smem_a", "tile_a")
    assert not d.has_resource("smem_a") and d.has_resource("tile_a")
    assert d.deps("tile_a") == ("gmem_a",) and "tile_a" in d.deps("tmem_c")
    assert d.group("ab").member_names == ("tile_a", "smem_b")
    assert d.task("load_a").dst_resources == ("tile_a",) and "tile_a" in d.task("mma").src_resources
    targets = {s.target for t in d.tasks for s in t.schedule.steps()}
    assert "tile_a" in targets and "smem_a" not in targets
    assert d.validate().ok, str(d.validate())


@pytest.mark.parametrize("bad, code", [("2fast", "name.identifier"), ("smem_b", "design.duplicate_name"),
                                       ("mma", "design.duplicate_name"), ("pg_x", "name.identifier")])
def test_rename_refuses_bad_names_with_a_message(gemm, bad, code):
    with pytest.raises(E.EditError) as err:
        E.rename_resource(gemm, "smem_a", bad)
    assert err.value.code == code and repr(bad) in str(err.value)


def test_changing_the_pipeline_type_resets_only_the_side_whose_kind_changed():
    d = derive_design(ungrouped(examples.merge_copy()), replace_attached=True)
    cfg = d.resource("smem_b").pipeline_config
    assert (cfg.pipeline_type, cfg.consumer_group.num_threads) == (PipelineType.TmaAsync, 128)
    umma = E.set_resource(d, "smem_b", pipeline_type="TmaUmma").resource("smem_b").pipeline_config
    assert umma.consumer_group.num_threads == 1 and umma.producer_group == cfg.producer_group
    back = E.set_resource(d.with_resource(d.resource("smem_b").__class__("smem_b", umma)), "smem_b",
                          pipeline_type="TmaAsync").resource("smem_b").pipeline_config
    assert back.consumer_group.num_threads == 128  # the store task has 4 warps: every thread arrives
    assert E.set_resource(d, "smem_b", pipeline_type="none").resource("smem_b").pipeline_config is None


def test_tile_shape_sets_bytes_and_gmem_drops_the_pipeline():
    d = examples.merge_copy()
    t = E.set_resource(d, "smem_a", tile="64x32", dtype="float16").resource("smem_a")
    assert t.tile == (64, 32) and t.pipeline_config.num_bytes == 64 * 32 * 2
    g = E.set_resource(d, "smem_a", memory="gmem").resource("smem_a")
    assert g.memory.value == "gmem" and g.pipeline_config is None
    assert E.set_resource(d, "smem_a", memory="gmem").group("ab").members[0] == g
    with pytest.raises(E.EditError):
        E.set_resource(d, "smem_a", tile="64xa")


def test_group_sizes_and_agents_are_editable():
    d = examples.merge_copy()
    cfg = E.set_resource(d, "smem_a", consumer_size=2, consumer_agent="Warp").resource("smem_a").pipeline_config
    assert cfg.consumer_group.agent is Agent.Warp and cfg.consumer_group.num_threads == 64
    with pytest.raises(E.EditError):
        E.set_resource(d, "smem_a", num_stages="many")
    with pytest.raises(E.EditError):
        E.set_resource(d, "smem_a", colour="red")


def test_stages_out_of_range_are_refused_with_the_rule():
    """0 stages is no config (every ring divides by it): the edit is refused with the range,
    and the design the studio holds stays one every file command can load."""
    d = examples.merge_copy()
    for stages in (0, 65):
        with pytest.raises(DesignError, match=f"num_stages is {stages}, expected an integer from 1 to 64") as err:
            E.set_resource(d, "smem_a", num_stages=stages)
        assert err.value.code == "config.num_stages"
    assert E.set_resource(d, "smem_a", num_stages=64).resource("smem_a").pipeline_config.num_stages == 64


def test_removing_a_resource_cleans_every_reference():
    d = E.remove_resource(examples.fork_copy(), "smem_x")
    assert d.resource("smem_y").aliases is None
    assert d.group("xy").member_names == ("smem_y",)
    assert all("smem_x" not in (*t.src_resources, *t.dst_resources) for t in d.tasks)
    assert "smem_x" not in dict(d.graph)


def test_edges_add_remove_and_refuse_self_loops():
    d = examples.merge_copy()
    d2 = E.add_edge(d, "gmem_b", "smem_a")
    assert d2.deps("smem_a") == ("gmem_a", "gmem_b")
    assert "graph.edge_unrealised" in d2.validate().codes()
    assert E.remove_edge(d2, "gmem_b", "smem_a").graph == d.graph
    assert ("gmem_a", "smem_a") in E.edges(d)
    with pytest.raises(E.EditError):
        E.add_edge(d, "smem_a", "smem_a")


def test_groups_add_members_mode_rename_remove():
    d = derive_design(ungrouped(examples.merge_copy()), replace_attached=True)
    d = E.add_group(d)
    assert d.group("group_1").members == () and "group.members" in d.validate().codes()
    d = E.set_group(d, "group_1", members=["smem_a", "smem_b"])
    d = derive_design(d)
    assert d.validate().ok, str(d.validate())
    d = E.set_group(d, "group_1", mode="FusedMerge", new_name="ab")
    assert d.group("ab").mode is PipelineGroupMode.FusedMerge
    assert derive_design(d).validate().ok
    assert E.remove_group(d, "ab").groups == ()


def test_tasks_add_set_remove():
    d = examples.merge_copy()
    d = E.add_task(d)
    t = d.task("task_1")
    assert t.warp_idx == 8 and t.num_warps == 1  # after the store task's warps 4..7
    d = E.set_task(d, "task_1", num_warps=2, src=["smem_a"], new_name="extra")
    assert d.task("extra").num_warps == 2 and d.task("extra").src_resources == ("smem_a",)
    with pytest.raises(E.EditError):
        E.set_task(d, "extra", warp_idx=-1)
    with pytest.raises(E.EditError):
        E.set_task(d, "extra", num_warps="two")
    assert not any(t.name == "extra" for t in E.remove_task(d, "extra").tasks)


def test_attach_a_schedule_written_in_python_binds_parameters_by_name():
    d = derive_design(ungrouped(examples.merge_copy()), replace_attached=True)

    @schedule
    def my_store(smem_a, smem_b, gmem_d):
        with domain_loop(0, "num_tiles", 1):
            smem_a.wait()
            smem_b.wait()
            gmem_d.store(a=smem_a.read(), b=smem_b.read())
            smem_a.release()
            smem_b.release()

    d2 = E.attach_schedule(d, "store", my_store)
    assert d2.task("store").schedule.name == "my_store"
    assert derive_design(d2).task("store").schedule.name == "my_store"  # attached schedules stay
    assert d2.validate().ok, str(d2.validate())
    back = derive_design(E.use_derived_schedule(d2, "store"))
    assert back.task("store").schedule == d.task("store").schedule

    @schedule
    def wrong(nothing_here):
        pass

    with pytest.raises(E.EditError) as err:
        E.attach_schedule(d, "store", wrong)
    assert "'nothing_here'" in str(err.value)


def test_problem_text_round_trips_and_refuses_garbage():
    d = E.set_problem(examples.merge_copy(), "num_tiles=12, label=abc, ratio=0.5")
    assert d.problem_dict == {"num_tiles": 12, "label": "abc", "ratio": 0.5}
    assert E.parse_problem(E.problem_text(d)) == d.problem
    with pytest.raises(E.EditError):
        E.parse_problem("num_tiles")
    with pytest.raises(E.EditError):
        E.rename_design(d, "my design")

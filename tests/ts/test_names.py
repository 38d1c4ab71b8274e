"""pgstudio.ts speaks TS: its factories, resources, groups, schedule grammar and task manager take
TS's signatures, apply TS's rules, and refuse by name what pgstudio cannot model.  No TS needed."""

from dataclasses import dataclass

import pytest

from pgstudio import Agent as ModelAgent
from pgstudio import CooperativeGroup as ModelGroup
from pgstudio import DesignError, ScheduleError
from pgstudio import ts
from pgstudio.model.kinds import AsyncProducerOp, PipelineType

ONE = ts.CooperativeGroup(ts.Agent.Thread, 1)
WG = ts.CooperativeGroup(ts.Agent.Thread, 128)
PC = ts.PipelineConfig


def tma_umma(stages=2, nbytes=1024):
    return PC.create_tma_umma_pipeline_cfg(stages, nbytes, ONE, ONE, None)  # positional, as TS allows


# -- configs and cooperative groups ------------------------------------------------------------

def test_every_factory_takes_ts_signature_and_builds_the_model_config():
    cfgs = {
        PipelineType.AsyncAsync: PC.create_async_async_pipeline_cfg(2, WG, WG, None,
                                                                    producer_op=ts.PipelineOp.AsyncLoad),
        PipelineType.TmaAsync: PC.create_tma_async_pipeline_cfg(2, 2048, ONE, WG),
        PipelineType.TmaUmma: tma_umma(),
        PipelineType.UmmaAsync: PC.create_umma_async_pipeline_cfg(2, ONE, WG, None),
        PipelineType.AsyncUmma: PC.create_async_umma_pipeline_cfg(2, WG, ONE, None),
        PipelineType.UmmaUmma: PC.create_umma_umma_pipeline_cfg(2, ONE, ONE, None),
    }
    for ptype, cfg in cfgs.items():
        assert cfg.pipeline_type is ptype and cfg.num_stages == 2 and cfg.model.pipeline_type is ptype
    assert cfgs[PipelineType.AsyncAsync].model.async_producer_op is AsyncProducerOp.AsyncLoad
    assert cfgs[PipelineType.TmaAsync].num_bytes == 2048


@pytest.mark.parametrize("kwargs,named", [
    (dict(advance_on_wait=True), "advance_on_wait=True"),
    (dict(interleave_stride=2), "interleave_stride=2"),
    (dict(mcast_mode_mn=(2, 1)), "mcast_mode_mn=(2, 1)"),
    (dict(producer_signaling_threads=ts.SignalingThreads.CtaLeader), "producer_signaling_threads"),
    (dict(cta_layout_vmnk=(2, 1, 1, 1)), "cta_layout_vmnk=(2, 1, 1, 1)"),
])
def test_ts_parameters_pgstudio_does_not_model_are_refused_by_name(kwargs, named):
    args = dict(num_stages=2, num_bytes=1024, producer_group=ONE, consumer_group=ONE)
    with pytest.raises(DesignError, match="cannot be modelled yet") as err:
        PC.create_tma_umma_pipeline_cfg(**args, **kwargs)
    assert named in str(err.value) and err.value.code == "ts.unsupported"


def test_a_bad_value_raises_pgstudios_rule_at_the_factory():
    with pytest.raises(DesignError, match="num_bytes is 8, expected a positive multiple of 16"):
        tma_umma(nbytes=8)
    with pytest.raises(DesignError, match="cannot be modelled yet: pgstudio models a static work-tile loop"):
        PC.create_clc_fetch_async_pipeline_cfg(1, 16, ONE, ONE, None)


def test_a_cooperative_group_counts_what_ts_initialises_its_barrier_with():
    """TS's barrier initialisation: Thread n is n arrivals, Warp n is 32n (test_ts_barrier_init
    reads it from TS itself)."""
    assert ts.CooperativeGroup(ts.Agent.Warp, 4).to_model("x") == ModelGroup(ModelAgent.Warp, 4)
    assert ts.CooperativeGroup(ts.Agent.Warp, 4).to_model("x").num_threads == 128
    assert ts.CooperativeGroup(ts.Agent.Warp, 2).to_model("x").num_threads == 64
    assert ts.CooperativeGroup(ts.Agent.Thread, 96).to_model("x") == ModelGroup(ModelAgent.Thread, 96)
    with pytest.raises(DesignError, match=r"CooperativeGroup\(Agent.ThreadBlock, ...\) cannot be modelled yet"):
        ts.CooperativeGroup(ts.Agent.ThreadBlock, 1).to_model("x")


# -- resources and groups ------------------------------------------------------------------------

@dataclass(kw_only=True)
class SmemTile(ts.MemoryResource):
    @ts.producer_work
    def tma_load(self, stage_info, coord):
        ...

    @ts.consumer_work(returns="value")
    def read(self, stage_info):
        ...


@dataclass(kw_only=True)
class Coords(ts.MemoryResource):
    @ts.consumer_work(returns="coord")
    def coords(self, stage_info):
        ...

    @ts.consumer_work
    def peek(self, stage_info):
        ...


def test_resources_are_identities_that_key_the_graph_and_remember_their_order():
    a, b = SmemTile(name="smem_a", pipeline_config=tma_umma()), SmemTile(name="smem_a", pipeline_config=tma_umma())
    assert a != b and len({a: 1, b: 2}) == 2 and a.__pgstudio_order__ < b.__pgstudio_order__
    assert a.pipeline_group is None


def test_a_group_claims_members_only_when_it_passes_and_members_are_reached_through_it():
    a, b, c = (SmemTile(name=n, pipeline_config=tma_umma()) for n in ("smem_a", "smem_b", "smem_c"))
    with pytest.raises(DesignError, match="mode 'Zip' is not one of"):
        ts.PipelineGroup(name="ab", members=[a, b], mode="Zip")
    assert a.pipeline_group is None
    g = ts.PipelineGroup(name="ab", members=[a, b], mode=ts.PipelineGroupMode.Merge)
    assert a.pipeline_group is g and g.smem_a.member is a and g.num_barriers_per_stage == 3
    with pytest.raises(DesignError, match="resource 'smem_a' is already in group 'ab'"):
        ts.PipelineGroup(name="ab", members=[a, c], mode=ts.PipelineGroupMode.Merge)


# -- the schedule grammar ------------------------------------------------------------------------

def _capture(fn, *args):
    return ts.schedule(fn)(*args)


def test_ts_grammar_errors_are_schedule_errors():
    gmem, smem = Coords(name="gmem"), SmemTile(name="smem", pipeline_config=tma_umma())

    def nested(g, s):
        with ts.domain_loop(4):
            with ts.domain_loop(4):
                pass

    def twice(g, s):
        with ts.domain_loop(4):
            pass
        with ts.domain_loop(4):
            pass

    def untyped_token(g, s):
        with ts.domain_loop(4):
            s.tma_load(g.peek())

    def not_a_token(g, s):
        with ts.domain_loop(4):
            s.tma_load(object())

    for fn, message in ((nested, "cannot be nested"), (twice, "second domain_loop"),
                        (untyped_token, "is not routable"), (not_a_token, "must be a work-call output token")):
        with pytest.raises(ScheduleError, match=message):
            _capture(fn, gmem, smem)
    group = ts.PipelineGroup(name="g", members=[smem, SmemTile(name="s2", pipeline_config=tma_umma())],
                             mode=ts.PipelineGroupMode.Merge)
    with pytest.raises(ScheduleError, match="must be passed as `group.member`"):
        _capture(lambda s: None, smem)
    assert _capture(lambda s: None, group.smem).name == "<lambda>"
    with pytest.raises(ScheduleError, match="outside a schedule"):
        ts.domain_loop(4)


def test_guards_and_dynamic_domains_are_refused_by_name():
    smem = SmemTile(name="smem", pipeline_config=tma_umma())

    def first(s):
        with ts.domain_loop(4) as d:
            with d.first_iter():
                s.acquire()

    def every(s):
        with ts.domain_loop(4):
            with ts.when_true(ts.Every(2)):
                s.acquire()

    def negated(s):
        with ts.domain_loop(4):
            with ts.when_false(ts.Every(2)):
                s.acquire()

    def opaque(s):
        with ts.domain_loop(4):
            with ts.when_false(ts.OpaqueCondition("k")):
                s.acquire()

    def dynamic(s):
        with ts.domain_loop(lambda self, tile: 3):
            pass

    for fn, message in ((first, r"first_iter\(\) cannot be modelled yet"), (every, r"when_true\(Every\(2, start=0\)\)"),
                        (opaque, r"when_false\(OpaqueCondition\(...\)\) cannot be modelled yet"),
                        (dynamic, "dynamic domain")):
        with pytest.raises(DesignError, match=message) as err:
            _capture(fn, smem)
        assert err.value.code == "ts.unsupported" and not isinstance(err.value, ScheduleError)
    with pytest.raises(ScheduleError, match="cannot be\nnegated|cannot be negated"):
        _capture(negated, smem)


num_k_tiles = 6
problem = {"num_tiles": 3}


def test_loop_bounds_written_as_module_names_keep_their_names():
    smem = SmemTile(name="smem", pipeline_config=tma_umma())
    local = 5

    def bounds(s):
        with ts.domain_loop(0, num_k_tiles, 1):
            pass

    def from_problem(s):
        with ts.domain_loop(problem["num_tiles"]):
            pass

    def plain(s):
        with ts.domain_loop(0, local, 1):
            pass

    assert _capture(bounds, smem).body[0].end == "num_k_tiles"
    assert _capture(bounds, smem).symbols == {"num_k_tiles": 6}
    assert _capture(from_problem, smem).body[0].end == "num_tiles"
    assert _capture(plain, smem).body[0].end == 5


# -- tasks and the task manager ------------------------------------------------------------------

def _copy_design(iterations=4, consumer_threads=128):
    gmem = Coords(name="gmem_in")
    smem = SmemTile(name="smem_t", pipeline_config=PC.create_tma_async_pipeline_cfg(
        2, 1024, ONE, ts.CooperativeGroup(ts.Agent.Thread, consumer_threads)))

    @dataclass(kw_only=True)
    class Out(ts.MemoryResource):
        @ts.producer_work
        def store(self, stage_info, v):
            ...

    out = Out(name="gmem_out")

    @ts.schedule
    def load(g, s):
        with ts.domain_loop(0, iterations, 1):
            coord = g.coords()
            s.acquire()
            s.tma_load(coord)
            s.commit()

    @ts.schedule
    def drain(s, o):
        with ts.domain_loop(0, 4, 1):
            s.wait()
            v = s.read()
            o.store(v)
            s.release()

    tasks = [ts.Task([gmem], [smem], 0, 1, schedule=load(gmem, smem), name="load"),
             ts.Task([smem], [out], 4, 4, schedule=drain(smem, out))]
    return tasks, {smem: [gmem], out: [smem]}


def test_the_task_manager_builds_the_design_and_checks_it_like_ts():
    tasks, graph = _copy_design()
    design = ts.TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False).design
    assert [r.name for r in design.resources] == ["gmem_in", "smem_t", "gmem_out"]
    assert [t.name for t in design.tasks] == ["load", "drain"]  # a nameless task takes its schedule's name
    assert design.resource("gmem_in").compute.op == "input" and design.resource("gmem_out").compute.op == "store"
    load_steps = [str(s) for s in design.task("load").schedule.steps()]
    assert load_steps == ["smem_t.acquire()", "smem_t.load(arg0=gmem_in)", "smem_t.commit()"]
    tasks, graph = _copy_design(consumer_threads=64)  # TS checks this too: 64 != 4 warps x 32
    with pytest.raises(DesignError, match="consumer_group is 64 threads, expected 128 threads"):
        ts.TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)


def test_skip_validation_warns_instead_as_in_ts():
    tasks, graph = _copy_design(iterations=3)
    with pytest.raises(DesignError, match="different numbers of iterations"):
        ts.TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)
    tasks, graph = _copy_design(iterations=3)
    with pytest.warns(UserWarning, match="schedule.iterations"):
        tm = ts.TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False, skip_validation=True,
                            exhaustive_deadlock_race_check=False)
    with pytest.raises(DesignError, match="builds GPU code through the CuTe DSL"):
        tm.run()

"""Membership like TS: a resource object belongs to one group while either lives (checked against
TS 4.8.1), and where TS goes wrong -- a refused group keeps its members -- pgstudio does not."""

import gc

import pytest

from pgstudio import DesignError, MemoryResource, PipelineGroup, PipelineGroupMode, create_tma_umma_pipeline_cfg
from pgstudio import ts as pts
from ts_side import Member, ts, ts_config

pytestmark = pytest.mark.ts

TU = Member(ptype=__import__("pgstudio").PipelineType.TmaUmma, stages=4, nbytes=1024, producer=("Thread", 1),
            consumer=("Thread", 1))


def _ts_resource(name, stages=4):
    *_, resources = ts()
    return resources.MemoryResource(name=name, pipeline_config=ts_config(Member(TU.ptype, stages, 1024, TU.producer,
                                                                               TU.consumer)))


def _ts_group(name, members):
    _, enums, _, pipeline_group, _ = ts()
    return pipeline_group.PipelineGroup(name=name, members=members, mode=enums.PipelineGroupMode.Merge)


def _pg_resource(name, stages=4):
    return MemoryResource(name, create_tma_umma_pipeline_cfg(num_stages=stages, num_bytes=1024))


def test_a_live_member_cannot_join_a_second_group_even_of_the_same_name_in_both():
    a, b, c = _ts_resource("a"), _ts_resource("b"), _ts_resource("c")
    _ts_group("g", [a, b])
    with pytest.raises(ValueError):
        _ts_group("g", [a, c])
    pa, pb, pc = _pg_resource("a"), _pg_resource("b"), _pg_resource("c")
    PipelineGroup("g", [pa, pb])
    with pytest.raises(DesignError, match="already in group 'g'"):
        PipelineGroup("g", [pa, pc])


def test_the_claim_outlives_the_group_object_in_both():
    a, b = _ts_resource("a"), _ts_resource("b")
    _ts_group("g", [a, b])
    gc.collect()
    with pytest.raises(ValueError):
        _ts_group("h", [a, _ts_resource("c")])
    pa, pb = _pg_resource("a"), _pg_resource("b")
    PipelineGroup("g", [pa, pb])
    gc.collect()
    with pytest.raises(DesignError, match="already in group 'g'"):
        PipelineGroup("h", [pa, _pg_resource("c")])


def test_a_refused_group_claims_its_members_in_ts_but_not_in_pgstudio():
    """docs/ts.md, known differences (row 8): TS's refused group keeps its members."""
    a, bad = _ts_resource("a"), _ts_resource("bad", stages=3)
    with pytest.raises(ValueError):
        _ts_group("g", [a, bad])
    assert a.pipeline_group is not None  # TS: claimed by a group that does not exist
    with pytest.raises(ValueError):
        _ts_group("h", [a, _ts_resource("c")])
    pa, pbad = _pg_resource("a"), _pg_resource("bad", stages=3)
    with pytest.raises(DesignError):
        PipelineGroup("g", [pa, pbad])
    assert PipelineGroup("h", [pa, _pg_resource("c")]).member_names == ("a", "c")
    # pgstudio.ts, TS's names: as pgstudio
    one = pts.CooperativeGroup(pts.Agent.Thread, 1)
    cfg = lambda s: pts.PipelineConfig.create_tma_umma_pipeline_cfg(num_stages=s, num_bytes=1024, producer_group=one,  # noqa: E731
                                                                     consumer_group=one)
    ta = pts.MemoryResource(name="a", pipeline_config=cfg(4))
    tbad = pts.MemoryResource(name="bad", pipeline_config=cfg(3))
    with pytest.raises(DesignError):
        pts.PipelineGroup(name="g", members=[ta, tbad], mode=PipelineGroupMode.Merge)
    assert ta.pipeline_group is None


def test_ts_accepts_what_pgstudio_refuses_as_a_group_member_or_name():
    """docs/ts.md, known differences (row 9): TS accepts a group as a member, an empty name and any mode string;
    pgstudio names every element, knows three modes and groups resources only."""
    e, f = _ts_resource("e"), _ts_resource("f")
    inner = _ts_group("inner", [e, f])
    assert _ts_group("outer", [inner, _ts_resource("h")]).name == "outer"
    assert _ts_group("", [_ts_resource("i"), _ts_resource("j")]).name == ""
    _, _, _, pipeline_group, _ = ts()
    assert pipeline_group.PipelineGroup(name="z", members=[_ts_resource("k"), _ts_resource("l")], mode="Bogus")
    with pytest.raises(DesignError, match="mode 'Bogus' is not one of Merge, Fork, FusedMerge"):
        PipelineGroup("z", [_pg_resource("k"), _pg_resource("l")], "Bogus")
    with pytest.raises(DesignError, match="members must be a list of resource objects"):
        PipelineGroup("outer", [PipelineGroup("inner2", [_pg_resource("e"), _pg_resource("f")]), _pg_resource("h")])
    with pytest.raises(DesignError, match="group name ''"):
        PipelineGroup("", [_pg_resource("i"), _pg_resource("j")])


def test_the_group_member_spelling_on_the_group_argument_is_pgstudios_alone():
    """docs/ts.md, known differences (row 12): inside a schedule TS 4.8.1 reaches a member only as
    an argument (``sched(ab.smem_a)``); ``group.smem_a`` on the group argument (the schedule
    rules' spelling), which pgstudio.ts also takes, makes TS raise AttributeError."""
    from cutlass.experimental.task_scheduling import domain_loop, schedule

    a, b = _ts_resource("smem_a"), _ts_resource("smem_b")
    group = _ts_group("ab", [a, b])

    def member_through_group(g):
        with domain_loop(0, 4, 1):
            g.smem_a.wait()

    with pytest.raises(AttributeError, match="smem_a"):
        schedule(member_through_group)(group)

    one = pts.CooperativeGroup(pts.Agent.Thread, 1)
    cfg = pts.PipelineConfig.create_tma_umma_pipeline_cfg(4, 1024, one, one)
    mine = pts.PipelineGroup(name="ab", members=[pts.MemoryResource(name="smem_a", pipeline_config=cfg),
                                                 pts.MemoryResource(name="smem_b", pipeline_config=cfg)],
                             mode=PipelineGroupMode.Merge)

    def member_through_group_pg(g):
        with pts.domain_loop(0, 4, 1):
            g.smem_a.wait()

    step = pts.schedule(member_through_group_pg)(mine).body[0].body[0]
    assert (step.target.name, step.op, step.via, step.group) == ("smem_a", "wait", "member", mine)

"""THE protocol table (semantics.md section 5), in the model: every row, the collapsed ops per
mode, and that every consumer of the table -- schedule rules, schedule derivation, a group's
shared barriers, layout counts and tx bytes, the validator's arrive counts, the resolver -- reads it."""

import pytest

from pgstudio import ScheduleError, barrier_layout
from pgstudio.analysis.resolve import resolve
from pgstudio.examples import fork_copy, fork_gemm_act, fused_merge_copy, fused_merge_gemm, merge_copy, merge_gemm
from pgstudio.model import (MemoryResource, OpKind, PipelineGroup, create_tma_async_pipeline_cfg,
                            create_tma_umma_pipeline_cfg, create_umma_umma_pipeline_cfg)
from pgstudio.model import protocol
from pgstudio.model.derive import derive_design
from pgstudio.model.kinds import Bytes, Op, Role, Side, Verb, Who
from pgstudio.model.protocol import (GROUP_OPS, PROTOCOL, Action, PipelineGroupMode, arrives_on, expected_threads,
                                     expects_tx, group_actions, is_group_op, member_actions, signaller)
from pgstudio.model.schedule import SYNC_OPS, CapturedSchedule, Loop, Step
from pgstudio.model.schedule_rules import check_schedule

TMA, ASYNC, UMMA = OpKind.TMA, OpKind.ASYNC, OpKind.UMMA
Merge, Fork, FusedMerge = PipelineGroupMode.Merge, PipelineGroupMode.Fork, PipelineGroupMode.FusedMerge
WAIT_EMPTY, WAIT_FULL = Action(Verb.WAIT, Role.EMPTY, Who.ALL), Action(Verb.WAIT, Role.FULL, Who.ALL)
TMA_ARM = Action(Verb.ARRIVE_EXPECT_TX, Role.FULL, Who.ONE, Bytes.OWN)
TMA_COPY = Action(Verb.COMPLETE_TX, Role.FULL, Who.COPY, Bytes.OWN)

# semantics.md section 5, row by row, written out by hand
SEMANTICS = {
    ("acquire", TMA): (WAIT_EMPTY, TMA_ARM),
    ("acquire", ASYNC): (WAIT_EMPTY,),
    ("acquire", UMMA): (WAIT_EMPTY,),
    **{(work, kind): acts for work in ("load", "store", "mma")
       for kind, acts in ((TMA, (TMA_COPY,)), (ASYNC, ()), (UMMA, ()))},
    ("commit", TMA): (),
    ("commit", ASYNC): (Action(Verb.ARRIVE, Role.FULL, Who.ALL),),
    ("commit", UMMA): (Action(Verb.ARRIVE, Role.FULL, Who.ONE, after_mma=True),),
    ("wait", ASYNC): (WAIT_FULL,),
    ("wait", UMMA): (WAIT_FULL,),
    ("read", ASYNC): (), ("read", UMMA): (),
    ("release", ASYNC): (Action(Verb.ARRIVE, Role.EMPTY, Who.ALL),),
    ("release", UMMA): (Action(Verb.ARRIVE, Role.EMPTY, Who.ONE, after_mma=True),),
    ("try_acquire", TMA): (), ("try_acquire", ASYNC): (), ("try_acquire", UMMA): (),
    ("try_wait", ASYNC): (), ("try_wait", UMMA): (),
}
# semantics.md sections 4 and 5: per mode, the ops on the group object, the collapsed side and the
# shared barriers
MODES = {
    Merge: ({"release"}, "consumer", ("empty",)),
    Fork: ({"commit"}, "producer", ("full",)),
    FusedMerge: ({"try_wait", "wait", "release"}, "consumer", ("full", "empty")),
}


def test_the_table_is_semantics_section_5():
    assert PROTOCOL == SEMANTICS
    # plain schedule text finds its row: the enums are the strings a step records
    assert PROTOCOL[("acquire", TMA)] is PROTOCOL[(Op.ACQUIRE, TMA)]


def test_tma_never_consumes():
    assert not [key for key in PROTOCOL if key[1] is TMA and Op(key[0]).side is Side.CONSUMER]


def test_every_op_of_the_schedule_vocabulary_has_its_side():
    assert {op.value: op.side.value for op in Op} == {
        "try_acquire": "producer", "acquire": "producer", "commit": "producer", "load": "producer",
        "store": "producer", "mma": "producer", "try_wait": "consumer", "wait": "consumer",
        "release": "consumer", "read": "consumer"}
    assert Step("load", "x").side == "producer" and Step("read", "x").is_work and not Step("wait", "x").is_work


@pytest.mark.parametrize("mode", list(PipelineGroupMode))
def test_each_mode_row_is_semantics_sections_4_and_5(mode):
    ops, side, shared = MODES[mode]
    assert set(mode.group_ops) == ops
    assert mode.collapsed_side == side
    assert mode.shared_barriers == shared
    assert {op for op in SYNC_OPS if is_group_op(mode, op)} == ops


def test_a_probe_is_collapsed_with_its_blocking_op():
    for mode, ops in GROUP_OPS.items():
        assert (Op.TRY_WAIT in ops) == (Op.WAIT in ops) and (Op.TRY_ACQUIRE in ops) == (Op.ACQUIRE in ops), mode


def test_fork_tma_acquire_arms_the_merged_bytes_once_per_group_stage():
    (wait, arm) = member_actions(Fork, "acquire", TMA)
    assert wait == WAIT_EMPTY
    assert (arm.verb, arm.role, arm.who, arm.bytes, arm.once) == ("arrive_expect_tx", "full", "one", "merged", True)
    # the copies still land each member's own bytes
    assert member_actions(Fork, "load", TMA) == (TMA_COPY,)
    # a FusedMerge tma producer arms its own bytes on the shared full barrier (its side is not collapsed)
    assert member_actions(FusedMerge, "acquire", TMA) == SEMANTICS[("acquire", TMA)]
    assert member_actions(Merge, "acquire", TMA) == SEMANTICS[("acquire", TMA)]


def test_a_member_step_that_belongs_on_the_group_object_keeps_its_own_actions():
    # rejected by the schedule rules; if run anyway (validate=False), every member arrives
    assert member_actions(Merge, "release", ASYNC) == SEMANTICS[("release", ASYNC)]
    assert member_actions(Fork, "commit", ASYNC) == SEMANTICS[("commit", ASYNC)]


def test_consumer_work_signals_nothing():
    assert member_actions(None, "read", ASYNC) == member_actions(Merge, "read", UMMA) == ()


@pytest.mark.parametrize("mode,op,kind,want", [
    (Merge, "release", ASYNC, SEMANTICS[("release", ASYNC)]),
    (Merge, "release", UMMA, SEMANTICS[("release", UMMA)]),
    (Fork, "commit", TMA, ()),  # the bytes complete the phase
    (Fork, "commit", ASYNC, SEMANTICS[("commit", ASYNC)]),
    (Fork, "commit", UMMA, SEMANTICS[("commit", UMMA)]),
    (FusedMerge, "try_wait", UMMA, ()),
    (FusedMerge, "wait", ASYNC, (WAIT_FULL,)),
    (FusedMerge, "release", UMMA, SEMANTICS[("release", UMMA)]),
    (Merge, "wait", ASYNC, ()),  # not a collapsed op of Merge
    (Fork, "release", ASYNC, ()),
])
def test_collapsed_ops(mode, op, kind, want):
    assert group_actions(mode, op, kind) == want


# semantics.md section 2: who signals each side (1 = one elected thread, None = every task thread)
SIGNALLERS = {("producer", TMA): 1, ("producer", ASYNC): None, ("producer", UMMA): 1,
              ("consumer", ASYNC): None, ("consumer", UMMA): 1}


@pytest.mark.parametrize("side,kind", list(SIGNALLERS))
def test_the_signaller_column_is_semantics_section_2(side, kind):
    assert expected_threads(side, kind, 96) == (SIGNALLERS[(side, kind)] or 96)
    assert signaller(side, kind) is (Who.ONE if SIGNALLERS[(side, kind)] else Who.ALL)


def test_arrives_on_and_expects_tx():
    assert arrives_on("full", "producer", TMA) and arrives_on("full", "producer", UMMA)
    assert arrives_on("empty", "consumer", ASYNC) and not arrives_on("empty", "producer", TMA)
    assert expects_tx(TMA) and not expects_tx(ASYNC) and not expects_tx(UMMA)


def test_the_layout_reads_its_counts_from_the_table(monkeypatch):
    a = MemoryResource("a", create_umma_umma_pipeline_cfg(num_stages=2))
    b = MemoryResource("b", create_umma_umma_pipeline_cfg(num_stages=2))
    group = PipelineGroup.unchecked("ab", [a, b], Merge)
    assert [s.init_count for s in barrier_layout(group).sets] == [1, 1, 1]
    # if an umma commit did not arrive, its full barriers would expect no arrival
    monkeypatch.setitem(protocol.PROTOCOL, (Op.COMMIT, UMMA), ())
    assert [s.init_count for s in barrier_layout(group).sets] == [0, 0, 1]
    # and if a tma acquire armed no transaction bytes, tx would be 0
    t = MemoryResource("t", create_tma_umma_pipeline_cfg(num_stages=2, num_bytes=64))
    monkeypatch.setitem(protocol.PROTOCOL, (Op.ACQUIRE, TMA), (WAIT_EMPTY,))
    assert barrier_layout(t).sets[0].tx_bytes == 0


def _tma_pair(mode, aliased=False):
    x = MemoryResource("x", create_tma_async_pipeline_cfg(num_stages=2, num_bytes=1024))
    y = MemoryResource("y", create_tma_async_pipeline_cfg(num_stages=2, num_bytes=1024 if aliased else 2048),
                       aliases="x" if aliased else None)
    return PipelineGroup.unchecked("xy", [x, y], mode)


@pytest.mark.parametrize("mode,aliased,tx", [(Fork, False, 3072), (Fork, True, 1024), (FusedMerge, False, 3072)])
def test_the_shared_full_barrier_expects_what_the_acquires_arm(mode, aliased, tx):
    shared = barrier_layout(_tma_pair(mode, aliased)).sets[0]
    assert shared.shared and shared.role == "full" and shared.tx_bytes == tx
    # Fork: one elected producer arms once (count 1); FusedMerge: each producer arms its own
    assert shared.init_count == (1 if mode is Fork else 2)


# -- every consumer of "which ops are collapsed per mode" agrees with the table -----------------------

def _group_step_ops(design):
    grouped = {op for t in design.tasks for s in t.schedule.steps() if s.via == "group" for op in (s.op,)}
    member = {s.op for t in design.tasks for s in t.schedule.steps() if s.via == "member"}
    return grouped, member


@pytest.mark.parametrize("build", [merge_copy, fork_copy, fused_merge_copy, merge_gemm, fork_gemm_act, fused_merge_gemm])
def test_derive_puts_exactly_the_collapsed_ops_on_the_group_object(build):
    d = derive_design(build(), replace_attached=True)
    (g,) = d.groups
    grouped, member = _group_step_ops(d)
    assert grouped == set(g.mode.group_ops)
    assert not member & grouped
    assert d.validate().ok, d.validate()


def _steps(ops, target, via, group):
    return CapturedSchedule("s", (Loop(0, 4, 1, tuple(Step(op, target, via, group) for op in ops)),))


@pytest.mark.parametrize("mode", list(PipelineGroupMode))
@pytest.mark.parametrize("op", [op.value for op in SYNC_OPS])
def test_the_schedule_rules_reject_exactly_the_collapsed_member_ops(mode, op):
    g = _tma_pair(mode)
    groups = {"xy": g}
    codes = [d.code for d in check_schedule("t", _steps([op], "x", "member", "xy"), ["x", "y"], ["x", "y"],
                                            groups, lambda r: g if r in ("x", "y") else None, lambda r: True)]
    assert ("schedule.collapsed_member" in codes) == is_group_op(mode, op), codes
    codes = [d.code for d in check_schedule("t", _steps([op], "xy", "group", "xy"), ["x", "y"], ["x", "y"],
                                            groups, lambda r: g if r in ("x", "y") else None, lambda r: True)]
    assert ("schedule.group_op" in codes) == (not is_group_op(mode, op)), codes


def test_a_merge_that_collapsed_its_waits_would_be_a_fused_merge_everywhere(monkeypatch):
    """Change one row of the table and schedules, rules, shared barriers and layout all follow."""
    design = merge_copy()
    monkeypatch.setitem(protocol.GROUP_OPS, Merge, GROUP_OPS[FusedMerge])
    d = derive_design(design, replace_attached=True)
    grouped, member = _group_step_ops(d)
    assert grouped == {"try_wait", "wait", "release"} and not member & grouped
    assert d.validate().ok, d.validate()
    assert Merge.shared_barriers == ("full", "empty")
    assert [s.label for s in barrier_layout(d).sets] == ["shared_full", "shared_empty"]
    store = resolve(d)["store"]
    waits = [a for s in store.steps() for a in s.actions if a.verb is Verb.WAIT]
    assert {a.set for a in waits} == {"ab.shared_full"}
    # and the hand-written Merge schedule waits per member, which the rules now reject
    assert "schedule.collapsed_member" in {x.code for x in design.validate().errors}
    with pytest.raises(ScheduleError, match="ab.smem_a.try_wait.. is on the collapsed consumer side"):
        merge_copy()


def test_the_resolver_arms_a_fork_once_at_the_last_member_acquire():
    d = fork_gemm_act()
    load = resolve(d)["load_a"]
    arms = [(s.step.target, a.bytes) for s in load.steps() for a in s.actions if a.verb is Verb.ARRIVE_EXPECT_TX]
    members = d.group("fa").member_names
    assert arms == [(members[-1], d.group("fa").merged_config.num_bytes)]


def test_stage_cursors_name_the_cursor_each_resource_is_reached_through():
    plan = resolve(merge_gemm())["mma"]
    assert plan.cursor_of("smem_a", "consumer").name == plan.cursor_of("smem_b", Side.CONSUMER).name == "consumer:ab"
    assert plan.cursor_of("tmem_c", "producer").name == "producer:tmem_c"
    with pytest.raises(KeyError):
        plan.cursor_of("smem_a", "producer")

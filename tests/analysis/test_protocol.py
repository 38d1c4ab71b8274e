"""THE protocol table (semantics.md section 5): every row, the collapsed ops, and that the layout
reads its counts from it."""

import pytest

from pgstudio import PipelineGroup, PipelineGroupMode, barrier_layout
from pgstudio.analysis import protocol
from pgstudio.analysis.protocol import (ALL, COPY, ONE, PROTOCOL, SIGNALLER, Action, arrives_on, expected_threads,
                                        expects_tx, group_actions, member_actions)
from pgstudio.model import MemoryResource, OpKind, create_tma_umma_pipeline_cfg, create_umma_umma_pipeline_cfg

TMA, ASYNC, UMMA = OpKind.TMA, OpKind.ASYNC, OpKind.UMMA
WAIT_EMPTY, WAIT_FULL = Action("wait", "empty", ALL), Action("wait", "full", ALL)

# semantics.md section 5, row by row
SEMANTICS = {
    ("acquire", TMA): (WAIT_EMPTY, Action("arrive_expect_tx", "full", ONE, "own")),
    ("acquire", ASYNC): (WAIT_EMPTY,),
    ("acquire", UMMA): (WAIT_EMPTY,),
    ("work", TMA): (Action("complete_tx", "full", COPY, "own"),),
    ("work", ASYNC): (),
    ("work", UMMA): (),
    ("commit", TMA): (),
    ("commit", ASYNC): (Action("arrive", "full", ALL),),
    ("commit", UMMA): (Action("arrive", "full", ONE),),
    ("wait", ASYNC): (WAIT_FULL,),
    ("wait", UMMA): (WAIT_FULL,),
    ("release", ASYNC): (Action("arrive", "empty", ALL),),
    ("release", UMMA): (Action("arrive", "empty", ONE),),
    ("try_acquire", TMA): (), ("try_acquire", ASYNC): (), ("try_acquire", UMMA): (),
    ("try_wait", ASYNC): (), ("try_wait", UMMA): (),
}


def test_the_table_is_semantics_section_5():
    assert PROTOCOL == SEMANTICS


def test_tma_never_consumes():
    assert not [key for key in PROTOCOL if key[1] is TMA and key[0] in ("wait", "release", "try_wait")]


@pytest.mark.parametrize("op", ["load", "store", "mma"])
def test_every_producer_work_op_is_the_work_row(op):
    assert member_actions(None, op, TMA) == (Action("complete_tx", "full", COPY, "own"),)
    assert member_actions(None, op, ASYNC) == ()


def test_consumer_work_signals_nothing():
    assert member_actions(None, "read", ASYNC) == member_actions("Merge", "read", UMMA) == ()


def test_fork_tma_acquire_arms_the_merged_bytes_once_per_group_stage():
    (wait, arm) = member_actions("Fork", "acquire", TMA)
    assert wait == WAIT_EMPTY
    assert (arm.verb, arm.role, arm.who, arm.bytes, arm.once) == ("arrive_expect_tx", "full", ONE, "merged", "group")
    # a FusedMerge tma producer arms its own bytes on the shared full barrier
    assert member_actions("FusedMerge", "acquire", TMA) == SEMANTICS[("acquire", TMA)]


@pytest.mark.parametrize("mode,op,kind,want", [
    ("Merge", "release", ASYNC, (Action("arrive", "empty", ALL),)),
    ("Merge", "release", UMMA, (Action("arrive", "empty", ONE),)),
    ("Fork", "commit", TMA, ()),  # the bytes complete the phase
    ("Fork", "commit", ASYNC, (Action("arrive", "full", ALL),)),
    ("Fork", "commit", UMMA, (Action("arrive", "full", ONE),)),
    ("FusedMerge", "try_wait", UMMA, ()),
    ("FusedMerge", "wait", ASYNC, (WAIT_FULL,)),
    ("FusedMerge", "release", UMMA, (Action("arrive", "empty", ONE),)),
    ("Merge", "wait", ASYNC, ()),  # not a collapsed op of Merge
    ("Fork", "release", ASYNC, ()),
])
def test_collapsed_ops(mode, op, kind, want):
    assert group_actions(mode, op, kind) == want


@pytest.mark.parametrize("side,kind,task_threads,want", [
    ("producer", TMA, 128, 1), ("producer", ASYNC, 96, 96), ("producer", UMMA, 128, 1),
    ("consumer", ASYNC, 256, 256), ("consumer", UMMA, 128, 1)])
def test_expected_threads(side, kind, task_threads, want):
    assert expected_threads(side, kind, task_threads) == want


def test_signaller_agrees_with_the_arrives_in_the_table():
    for (side, kind), who in SIGNALLER.items():
        ops = ("acquire", "commit") if side == "producer" else ("release",)
        arrivals = [a for op in ops for a in PROTOCOL[(op, kind)] if a.verb.startswith("arrive")]
        assert arrivals and {a.who for a in arrivals} == {who}, (side, kind)


def test_arrives_on_and_expects_tx():
    assert arrives_on("full", "producer", TMA) and arrives_on("full", "producer", UMMA)
    assert arrives_on("empty", "consumer", ASYNC) and not arrives_on("empty", "producer", TMA)
    assert expects_tx(TMA) and not expects_tx(ASYNC) and not expects_tx(UMMA)


def test_the_layout_reads_its_counts_from_the_table(monkeypatch):
    a = MemoryResource("a", create_umma_umma_pipeline_cfg(num_stages=2))
    b = MemoryResource("b", create_umma_umma_pipeline_cfg(num_stages=2))
    group = PipelineGroup("ab", [a, b], PipelineGroupMode.Merge)
    assert [s.init_count for s in barrier_layout(group).sets] == [1, 1, 1]
    # if an umma commit did not arrive, its full barriers would expect no arrival
    monkeypatch.setitem(protocol.PROTOCOL, ("commit", UMMA), ())
    assert [s.init_count for s in barrier_layout(group).sets] == [0, 0, 1]
    # and if a tma acquire armed no transaction bytes, tx would be 0
    t = MemoryResource("t", create_tma_umma_pipeline_cfg(num_stages=2, num_bytes=64))
    monkeypatch.setitem(protocol.PROTOCOL, ("acquire", TMA), (WAIT_EMPTY,))
    assert barrier_layout(t).sets[0].tx_bytes == 0

"""THE protocol table (semantics.md section 5): schedule op x kind -> barrier actions, and which
ops a group mode moves onto the group object.

Nothing else in pgstudio decides who waits on or arrives at which barrier.  Everything derives
from this module: the schedule rules (``schedule_rules.py`` rejects exactly the member ops a mode
collapses), schedule derivation (``derive.py`` puts exactly those ops on the group object), a
group's collapsed side and shared barriers (``PipelineGroupMode``), the layout's init counts and
tx bytes, the validator's expected arrive counts, and the resolver -- through it the simulator,
the checker and both code generators.

Per stage i of a pipeline (S stages, iteration k: i = k % S, round r = k // S)::

    barrier   init count                 who arrives                     who waits (parity)
    full[i]   producer group threads     producer commit / tma bytes     consumer wait   (r & 1)
    empty[i]  consumer group threads     consumer release                producer acquire (r & 1) ^ 1

A fresh empty barrier lets the first S acquires pass (producer parity starts at 1).

Groups (semantics.md sections 4 and 5)::

    mode        ops on the group object    collapsed side   shared barriers
    Merge       release                    consumer         empty
    Fork        commit                     producer         full
    FusedMerge  try_wait, wait, release    consumer         full, empty

Only the first column is written down (``GROUP_OPS``); the others follow from it: the collapsed
side is the side of those ops, and the shared barriers are the barriers they synchronise on
(``SYNCS_ON``).  One task drives the collapsed side, so a shared barrier counts its group once,
and an arrival of that side on a shared barrier happens once per group stage: a member step that
arrives there (the Fork tma producer's ``acquire``, which arms the shared full barrier with
expect_tx) does so once, at the last member, with the group's merged bytes.  Copies still land
each member's own bytes.

Reading the table::

    >>> from pgstudio.model.kinds import OpKind
    >>> [str(a) for a in PROTOCOL[("acquire", OpKind.TMA)]]
    ['wait(empty, all)', 'arrive_expect_tx(full, one, own bytes)']
    >>> fork = PipelineGroupMode.Fork
    >>> fork.group_ops, fork.collapsed_side, fork.shared_barriers
    ((<Op.COMMIT: 'commit'>,), <Side.PRODUCER: 'producer'>, (<Role.FULL: 'full'>,))
    >>> [str(a) for a in member_actions(fork, "acquire", OpKind.TMA)]
    ['wait(empty, all)', 'arrive_expect_tx(full, one, merged bytes, once per group)']
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from .kinds import Bytes, Op, OpKind, Role, Side, Verb, Who


@dataclass(frozen=True)
class Action:
    """One barrier action of a schedule step.

    ``verb``: wait (parity wait), arrive, arrive_expect_tx (expect ``bytes`` then arrive once,
    atomically) or complete_tx (the copy's bytes land).  ``role``: the member's full or empty
    barrier (the layout resolves it to a private or shared set).  ``who``: one elected thread,
    all threads of the task, or the copy engine.  ``bytes``: the member's own or the group's
    merged bytes.  ``once``: performed once per group stage rather than per member (an arrival
    of a group's collapsed side on a barrier it shares).  ``after_mma``: the arrival fires once
    the MMAs issued before it have completed (umma's commit-arrive: tcgen05.commit on sm_100a,
    an elected arrive after wgmma.wait_group on sm_90a).
    """

    verb: Verb
    role: Role
    who: Who = Who.ALL
    bytes: Bytes = Bytes.NONE
    once: bool = False
    after_mma: bool = False

    def __str__(self) -> str:
        extra = f", {self.bytes} bytes" if self.bytes else ""
        once = ", once per group" if self.once else ""
        return f"{self.verb}({self.role}, {self.who}{extra}{once})"


def _wait(role: Role) -> Action:
    return Action(Verb.WAIT, role, Who.ALL)


def _mma_arrive(role: Role) -> Action:
    return Action(Verb.ARRIVE, role, Who.ONE, after_mma=True)


_TMA, _ASYNC, _UMMA = OpKind.TMA, OpKind.ASYNC, OpKind.UMMA
#: Producer work (load, store, mma) of each producer kind: a tma copy completes its bytes.
_PRODUCER_WORK = {_TMA: (Action(Verb.COMPLETE_TX, Role.FULL, Who.COPY, Bytes.OWN),), _ASYNC: (), _UMMA: ()}

#: (op, kind of the op's side) -> actions, for an ungrouped resource or a group member.
PROTOCOL: dict[tuple[Op, OpKind], tuple[Action, ...]] = {
    (Op.ACQUIRE, _TMA): (_wait(Role.EMPTY), Action(Verb.ARRIVE_EXPECT_TX, Role.FULL, Who.ONE, Bytes.OWN)),
    (Op.ACQUIRE, _ASYNC): (_wait(Role.EMPTY),),
    (Op.ACQUIRE, _UMMA): (_wait(Role.EMPTY),),
    **{(op, kind): acts for op in (Op.LOAD, Op.STORE, Op.MMA) for kind, acts in _PRODUCER_WORK.items()},
    (Op.COMMIT, _TMA): (),  # the bytes complete the phase
    (Op.COMMIT, _ASYNC): (Action(Verb.ARRIVE, Role.FULL, Who.ALL),),
    (Op.COMMIT, _UMMA): (_mma_arrive(Role.FULL),),
    (Op.WAIT, _ASYNC): (_wait(Role.FULL),),
    (Op.WAIT, _UMMA): (_wait(Role.FULL),),
    (Op.READ, _ASYNC): (),
    (Op.READ, _UMMA): (),
    (Op.RELEASE, _ASYNC): (Action(Verb.ARRIVE, Role.EMPTY, Who.ALL),),
    (Op.RELEASE, _UMMA): (_mma_arrive(Role.EMPTY),),
    (Op.TRY_ACQUIRE, _TMA): (),  # a probe: no state change
    (Op.TRY_ACQUIRE, _ASYNC): (),
    (Op.TRY_ACQUIRE, _UMMA): (),
    (Op.TRY_WAIT, _ASYNC): (),
    (Op.TRY_WAIT, _UMMA): (),
}

#: The barrier each barrier op synchronises on: the one it waits for or signals.
SYNCS_ON: dict[Op, Role] = {
    Op.TRY_ACQUIRE: Role.EMPTY, Op.ACQUIRE: Role.EMPTY, Op.COMMIT: Role.FULL,
    Op.TRY_WAIT: Role.FULL, Op.WAIT: Role.FULL, Op.RELEASE: Role.EMPTY,
}
#: The side that arrives on each barrier (the other side waits on it).
ARRIVER: dict[Role, Side] = {Role.FULL: Side.PRODUCER, Role.EMPTY: Side.CONSUMER}
#: The op that closes a side's bracket and advances its (index, phase) cursor.
ADVANCES: dict[Side, Op] = {Side.PRODUCER: Op.COMMIT, Side.CONSUMER: Op.RELEASE}
#: Phase a fresh cursor starts at (a fresh empty barrier lets the first S acquires pass).
START_PHASE: dict[Side, int] = {Side.PRODUCER: 1, Side.CONSUMER: 0}

#: Why a side signals as it does (quoted in diagnostics; the thread count itself comes from
#: ``signaller``, i.e. from the table).
SIGNALLER_WHY: dict[tuple[Side, OpKind], str] = {
    (Side.PRODUCER, _TMA): "one elected thread arrives with expect_tx and the copy completes the bytes",
    (Side.PRODUCER, _ASYNC): "every async producer thread arrives",
    (Side.PRODUCER, _UMMA): "one elected thread commit-arrives once the MMA has completed",
    (Side.CONSUMER, _ASYNC): "every async consumer thread arrives",
    (Side.CONSUMER, _UMMA): "one elected thread commit-arrives once the MMA has read the stage",
}


# -- group modes ---------------------------------------------------------------------------------

class PipelineGroupMode(str, Enum):
    """Which side a group collapses onto one barrier set; its row of ``GROUP_OPS`` says how."""

    Merge = "Merge"  # N producers -> 1 consumer: shared empty barrier
    Fork = "Fork"  # 1 producer -> N consumers: shared full barrier
    FusedMerge = "FusedMerge"  # N producers -> 1 consumer: shared full AND shared empty

    @property
    def group_ops(self) -> tuple[Op, ...]:
        """The ops that go on the group object (its collapsed stage), emitted once for all members."""
        return GROUP_OPS[self]

    @property
    def collapsed_side(self) -> Side:
        """The side whose ops go on the group object (one task drives it, with one kind and size)."""
        return self.group_ops[0].side

    @property
    def shared_barriers(self) -> tuple[Role, ...]:
        """The barriers the members share: those the group object's ops synchronise on."""
        roles = {SYNCS_ON[op] for op in self.group_ops}
        return tuple(r for r in Role if r in roles)

    def __str__(self) -> str:
        return self.value


#: THE collapsed ops: per mode, the ops on the group object; as ``group.member`` steps they are
#: rejected (semantics.md section 6).
GROUP_OPS: dict[PipelineGroupMode, tuple[Op, ...]] = {
    PipelineGroupMode.Merge: (Op.RELEASE,),
    PipelineGroupMode.Fork: (Op.COMMIT,),
    PipelineGroupMode.FusedMerge: (Op.TRY_WAIT, Op.WAIT, Op.RELEASE),
}


def is_group_op(mode: PipelineGroupMode | str, op: str) -> bool:
    """Does ``op`` go on the group object (once for every member) in ``mode``?"""
    return op in GROUP_OPS[mode if isinstance(mode, PipelineGroupMode) else PipelineGroupMode(mode)]


def arrives_once(mode: PipelineGroupMode | str, role: Role | str) -> bool:
    """Is ``role`` a barrier of the group that its collapsed side arrives on -- once per stage,
    counted once in the init count?"""
    mode = PipelineGroupMode(mode)
    return role in mode.shared_barriers and ARRIVER[Role(role)] == mode.collapsed_side


# -- lookups ---------------------------------------------------------------------------------------

#: The schedule vocabulary by side, and each op's side by its text (``Op.side``, looked up once).
_OPS_OF = {side: tuple(op for op in Op if op.side is side) for side in Side}
_SIDE_OF = {op.value: op.side for op in Op}


def member_actions(mode: PipelineGroupMode | str | None, op: str, kind: OpKind) -> tuple[Action, ...]:
    """Actions of a bare (``mode`` None) or ``group.member`` step.

    A member step of the collapsed side that arrives on a barrier the group shares arrives once
    per group stage with the merged bytes.  A member step that belongs on the group object
    (rejected by the schedule rules) keeps its per-member actions: that is what it would do."""
    acts = PROTOCOL.get((op, kind), ())
    if mode is None or not acts or is_group_op(mode, op) or _SIDE_OF[op] != PipelineGroupMode(mode).collapsed_side:
        return acts
    return tuple(replace(a, once=True, bytes=Bytes.MERGED if a.bytes else a.bytes)
                 if a.verb.arrives and arrives_once(mode, a.role) else a for a in acts)


def group_actions(mode: PipelineGroupMode | str, op: str, kind: OpKind) -> tuple[Action, ...]:
    """Actions of a step on the group object (``kind``: the collapsed kind); none for an op that
    does not go there (rejected by the schedule rules)."""
    return PROTOCOL.get((op, kind), ()) if is_group_op(mode, op) else ()


def side_actions(side: Side | str, kind: OpKind) -> tuple[Action, ...]:
    """Every action the ops of ``side`` perform for ``kind``."""
    return tuple(a for op in _OPS_OF[side] for a in PROTOCOL.get((op, kind), ()))


def signaller(side: Side | str, kind: OpKind) -> Who | None:
    """Who arrives for ``side`` of ``kind`` (semantics.md section 2), or None if it never does."""
    whos = {a.who for a in side_actions(side, kind) if a.verb.arrives}
    if len(whos) > 1:  # pragma: no cover - a table edit that mixed them would be a bug
        raise ValueError(f"the protocol table mixes who arrives for {side} {kind}: {sorted(whos)}")
    return whos.pop() if whos else None


def expected_threads(side: Side | str, kind: OpKind, task_threads: int) -> int:
    """Threads that arrive per phase for ``side`` of ``kind`` when ``task_threads`` run it."""
    return 1 if signaller(side, kind) is Who.ONE else task_threads


def arrives_on(role: Role | str, side: Side | str, kind: OpKind) -> bool:
    """Does ``side`` of ``kind`` arrive on its ``role`` barrier (per the table)?"""
    return any(a.role == role and a.verb.arrives for a in side_actions(side, kind))


def wait_parity(side: Side | str, rnd: int) -> int:
    """The parity a ``side``'s wait passes on in round ``rnd`` of a stage (iteration ``rnd * S +
    stage``): its cursor's phase, which starts at ``START_PHASE`` and flips every round.  The
    consumer waits on full with ``r & 1``; the producer on empty with ``(r & 1) ^ 1``, so a fresh
    empty barrier (phase "-1" complete) lets the first round pass.

    >>> [wait_parity("consumer", r) for r in range(3)], [wait_parity("producer", r) for r in range(3)]
    ([0, 1, 0], [1, 0, 1])
    """
    return (rnd & 1) ^ START_PHASE[side]  # a Side is its string, so either keys the table


def waiter(role: Role | str) -> Side:
    """The side that waits on a ``role`` barrier (the other side arrives on it)."""
    return Side.CONSUMER if ARRIVER[Role(role)] is Side.PRODUCER else Side.PRODUCER


def expects_tx(kind: OpKind) -> bool:
    """Does a producer of ``kind`` arm transaction bytes on its full barrier?"""
    return any(a.verb is Verb.ARRIVE_EXPECT_TX for a in side_actions(Side.PRODUCER, kind))


__all__ = ["ADVANCES", "ARRIVER", "Action", "GROUP_OPS", "PROTOCOL", "PipelineGroupMode", "SIGNALLER_WHY",
           "START_PHASE", "SYNCS_ON", "arrives_on", "arrives_once", "expected_threads", "expects_tx",
           "group_actions", "is_group_op", "member_actions", "side_actions", "signaller", "wait_parity", "waiter"]

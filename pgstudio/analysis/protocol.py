"""THE protocol table (semantics.md section 5): schedule op x kind -> barrier actions.

This one table drives the layout's init counts and tx bytes, the simulator, the checker and the
code generator.  Nothing else in pgstudio decides who waits on or arrives at which barrier.

Per stage i of a pipeline (S stages, iteration k: i = k % S, round r = k // S)::

    barrier   init count                 who arrives                     who waits (parity)
    full[i]   producer group threads     producer commit / tma bytes     consumer wait   (r & 1)
    empty[i]  consumer group threads     consumer release                producer acquire (r & 1) ^ 1

A fresh empty barrier lets the first S acquires pass (producer parity starts at 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.kinds import OpKind

#: How many threads of a side perform an arrive: "one" elected thread, or "all" of the task.
ONE = "one"
ALL = "all"
#: The copy engine: completes transaction bytes, is no thread.
COPY = "copy"


@dataclass(frozen=True)
class Action:
    """One barrier action of a schedule step.

    ``verb``: ``wait`` (parity wait), ``arrive``, ``arrive_expect_tx`` (expect ``bytes`` then
    arrive once, atomically) or ``complete_tx`` (the copy's bytes land).  ``role``: the member's
    ``full`` or ``empty`` barrier (the layout resolves it to a private or shared set).  ``who``:
    ONE, ALL or COPY.  ``bytes``: "own" (the member's num_bytes) or "merged" (the group's).
    ``once``: "group" for an action performed once per group stage rather than per member (the
    Fork tma producer arms the shared full barrier once, at its last member acquire).
    """

    verb: str
    role: str
    who: str = ALL
    bytes: str = ""
    once: str = ""

    def __str__(self) -> str:
        extra = f", {self.bytes} bytes" if self.bytes else ""
        return f"{self.verb}({self.role}, {self.who}{extra})"


def _wait(role: str) -> Action:
    return Action("wait", role, ALL)


#: (op, kind of the op's side) -> actions, for an ungrouped resource or a group member.
PROTOCOL: dict[tuple[str, OpKind], tuple[Action, ...]] = {
    ("acquire", OpKind.TMA): (_wait("empty"), Action("arrive_expect_tx", "full", ONE, "own")),
    ("acquire", OpKind.ASYNC): (_wait("empty"),),
    ("acquire", OpKind.UMMA): (_wait("empty"),),
    ("work", OpKind.TMA): (Action("complete_tx", "full", COPY, "own"),),
    ("work", OpKind.ASYNC): (),
    ("work", OpKind.UMMA): (),
    ("commit", OpKind.TMA): (),
    ("commit", OpKind.ASYNC): (Action("arrive", "full", ALL),),
    ("commit", OpKind.UMMA): (Action("arrive", "full", ONE),),
    ("wait", OpKind.ASYNC): (_wait("full"),),
    ("wait", OpKind.UMMA): (_wait("full"),),
    ("release", OpKind.ASYNC): (Action("arrive", "empty", ALL),),
    ("release", OpKind.UMMA): (Action("arrive", "empty", ONE),),
    ("try_acquire", OpKind.TMA): (),
    ("try_acquire", OpKind.ASYNC): (),
    ("try_acquire", OpKind.UMMA): (),
    ("try_wait", OpKind.ASYNC): (),
    ("try_wait", OpKind.UMMA): (),
}

#: Member steps a group changes: (mode, op, kind) -> actions replacing PROTOCOL's.
MEMBER_OVERRIDES: dict[tuple[str, str, OpKind], tuple[Action, ...]] = {
    # Fork, tma producer: each member acquire waits its own empty; the shared full barrier is
    # armed once per stage with the merged bytes (at the last member acquire).
    ("Fork", "acquire", OpKind.TMA): (_wait("empty"), Action("arrive_expect_tx", "full", ONE, "merged", once="group")),
}

#: Collapsed steps on the group object: (mode, op) -> actions; the op's side kind is the
#: collapsed kind, looked up in PROTOCOL and re-targeted at the shared barrier once.
COLLAPSED_OPS: dict[tuple[str, str], str] = {
    ("Merge", "release"): "release",
    ("Fork", "commit"): "commit",
    ("FusedMerge", "try_wait"): "try_wait",
    ("FusedMerge", "wait"): "wait",
    ("FusedMerge", "release"): "release",
}

#: Who signals each side, by kind (semantics.md section 2): the validator's expected thread count.
SIGNALLER: dict[tuple[str, OpKind], str] = {
    ("producer", OpKind.TMA): ONE,
    ("producer", OpKind.ASYNC): ALL,
    ("producer", OpKind.UMMA): ONE,
    ("consumer", OpKind.ASYNC): ALL,
    ("consumer", OpKind.UMMA): ONE,
}

#: Why a side signals as it does (quoted in diagnostics).
SIGNALLER_WHY: dict[tuple[str, OpKind], str] = {
    ("producer", OpKind.TMA): "one elected thread arrives with expect_tx and the copy completes the bytes",
    ("producer", OpKind.ASYNC): "every async producer thread arrives",
    ("producer", OpKind.UMMA): "one elected thread commit-arrives once the MMA has completed",
    ("consumer", OpKind.ASYNC): "every async consumer thread arrives",
    ("consumer", OpKind.UMMA): "one elected thread commit-arrives once the MMA has read the stage",
}


def step_kind_op(op: str) -> str:
    """The table row of a schedule op: work ops share the row "work"."""
    return "work" if op in ("load", "store", "mma") else op


def member_actions(mode: str | None, op: str, kind: OpKind) -> tuple[Action, ...]:
    """Actions of a bare or ``group.member`` step (``mode`` None when ungrouped)."""
    row = step_kind_op(op)
    if row == "read":
        return ()
    if mode is not None and (mode, row, kind) in MEMBER_OVERRIDES:
        return MEMBER_OVERRIDES[(mode, row, kind)]
    return PROTOCOL.get((row, kind), ())


def group_actions(mode: str, op: str, kind: OpKind) -> tuple[Action, ...]:
    """Actions of a collapsed step on the group object (``kind``: the collapsed kind)."""
    row = COLLAPSED_OPS.get((mode, op))
    if row is None:
        return ()
    return PROTOCOL.get((row, kind), ())


def expected_threads(side: str, kind: OpKind, task_threads: int) -> int:
    """Threads that arrive per phase for ``side`` of ``kind`` when ``task_threads`` run it."""
    return 1 if SIGNALLER[(side, kind)] == ONE else task_threads


def arrives_on(role: str, side: str, kind: OpKind) -> bool:
    """Does ``side`` of ``kind`` arrive on its ``role`` barrier (per the table)?"""
    ops = ("acquire", "commit") if side == "producer" else ("release",)
    return any(a.role == role and a.verb in ("arrive", "arrive_expect_tx")
               for op in ops for a in PROTOCOL.get((op, kind), ()))


def expects_tx(kind: OpKind) -> bool:
    """Does a producer of ``kind`` arm transaction bytes on its full barrier?"""
    return any(a.verb == "arrive_expect_tx" for a in PROTOCOL.get(("acquire", kind), ()))

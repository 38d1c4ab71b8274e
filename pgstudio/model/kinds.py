"""The words of the protocol, as enums: kinds and pipeline types (semantics.md section 1), and
the sides, barriers, schedule ops and barrier actions the protocol table (``protocol.py``) is
written in.

A pipeline type is ``<Producer><Consumer>``: TMA only produces; ``async`` work is done by
threads; ``umma`` is tensor-core MMA signalled by one elected thread.

The protocol enums are ``StrEnum``: a member equals, hashes and formats as its value, so a
schedule step recorded as plain text (``Step.op == "acquire"``) finds its row of the table, and
saved designs and messages read the same as before.
"""

from __future__ import annotations

from enum import Enum, StrEnum

__all__ = [
    "OpKind",
    "AsyncProducerOp",
    "Agent",
    "PipelineType",
    "Side",
    "Role",
    "Op",
    "Verb",
    "Who",
    "Bytes",
]


class OpKind(str, Enum):
    """Who performs one side of a pipeline, and so how that side signals its barrier."""

    TMA = "tma"
    ASYNC = "async"
    UMMA = "umma"

    def __str__(self) -> str:
        return self.value


class AsyncProducerOp(str, Enum):
    """How an async producer's writes reach the full barrier."""

    AsyncThread = "AsyncThread"  # plain stores, then every thread arrives
    AsyncLoad = "AsyncLoad"  # cp.async, completion arrives through cp.async.mbarrier.arrive

    def __str__(self) -> str:
        return self.value


class Agent(str, Enum):
    """Unit of a cooperative group: a size counts threads or warps."""

    Thread = "Thread"
    Warp = "Warp"

    def __str__(self) -> str:
        return self.value


class PipelineType(str, Enum):
    """The six pipeline types, named producer kind then consumer kind."""

    AsyncAsync = "AsyncAsync"
    TmaAsync = "TmaAsync"
    TmaUmma = "TmaUmma"
    UmmaAsync = "UmmaAsync"
    AsyncUmma = "AsyncUmma"
    UmmaUmma = "UmmaUmma"

    @property
    def producer_kind(self) -> OpKind:
        return _KINDS[self][0]

    @property
    def consumer_kind(self) -> OpKind:
        return _KINDS[self][1]

    def kind(self, side: str) -> OpKind:
        """The kind of ``side`` (``Side.PRODUCER`` or ``Side.CONSUMER``)."""
        return self.producer_kind if side == Side.PRODUCER else self.consumer_kind

    def __str__(self) -> str:
        return self.value


_KINDS = {
    PipelineType.AsyncAsync: (OpKind.ASYNC, OpKind.ASYNC),
    PipelineType.TmaAsync: (OpKind.TMA, OpKind.ASYNC),
    PipelineType.TmaUmma: (OpKind.TMA, OpKind.UMMA),
    PipelineType.UmmaAsync: (OpKind.UMMA, OpKind.ASYNC),
    PipelineType.AsyncUmma: (OpKind.ASYNC, OpKind.UMMA),
    PipelineType.UmmaUmma: (OpKind.UMMA, OpKind.UMMA),
}


# -- the protocol's words ------------------------------------------------------------------------

class Side(StrEnum):
    """The two ends of a pipeline: the producer fills stages, the consumer empties them."""

    PRODUCER = "producer"
    CONSUMER = "consumer"

    @property
    def other(self) -> "Side":
        return Side.CONSUMER if self is Side.PRODUCER else Side.PRODUCER


class Role(StrEnum):
    """The two barriers of a stage: ``full`` (the stage holds data) and ``empty`` (it may be
    overwritten)."""

    FULL = "full"
    EMPTY = "empty"


class Op(StrEnum):
    """The schedule ops a task records (``SyncSteps`` / ``WorkSteps``), with the side each is on."""

    TRY_ACQUIRE = "try_acquire"
    ACQUIRE = "acquire"
    COMMIT = "commit"
    TRY_WAIT = "try_wait"
    WAIT = "wait"
    RELEASE = "release"
    LOAD = "load"
    STORE = "store"
    MMA = "mma"
    READ = "read"

    @property
    def side(self) -> Side:
        """Producer ops: try_acquire, acquire, commit and the work load / store / mma; the rest
        (try_wait, wait, release, read) are the consumer's."""
        return _CONSUMER if self in _CONSUMER_OPS else _PRODUCER

    @property
    def is_work(self) -> bool:
        """Work (a copy, a store, an MMA, a read) rather than a barrier operation."""
        return self in _WORK_OPS


_PRODUCER, _CONSUMER = Side.PRODUCER, Side.CONSUMER
_CONSUMER_OPS = frozenset((Op.TRY_WAIT, Op.WAIT, Op.RELEASE, Op.READ))
_WORK_OPS = frozenset((Op.LOAD, Op.STORE, Op.MMA, Op.READ))


class Verb(StrEnum):
    """What a barrier action does to one mbarrier."""

    WAIT = "wait"  # parity wait
    ARRIVE = "arrive"
    ARRIVE_EXPECT_TX = "arrive_expect_tx"  # expect the bytes, then arrive once (atomically)
    COMPLETE_TX = "complete_tx"  # a copy's bytes land

    @property
    def arrives(self) -> bool:
        """Does the action count one arrival of the barrier's phase?"""
        return self in (Verb.ARRIVE, Verb.ARRIVE_EXPECT_TX)


class Who(StrEnum):
    """Who performs an action: one elected thread, all threads of the task, or the copy engine
    (which completes transaction bytes and is no thread)."""

    ONE = "one"
    ALL = "all"
    COPY = "copy"


class Bytes(StrEnum):
    """The transaction bytes an action carries: none, the member's own, or the group's merged."""

    NONE = ""
    OWN = "own"
    MERGED = "merged"

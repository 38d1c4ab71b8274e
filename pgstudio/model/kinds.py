"""Operation kinds and pipeline types (semantics.md section 1).

A pipeline type is ``<Producer><Consumer>``: TMA only produces; ``async`` work is done by
threads; ``umma`` is tensor-core MMA signalled by one elected thread.
"""

from __future__ import annotations

from enum import Enum


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
        """The kind of ``side`` ("producer" or "consumer")."""
        return self.producer_kind if side == "producer" else self.consumer_kind

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


def pipeline_type_of(producer: OpKind, consumer: OpKind) -> PipelineType | None:
    """The type with these kinds, or None (TMA never consumes)."""
    for ptype, kinds in _KINDS.items():
        if kinds == (producer, consumer):
            return ptype
    return None

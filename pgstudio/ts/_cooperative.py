"""Cooperative groups as TS (and CUTLASS) spell them, and how pgstudio's model reads them.

A TS barrier is initialised (``cutlass.pipeline``'s thread-arrive count) with ``size`` arrivals
for an ``Agent.Thread`` group and ``size x 32`` for an ``Agent.Warp`` group: that is what a kernel
built by TS waits for, and what pgstudio's model means too (``CooperativeGroup(Agent.Warp, 4)`` is
128 threads).  So a group reads across unchanged, and an exported script writes every group as
``Agent.Thread`` with its thread count: TS's checks compare ``size`` with a task's threads
(warps x 32) whatever the agent, and ``Thread`` is the one agent both of TS's layers read alike.

>>> CooperativeGroup(Agent.Warp, 2).to_model("consumer_group").num_threads  # TS: 64 arrivals
64
>>> CooperativeGroup.text(CooperativeGroup(Agent.Warp, 2).to_model("consumer_group"))
'CooperativeGroup(Agent.Thread, 64)'
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..errors import DesignError
from ..model.config import CooperativeGroup as ModelGroup
from ..model.kinds import Agent as ModelAgent
from ..model.kinds import AsyncProducerOp

WARP_THREADS = 32


class Agent(Enum):
    """TS's agents (``cutlass.pipeline.Agent``); pgstudio models threads and warps of one block."""

    Thread = 1
    Warp = 2
    ThreadBlock = 3
    ThreadBlockCluster = 4


class PipelineOp(Enum):
    """TS's pipeline operations (``cutlass.pipeline.PipelineOp``).  An async producer is
    ``AsyncThread`` (stores, then every thread arrives) or ``AsyncLoad`` (cp.async completion)."""

    AsyncThread = 1
    TCGen05Mma = 2
    TmaLoad = 3
    ClcLoad = 4
    TmaStore = 5
    Composite = 6
    AsyncLoad = 7


@dataclass(frozen=True)
class CooperativeGroup:
    """``CooperativeGroup(agent, size, alignment=None)``: ``size`` threads or ``size`` warps, as TS's
    barrier initialisation counts them."""

    agent: Agent
    size: int = 1
    alignment: int | None = None

    def to_model(self, where: str) -> ModelGroup:
        """The model's group with the same arrive count (module docstring)."""
        size = self.size
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise DesignError(f"ts: {where}: CooperativeGroup size is {size!r}, expected a whole number >= 1",
                              code="config.group_size", hint="give the number of threads that arrive")
        if self.agent is Agent.Thread:
            return ModelGroup(ModelAgent.Thread, size)
        if self.agent is Agent.Warp:
            return ModelGroup(ModelAgent.Warp, size)
        raise DesignError(f"ts: {where}: CooperativeGroup(Agent.{getattr(self.agent, 'name', self.agent)}, ...) "
                          f"cannot be modelled yet: pgstudio models the threads and warps of one block",
                          code="ts.unsupported", hint="use Agent.Thread (or Agent.Warp) with the arrive count")

    @staticmethod
    def text(group: ModelGroup) -> str:
        """How an exported script writes a model group: ``Agent.Thread`` and its thread count, which
        TS's checks and TS's barrier initialisation both read as the arrive count."""
        from ._script_text import integer  # the script's one gate for design values
        integer(group.size, "CooperativeGroup size")  # a whole number, before it is multiplied
        threads = group.size * WARP_THREADS if group.agent is ModelAgent.Warp else group.size
        return f"CooperativeGroup(Agent.Thread, {integer(threads, 'CooperativeGroup size')})"


def producer_op(op: object, where: str) -> AsyncProducerOp:
    """TS's ``producer_op`` as the model's ``AsyncProducerOp`` (only the two async producer ops)."""
    name = getattr(op, "name", op)
    if name in ("AsyncThread", "AsyncLoad"):
        return AsyncProducerOp(name)
    raise DesignError(f"ts: {where}: producer_op {op!r} is not an async producer op, expected PipelineOp.AsyncThread "
                      f"or PipelineOp.AsyncLoad", code="config.enum", hint="use PipelineOp.AsyncThread or AsyncLoad")


__all__ = ["Agent", "CooperativeGroup", "PipelineOp", "producer_op"]

"""Cooperative groups as TS (and CUTLASS) spell them, and how pgstudio's model reads them.

In TS a ``CooperativeGroup(agent, size)`` contributes ``size`` arrivals to its side's barrier,
whatever its agent: TS checks an async side's ``size`` against the task's threads (warps x 32)
and sums and compares raw sizes when it merges groups.  pgstudio's model counts a ``Warp`` group
in warps (``CooperativeGroup(Agent.Warp, 4)`` is 128 threads).  This module is the one place that
translates: a TS ``Warp`` group of ``size`` threads is a model ``Warp`` group of ``size // 32``
warps when ``size`` is a whole number of warps, otherwise ``size`` single threads.

>>> CooperativeGroup(Agent.Warp, 64).to_model("consumer_group")  # two warps, 64 arrivals
CooperativeGroup(agent=<Agent.Warp: 'Warp'>, size=2)
>>> CooperativeGroup(Agent.Warp, 4).to_model("consumer_group").num_threads  # TS: 4 arrivals
4
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
    """``CooperativeGroup(agent, size, alignment=None)``: ``size`` arrivals per phase (TS's meaning)."""

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
            if size % WARP_THREADS == 0:
                return ModelGroup(ModelAgent.Warp, size // WARP_THREADS)
            return ModelGroup(ModelAgent.Thread, size)
        raise DesignError(f"ts: {where}: CooperativeGroup(Agent.{getattr(self.agent, 'name', self.agent)}, ...) "
                          f"cannot be modelled yet: pgstudio models the threads and warps of one block",
                          code="ts.unsupported", hint="use Agent.Thread (or Agent.Warp) with the arrive count")

    @staticmethod
    def text(group: ModelGroup) -> str:
        """How an exported script writes a model group: TS's size is the thread count."""
        from ._script_text import integer  # the script's one gate for design values
        size = integer(group.size, "CooperativeGroup size")
        if group.agent is ModelAgent.Warp:
            return f"CooperativeGroup(Agent.Warp, {group.size * WARP_THREADS})"
        return f"CooperativeGroup(Agent.Thread, {size})"


def producer_op(op: object, where: str) -> AsyncProducerOp:
    """TS's ``producer_op`` as the model's ``AsyncProducerOp`` (only the two async producer ops)."""
    name = getattr(op, "name", op)
    if name in ("AsyncThread", "AsyncLoad"):
        return AsyncProducerOp(name)
    raise DesignError(f"ts: {where}: producer_op {op!r} is not an async producer op, expected PipelineOp.AsyncThread "
                      f"or PipelineOp.AsyncLoad", code="config.enum", hint="use PipelineOp.AsyncThread or AsyncLoad")


__all__ = ["Agent", "CooperativeGroup", "PipelineOp", "producer_op"]

"""Cooperative groups and pipeline configs (semantics.md section 2).

A ``PipelineConfig`` describes one pipelined resource as if it stood alone: its type, stage
count, bytes landing per stage and who produces / consumes it.  Build it through the six
``create_*_pipeline_cfg`` factories (keyword-only, as in TS); they check the config and raise
``DesignError`` naming the field.  The dataclasses check only the value domain (``limits``:
stages, bytes and group sizes in range), so that every config that exists can be laid out and
run; the tma alignment rule is a diagnostic, so a file or the studio can hold such a config and
``Design.validate()`` can report it with everything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar, Iterator

from ..errors import DesignError
from .diagnostic import Diagnostic, error, raise_first
from .kinds import Agent, AsyncProducerOp, OpKind, PipelineType
from .limits import MAX_STAGE_BYTES, MAX_STAGES, MAX_THREADS, MAX_WARPS, check_whole

__all__ = [
    "TMA_BYTES_ALIGN",
    "CooperativeGroup",
    "group_for_threads",
    "threads_text",
    "ONE_THREAD",
    "WARPGROUP",
    "PipelineConfig",
    "check_config",
    "create_async_async_pipeline_cfg",
    "create_tma_async_pipeline_cfg",
    "create_tma_umma_pipeline_cfg",
    "create_umma_async_pipeline_cfg",
    "create_async_umma_pipeline_cfg",
    "create_umma_umma_pipeline_cfg",
    "FACTORIES",
]

#: Bytes a tma bulk copy moves must be a multiple of this (cp.async.bulk granularity).
TMA_BYTES_ALIGN = 16


def _coerce(enum: type, value: object, what: str):
    """``value`` as a member of ``enum`` (its string value works too), else ``DesignError``."""
    try:
        return enum(value)
    except (ValueError, TypeError):
        allowed = ", ".join(e.value for e in enum)
        raise DesignError(f"{what} {value!r} is not one of {allowed}", code="config.enum",
                          hint=f"use {enum.__name__}.<name>") from None


@dataclass(frozen=True)
class CooperativeGroup:
    """``size`` threads or warps that act together on one side of a pipeline."""

    agent: Agent = Agent.Thread
    size: int = 1

    def __post_init__(self) -> None:
        # "Warp" must count 32 threads whether it came as the enum or as its string (files, studio).
        object.__setattr__(self, "agent", _coerce(Agent, self.agent, "cooperative group agent"))
        high = MAX_WARPS if self.agent is Agent.Warp else MAX_THREADS
        check_whole(self.size, f"cooperative group size ({self.agent.value})", 1, high, "config.group_size",
                    f"give CooperativeGroup(Agent.{self.agent.value}, n) with 1 <= n <= {high} (one block)")

    @property
    def num_threads(self) -> int:
        """Threads in the group: the arrive count it contributes when every thread arrives."""
        return self.size * 32 if self.agent is Agent.Warp else self.size

    def __str__(self) -> str:
        return f"{self.size} {self.agent.value.lower()}{'s' if self.size != 1 else ''}"


def group_for_threads(threads: int, agent: Agent | str = Agent.Warp) -> CooperativeGroup:
    """The cooperative group of ``threads`` threads in the units a form shows (``agent``): whole
    warps stay warps, anything else counts threads."""
    if Agent(getattr(agent, "value", agent)) is Agent.Warp and threads % 32 == 0:
        return CooperativeGroup(Agent.Warp, threads // 32)
    return CooperativeGroup(Agent.Thread, threads)


def threads_text(threads: int, agent: Agent | str = Agent.Thread) -> str:
    """``threads`` as a person reads it next to an ``agent`` selector: "1 Warp (32 threads)"
    beside Warp (typing 32 there would give 1024 threads), "128 threads" beside Thread."""
    g = group_for_threads(threads, agent)
    if g.agent is Agent.Warp:
        return f"{g.size} Warp{'s' if g.size != 1 else ''} ({threads} threads)"
    return f"{threads} thread{'s' if threads != 1 else ''}"


#: Default group of a side signalled by one elected thread (tma, umma).
ONE_THREAD = CooperativeGroup(Agent.Thread, 1)
#: Default group of an async side: one warpgroup (4 warps, 128 threads).
WARPGROUP = CooperativeGroup(Agent.Warp, 4)


@dataclass(frozen=True)
class PipelineConfig:
    """One pipeline's parameters; see the module docstring. Use the factories."""

    pipeline_type: PipelineType
    num_stages: int = 2
    num_bytes: int = 0
    producer_group: CooperativeGroup = field(default=ONE_THREAD)
    consumer_group: CooperativeGroup = field(default=ONE_THREAD)
    async_producer_op: AsyncProducerOp = AsyncProducerOp.AsyncThread

    def __post_init__(self) -> None:
        object.__setattr__(self, "pipeline_type", _coerce(PipelineType, self.pipeline_type, "pipeline_type"))
        object.__setattr__(self, "async_producer_op",
                           _coerce(AsyncProducerOp, self.async_producer_op, "async_producer_op"))
        check_whole(self.num_stages, "num_stages", 1, MAX_STAGES, "config.num_stages",
                    "give num_stages=2 or more to overlap producer and consumer")
        check_whole(self.num_bytes, "num_bytes", 0, MAX_STAGE_BYTES, "config.num_bytes",
                    "give the bytes that land in one stage")
        for side in ("producer", "consumer"):
            grp = self.group(side)
            if not isinstance(grp, CooperativeGroup):
                raise DesignError(f"{self.pipeline_type}: {side}_group is {grp!r}, expected a CooperativeGroup",
                                  code="config.group_size", hint=f"give {side}_group=CooperativeGroup(Agent.Thread, n) "
                                  f"or CooperativeGroup(Agent.Warp, n)")

    @property
    def producer_kind(self) -> OpKind:
        return self.pipeline_type.producer_kind

    @property
    def consumer_kind(self) -> OpKind:
        return self.pipeline_type.consumer_kind

    def group(self, side: str) -> CooperativeGroup:
        """The cooperative group of ``side`` ("producer" or "consumer")."""
        return self.producer_group if side == "producer" else self.consumer_group

    def arrive_count(self, side: str) -> int:
        """Arrivals per phase on this side's barrier: its group's thread count."""
        return self.group(side).num_threads

    # TS spells the factories as static methods: ``PipelineConfig.create_tma_umma_pipeline_cfg(...)``.
    # They are the module-level functions below (assigned after them), so both spellings are one rule.
    create_async_async_pipeline_cfg: ClassVar[Callable[..., "PipelineConfig"]]
    create_tma_async_pipeline_cfg: ClassVar[Callable[..., "PipelineConfig"]]
    create_tma_umma_pipeline_cfg: ClassVar[Callable[..., "PipelineConfig"]]
    create_umma_async_pipeline_cfg: ClassVar[Callable[..., "PipelineConfig"]]
    create_async_umma_pipeline_cfg: ClassVar[Callable[..., "PipelineConfig"]]
    create_umma_umma_pipeline_cfg: ClassVar[Callable[..., "PipelineConfig"]]


def check_config(cfg: PipelineConfig, owner: str = "config") -> Iterator[Diagnostic]:
    """Rules of one config beyond its value domain (which the constructor checks): a tma
    producer's bytes."""
    where = (owner,) if owner != "config" else ()
    label = f"resource {owner!r}" if where else "pipeline config"
    if cfg.producer_kind is OpKind.TMA and (cfg.num_bytes <= 0 or cfg.num_bytes % TMA_BYTES_ALIGN):
        yield error("config.tma_bytes",
                    f"{label} ({cfg.pipeline_type}): num_bytes is {cfg.num_bytes}, expected a "
                    f"positive multiple of {TMA_BYTES_ALIGN} (a tma producer's copy completes "
                    f"the full barrier's transaction bytes)",
                    where, f"round num_bytes up to a multiple of {TMA_BYTES_ALIGN}")


def _default_group(kind: OpKind) -> CooperativeGroup:
    return WARPGROUP if kind is OpKind.ASYNC else ONE_THREAD


def _make(ptype: PipelineType, num_stages: int, num_bytes: int,
          producer_group: CooperativeGroup | None, consumer_group: CooperativeGroup | None,
          async_producer_op: AsyncProducerOp = AsyncProducerOp.AsyncThread) -> PipelineConfig:
    cfg = PipelineConfig(
        pipeline_type=ptype, num_stages=num_stages, num_bytes=num_bytes,
        producer_group=producer_group or _default_group(ptype.producer_kind),
        consumer_group=consumer_group or _default_group(ptype.consumer_kind),
        async_producer_op=async_producer_op)
    raise_first(check_config(cfg), DesignError)
    return cfg


def create_async_async_pipeline_cfg(*, num_stages: int, num_bytes: int = 0,
                                    producer_group: CooperativeGroup | None = None,
                                    consumer_group: CooperativeGroup | None = None,
                                    async_producer_op: AsyncProducerOp = AsyncProducerOp.AsyncThread,
                                    ) -> PipelineConfig:
    """Threads fill a stage (stores or cp.async) and threads read it."""
    return _make(PipelineType.AsyncAsync, num_stages, num_bytes, producer_group, consumer_group,
                 async_producer_op)


def create_tma_async_pipeline_cfg(*, num_stages: int, num_bytes: int,
                                  producer_group: CooperativeGroup | None = None,
                                  consumer_group: CooperativeGroup | None = None) -> PipelineConfig:
    """A bulk copy fills a stage (expect_tx ``num_bytes``); threads read it."""
    return _make(PipelineType.TmaAsync, num_stages, num_bytes, producer_group, consumer_group)


def create_tma_umma_pipeline_cfg(*, num_stages: int, num_bytes: int,
                                 producer_group: CooperativeGroup | None = None,
                                 consumer_group: CooperativeGroup | None = None) -> PipelineConfig:
    """A bulk copy fills a stage; an MMA reads it (the GEMM mainloop operand)."""
    return _make(PipelineType.TmaUmma, num_stages, num_bytes, producer_group, consumer_group)


def create_umma_async_pipeline_cfg(*, num_stages: int, num_bytes: int = 0,
                                   producer_group: CooperativeGroup | None = None,
                                   consumer_group: CooperativeGroup | None = None) -> PipelineConfig:
    """An MMA writes a stage (an accumulator); threads drain it (the epilogue)."""
    return _make(PipelineType.UmmaAsync, num_stages, num_bytes, producer_group, consumer_group)


def create_async_umma_pipeline_cfg(*, num_stages: int, num_bytes: int = 0,
                                   producer_group: CooperativeGroup | None = None,
                                   consumer_group: CooperativeGroup | None = None,
                                   async_producer_op: AsyncProducerOp = AsyncProducerOp.AsyncThread,
                                   ) -> PipelineConfig:
    """Threads fill a stage; an MMA reads it."""
    return _make(PipelineType.AsyncUmma, num_stages, num_bytes, producer_group, consumer_group,
                 async_producer_op)


def create_umma_umma_pipeline_cfg(*, num_stages: int, num_bytes: int = 0,
                                  producer_group: CooperativeGroup | None = None,
                                  consumer_group: CooperativeGroup | None = None) -> PipelineConfig:
    """An MMA writes a stage that another MMA reads."""
    return _make(PipelineType.UmmaUmma, num_stages, num_bytes, producer_group, consumer_group)


FACTORIES = {
    PipelineType.AsyncAsync: create_async_async_pipeline_cfg,
    PipelineType.TmaAsync: create_tma_async_pipeline_cfg,
    PipelineType.TmaUmma: create_tma_umma_pipeline_cfg,
    PipelineType.UmmaAsync: create_umma_async_pipeline_cfg,
    PipelineType.AsyncUmma: create_async_umma_pipeline_cfg,
    PipelineType.UmmaUmma: create_umma_umma_pipeline_cfg,
}

for _factory in FACTORIES.values():
    setattr(PipelineConfig, _factory.__name__, staticmethod(_factory))
del _factory

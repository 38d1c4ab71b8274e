"""``PipelineConfig`` with TS's factory signatures.

Each ``PipelineConfig.create_*_pipeline_cfg`` takes the parameters TS takes.  The ones pgstudio
models (stages, bytes, cooperative groups, the async producer op) build the model's config at
once, through the model's own factory, so a bad value raises ``DesignError`` here as it would in
pgstudio.  The ones it does not model must keep TS's default; anything else is refused by name
(``ts: advance_on_wait=True cannot be modelled yet: ...``) instead of being silently dropped.

TS's UMMA and async factories take no ``num_bytes``: TS sizes those buffers from the resource's
SMEM allocations.  The model's bytes of such a resource come from the resource (``_resource.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntFlag
from math import prod
from typing import Any

from ..errors import DesignError
from ..model.config import PipelineConfig as ModelConfig
from ..model.config import FACTORIES
from ..model.kinds import AsyncProducerOp, OpKind, PipelineType
from ._cooperative import CooperativeGroup, PipelineOp
from ._cooperative import producer_op as async_op


class SignalingThreads(IntFlag):
    """Which threads execute a side's barrier operations; pgstudio models ``All`` (one CTA)."""

    All = 1
    CtaLeader = 2
    TaskWarpLeader = 4


#: TS parameters pgstudio does not model -> (the value that means "as pgstudio does", why).
UNMODELLED: dict[str, tuple[Any, str]] = {
    "barrier_ptr": (None, "pgstudio lays out barrier storage itself (SmemAllocator)"),
    "producer_signaling_threads": (SignalingThreads.All, "every thread of the side signals in pgstudio (one CTA)"),
    "consumer_signaling_threads": (SignalingThreads.All, "every thread of the side signals in pgstudio (one CTA)"),
    "consumer_wait_signaling_threads": (None, "every thread of the side signals in pgstudio (one CTA)"),
    "advance_on_wait": (False, "a pgstudio consumer advances its state at release"),
    "advance_on_acquire": (False, "a pgstudio producer advances its state at commit"),
    "interleave_stride": (1, "each pgstudio pipeline advances one stage at a time"),
    "mcast_mode_mn": ((1, 1), "pgstudio models one CTA, without TMA multicast"),
    "num_bytes_per_warp_per_cta": (None, "pgstudio models one CTA"),
}


def _default(name: str, value: Any) -> bool:
    want = UNMODELLED[name][0]
    if name.endswith("signaling_threads") and value is not None:
        return getattr(value, "name", None) == "All" or value == SignalingThreads.All
    return value == want


def _check_unmodelled(where: str, **given: Any) -> None:
    for name, value in given.items():
        if not _default(name, value):
            why = UNMODELLED[name][1]
            raise DesignError(f"ts: {where}: {name}={value!r} cannot be modelled yet: {why}",
                              code="ts.unsupported", hint=f"leave {name} at TS's default or keep this design in TS")


def _check_cluster(where: str, cta_layout_vmnk: Any) -> None:
    """One CTA only: no layout, or a tuple of extents whose product is 1."""
    if cta_layout_vmnk is None:
        return
    if isinstance(cta_layout_vmnk, tuple) and all(isinstance(x, int) for x in cta_layout_vmnk):
        if prod(cta_layout_vmnk) == 1:
            return
    raise DesignError(f"ts: {where}: cta_layout_vmnk={cta_layout_vmnk!r} cannot be modelled yet: pgstudio models one "
                      f"CTA, not a cluster", code="ts.unsupported",
                      hint="pass cta_layout_vmnk=None (or (1, 1, 1, 1)) for a one-CTA design")


@dataclass(frozen=True)
class PipelineConfig:
    """A TS pipeline config: the model's config plus the TS parameters it was built with.

    Build it with the static ``create_*_pipeline_cfg`` factories, as in TS.  ``model`` is
    pgstudio's ``PipelineConfig``; the attributes TS scripts read (``num_stages``, ``num_bytes``,
    ``pipeline_type``, ``producer_group``, ``consumer_group``) read through to it.
    """

    model: ModelConfig
    producer_group: CooperativeGroup
    consumer_group: CooperativeGroup
    bytes_given: bool = True  # TS's factory took num_bytes (tma producers)

    @property
    def num_stages(self) -> int:
        return self.model.num_stages

    @property
    def num_bytes(self) -> int:
        return self.model.num_bytes

    @property
    def pipeline_type(self) -> PipelineType:
        return self.model.pipeline_type

    def with_bytes(self, num_bytes: int) -> ModelConfig:
        """The model config with the bytes a resource declares (for the factories without bytes)."""
        return self.model if self.bytes_given else dataclasses.replace(self.model, num_bytes=num_bytes)

    @staticmethod
    def create_async_async_pipeline_cfg(num_stages, producer_group, consumer_group, cta_layout_vmnk=None,
                                        producer_signaling_threads=SignalingThreads.All,
                                        consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None,
                                        producer_op=PipelineOp.AsyncThread, advance_on_acquire=False,
                                        interleave_stride=1) -> "PipelineConfig":
        """Threads fill a stage (stores, or cp.async with ``producer_op=PipelineOp.AsyncLoad``); threads read it."""
        where = "create_async_async_pipeline_cfg"
        _check_cluster(where, cta_layout_vmnk)
        _check_unmodelled(where, producer_signaling_threads=producer_signaling_threads,
                          consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr,
                          advance_on_acquire=advance_on_acquire, interleave_stride=interleave_stride)
        return _build(PipelineType.AsyncAsync, num_stages, 0, producer_group, consumer_group,
                      async_op(producer_op, where), bytes_given=False)

    @staticmethod
    def create_tma_async_pipeline_cfg(num_stages, num_bytes, producer_group, consumer_group, cta_layout_vmnk=None,
                                      producer_signaling_threads=SignalingThreads.All,
                                      consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None,
                                      advance_on_wait=False, interleave_stride=1,
                                      num_bytes_per_warp_per_cta=None) -> "PipelineConfig":
        """A TMA bulk copy fills a stage (expect_tx ``num_bytes``); threads read it."""
        where = "create_tma_async_pipeline_cfg"
        _check_cluster(where, cta_layout_vmnk)
        _check_unmodelled(where, producer_signaling_threads=producer_signaling_threads,
                          consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr,
                          advance_on_wait=advance_on_wait, interleave_stride=interleave_stride,
                          num_bytes_per_warp_per_cta=num_bytes_per_warp_per_cta)
        return _build(PipelineType.TmaAsync, num_stages, num_bytes, producer_group, consumer_group)

    @staticmethod
    def create_tma_umma_pipeline_cfg(num_stages, num_bytes, producer_group, consumer_group, cta_layout_vmnk=None,
                                     producer_signaling_threads=SignalingThreads.All,
                                     consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None,
                                     advance_on_wait=False, interleave_stride=1, mcast_mode_mn=(1, 1),
                                     num_bytes_per_warp_per_cta=None) -> "PipelineConfig":
        """A TMA bulk copy fills a stage; an MMA reads it (the GEMM mainloop operand)."""
        where = "create_tma_umma_pipeline_cfg"
        _check_cluster(where, cta_layout_vmnk)
        _check_unmodelled(where, producer_signaling_threads=producer_signaling_threads,
                          consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr,
                          advance_on_wait=advance_on_wait, interleave_stride=interleave_stride,
                          mcast_mode_mn=tuple(mcast_mode_mn), num_bytes_per_warp_per_cta=num_bytes_per_warp_per_cta)
        return _build(PipelineType.TmaUmma, num_stages, num_bytes, producer_group, consumer_group)

    @staticmethod
    def create_umma_async_pipeline_cfg(num_stages, producer_group, consumer_group, cta_layout_vmnk=None,
                                       producer_signaling_threads=SignalingThreads.All,
                                       consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None,
                                       interleave_stride=1) -> "PipelineConfig":
        """An MMA writes a stage (an accumulator); threads drain it (the epilogue)."""
        where = "create_umma_async_pipeline_cfg"
        _check_cluster(where, cta_layout_vmnk)
        _check_unmodelled(where, producer_signaling_threads=producer_signaling_threads,
                          consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr,
                          interleave_stride=interleave_stride)
        return _build(PipelineType.UmmaAsync, num_stages, 0, producer_group, consumer_group, bytes_given=False)

    @staticmethod
    def create_async_umma_pipeline_cfg(num_stages, producer_group, consumer_group, cta_layout_vmnk=None,
                                       producer_signaling_threads=SignalingThreads.All,
                                       consumer_signaling_threads=SignalingThreads.All,
                                       consumer_wait_signaling_threads=None, producer_op=PipelineOp.AsyncThread,
                                       barrier_ptr=None, advance_on_wait=False, advance_on_acquire=False,
                                       interleave_stride=1) -> "PipelineConfig":
        """Threads fill a stage (stores or cp.async); an MMA reads it."""
        where = "create_async_umma_pipeline_cfg"
        _check_cluster(where, cta_layout_vmnk)
        _check_unmodelled(where, producer_signaling_threads=producer_signaling_threads,
                          consumer_signaling_threads=consumer_signaling_threads,
                          consumer_wait_signaling_threads=consumer_wait_signaling_threads, barrier_ptr=barrier_ptr,
                          advance_on_wait=advance_on_wait, advance_on_acquire=advance_on_acquire,
                          interleave_stride=interleave_stride)
        return _build(PipelineType.AsyncUmma, num_stages, 0, producer_group, consumer_group,
                      async_op(producer_op, where), bytes_given=False)

    @staticmethod
    def create_umma_umma_pipeline_cfg(num_stages, producer_group, consumer_group, cta_layout_vmnk=None,
                                      producer_signaling_threads=SignalingThreads.All,
                                      consumer_signaling_threads=SignalingThreads.All,
                                      barrier_ptr=None) -> "PipelineConfig":
        """An MMA writes a stage that another MMA reads."""
        where = "create_umma_umma_pipeline_cfg"
        _check_cluster(where, cta_layout_vmnk)
        _check_unmodelled(where, producer_signaling_threads=producer_signaling_threads,
                          consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr)
        return _build(PipelineType.UmmaUmma, num_stages, 0, producer_group, consumer_group, bytes_given=False)

    @staticmethod
    def create_clc_fetch_async_pipeline_cfg(*args: Any, **kwargs: Any) -> "PipelineConfig":
        """TS's CLC tile-fetch pipeline (dynamic persistent scheduling): not modelled."""
        raise DesignError("ts: create_clc_fetch_async_pipeline_cfg() cannot be modelled yet: pgstudio models a static "
                          "work-tile loop, not CLC tile fetches", code="ts.unsupported",
                          hint="use a StaticPersistent WorkQueue")


def _group(value: Any, side: str, where: str):
    if not isinstance(value, CooperativeGroup):
        raise DesignError(f"ts: {where}: {side}_group is {value!r}, expected CooperativeGroup(Agent.Thread, n)",
                          code="config.group_size", hint=f"pass {side}_group=CooperativeGroup(Agent.Thread, n)")
    return value.to_model(f"{where} {side}_group")


def _build(ptype: PipelineType, num_stages: Any, num_bytes: Any, producer_group: Any, consumer_group: Any,
           op: AsyncProducerOp | None = None, bytes_given: bool = True) -> PipelineConfig:
    where = f"create_{_snake(ptype)}_pipeline_cfg"
    kwargs: dict[str, Any] = dict(num_stages=num_stages, num_bytes=num_bytes,
                                  producer_group=_group(producer_group, "producer", where),
                                  consumer_group=_group(consumer_group, "consumer", where))
    if op is not None:
        kwargs["async_producer_op"] = op
    model = FACTORIES[ptype](**kwargs)
    return PipelineConfig(model, producer_group, consumer_group, bytes_given)


def _snake(ptype: PipelineType) -> str:
    kinds = (ptype.producer_kind, ptype.consumer_kind)
    return "_".join(k.value for k in kinds)


def takes_bytes(ptype: PipelineType) -> bool:
    """Whether TS's factory of this type takes ``num_bytes`` (the TMA producers)."""
    return ptype.producer_kind is OpKind.TMA


__all__ = ["PipelineConfig", "SignalingThreads", "UNMODELLED", "takes_bytes"]

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
from ._unmodelled import unmodelled_attribute


class SignalingThreads(IntFlag):
    """Which threads execute a side's barrier operations; pgstudio models ``All`` (one CTA)."""

    All = 1
    CtaLeader = 2
    TaskWarpLeader = 4

    def has_cta_leader(self) -> bool:
        """Whether CTA-leader gating is part of this mode."""
        return bool(self & SignalingThreads.CtaLeader)

    def has_task_warp_leader(self) -> bool:
        """Whether task-warp-leader gating is part of this mode."""
        return bool(self & SignalingThreads.TaskWarpLeader)

    @classmethod
    def is_valid_combination(cls, value: "SignalingThreads") -> bool:
        raise unmodelled_attribute("SignalingThreads", "is_valid_combination")

    @classmethod
    def validate(cls, value: "SignalingThreads", field_name: str) -> None:
        raise unmodelled_attribute("SignalingThreads", "validate")


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


_GIVEN = object()  # a parameter of TS's constructor the call left out


@dataclass(frozen=True, init=False)
class PipelineConfig:
    """A TS pipeline config: the model's config plus the TS parameters it was built with.

    Build it as in TS: with the static ``create_*_pipeline_cfg`` factories, or with TS's own
    constructor (``PipelineConfig(num_stages, num_bytes, producer_group, consumer_group,
    pipeline_type, ...)``), which takes the same parameters through the factory of that type.
    ``model`` is pgstudio's ``PipelineConfig``; the attributes TS scripts read (``num_stages``,
    ``num_bytes``, ``pipeline_type``, the groups, and TS's fields pgstudio keeps at their defaults)
    read through to it.
    """

    model: ModelConfig
    producer_group: CooperativeGroup
    consumer_group: CooperativeGroup
    bytes_given: bool = True  # TS's factory took num_bytes (tma producers)
    cta_layout_vmnk: Any = None

    def __init__(self, num_stages: Any = _GIVEN, num_bytes: Any = _GIVEN, producer_group: Any = _GIVEN,
                 consumer_group: Any = _GIVEN, pipeline_type: Any = _GIVEN, barrier_ptr: Any = None,
                 cta_layout_vmnk: Any = None, producer_signaling_threads: Any = SignalingThreads.All,
                 consumer_signaling_threads: Any = SignalingThreads.All, consumer_wait_signaling_threads: Any = None,
                 umma_consumer_producer_op: Any = PipelineOp.AsyncThread, advance_on_wait: bool = False,
                 advance_on_acquire: bool = False, num_bytes_per_warp_per_cta: Any = None,
                 mcast_mode_mn: Any = (1, 1), interleave_stride: Any = 1,
                 async_producer_op: Any = PipelineOp.AsyncThread, *, model: ModelConfig | None = None,
                 bytes_given: bool = True) -> None:
        if model is None:  # TS's constructor: the factory of pipeline_type checks and builds it
            missing = [n for n, v in (("num_stages", num_stages), ("num_bytes", num_bytes),
                                      ("producer_group", producer_group), ("consumer_group", consumer_group),
                                      ("pipeline_type", pipeline_type)) if v is _GIVEN]
            if missing:
                raise DesignError(f"ts: PipelineConfig() is missing {', '.join(missing)}: TS's constructor needs "
                                  f"num_stages, num_bytes, producer_group, consumer_group and pipeline_type",
                                  code="ts.script", hint="pass them, or use a PipelineConfig.create_*_pipeline_cfg "
                                  "factory (TS's usual form)")
            ptype = _pipeline_type(pipeline_type)
            where = "PipelineConfig()"
            _check_cluster(where, cta_layout_vmnk)
            _check_unmodelled(where, producer_signaling_threads=producer_signaling_threads,
                              consumer_signaling_threads=consumer_signaling_threads,
                              consumer_wait_signaling_threads=consumer_wait_signaling_threads,
                              barrier_ptr=barrier_ptr, advance_on_wait=advance_on_wait,
                              advance_on_acquire=advance_on_acquire, interleave_stride=interleave_stride,
                              mcast_mode_mn=tuple(mcast_mode_mn), num_bytes_per_warp_per_cta=num_bytes_per_warp_per_cta)
            op = _constructor_op(ptype, async_producer_op, umma_consumer_producer_op)
            given = takes_bytes(ptype) or num_bytes != 0  # TS's non-TMA factories pass 0
            made = _build(ptype, num_stages, num_bytes, producer_group, consumer_group, op, given, cta_layout_vmnk)
            model, producer_group, consumer_group, bytes_given = (made.model, made.producer_group,
                                                                  made.consumer_group, made.bytes_given)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "producer_group", producer_group)
        object.__setattr__(self, "consumer_group", consumer_group)
        object.__setattr__(self, "bytes_given", bytes_given)
        object.__setattr__(self, "cta_layout_vmnk", cta_layout_vmnk)

    @property
    def num_stages(self) -> int:
        return self.model.num_stages

    @property
    def num_bytes(self) -> int:
        return self.model.num_bytes

    @property
    def pipeline_type(self) -> PipelineType:
        return self.model.pipeline_type

    @property
    def async_producer_op(self) -> PipelineOp:
        """TS's op of an AsyncAsync producer (AsyncThread for every other type)."""
        return _op_of(self.model) if self.pipeline_type is PipelineType.AsyncAsync else PipelineOp.AsyncThread

    @property
    def umma_consumer_producer_op(self) -> PipelineOp:
        """TS's op of an AsyncUmma producer (AsyncThread for every other type)."""
        return _op_of(self.model) if self.pipeline_type is PipelineType.AsyncUmma else PipelineOp.AsyncThread

    # TS's fields that pgstudio only takes at their defaults (``UNMODELLED``) read as those defaults.
    barrier_ptr = property(lambda self: None)
    producer_signaling_threads = property(lambda self: SignalingThreads.All)
    consumer_signaling_threads = property(lambda self: SignalingThreads.All)
    consumer_wait_signaling_threads = property(lambda self: None)
    advance_on_wait = property(lambda self: False)
    advance_on_acquire = property(lambda self: False)
    num_bytes_per_warp_per_cta = property(lambda self: None)
    mcast_mode_mn = property(lambda self: (1, 1))
    interleave_stride = property(lambda self: 1)
    interleave_strides = property(lambda self: (1, 1, 1, 1))
    has_interleaved_stride = property(lambda self: False)
    max_interleave_stride = property(lambda self: 1)
    producer_acquire_interleave_stride = property(lambda self: 1)
    producer_commit_interleave_stride = property(lambda self: 1)
    consumer_wait_interleave_stride = property(lambda self: 1)
    consumer_release_interleave_stride = property(lambda self: 1)

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
                      async_op(producer_op, where), bytes_given=False, cta_layout_vmnk=cta_layout_vmnk)

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
        return _build(PipelineType.TmaAsync, num_stages, num_bytes, producer_group, consumer_group,
                      cta_layout_vmnk=cta_layout_vmnk)

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
        return _build(PipelineType.TmaUmma, num_stages, num_bytes, producer_group, consumer_group,
                      cta_layout_vmnk=cta_layout_vmnk)

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
        return _build(PipelineType.UmmaAsync, num_stages, 0, producer_group, consumer_group, bytes_given=False,
                      cta_layout_vmnk=cta_layout_vmnk)

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
                      async_op(producer_op, where), bytes_given=False, cta_layout_vmnk=cta_layout_vmnk)

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
        return _build(PipelineType.UmmaUmma, num_stages, 0, producer_group, consumer_group, bytes_given=False,
                      cta_layout_vmnk=cta_layout_vmnk)

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
           op: AsyncProducerOp | None = None, bytes_given: bool = True, cta_layout_vmnk: Any = None) -> PipelineConfig:
    where = f"create_{_snake(ptype)}_pipeline_cfg"
    kwargs: dict[str, Any] = dict(num_stages=num_stages, num_bytes=num_bytes,
                                  producer_group=_group(producer_group, "producer", where),
                                  consumer_group=_group(consumer_group, "consumer", where))
    if op is not None:
        kwargs["async_producer_op"] = op
    model = FACTORIES[ptype](**kwargs)
    return PipelineConfig(model=model, producer_group=producer_group, consumer_group=consumer_group,
                          bytes_given=bytes_given, cta_layout_vmnk=cta_layout_vmnk)


def _pipeline_type(value: Any) -> PipelineType:
    """TS's ``pipeline_type`` (its enum or pgstudio's, read by name) as the model's type."""
    name = getattr(value, "name", value)
    if name == "ClcFetchAsync":
        raise DesignError("ts: PipelineConfig(pipeline_type=ClcFetchAsync) cannot be modelled yet: pgstudio models a "
                          "static work-tile loop, not CLC tile fetches", code="ts.unsupported",
                          hint="use a StaticPersistent WorkQueue")
    try:
        return PipelineType(name)
    except ValueError:
        raise DesignError(f"ts: PipelineConfig(): pipeline_type is {value!r}, expected a PipelineType",
                          code="config.enum", hint="pass PipelineType.TmaAsync (or another PipelineType)") from None


def _constructor_op(ptype: PipelineType, async_producer_op: Any, umma_consumer_producer_op: Any):
    """The model's async producer op from TS's constructor: ``async_producer_op`` of an AsyncAsync
    pipeline, ``umma_consumer_producer_op`` of an AsyncUmma one; either must stay AsyncThread
    elsewhere, as TS requires."""
    where = "PipelineConfig()"
    for name, value, owner in (("async_producer_op", async_producer_op, PipelineType.AsyncAsync),
                               ("umma_consumer_producer_op", umma_consumer_producer_op, PipelineType.AsyncUmma)):
        if ptype is not owner and getattr(value, "name", value) != "AsyncThread":
            raise DesignError(f"ts: {where}: {name}={value!r} is only for PipelineType.{owner.value}, not "
                              f"{ptype.value}", code="config.enum", hint=f"leave {name} at PipelineOp.AsyncThread")
    if ptype is PipelineType.AsyncAsync:
        return async_op(async_producer_op, where)
    if ptype is PipelineType.AsyncUmma:
        return async_op(umma_consumer_producer_op, where)
    return None


def _op_of(model: ModelConfig) -> PipelineOp:
    return PipelineOp[model.async_producer_op.value]


def _snake(ptype: PipelineType) -> str:
    kinds = (ptype.producer_kind, ptype.consumer_kind)
    return "_".join(k.value for k in kinds)


def takes_bytes(ptype: PipelineType) -> bool:
    """Whether TS's factory of this type takes ``num_bytes`` (the TMA producers)."""
    return ptype.producer_kind is OpKind.TMA


__all__ = ["PipelineConfig", "SignalingThreads", "UNMODELLED", "takes_bytes"]

"""TS's side of the comparisons: build NVIDIA's objects from plain specs and read their answers.

Only used by tests marked ``ts`` (TS installed).  Nothing here copies TS: it calls TS's public
constructors and reads the attributes TS documents (``pipeline_config``, ``num_barriers_per_stage``,
``SmemAllocator.barrier_smem_bytes`` ...)."""

from __future__ import annotations

import contextlib
import io
import runpy
import warnings
from dataclasses import dataclass
from typing import Any

from pgstudio import examples
from pgstudio.model.kinds import PipelineType

#: Canonical designs with short loops: the same structure, but TS's exhaustive checker completes.
SMALL = {
    "merge_copy": dict(num_elements=4 * 2048), "fork_copy": dict(num_elements=4 * 2048),
    "fused_merge_copy": dict(num_elements=4 * 2048), "merge_gemm": dict(m=256, n=512, k=128),
    "merge_gemm_resadd": dict(m=256, n=256, k=64), "fork_gemm_act": dict(m=256, n=256, k=64),
    "fused_merge_gemm": dict(m=256, n=512, k=128),
}
assert set(SMALL) == set(examples.CANONICAL), "every canonical design has a small twin here"


def ts():
    """TS's modules (imported on first use)."""
    from cutlass import pipeline
    from cutlass.experimental.task_scheduling import enums, memory, pipeline_group, resources
    return pipeline, enums, memory, pipeline_group, resources


@dataclass(frozen=True)
class Member:
    """One group member as plain values, for both sides."""

    ptype: PipelineType
    stages: int
    nbytes: int
    producer: tuple[str, int]  # (agent, size)
    consumer: tuple[str, int]


def ts_config(m: Member, explicit_bytes: int | None = None) -> Any:
    pipeline, _, _, _, resources = ts()
    cg = lambda g: pipeline.CooperativeGroup(getattr(pipeline.Agent, g[0]), g[1])  # noqa: E731
    kinds = f"{m.ptype.producer_kind.value}_{m.ptype.consumer_kind.value}"
    factory = getattr(resources.PipelineConfig, f"create_{kinds}_pipeline_cfg")
    kwargs: dict[str, Any] = dict(num_stages=m.stages, producer_group=cg(m.producer), consumer_group=cg(m.consumer))
    if m.ptype.producer_kind.value == "tma":
        kwargs["num_bytes"] = m.nbytes if explicit_bytes is None else explicit_bytes
    kwargs["cta_layout_vmnk"] = (1, 1, 1, 1)  # one CTA, as an exported script writes it
    return factory(**kwargs)


def ts_group(name: str, members: list[Member], mode: str, explicit: Member | None = None):
    """TS's group of fresh TS resources, or the ValueError TS raised."""
    _, enums, _, pipeline_group, resources = ts()
    objs = [resources.MemoryResource(name=f"{name}_m{i}", pipeline_config=ts_config(m)) for i, m in enumerate(members)]
    cfg = None if explicit is None else ts_config(explicit)
    try:
        return pipeline_group.PipelineGroup(name=name, members=objs, mode=getattr(enums.PipelineGroupMode, mode),
                                            pipeline_config=cfg)
    except ValueError as exc:
        return exc


def ts_view(group: Any) -> dict:
    """What TS derived for a group, as numbers."""
    cfg = group.pipeline_config
    return {"barriers": group.num_barriers_per_stage * cfg.num_stages, "num_bytes": cfg.num_bytes,
            "producer_size": cfg.producer_group.size, "consumer_size": cfg.consumer_group.size,
            "type": cfg.pipeline_type.value}


@contextlib.contextmanager
def quiet():
    """TS's prints and warnings (its checker's notes) kept out of the test output."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def run_ts_script(path: str, exhaustive: bool = True) -> dict[str, Any]:
    """Run a TS script with TS (in this process) and return its module globals; what it prints
    and TS's warnings (its checker's state-limit notes) are kept out of the test output.
    ``exhaustive=False``: TS's TaskManager runs its structural checks but not its exhaustive
    interleaving checker (the slow part, for tests that run hundreds of scripts)."""
    from cutlass.experimental.task_scheduling import task_manager

    init = task_manager.TaskManager.__init__

    def without_checker(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **{**kwargs, "exhaustive_deadlock_race_check": False})

    with quiet():
        if not exhaustive:
            task_manager.TaskManager.__init__ = without_checker
        try:
            return runpy.run_path(path, run_name="__main__")
        finally:
            task_manager.TaskManager.__init__ = init

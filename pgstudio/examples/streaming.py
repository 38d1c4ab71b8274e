"""Streaming designs: 1-D tiles of ``tile_bytes`` through ``num_stages`` stages (merge_copy,
fork_copy, fused_merge_copy), and the load / store schedules the other designs share."""

from __future__ import annotations


from ..model.capture import domain_loop, schedule
from ..model.config import (CooperativeGroup, create_tma_async_pipeline_cfg)
from ..model.design import Design
from ..model.group import PipelineGroup
from ..model.kinds import Agent
from ..model.problem import stream_problem
from ..model.protocol import PipelineGroupMode
from ..model.resource import Compute, GmemTensor, MemoryResource
from ..model.targets import DTYPE_BYTES
from ..model.task import Task

__all__ = [
    "WARPGROUP",
    "ONE",
    "load_schedule",
    "merge_store_schedule",
    "fused_store_schedule",
    "fork_load_schedule",
    "consume_store_schedule",
    "merge_copy",
    "fused_merge_copy",
    "fork_copy",
]


WARPGROUP = CooperativeGroup(Agent.Warp, 4)
ONE = CooperativeGroup(Agent.Thread, 1)

# -- schedules shared by the designs (group members reached as group.member) --------------------


@schedule
def load_schedule(src, dst):
    """A tma producer: acquire the stage, copy one tile into it, commit."""
    with domain_loop(0, "num_tiles", 1):
        dst.try_acquire()
        dst.acquire()
        dst.load(src)
        dst.commit()


@schedule
def merge_store_schedule(output, group):
    """A Merge consumer: wait each member, read both, store, release the group once."""
    a, b = group.members[0].name, group.members[1].name
    with domain_loop(0, "num_tiles", 1):
        group.member(a).try_wait()
        group.member(a).wait()
        group.member(b).try_wait()
        group.member(b).wait()
        val_a = group.member(a).read()
        val_b = group.member(b).read()
        output.store(val_a=val_a, val_b=val_b)
        group.release()


@schedule
def fused_store_schedule(output, group):
    """The FusedMerge consumer: one collapsed wait and one collapsed release."""
    a, b = group.members[0].name, group.members[1].name
    with domain_loop(0, "num_tiles", 1):
        group.try_wait()
        group.wait()
        val_a = group.member(a).read()
        val_b = group.member(b).read()
        output.store(val_a=val_a, val_b=val_b)
        group.release()


@schedule
def fork_load_schedule(src, group):
    """A Fork producer: acquire each member, load once (one buffer), commit the group once."""
    first = group.members[0].name
    with domain_loop(0, "num_tiles", 1):
        for m in group.member_names:
            group.member(m).try_acquire()
            group.member(m).acquire()
        group.member(first).load(src)
        group.commit()


@schedule
def consume_store_schedule(src, output):
    """An async consumer: wait, read, store to global memory, release."""
    with domain_loop(0, "num_tiles", 1):
        src.try_wait()
        src.wait()
        val = src.read()
        output.store(val=val)
        src.release()


def _stream_tiles(names, num_stages, tile_bytes, dtype, consumer=WARPGROUP, aliases=None):
    out = []
    for i, n in enumerate(names):
        cfg = create_tma_async_pipeline_cfg(num_stages=num_stages, num_bytes=tile_bytes, consumer_group=consumer)
        out.append(MemoryResource(n, cfg, Compute("copy"), dtype, (tile_bytes // DTYPE_BYTES[dtype],),
                                  aliases if i and aliases else None))
    return out


def merge_copy(num_stages: int = 4, tile_bytes: int = 8192, dtype: str = "float32",
               num_elements: int = 1 << 24, mode: PipelineGroupMode = PipelineGroupMode.Merge) -> Design:
    """D = A + B: LoadA and LoadB tasks fill smem_a / smem_b; one store task reads both, stores
    D and releases the Merge group once."""
    gmem_a, gmem_b = GmemTensor("gmem_a", dtype=dtype), GmemTensor("gmem_b", dtype=dtype)
    smem_a, smem_b = _stream_tiles(["smem_a", "smem_b"], num_stages, tile_bytes, dtype)
    gmem_d = GmemTensor("gmem_d", compute=Compute("store", "smem_a + smem_b"), dtype=dtype)
    ab = PipelineGroup(name="ab", members=[smem_a, smem_b], mode=mode)
    store = fused_store_schedule if mode is PipelineGroupMode.FusedMerge else merge_store_schedule
    tasks = [
        Task("load_a", 0, 1, [gmem_a], [smem_a], load_schedule(gmem_a, ab.smem_a)),
        Task("load_b", 1, 1, [gmem_b], [smem_b], load_schedule(gmem_b, ab.smem_b)),
        Task("store", 4, 4, [smem_a, smem_b], [gmem_d], store(gmem_d, ab)),
    ]
    name = "fused_merge_copy" if mode is PipelineGroupMode.FusedMerge else "merge_copy"
    return Design(name, [gmem_a, gmem_b, smem_a, smem_b, gmem_d],
                  {smem_a: [gmem_a], smem_b: [gmem_b], gmem_d: [smem_a, smem_b]}, [ab], tasks,
                  stream_problem(num_elements, tile_bytes, dtype))


def fused_merge_copy(num_stages: int = 4, tile_bytes: int = 8192, dtype: str = "float32",
                     num_elements: int = 1 << 24) -> Design:
    """D = A + B with both barrier sides shared: 2S barriers."""
    return merge_copy(num_stages, tile_bytes, dtype, num_elements, PipelineGroupMode.FusedMerge)


def fork_copy(num_stages: int = 4, tile_bytes: int = 8192, dtype: str = "float32",
              num_elements: int = 1 << 24) -> Design:
    """One load fills smem_x (viewed also as smem_y); two consumer tasks store D0 = x and
    D1 = max(y, 0)."""
    gmem_a = GmemTensor("gmem_a", dtype=dtype)
    smem_x, smem_y = _stream_tiles(["smem_x", "smem_y"], num_stages, tile_bytes, dtype, aliases="smem_x")
    gmem_d0 = GmemTensor("gmem_d0", compute=Compute("store", "smem_x"), dtype=dtype)
    gmem_d1 = GmemTensor("gmem_d1", compute=Compute("store", "max(smem_y, 0.f)"), dtype=dtype)
    xy = PipelineGroup(name="xy", members=[smem_x, smem_y], mode=PipelineGroupMode.Fork)
    tasks = [
        Task("load", 0, 1, [gmem_a], [smem_x, smem_y], fork_load_schedule(gmem_a, xy)),
        Task("copy_out", 4, 4, [smem_x], [gmem_d0], consume_store_schedule(xy.smem_x, gmem_d0)),
        Task("relu_out", 8, 4, [smem_y], [gmem_d1], consume_store_schedule(xy.smem_y, gmem_d1)),
    ]
    return Design("fork_copy", [gmem_a, smem_x, smem_y, gmem_d0, gmem_d1],
                  {smem_x: [gmem_a], smem_y: [gmem_a], gmem_d0: [smem_x], gmem_d1: [smem_y]}, [xy], tasks,
                  stream_problem(num_elements, tile_bytes, dtype))



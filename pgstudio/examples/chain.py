"""Generated designs: chains of N groups in a row, the scale test of the checker and the figures."""

from __future__ import annotations


from ..model.capture import domain_loop, schedule
from ..errors import DesignError
from ..model.config import (CooperativeGroup, create_async_async_pipeline_cfg, create_tma_async_pipeline_cfg)
from ..model.design import Design
from ..model.group import PipelineGroup
from ..model.kinds import Agent
from ..model.problem import stream_problem
from ..model.protocol import PipelineGroupMode, is_group_op
from ..model.resource import Compute, GmemTensor, MemoryResource
from ..model.targets import DATA_ALIGN, DTYPE_BYTES, SMEM_CAPACITY
from ..model.task import Task

__all__ = [
    "MAX_CHAIN_GROUPS",
    "MAX_CHAIN_WIDTH",
    "WARP",
    "chain_load_schedule",
    "chain_step_schedule",
    "chain_store_schedule",
    "chain",
]


# -- generated designs: chains of groups ----------------------------------------------------------

#: The deepest chain: one loader, one task per later group and one store task, one warp each,
#: in a block of at most 32 warps (1024 threads).
MAX_CHAIN_GROUPS = 31
#: The widest chain group (members per group; 31 groups of 8 make a 251-resource design).
MAX_CHAIN_WIDTH = 16
WARP = CooperativeGroup(Agent.Warp, 1)


def _sync_all(group, *ops):
    """``ops`` (a probe and its blocking op, or a signal) once on the group object where the
    protocol table collapses them for the group's mode, else on each member."""
    if is_group_op(group.mode, ops[-1]):
        for op in ops:
            getattr(group, op)()
        return
    for m in group.member_names:
        for op in ops:
            getattr(group.member(m), op)()


def _wait_all(group):
    """Consumer side of a chain group: wait (once, or per member)."""
    _sync_all(group, "try_wait", "wait")


def _release_all(group):
    """Consumer side of a chain group: release (once, or per member)."""
    _sync_all(group, "release")


def _fill_all(group, *srcs):
    """Producer side: acquire every member, fill each from ``srcs`` (one source each, or all of
    them for every member), commit per member or once (where the group object takes commit)."""
    once = is_group_op(group.mode, "commit")
    for i, m in enumerate(group.member_names):
        member = group.member(m)
        member.try_acquire()
        member.acquire()
        member.load(*(srcs[i:i + 1] if len(srcs) == len(group.members) else srcs))
        if not once:
            member.commit()
    if once:
        group.commit()


@schedule
def chain_load_schedule(group, a, b):
    """The chain's head: one elected thread bulk-copies gmem_a and gmem_b into group 0 (a wider
    group's members copy them in turn)."""
    with domain_loop(0, "num_tiles", 1):
        _fill_all(group, *((a, b)[i % 2] for i in range(len(group.members))))


@schedule
def chain_step_schedule(prev, nxt):
    """One link of the chain: wait for group k-1, compute group k from it, release group k-1."""
    with domain_loop(0, "num_tiles", 1):
        _wait_all(prev)
        vals = [prev.member(m).read() for m in prev.member_names]
        _fill_all(nxt, *vals)
        _release_all(prev)


@schedule
def chain_store_schedule(prev, output):
    """The chain's tail: wait for the last group, store D from both members, release."""
    with domain_loop(0, "num_tiles", 1):
        _wait_all(prev)
        vals = [prev.member(m).read() for m in prev.member_names]
        output.store(*vals)
        _release_all(prev)


def _chain_tile_bytes(n_groups: int, num_stages: int, dtype: str, width: int = 2) -> int:
    """The largest power-of-two tile (16 B .. 4 KiB) whose buffers and barriers fit in shared memory."""
    barriers = (width + 1) * n_groups * num_stages * 8
    tile = 4096

    def buffer(t: int) -> int:  # each buffer starts on a DATA_ALIGN boundary
        return -(-num_stages * t // DATA_ALIGN) * DATA_ALIGN
    while tile > 16 and width * n_groups * buffer(tile) + barriers + 1024 > SMEM_CAPACITY:
        tile //= 2
    return max(tile, 16, DTYPE_BYTES.get(dtype, 4))


def chain(n_groups: int, mode: PipelineGroupMode | str = PipelineGroupMode.Merge, num_stages: int = 4,
          tile_bytes: int | None = None, dtype: str = "float32", num_elements: int = 1 << 22,
          width: int = 2) -> Design:
    """A generated design: a chain of ``n_groups`` two-member groups, each computed from the one before.

    Group 0 (``s0_a``, ``s0_b``) is bulk-copied from ``gmem_a`` / ``gmem_b`` by one elected
    thread; task ``step_k`` waits for group k-1 and fills group k from both of its members,
    ``sk_a = a + b`` and ``sk_b = 0.5 (b - a)``; task ``store`` writes ``gmem_d = a + b`` of the
    last group.  That step has determinant 1 and eigenvalues exp(+-i acos(3/4)), an irrational
    rotation, so values neither grow nor repeat with depth (|step^k| < 1.7 for every k), and
    with power-of-two factors the float result does not depend on FMA contraction: the kernel
    and the reference agree bit for bit in every dtype, however deep the chain.  Every task is one warp, so a block holds at most
    ``MAX_CHAIN_GROUPS`` groups.  ``mode`` (Merge, Fork or FusedMerge) applies to every group.
    ``tile_bytes=None`` picks the largest power-of-two tile up to 4 KiB whose stages fit in
    shared memory.  Chains exist to measure how analysis and code generation scale with the
    depth of a design, and to exercise every group mode at depth.

    ``width`` > 2 makes each group ``width`` members wide (``s{k}_a``, ``s{k}_b``, ``s{k}_c`` ...),
    member i computed as ``0.5 (p_i + p_{i+1})`` of the group before (a mean: values stay in
    range, and with a power-of-two factor stay exact); group 0's members copy ``gmem_a`` and
    ``gmem_b`` in turn and ``gmem_d`` sums the last group.  31 groups of 8 make a design of 251
    resources: the scale benchmark's largest (``benchmarks/scale.py``).  Each buffer takes at least
    ``DATA_ALIGN`` bytes, so 31 groups of 7 (220 resources) is the widest chain that fits in shared
    memory; ``validate()`` reports a wider one (``smem.capacity``).
    """
    if isinstance(mode, str):
        try:
            mode = PipelineGroupMode[mode]
        except KeyError:
            raise DesignError(f"chain mode is {mode!r}, expected one of "
                              f"{', '.join(m.name for m in PipelineGroupMode)}", code="examples.chain") from None
    if isinstance(n_groups, bool) or not isinstance(n_groups, int) or not 1 <= n_groups <= MAX_CHAIN_GROUPS:
        raise DesignError(f"chain of {n_groups!r} groups: expected an integer from 1 to {MAX_CHAIN_GROUPS} "
                          f"(one warp per task: a loader, {MAX_CHAIN_GROUPS - 1} steps and a store fill a "
                          f"32-warp block)", code="examples.chain")
    if dtype not in DTYPE_BYTES:
        raise DesignError(f"chain dtype is {dtype!r}, expected one of {', '.join(DTYPE_BYTES)}", code="examples.chain")
    if isinstance(width, bool) or not isinstance(width, int) or not 2 <= width <= MAX_CHAIN_WIDTH:
        raise DesignError(f"chain width {width!r}: expected an integer from 2 to {MAX_CHAIN_WIDTH} members per group",
                          code="examples.chain")
    tile_bytes = _chain_tile_bytes(n_groups, num_stages, dtype, width) if tile_bytes is None else tile_bytes
    tile = (tile_bytes // DTYPE_BYTES[dtype],)
    gmem_a, gmem_b = GmemTensor("gmem_a", dtype=dtype), GmemTensor("gmem_b", dtype=dtype)

    def member(name: str, expr: str | None):
        if expr is None:
            cfg = create_tma_async_pipeline_cfg(num_stages=num_stages, num_bytes=tile_bytes, consumer_group=WARP)
            return MemoryResource(name, cfg, Compute("copy"), dtype, tile)
        cfg = create_async_async_pipeline_cfg(num_stages=num_stages, num_bytes=tile_bytes, producer_group=WARP,
                                              consumer_group=WARP)
        return MemoryResource(name, cfg, Compute("elementwise", expr), dtype, tile)

    letters = "abcdefghijklmnop"[:width]
    ms = [member(f"s0_{x}", None) for x in letters]
    group = PipelineGroup(name="g0", members=ms, mode=mode)
    resources, deps = [gmem_a, gmem_b, *ms], {m: [(gmem_a, gmem_b)[i % 2]] for i, m in enumerate(ms)}
    groups = [group]
    tasks = [Task("load", 0, 1, [gmem_a, gmem_b], ms, chain_load_schedule(group, gmem_a, gmem_b))]
    for k in range(1, n_groups):
        ps, prev = ms, group
        if width == 2:
            pa, pb = ps
            ms = [member(f"s{k}_a", f"{pa.name} + {pb.name}"), member(f"s{k}_b", f"0.5f * ({pb.name} - {pa.name})")]
            deps.update({m: list(ps) for m in ms})
        else:
            ms = [member(f"s{k}_{x}", f"0.5f * ({ps[i].name} + {ps[(i + 1) % width].name})") for i, x in enumerate(letters)]
            deps.update({m: [ps[i], ps[(i + 1) % width]] for i, m in enumerate(ms)})
        group = PipelineGroup(name=f"g{k}", members=ms, mode=mode)
        resources += ms
        groups.append(group)
        tasks.append(Task(f"step_{k}", k, 1, ps, ms, chain_step_schedule(prev, group)))
    gmem_d = GmemTensor("gmem_d", compute=Compute("store", " + ".join(m.name for m in ms)), dtype=dtype)
    resources.append(gmem_d)
    deps[gmem_d] = list(ms)
    tasks.append(Task("store", n_groups, 1, ms, [gmem_d], chain_store_schedule(group, gmem_d)))
    name = f"chain_{mode.name.lower()}_{n_groups}" + (f"x{width}" if width != 2 else "")
    return Design(name, resources, deps, groups, tasks, stream_problem(num_elements, tile_bytes, dtype))



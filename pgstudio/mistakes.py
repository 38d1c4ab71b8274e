"""Planted mistakes: canonical designs with one classic pipeline bug each.

Each function returns a ``Design`` built with ``Task.unchecked`` / ``PipelineGroup.unchecked``
(the Python API would refuse most of them at construction), for the checker, the simulator, the
notebooks and the tests.  ``MISTAKES`` maps each name to its builder and to the kind of finding
the exhaustive checker must report for it.

=========================  ===============================================  ==================
mistake                    what is wrong                                    checker finds
=========================  ===============================================  ==================
never_releases             the merge_copy store task never releases ab      deadlock
undersized_consumer_group  async consumer group of 64 threads; 128 arrive   arrive_count
half_tx_bytes              smem_a expects half the bytes its copy lands     read_before_write
release_before_mma         merge_gemm's MMA task releases A/B, then MMAs    early_release
mismatched_iterations      load_b runs one iteration fewer than the store   deadlock
unordered_alias            smem_b aliases smem_a, loaded by another task    write_while_held
=========================  ===============================================  ==================
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from . import examples
from .model.capture import domain_loop, schedule
from .model.config import CooperativeGroup
from .model.design import Design
from .model.kinds import Agent
from .model.task import Task


@schedule
def _store_never_releases(output, group):
    a, b = group.member_names
    with domain_loop(0, "num_tiles", 1):
        group.member(a).try_wait()
        group.member(a).wait()
        group.member(b).try_wait()
        group.member(b).wait()
        output.store(val_a=group.member(a).read(), val_b=group.member(b).read())


@schedule
def _mma_releases_first(acc, group):
    a, b = group.member_names
    with domain_loop(0, "num_tiles", 1):
        acc.try_acquire()
        acc.acquire()
        with domain_loop(0, "num_k_tiles", 1):
            group.member(a).try_wait()
            group.member(a).wait()
            group.member(b).try_wait()
            group.member(b).wait()
            va, vb = group.member(a).read(), group.member(b).read()
            group.release()  # too early: the MMA below reads both stages
            acc.mma(va, vb)
        acc.commit()


@schedule
def _load_one_short(src, dst):
    with domain_loop(1, "num_tiles", 1):  # starts at 1: one iteration fewer than its consumer
        dst.try_acquire()
        dst.acquire()
        dst.load(src)
        dst.commit()


def _retask(design: Design, name: str, sched) -> Design:
    t = design.task(name)
    return design.with_task(Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources, sched))


def _reconfigure(design: Design, names, **changes) -> Design:
    for n in names:
        r = design.resource(n)
        design = design.with_resource(dataclasses.replace(
            r, pipeline_config=dataclasses.replace(r.pipeline_config, **changes)), design.deps(n))
    return design


def never_releases(num_stages: int = 4) -> Design:
    """merge_copy whose store task waits on and reads both members but never calls
    ``ab.release()``: the loaders fill every stage once, then wait forever for a free one."""
    d = examples.merge_copy(num_stages=num_stages)
    d = _retask(d, "store", _store_never_releases(d.resource("gmem_d"), d.group("ab")))
    return d.replace(name="never_releases")


def undersized_consumer_group(num_stages: int = 4) -> Design:
    """merge_copy with the store task's consumer group declared as 64 threads: its 4 warps (128
    threads) all arrive on the shared empty barrier, so each phase completes after 64 of them
    and the other 64 complete the next phase, freeing a stage nobody released."""
    d = examples.merge_copy(num_stages=num_stages)
    d = _reconfigure(d, ("smem_a", "smem_b"), consumer_group=CooperativeGroup(Agent.Thread, 64))
    return d.replace(name="undersized_consumer_group")


def half_tx_bytes(num_stages: int = 4) -> Design:
    """merge_copy whose smem_a expects half the bytes its copy lands: the full barrier completes
    when half the tile is in, and the store task reads a stage still being written."""
    d = examples.merge_copy(num_stages=num_stages)
    half = d.resource("smem_a").pipeline_config.num_bytes // 2
    d = _reconfigure(d, ("smem_a",), num_bytes=half)
    return d.replace(name="half_tx_bytes")


def release_before_mma(num_stages: int = 4) -> Design:
    """merge_gemm whose MMA task releases the A/B group before the MMA that reads both stages:
    the loaders may overwrite a stage while the tensor cores read it."""
    d = examples.merge_gemm(num_stages=num_stages)
    d = _retask(d, "mma", _mma_releases_first(d.resource("tmem_c"), d.group("ab")))
    return d.replace(name="release_before_mma")


def mismatched_iterations(num_stages: int = 4) -> Design:
    """merge_copy whose load_b loop starts at 1: it fills one tile fewer than the store task
    consumes, so the store task waits forever for the last one."""
    d = examples.merge_copy(num_stages=num_stages)
    d = _retask(d, "load_b", _load_one_short(d.resource("gmem_b"), d.group("ab").member("smem_b")))
    return d.replace(name="mismatched_iterations")


def unordered_alias(num_stages: int = 4) -> Design:
    """merge_copy whose smem_b is declared a view of smem_a's buffer (``aliases="smem_a"``) while
    two tasks load them: nothing orders the two copies into the one buffer."""
    d = examples.merge_copy(num_stages=num_stages)
    d = d.with_resource(dataclasses.replace(d.resource("smem_b"), aliases="smem_a"), d.deps("smem_b"))
    return d.replace(name="unordered_alias")


#: name -> (builder, the kind of finding the checker reports).
MISTAKES: dict[str, tuple[Callable[..., Design], str]] = {
    "never_releases": (never_releases, "deadlock"),
    "undersized_consumer_group": (undersized_consumer_group, "arrive_count"),
    "half_tx_bytes": (half_tx_bytes, "read_before_write"),
    "release_before_mma": (release_before_mma, "early_release"),
    "mismatched_iterations": (mismatched_iterations, "deadlock"),
    "unordered_alias": (unordered_alias, "write_while_held"),
}


def mistake(name: str, **kwargs) -> Design:
    """A planted mistake by name."""
    if name not in MISTAKES:
        from .errors import DesignError
        raise DesignError(f"no planted mistake named {name!r}; mistakes: {', '.join(MISTAKES)}", code="mistakes.unknown")
    return MISTAKES[name][0](**kwargs)


__all__ = [*MISTAKES, "MISTAKES", "mistake"]

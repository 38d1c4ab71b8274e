"""Planted mistakes: canonical designs with one classic pipeline bug each.

Each function returns a ``Design`` built with ``Task.unchecked`` / ``PipelineGroup.unchecked``
(the Python API would refuse most of them at construction), for the checker, the simulator, the
notebooks and the tests.  ``MISTAKES`` maps each name to its builder and to the kind of finding
the exhaustive checker must report for it; ``RULE_MISTAKES`` maps the mistakes from the field
that the rules of ``validate()`` name before anything runs to the code of the rule.

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

=========================  ===============================================  ========================
rule mistake               what is wrong                                    validate() reports
=========================  ===============================================  ========================
one_tile                   merge_copy over one tile: no ring ever wraps     schedule.trip_count (warning)
zero_trip                  load_b's loop runs 0 times, the store's does not schedule.iterations
skipped_acquire            load_b commits stages it never acquired          schedule.phase_lead
two_phase_round            async load_b's group counts 64 of 128 threads    config.arrive_count
register_overdraft         setmaxnreg asks more registers than launched     codegen.register_budget
=========================  ===============================================  ========================

A missing ``fence.proxy.async`` between threads' shared-memory writes and an async-proxy read is
no design's mistake: the generators place every fence (``tests/codegen/test_proxy_fences.py``
checks the emitted kernels), so no design can plant one.
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


@schedule
def _load_unacquired(src, dst):
    with domain_loop(0, "num_tiles", 1):
        dst.load(src)  # no acquire: nothing waits for the consumer to free the stage
        dst.commit()


@schedule
def _load_never(src, dst):
    with domain_loop(0, 0, 1):  # a bound typed as 0: the loop never runs
        dst.try_acquire()
        dst.acquire()
        dst.load(src)
        dst.commit()


def _problem(design: Design, **values) -> Design:
    return design.replace(problem={**design.problem_dict, **values})


def one_tile(num_stages: int = 4) -> Design:
    """merge_copy over one tile (``num_tiles=1``): every task brackets the pipeline once, its ring
    never wraps and no wait sees a flipped phase -- a run that "works" here tested none of it."""
    d = examples.merge_copy(num_stages=num_stages)
    return _problem(d, num_elements=d.problem_dict["tile_elems"], num_tiles=1).replace(name="one_tile")


def zero_trip(num_stages: int = 4) -> Design:
    """merge_copy whose load_b loop runs ``domain_loop(0, 0, 1)``: it never fills smem_b, so the
    store task waits forever for its first tile."""
    d = examples.merge_copy(num_stages=num_stages)
    d = _retask(d, "load_b", _load_never(d.resource("gmem_b"), d.group("ab").member("smem_b")))
    return d.replace(name="zero_trip")


def skipped_acquire(num_stages: int = 4) -> Design:
    """merge_copy whose load_b loads and commits without acquiring: it can run more than a ring
    ahead of the store task and commit twice into a stage before it is released."""
    d = examples.merge_copy(num_stages=num_stages)
    d = _retask(d, "load_b", _load_unacquired(d.resource("gmem_b"), d.group("ab").member("smem_b")))
    return d.replace(name="skipped_acquire")


def two_phase_round(num_stages: int = 3) -> Design:
    """merge_gemm whose B is loaded by a warpgroup of threads (cp.async, every thread arrives)
    while smem_b's producer group says 64 threads: each round of 128 arrivals completes two phases
    of the full barrier, and the MMA task can pass a wait nobody signalled."""
    d = examples.merge_gemm(num_stages=num_stages, b_producer="async")
    d = _reconfigure(d, ("smem_b",), producer_group=CooperativeGroup(Agent.Thread, 64))
    return d.replace(name="two_phase_round")


def register_overdraft(num_stages: int = 3) -> Design:
    """merge_gemm with a setmaxnreg layout whose MMA warpgroups ask for 240 registers per thread
    while the others give back to 40: 66560 registers, but the block of 384 threads launched with
    168 each (64512); the MMA warpgroups' setmaxnreg.inc would wait forever."""
    d = examples.merge_gemm(num_stages=num_stages)
    regs = {f"SETMAXNREG_{t.name}": (240 if t.name == "mma" else 40) for t in d.tasks}
    return _problem(d, **regs).replace(name="register_overdraft")


#: name -> (builder, the kind of finding the checker reports).
MISTAKES: dict[str, tuple[Callable[..., Design], str]] = {
    "never_releases": (never_releases, "deadlock"),
    "undersized_consumer_group": (undersized_consumer_group, "arrive_count"),
    "half_tx_bytes": (half_tx_bytes, "read_before_write"),
    "release_before_mma": (release_before_mma, "early_release"),
    "mismatched_iterations": (mismatched_iterations, "deadlock"),
    "unordered_alias": (unordered_alias, "write_while_held"),
}


#: name -> (builder, the code of the rule that ``validate()`` reports for it).
RULE_MISTAKES: dict[str, tuple[Callable[..., Design], str]] = {
    "one_tile": (one_tile, "schedule.trip_count"),
    "zero_trip": (zero_trip, "schedule.iterations"),
    "skipped_acquire": (skipped_acquire, "schedule.phase_lead"),
    "two_phase_round": (two_phase_round, "config.arrive_count"),
    "register_overdraft": (register_overdraft, "codegen.register_budget"),
}


def mistake(name: str, **kwargs) -> Design:
    """A planted mistake by name (of ``MISTAKES`` or ``RULE_MISTAKES``)."""
    table = {**MISTAKES, **RULE_MISTAKES}
    if name not in table:
        from .errors import DesignError
        raise DesignError(f"no planted mistake named {name!r}; mistakes: {', '.join(table)}", code="mistakes.unknown")
    return table[name][0](**kwargs)


__all__ = [*MISTAKES, *RULE_MISTAKES, "MISTAKES", "RULE_MISTAKES", "mistake"]

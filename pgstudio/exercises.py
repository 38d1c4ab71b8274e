"""Short exercises for the teaching notebooks, each checked by pgstudio itself.

A notebook asks the question and has one check cell::

    from pgstudio import exercises
    answer = ...  # your answer in place of ...
    exercises.check("merge_barriers", answer)  # by module: a bare check would hide the checker's

``check`` prints whether the answer is right and why, computing the right answer with pgstudio
(layouts, the simulator, the checker, the group rules) rather than reading it from a table, so an
exercise cannot drift from what pgstudio does.  Every exercise has a hint for a wrong answer.

    >>> check("pipeline_barriers", 6)
    right: 6 -- one full and one empty mbarrier per stage: 2 x 3 = 6
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Exercise:
    """``question`` (Markdown) and ``hint``; ``solve()`` computes the right answer with pgstudio and
    ``why(answer)`` says why it is right; ``form`` describes the expected form of an answer."""

    key: str
    question: str
    form: str
    hint: str
    solve: Callable[[], Any]
    why: Callable[[Any], str]


def _pipeline_barriers() -> int:
    from .analysis.layout import barrier_layout
    from .model import MemoryResource, create_tma_async_pipeline_cfg

    tile = MemoryResource("smem_a", create_tma_async_pipeline_cfg(num_stages=3, num_bytes=8192))
    return barrier_layout(tile).num_barriers


def _stage_and_parity() -> tuple[int, int]:
    """What the simulator shows the store task of a 2-stage merge_copy waiting for in iteration 5."""
    from .analysis.simulate import simulate
    from .examples import merge_copy

    timeline = simulate(merge_copy(num_stages=2), iterations=6)
    wait = next(e for e in timeline.events if e.task == "store" and e.op == "wait" and e.iteration == 5)
    return wait.stage, wait.phase


def _merge_barriers() -> int:
    from .analysis.layout import barrier_layout
    from .model import MemoryResource, PipelineGroup, PipelineGroupMode, create_tma_umma_pipeline_cfg

    members = [MemoryResource(f"smem_{c}", create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=16384)) for c in "abc"]
    group = PipelineGroup(name="abc", members=members, mode=PipelineGroupMode.Merge)
    try:
        return barrier_layout(group).num_barriers
    finally:
        group.release_members()


def _fork_tx_bytes() -> int:
    from .analysis.layout import barrier_layout
    from .examples import fork_gemm_act

    design = fork_gemm_act()
    return next(s.tx_bytes for s in barrier_layout(design).sets if s.owner == "fa" and s.shared)


def _fork_tile() -> str:
    from .examples import fork_gemm_act

    tile = fork_gemm_act().resource("smem_a")
    return f"{' x '.join(map(str, tile.tile))} {tile.dtype}"


def _fused_init_count() -> int:
    from .analysis.layout import barrier_layout
    from .model import (Agent, CooperativeGroup, MemoryResource, PipelineGroup, PipelineGroupMode,
                        create_async_umma_pipeline_cfg, create_tma_umma_pipeline_cfg)

    a = MemoryResource("a", create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=16384))
    b = MemoryResource("b", create_async_umma_pipeline_cfg(num_stages=4,
                                                           producer_group=CooperativeGroup(Agent.Warp, 2)))
    group = PipelineGroup(name="ab", members=[a, b], mode=PipelineGroupMode.FusedMerge)
    try:
        return next(s.init_count for s in barrier_layout(group).sets if s.shared and s.role == "full")
    finally:
        group.release_members()


def _allowed_mode() -> str:
    from .model import MemoryResource, PipelineGroupMode, create_tma_async_pipeline_cfg, create_tma_umma_pipeline_cfg
    from .model.group_rules import check_group

    x = MemoryResource("smem_x", create_tma_async_pipeline_cfg(num_stages=4, num_bytes=8192))
    y = MemoryResource("smem_y", create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=8192))
    ok = [m.value for m in PipelineGroupMode
          if not any(d.severity == "error" for d in check_group("xy", [x, y], m, None))]
    if len(ok) != 1:
        raise AssertionError(f"the exercise expects exactly one mode to be allowed, got {ok}")
    return ok[0]


def _checker_kind() -> str:
    from .analysis.check import check as run_checker
    from .mistakes import release_before_mma

    return run_checker(release_before_mma(num_stages=2), iterations=4).kind


EXERCISES: dict[str, Exercise] = {e.key: e for e in (
    Exercise("pipeline_barriers",
             "How many mbarriers does one pipelined resource with **3 stages** use (not in a group)?",
             "a whole number", "every stage has a full barrier and an empty barrier",
             _pipeline_barriers, lambda n: f"one full and one empty mbarrier per stage: 2 x 3 = {n}"),
    Exercise("stage_and_parity",
             "In `merge_copy(num_stages=2)`, the store task waits on the full barrier of `smem_a` in every "
             "iteration. In **iteration 5**, which stage does it wait on, and with which parity? "
             "Answer as `(stage, parity)`.",
             "a pair (stage, parity)", "iteration k uses stage k % S in round r = k // S; the consumer waits "
             "with parity r & 1",
             _stage_and_parity,
             lambda sp: f"stage 5 % 2 = {sp[0]}, round 5 // 2 = 2, parity 2 & 1 = {sp[1]} (what the simulator "
                        f"shows the store task waiting for)"),
    Exercise("merge_barriers",
             "How many barriers does a **Merge** of **3** members with **4** stages each lay out?",
             "a whole number", "a Merge keeps one full barrier set per member and shares one empty set",
             _merge_barriers, lambda n: f"(N + 1) x S = (3 + 1) x 4 = {n}"),
    Exercise("fork_tx_bytes",
             "In `examples.fork_gemm_act()`, how many transaction bytes does the Fork group's shared full "
             "barrier expect per phase? (Its two members are views of one buffer.)",
             "a whole number of bytes", "one tma copy lands one tile; aliased members count once",
             _fork_tx_bytes, lambda n: f"the members alias one {_fork_tile()} tile: one copy of {n} bytes, "
                                       f"armed once per stage"),
    Exercise("fused_init_count",
             "A **FusedMerge** of a tma member and an async member whose producer is **2 warps**: what is the "
             "init (arrive) count of the shared full barrier?",
             "a whole number", "sum the producers' arrivals: one elected thread for tma, every thread for async",
             _fused_init_count, lambda n: f"1 (the tma producer's elected thread) + 2 x 32 (the async producer's "
                                          f"threads) = {n}"),
    Exercise("allowed_mode",
             "A `TmaAsync` tile (read by threads) and a `TmaUmma` tile (read by an MMA): which group mode can "
             "hold both? Answer `\"Merge\"`, `\"Fork\"` or `\"FusedMerge\"`.",
             "one of Merge, Fork, FusedMerge", "only the collapsed side must have one kind; which side do these "
             "two share a kind on?",
             _allowed_mode, lambda m: f"{m}: it collapses the producer side, where both are tma; the consumer "
                                      f"kinds (async, umma) may differ"),
    Exercise("checker_kind",
             "`mistakes.release_before_mma()` releases the stage before the MMA that reads it has finished. "
             "Which kind of violation does the checker report? (one of `deadlock`, `arrive_count`, "
             "`read_before_write`, `early_release`, `write_while_held`)",
             "one of the kinds listed", "the stage is handed back while it is still being read",
             _checker_kind, lambda k: f"{k}: the producer may overwrite the stage while the MMA still reads it"),
)}


def _same(answer: Any, right: Any) -> bool:
    if isinstance(right, str):
        return isinstance(answer, str) and answer.strip().strip("\"'").lower() == right.lower()
    if isinstance(right, tuple):
        return isinstance(answer, (tuple, list)) and len(answer) == len(right) and all(
            _same(a, r) for a, r in zip(answer, right))
    return not isinstance(answer, (bool, str)) and answer == right


def verdict(key: str, answer: Any) -> tuple[bool | None, str]:
    """(True / False / None for no answer yet, the words ``check`` prints)."""
    if key not in EXERCISES:
        raise KeyError(f"no exercise {key!r}; exercises: {', '.join(EXERCISES)}")
    ex = EXERCISES[key]
    if answer is Ellipsis:
        return None, f"no answer yet: write {ex.form} in place of ... and run the cell again"
    right = ex.solve()
    if _same(answer, right):
        return True, f"right: {answer!r} -- {ex.why(right)}" if isinstance(right, str) else \
            f"right: {answer} -- {ex.why(right)}"
    end = "?" if ex.hint.endswith("?") else "."
    return False, f"not quite: {answer!r} is not it. Hint: {ex.hint.rstrip('.?')}{end}"


def check(key: str, answer: Any) -> None:
    """Print whether ``answer`` to exercise ``key`` is right (see the module docstring)."""
    print(verdict(key, answer)[1])


__all__ = ["EXERCISES", "Exercise", "check", "verdict"]

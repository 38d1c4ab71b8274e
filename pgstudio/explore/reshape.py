"""Reshaping a design: the transformations a sweep's variants are made of.

Each returns a new design and keeps it valid by construction where the design allows it:

* ``with_stages``: the stage count of the main pipelines (``main_pipelines``: every pipelined
  resource with the stage count of the design's first one; for a GEMM, the operand tiles feeding
  the MMA and their views -- the accumulator and a one-stage residual keep theirs);
* ``with_tile``: bytes per stage (streaming, ``with_tile_bytes``) or a BM x BN x BK tile shape
  (GEMM, ``with_tile_shape``), from which every tile's shape and bytes and the problem's tile
  counts follow, in the problem spaces the GEMM generator reads off the design;
* ``with_consumer_warps``: the warps of a streaming design's consumer tasks, their consumer
  groups resized with them;
* ``with_grouping``: as designed, ungrouped, or every group in another mode with its schedules
  derived afresh.

What cannot apply (a GEMM tile on a streaming design, no group to regroup) raises
``PgStudioError`` naming the design and what it takes instead.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Sequence

from ..analysis.buildable.gemm_plan import plan_gemm
from ..analysis.buildable.steps import is_mma_design
from ..analysis.accumulators import residuals
from ..analysis.smem_layout import turn_slices
from ..errors import DesignError, PgStudioError
from ..model.config import CooperativeGroup
from ..model.derive import derive_design
from ..model.design import Design
from ..model.group import PipelineGroup, PipelineGroupMode
from ..model.kinds import Agent
from ..model.problem import gemm_problem
from ..model.resource import Memory
from ..model.targets import STAGING_TURNS, dtype_bytes, residual_turns_ok
from ..model.task import Task
from ..model.ungroup import ungrouped

DESIGNED, UNGROUPED = "designed", "ungrouped"
GROUPINGS = (DESIGNED, UNGROUPED, *(m.value for m in PipelineGroupMode))
STREAM, GEMM = "stream", "gemm"


def kind_of(design: Design) -> str:
    """``"gemm"`` for a design with an MMA (the GEMM generator's), else ``"stream"``."""
    return GEMM if is_mma_design(design) else STREAM


def _rebuild(design: Design, resources: list, problem: dict | None = None, tasks: list | None = None) -> Design:
    by_name = {r.name: r for r in resources}
    groups = [PipelineGroup.unchecked(g.name, [by_name.get(m.name, m) for m in g.members], g.mode, g.pipeline_config)
              for g in design.groups]
    changes: dict[str, Any] = {"resources": resources, "groups": groups}
    if problem is not None:
        changes["problem"] = tuple(problem.items())
    if tasks is not None:
        changes["tasks"] = tasks
    return design.replace(**changes)


def main_pipelines(design: Design) -> tuple[str, ...]:
    """Resources whose stage count a sweep varies (see the module docstring)."""
    piped = [r for r in design.resources if r.pipeline_config is not None and r.memory is not Memory.TMEM]
    if not piped:
        raise PgStudioError(f"design {design.name!r} has no pipelined resource, so there is nothing to sweep")
    first = piped[0]
    if kind_of(design) == GEMM:
        acc = _accumulator(design)
        if acc is not None and design.deps(acc):
            first = design.resource(design.deps(acc)[0])
    stages = first.pipeline_config.num_stages
    return tuple(r.name for r in piped if r.pipeline_config.num_stages == stages and r.memory is Memory.SMEM)


def check_positive(what: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise PgStudioError(f"sweep {what}={v!r} is not a positive whole number")


def with_stages(design: Design, num_stages: int) -> Design:
    """``design`` with its main pipelines at ``num_stages`` stages."""
    check_positive("num_stages", num_stages)
    names = set(main_pipelines(design))
    resources = [dataclasses.replace(r, pipeline_config=dataclasses.replace(r.pipeline_config, num_stages=num_stages))
                 if r.name in names else r for r in design.resources]
    return _rebuild(design, resources)


def with_tile(design: Design, tile: Sequence[int]) -> Design:
    """``design`` with tiles of ``tile``: ``(bytes,)`` per stage (streaming) or ``(BM, BN, BK)`` (GEMM)."""
    tile = tuple(tile)
    kind = kind_of(design)
    if kind == GEMM:
        if len(tile) != 3:
            raise PgStudioError(f"design {design.name!r} is a GEMM design: its tiles are BMxBNxBK shapes "
                                "(e.g. 128x256x64) "
                                f"and the bytes per stage follow from them; got {_tile_text(tile)}")
        return with_tile_shape(design, *tile)
    if len(tile) != 1:
        raise PgStudioError(f"design {design.name!r} is a streaming design: its tiles are bytes per stage (e.g. 8192); "
                            f"got {_tile_text(tile)}")
    return with_tile_bytes(design, tile[0])


def _tile_text(tile: Sequence[int]) -> str:
    return "x".join(map(str, tile))


def with_tile_bytes(design: Design, tile_bytes: int) -> Design:
    """A streaming design with ``tile_bytes`` per stage in its main pipelines (and the problem's
    ``tile_elems`` / ``num_tiles`` to match)."""
    check_positive("tile_bytes", tile_bytes)
    names = set(main_pipelines(design))
    resources = []
    for r in design.resources:
        if r.name in names:
            cfg = dataclasses.replace(r.pipeline_config, num_bytes=tile_bytes)
            tile = (tile_bytes // dtype_bytes(r.dtype),) if len(r.tile) <= 1 else r.tile
            r = dataclasses.replace(r, pipeline_config=cfg, tile=tile)
        resources.append(r)
    problem = design.problem_dict
    if "tile_elems" in problem:
        elems = tile_bytes // dtype_bytes(str(problem.get("dtype", "float32")))
        problem["tile_elems"] = elems
        if "num_elements" in problem and "num_tiles" in problem:
            problem["num_tiles"] = -(-int(problem["num_elements"]) // max(elems, 1))
    return _rebuild(design, resources, problem)


def _accumulator(design: Design) -> str | None:
    accs = [r.name for r in design.resources if r.memory is Memory.TMEM and r.compute.op == "mma"]
    return accs[0] if len(accs) == 1 else None


@functools.lru_cache(maxsize=16)
def _gemm_spaces(design: Design) -> tuple[str, dict[str, str]]:
    """(accumulator, staged tile -> problem space "MK" / "KN" / "MN"), as the GEMM generator reads them."""
    try:
        plan = plan_gemm(design).require(design.name, "sm_90a")
    except DesignError as exc:
        raise PgStudioError(f"the tile shape of design {design.name!r} cannot be varied: the GEMM generator does not "
                            f"accept the design as it is ({exc})") from None
    return plan.acc, {name: t.space for name, t in plan.tiles.items()}


#: Tile shape of each problem space, in the order the canonical designs give it.
_SHAPES = {"MK": ("BM", "BK"), "KN": ("BN", "BK"), "NK": ("BN", "BK"), "MN": ("BM", "BN")}


def with_tile_shape(design: Design, bm: int, bn: int, bk: int) -> Design:
    """A GEMM design at a BM x BN x BK tile: every staged tile, the accumulator and the problem's
    tile counts follow, and each tile's ``num_bytes`` is its shape times its element size."""
    for what, v in (("BM", bm), ("BN", bn), ("BK", bk)):
        check_positive(what, v)
    acc, spaces = _gemm_spaces(design)
    dims = {"BM": bm, "BN": bn, "BK": bk}
    turns, slices = turn_slices(design)
    resources = []
    for r in design.resources:
        shape = None
        if r.name == acc:
            shape = (bm, bn)
        elif r.name in slices:  # a residual in column slices stays in as many slices
            shape = (bm, bn // turns)
        elif r.name in spaces:
            shape = tuple(dims[d] for d in _SHAPES[spaces[r.name]])
        if shape is not None:
            nbytes = shape[0] * shape[1] * dtype_bytes(r.dtype)
            cfg = dataclasses.replace(r.pipeline_config, num_bytes=nbytes)
            r = dataclasses.replace(r, tile=shape, pipeline_config=cfg)
        resources.append(r)
    p = design.problem_dict
    problem = {**p, **gemm_problem(int(p["M"]), int(p["N"]), int(p["K"]), bm, bn, bk, str(p.get("dtype", "float16")),
                                       b_major=str(p.get("b_major", "mn")), split_k=int(p.get("SPLIT_K", 1)))}
    return _rebuild(design, resources, problem)


def with_residual_turns(design: Design, turns: int, acc_stages: int) -> Design:
    """A GEMM design whose residual tiles (the M x N tiles its epilogue reads beside the
    accumulator) come in ``turns`` column slices, through ``acc_stages`` stages of theirs and of
    the accumulator (``smem_layout.turn_slices``); ``turns`` 1 stages them whole.  A design
    without a residual only takes ``acc_stages``."""
    check_positive("acc_stages", acc_stages)
    acc = _accumulator(design)
    if acc is None:
        raise PgStudioError(f"design {design.name!r} has no one accumulator whose staging could take turns")
    p = design.problem_dict
    bm, bn = int(p["BM"]), int(p["BN"])
    if not residual_turns_ok(turns, bn):
        raise PgStudioError(f"turns={turns!r}: the residual of design {design.name!r} (BN = {bn}) comes in "
                            f"{', '.join(map(str, STAGING_TURNS))} column slices of BN; use turns 2 or 4 with BN 128 or 256")
    sliced = set(residuals(design, design.resource(acc)))
    resources = []
    for r in design.resources:
        cfg = r.pipeline_config
        if r.name == acc:
            r = dataclasses.replace(r, pipeline_config=dataclasses.replace(cfg, num_stages=acc_stages))
        elif r.name in sliced:
            shape = (bm, bn // turns)
            cfg = dataclasses.replace(cfg, num_stages=acc_stages, num_bytes=shape[0] * shape[1] * dtype_bytes(r.dtype))
            r = dataclasses.replace(r, tile=shape, pipeline_config=cfg)
        resources.append(r)
    return _rebuild(design, resources)


def with_gemm_tiles(design: Design, tiles: Any) -> Design:
    """A GEMM design at one tile choice (``gemm_shapes.GemmTiles``: BM x BN x BK, stages, split-K
    parts, cluster and, where it says so, a residual's turns and the staging's stages): what the
    tuner builds from a user's design, keeping its tasks and groups."""
    d = with_stages(with_tile_shape(design, tiles.bm, tiles.bn, tiles.bk), tiles.stages)
    if tiles.turns > 1 or tiles.acc_stages > 1:
        d = with_residual_turns(d, tiles.turns, tiles.acc_stages)
    p = d.problem_dict
    keep = {k: v for k, v in p.items() if k not in ("SPLIT_K", "CLUSTER_M", "CLUSTER_N", "STREAM_K")}
    problem = {**keep, **gemm_problem(int(p["M"]), int(p["N"]), int(p["K"]), tiles.bm, tiles.bn, tiles.bk,
                                      str(p.get("dtype", "float16")), b_major=str(p.get("b_major", "mn")),
                                      split_k=tiles.split_k, cluster=tuple(tiles.cluster),
                                      stream_k=tiles.stream_k)}
    return _rebuild(d, list(d.resources), problem)


def consumer_tasks(design: Design) -> list[Task]:
    """Tasks that consume pipelined tiles and write only global memory (a streaming design's store tasks)."""
    out = []
    for t in design.tasks:
        srcs = [design.resource(s) for s in t.src_resources if design.has_resource(s)]
        dsts = [design.resource(d) for d in t.dst_resources if design.has_resource(d)]
        if any(s.pipeline_config is not None for s in srcs) and dsts and all(d.memory is Memory.GMEM for d in dsts):
            out.append(t)
    return out


def with_consumer_warps(design: Design, warps: int) -> Design:
    """A streaming design whose consumer tasks run ``warps`` warps each: their consumer groups
    (where they spanned the whole task) resize with them, and consumer tasks are laid out one
    after another from the first one's warp, each starting on a warpgroup boundary."""
    check_positive("warps", warps)
    if kind_of(design) == GEMM:
        raise PgStudioError(f"design {design.name!r} is a GEMM design: its warps are fixed by the MMA warpgroups; "
                            "sweep warps of streaming designs")
    consumers = sorted(consumer_tasks(design), key=lambda t: t.warp_idx)
    if not consumers:
        raise PgStudioError(f"design {design.name!r} has no consumer task whose warps could vary")
    by_name = {r.name: r for r in design.resources}
    for t in consumers:
        for s in t.src_resources:
            r = by_name[s]
            cfg = r.pipeline_config
            if cfg is not None and cfg.consumer_group.num_threads == 32 * t.num_warps:
                group = CooperativeGroup(Agent.Warp, warps) if cfg.consumer_group.agent is Agent.Warp \
                    else CooperativeGroup(Agent.Thread, 32 * warps)
                by_name[s] = dataclasses.replace(r, pipeline_config=dataclasses.replace(cfg, consumer_group=group))
    placed, cursor = {}, consumers[0].warp_idx
    for t in consumers:
        start = -(-cursor // 4) * 4
        placed[t.name] = Task.unchecked(t.name, start, warps, t.src_resources, t.dst_resources, t.schedule)
        cursor = start + warps
    tasks = [placed.get(t.name, t) for t in design.tasks]
    return _rebuild(design, [by_name[r.name] for r in design.resources], tasks=tasks)


def with_grouping(design: Design, grouping: str) -> Design:
    """``design`` regrouped: ``designed``, ``ungrouped`` or a group mode (schedules derived afresh)."""
    if grouping == DESIGNED:
        return design
    if grouping == UNGROUPED:
        return ungrouped(design)
    try:
        mode = PipelineGroupMode(grouping)
    except ValueError:
        raise PgStudioError(f"grouping {grouping!r} is not known; use one of {', '.join(GROUPINGS)}") from None
    if not design.groups:
        raise PgStudioError(f"design {design.name!r} has no group to make {mode.value}")
    groups = [PipelineGroup.unchecked(g.name, g.members, mode, g.pipeline_config) for g in design.groups]
    return derive_design(design.replace(name=f"{design.name}_{mode.value.lower()}", groups=groups),
                         replace_attached=True)


__all__ = ["DESIGNED", "GEMM", "GROUPINGS", "STREAM", "UNGROUPED", "check_positive", "consumer_tasks", "kind_of",
           "main_pipelines", "with_consumer_warps", "with_gemm_tiles", "with_grouping", "with_residual_turns",
           "with_stages", "with_tile", "with_tile_bytes", "with_tile_shape"]

"""One-click fixes of the ``codegen.*`` rules, as data (``model.diagnostic.Fix``, edits of
``model.edits``): each says in the form's words what it changes.  A fix is offered where the
change is mechanical -- a value that follows from the others (a tile's bytes, a rounded stride,
the tiles of a new BK) or a free place (a warpgroup for the MMA task) -- and never where the
user has to choose what the design means.
"""

from __future__ import annotations

from typing import Iterable

from ...model.design import Design
from ...model.diagnostic import Fix, fix
from ...model.kinds import OpKind, PipelineType


def tile_text(shape: Iterable[int]) -> str:
    return "x".join(map(str, shape))


def retile(bm: int, bn: int, bk: int, spaces: dict[str, str], what: str) -> Fix:
    """Set the GEMM tile to ``bm`` x ``bn`` x ``bk`` (``what`` names the change); every staged tile and
    the accumulator follow in their problem space (``spaces``: resource -> "MK" / "KN" / "NK" / "MN")."""
    block = {"M": bm, "N": bn, "K": bk}
    shapes = ", ".join(f"{name} {tile_text(block[x] for x in space)}" for name, space in spaces.items())
    return fix(f"set {what} (tiles follow: {shapes})", "retile_gemm", bm, bn, bk, tuple(spaces.items()))


def problem(values: dict[str, int], why: str) -> Fix:
    said = " and ".join(f"{k} to {v}" for k, v in values.items())
    return fix(f"set {said} ({why})", "update_problem", **values)


def stage_bytes(resource: str, nbytes: int, why: str) -> Fix:
    return fix(f"set {resource}'s num_bytes to {nbytes} ({why})", "set_resource", resource, num_bytes=nbytes)


def pipeline_type(resource: str, producer: OpKind, consumer: OpKind) -> Fix:
    """Give ``resource`` the pipeline type of these kinds (e.g. TmaUmma), as the Resources form names it."""
    ptype = next(t for t in PipelineType if t.producer_kind is producer and t.consumer_kind is consumer)
    return fix(f"make {resource} {ptype.value}", "set_resource", resource, pipeline_type=ptype.value)


def dtype(names: Iterable[str], value: str) -> Fix:
    names = tuple(names)
    if len(names) == 1:
        return fix(f"set {names[0]}'s dtype to {value}", "set_resource", names[0], dtype=value)
    return fix(f"set the dtype of {', '.join(names)} to {value}", "set_resources", names, dtype=value)


def free_warps(design: Design, task: str, num_warps: int, *, one_warpgroup: bool) -> int | None:
    """The first warp index, on a warpgroup boundary (4 warps), where ``num_warps`` warps of ``task``
    overlap no other task -- inside one warpgroup when ``one_warpgroup`` -- or None."""
    taken = {w for t in design.tasks if t.name != task for w in t.warps}
    if one_warpgroup and num_warps > 4:
        return None
    top = max([w + 1 for w in taken] + [0]) + 4
    for start in range(0, top + 1, 4):
        if not taken & set(range(start, start + num_warps)):
            return start
    return None


def most_stages_that_fit(design: Design, resource: str, most: int, arch: str) -> int | None:
    """The most stages of ``resource``, at most ``most``, with which the design's shared memory
    still fits ``arch`` (an accumulator's stages each have a staging buffer), or None."""
    import dataclasses

    from ..layout import smem_layout

    r = design.resource(resource)
    for stages in range(most, 0, -1):
        cfg = dataclasses.replace(r.pipeline_config, num_stages=stages)
        if smem_layout(design.with_resource(dataclasses.replace(r, pipeline_config=cfg)), arch=arch).fits:
            return stages
    return None


def move_task(task: str, warp_idx: int, num_warps: int | None = None) -> Fix:
    if num_warps is None:
        return fix(f"move task {task} to warp {warp_idx}", "set_task", task, warp_idx=warp_idx)
    return fix(f"give task {task} warps {warp_idx}..{warp_idx + num_warps - 1} ({num_warps // 4} warpgroup"
               f"{'s' if num_warps > 4 else ''})", "set_task", task, warp_idx=warp_idx, num_warps=num_warps)


__all__ = ["dtype", "fix", "free_warps", "most_stages_that_fit", "move_task", "pipeline_type", "problem", "retile",
           "stage_bytes", "tile_text"]

"""The edits a diagnostic's one-click ``Fix`` may name (``FIX_EDITS``), and ``apply_fix``."""

from __future__ import annotations

from typing import Any, Iterable

from ..derive import derive_design
from ..design import Design
from ..diagnostic import Fix
from ..targets import DTYPE_BYTES
from .common import EditError
from .groups_tasks import merge_tasks, set_group, set_task, use_derived_schedule
from .problem import set_problem_value
from .resources import remove_edge, set_resource

__all__ = ["set_resources", "update_problem", "set_stage_bytes", "retile_gemm", "FIX_EDITS", "apply_fix"]

# -- fixes -----------------------------------------------------------------------------------------

#: The edits a diagnostic's ``Fix`` may name (``Fix.edit``): pure functions ``Design -> Design``.
def set_resources(d: Design, names: Iterable[str], **fields: Any) -> Design:
    """``set_resource(name, **fields)`` for each of ``names`` (one fix that changes several)."""
    for name in names:
        d = set_resource(d, name, **fields)
    return d


def update_problem(d: Design, **values: Any) -> Design:
    """``set_problem_value`` for each symbol; the symbols that follow are recomputed once each."""
    for key, value in values.items():
        d = set_problem_value(d, key, value)
    return d


def set_stage_bytes(d: Design, names: Iterable[str], num_bytes: int) -> Design:
    """The stages of ``names`` at ``num_bytes``: a one-dimensional tile follows (that many bytes of
    its dtype), and so does a streaming problem's ``tile_elems`` (and the ``num_tiles`` after it)."""
    names = tuple(names)
    for name in names:
        r = d.resource(name)
        elems, rest = divmod(num_bytes, DTYPE_BYTES.get(r.dtype, 1))
        tile = (elems,) if len(r.tile) <= 1 and r.dtype in DTYPE_BYTES and not rest else r.tile
        d = set_resource(d, name, tile=tile, num_bytes=num_bytes)
    dtypes = {d.resource(n).dtype for n in names}
    if "tile_elems" in d.problem_dict and len(dtypes) == 1 and dtypes <= set(DTYPE_BYTES):
        d = set_problem_value(d, "tile_elems", num_bytes // DTYPE_BYTES[dtypes.pop()])
    return d


def retile_gemm(d: Design, bm: int, bn: int, bk: int, spaces: Iterable[tuple[str, str]]) -> Design:
    """A GEMM design at a ``bm`` x ``bn`` x ``bk`` tile: the problem's BM, BN, BK (and the tile
    counts that follow), and each ``(resource, space)`` tile reshaped to its space -- "MK" is
    BM x BK, "KN" BK x BN, "NK" BN x BK, "MN" BM x BN -- with its bytes following its shape."""
    block = {"M": bm, "N": bn, "K": bk}
    d = update_problem(d, BM=bm, BN=bn, BK=bk)
    for name, space in spaces:
        d = set_resource(d, name, tile=tuple(block[x] for x in space))
    return d


FIX_EDITS = {f.__name__: f for f in (set_resource, set_resources, set_group, set_task, merge_tasks, remove_edge,
                                     use_derived_schedule, update_problem, retile_gemm, set_stage_bytes)}


def apply_fix(d: Design, fix: Fix) -> Design:
    """The design with ``fix`` applied, its derived schedules derived afresh (a fix that changes a
    group or a task changes what the derived schedules must say)."""
    try:
        edit = FIX_EDITS[fix.edit]
    except KeyError:
        raise EditError(f"fix {fix.label!r} names edit {fix.edit!r}, expected one of {', '.join(FIX_EDITS)}",
                        code="edit.fix") from None
    return derive_design(edit(d, *fix.args, **dict(fix.kwargs)))

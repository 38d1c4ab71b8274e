"""The design space of a sweep: which variants there are, and their stable keys.

A variant (``Variant``) is a point of stages x tile x grouping (x consumer warps x code options):
``num_stages`` of the main pipelines; ``tile``, bytes per stage ``(8192,)`` for a streaming
design or a ``(BM, BN, BK)`` shape for a GEMM design (every tile's bytes follow from it, so no
variant has a tile whose bytes disagree with its shape); ``grouping`` (``designed``,
``ungrouped`` or a group mode, schedules derived afresh); ``warps`` of each consumer task and
code-generator ``options`` (streaming).  ``Variant.build`` applies them (``explore.reshape``).

``Variant.key`` ("designed/s4/t8192", "Merge/s3/t128x256x64") identifies a variant across runs,
machines and result files.  ``space_for(design, ...)`` takes the axes given and the design's
defaults for the rest.  A space built from default stage counts is *bounded*: stage counts that
would overflow shared memory are left out (and counted in the space's note), so every variant of
a default sweep fits; stage counts the caller lists are all tried, and the ones that do not fit
are reported invalid with the rule that says so.  Whether a variant is valid is
``design.validate()``'s call (and the generator's), made when the variant is compiled.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Iterable

from ..analysis.validate import validate
from ..errors import PgStudioError
from ..model.design import Design
from ..model.group import PipelineGroupMode
from .reshape import (DESIGNED, GEMM, GROUPINGS, STREAM, UNGROUPED, check_positive, kind_of, main_pipelines,
                      with_consumer_warps, with_grouping, with_stages, with_tile)

#: The groupings a sweep of a Merge design tries when none are given (``default_groupings``).
DEFAULT_GROUPINGS = (DESIGNED, UNGROUPED, "Merge", "FusedMerge")
#: Default axes of a streaming design: 4 x 4 (x groupings) variants, all within shared memory.
DEFAULT_STAGES = (2, 4, 6, 8)
DEFAULT_TILE_BYTES = (1024, 2048, 4096, 8192)
#: Default axes of a GEMM design: stages up to what shared memory holds; BN (up to the design's) x BK
#: at the design's BM.
DEFAULT_GEMM_STAGES = tuple(range(2, 9))
DEFAULT_GEMM_BN = (64, 128, 256)
DEFAULT_GEMM_BK = (64, 128)


# -- variants ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Variant:
    """One point of a sweep (see the module docstring)."""

    grouping: str
    num_stages: int
    tile: tuple[int, ...]
    warps: int | None = None
    options: tuple[tuple[str, str], ...] = ()

    @property
    def tile_label(self) -> str:
        return f"{self.tile[0]}B" if len(self.tile) == 1 else "x".join(map(str, self.tile))

    @property
    def key(self) -> str:
        parts = [self.grouping, f"s{self.num_stages}", "t" + "x".join(map(str, self.tile))]
        if self.warps is not None:
            parts.append(f"w{self.warps}")
        if self.options:
            parts.append(",".join(f"{k}={v}" for k, v in self.options))
        return "/".join(parts)

    @property
    def label(self) -> str:
        text = f"{self.grouping} {self.num_stages}x{self.tile_label}"
        if self.warps is not None:
            text += f" {self.warps}w"
        if self.options:
            text += " " + ",".join(f"{k}={v}" for k, v in self.options)
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"grouping": self.grouping, "num_stages": self.num_stages, "tile": list(self.tile),
                "warps": self.warps, "options": dict(self.options)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Variant":
        warps = None if d.get("warps") is None else int(d["warps"])
        options = tuple(sorted(dict(d.get("options") or {}).items()))
        return cls(str(d["grouping"]), int(d["num_stages"]), tuple(int(x) for x in d["tile"]), warps, options)

    def build(self, base: Design) -> Design:
        """The variant's design; ``PgStudioError`` when the transformation does not apply."""
        d = with_tile(base, self.tile)  # first: the tile spaces are read off the design as given
        d = with_stages(d, self.num_stages)
        if self.warps is not None:
            d = with_consumer_warps(d, self.warps)
        return with_grouping(d, self.grouping)


# -- the space --------------------------------------------------------------------------------------

def parse_tile(value: Any) -> tuple[int, ...]:
    """``8192`` / ``"8192"`` -> ``(8192,)``; ``"128x256x64"`` / ``(128, 256, 64)`` -> ``(128, 256, 64)``."""
    if isinstance(value, (tuple, list)):
        parts = list(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        parts = [value]
    elif isinstance(value, str) and re.fullmatch(r"\s*\d+(\s*[xX]\s*\d+)*\s*", value):
        parts = [int(p) for p in re.split(r"[xX]", value)]
    else:
        raise PgStudioError(f"tile {value!r} is neither bytes per stage (8192) nor a BMxBNxBK shape (128x256x64)")
    if len(parts) not in (1, 3) or any(isinstance(p, bool) or not isinstance(p, int) or p < 1 for p in parts):
        raise PgStudioError(f"tile {value!r} is neither bytes per stage (8192) nor a BMxBNxBK shape (128x256x64)")
    return tuple(parts)


def parse_options(value: Any) -> tuple[tuple[str, str], ...]:
    """``"store=cs,load_hint=evict_first"`` or a dict -> sorted pairs; ``""`` / ``"default"`` -> ()."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, str):
        text = value.strip()
        if text in ("", "-", "default"):
            return ()
        items = []
        for part in text.split(","):
            if "=" not in part:
                raise PgStudioError(f"option {part!r} is not NAME=VALUE (e.g. store=cs)")
            k, v = part.split("=", 1)
            items.append((k.strip(), v.strip()))
    else:
        items = tuple(value)
    from ..codegen.kernel import TUNING
    out = tuple(sorted((str(k), str(v)) for k, v in items))
    for k, v in out:
        if k not in TUNING or v not in TUNING[k]:
            allowed = "; ".join(f"{n}: {', '.join(vals)}" for n, vals in TUNING.items())
            raise PgStudioError(f"option {k}={v} is not known; allowed: {allowed}")
    return out


@dataclass(frozen=True)
class Space:
    """The axes of a sweep; ``variants(design)`` enumerates them (see the module docstring)."""

    kind: str
    groupings: tuple[str, ...]
    stages: tuple[int, ...]
    tiles: tuple[tuple[int, ...], ...]
    warps: tuple[int | None, ...] = (None,)
    options: tuple[tuple[tuple[str, str], ...], ...] = ((),)
    bounded: bool = True

    @property
    def size(self) -> int:
        """Variants before the shared-memory bound."""
        return len(self.groupings) * len(self.stages) * len(self.tiles) * len(self.warps) * len(self.options)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "groupings": list(self.groupings), "stages": list(self.stages),
                "tiles": [list(t) for t in self.tiles], "warps": list(self.warps),
                "options": [dict(o) for o in self.options], "bounded": self.bounded}

    def variants(self, design: Design) -> tuple[list[Variant], str]:
        """Every variant, and a note on the ones the shared-memory bound left out ("" if none)."""
        out, dropped = [], []
        for g, t, w, o in itertools.product(self.groupings, self.tiles, self.warps, self.options):
            for i, s in enumerate(self.stages):
                v = Variant(g, s, t, w, o)
                if self.bounded and _overflows(design, v):  # more stages only need more memory
                    dropped += [Variant(g, s2, t, w, o) for s2 in self.stages[i:]]
                    break
                out.append(v)
        note = ""
        if dropped:
            note = (f"{len(dropped)} variant(s) left out because their stages overflow shared memory "
                    f"(e.g. {dropped[0].label}); list stage counts explicitly to try them anyway")
        return out, note


def _overflows(design: Design, v: Variant) -> bool:
    """True when ``v``'s stages do not fit in shared memory (the capacity rule counts what the
    generator allocates, a GEMM's accumulator staging included)."""
    try:
        d = v.build(design)
    except PgStudioError:
        return False  # not a capacity question: the variant is reported invalid with its reason
    return "smem.capacity" in validate(d).codes()


#: Group modes that regroup the same members the same way (a Fork shares one buffer; these do not).
_MERGE_FAMILY = {PipelineGroupMode.Merge.value, PipelineGroupMode.FusedMerge.value}


def default_groupings(design: Design) -> tuple[str, ...]:
    """As designed, ungrouped, and the other Merge-family mode when every group is Merge or FusedMerge
    (a Fork's members are views of one buffer: merging them is not a variant of the same design)."""
    modes = {g.mode.value for g in design.groups}
    extra = tuple(m for m in DEFAULT_GROUPINGS[2:] if modes and modes <= _MERGE_FAMILY)
    return (DESIGNED, UNGROUPED, *extra)


def space_for(design: Design, num_stages: Iterable[int] | None = None, tiles: Iterable[Any] | None = None,
              grouping: Iterable[str] | None = None, *, warps: Iterable[int] | None = None,
              options: Iterable[Any] | None = None) -> Space:
    """The space of ``design``: the given axes, defaults for the rest (see the module docstring)."""
    kind = kind_of(design)
    main_pipelines(design)  # a design without pipelines has nothing to sweep: say so now
    groupings = []
    for g in dict.fromkeys(grouping if grouping is not None else default_groupings(design)):
        if g not in GROUPINGS:
            raise PgStudioError(f"grouping {g!r} is not known; use one of {', '.join(GROUPINGS)}")
        if g != DESIGNED and (not design.groups or g in {gr.mode.value for gr in design.groups}):
            continue  # the same kernel as the designed one (or, without groups, nothing to regroup)
        groupings.append(g)
    if not groupings:
        raise PgStudioError("pick at least one grouping")
    stages = tuple(dict.fromkeys(num_stages or ()))
    for s in stages:
        check_positive("num_stages", s)
    tile_list = tuple(dict.fromkeys(parse_tile(t) for t in (tiles or ())))
    if kind == GEMM:
        p = design.problem_dict
        # up to the design's own BN: its warps and registers were laid out for that accumulator
        default_tiles = tuple((int(p["BM"]), bn, bk) for bn in DEFAULT_GEMM_BN if bn <= int(p["BN"])
                              for bk in DEFAULT_GEMM_BK)
        stages = stages or DEFAULT_GEMM_STAGES
        bounded = not num_stages
    else:
        default_tiles = tuple((b,) for b in DEFAULT_TILE_BYTES)
        bounded = not num_stages
        stages = stages or DEFAULT_STAGES
    tile_list = tile_list or default_tiles
    for t in tile_list:
        want = 3 if kind == GEMM else 1
        if len(t) != want:
            with_tile(design, t)  # raises the message that says which form this design takes
    warp_list = tuple(dict.fromkeys(warps)) if warps else (None,)
    for w in warp_list:
        if w is not None:
            check_positive("warps", w)
            if kind == GEMM:
                with_consumer_warps(design, w)  # raises: GEMM warps are fixed
    option_list = tuple(dict.fromkeys(parse_options(o) for o in options)) if options else ((),)
    if kind == GEMM and any(option_list):
        named = ", ".join(k for o in option_list for k, _ in o)
        raise PgStudioError(f"design {design.name!r} is a GEMM design; code options ({named}) apply to streaming "
                            "designs")
    return Space(kind, tuple(groupings), tuple(sorted(stages)), tile_list, warp_list, option_list, bounded)


__all__ = ["DEFAULT_GROUPINGS", "DESIGNED", "GEMM", "GROUPINGS", "STREAM", "Space", "UNGROUPED", "Variant",
           "default_groupings", "kind_of", "parse_options", "parse_tile", "space_for", "with_consumer_warps",
           "with_grouping", "with_stages", "with_tile"]

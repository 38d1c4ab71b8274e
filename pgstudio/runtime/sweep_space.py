"""The design space of a sweep: which variants there are, how each is built, and its stable key.

A variant is a point of stages x tile x grouping (x consumer warps x code options):

* ``num_stages``: the stage count of the main pipelines (every pipelined resource with the stage
  count of the design's first one; for a GEMM, the operand tiles feeding the MMA and their
  views -- the accumulator and a one-stage residual keep theirs);
* ``tile``: for a streaming design the bytes per stage, ``(8192,)``; for a GEMM design the tile
  shape ``(BM, BN, BK)``, from which every tile's bytes follow (A is BM x BK, B is BN x BK, the
  accumulator and M x N tiles BM x BN), so a variant never has a tile whose bytes disagree with
  its shape;
* ``grouping``: ``designed``, ``ungrouped`` (per-resource barriers) or a group mode (every group
  takes it and the schedules are derived afresh);
* ``warps`` (streaming): the warps of each consumer task, its consumer groups resized to match;
* ``options`` (streaming): code-generator tuning knobs (``codegen.kernel.TUNING``).

``Variant.key`` ("designed/s4/t8192", "Merge/s3/t128x256x64") identifies a variant across runs,
machines and result files.  A space built from defaults is *bounded*: stage counts that would
overflow shared memory are left out (and counted in the space's note), so every variant of a
default sweep fits; stage counts the caller lists are all tried, and the ones that do not fit are
reported invalid with the rule that says so.  Whether a variant is valid is ``design.validate()``'s
call (and the generator's), made when the variant is compiled.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..errors import DesignError, PgStudioError
from ..model.config import CooperativeGroup
from ..model.derive import derive_design
from ..model.design import Design
from ..model.group import PipelineGroup, PipelineGroupMode
from ..model.kinds import Agent
from ..model.problem import gemm_problem
from ..model.resource import Memory
from ..model.targets import dtype_bytes
from ..model.task import Task
from ..model.ungroup import ungrouped

DESIGNED, UNGROUPED = "designed", "ungrouped"
GROUPINGS = (DESIGNED, UNGROUPED, *(m.value for m in PipelineGroupMode))
#: The groupings a sweep of a Merge design tries when none are given (``default_groupings``).
DEFAULT_GROUPINGS = (DESIGNED, UNGROUPED, "Merge", "FusedMerge")
STREAM, GEMM = "stream", "gemm"
#: Default axes of a streaming design: 4 x 4 (x groupings) variants, all within shared memory.
DEFAULT_STAGES = (2, 4, 6, 8)
DEFAULT_TILE_BYTES = (1024, 2048, 4096, 8192)
#: Default axes of a GEMM design: stages up to what shared memory holds; BN (up to the design's) x BK
#: at the design's BM.
DEFAULT_GEMM_STAGES = tuple(range(2, 9))
DEFAULT_GEMM_BN = (64, 128, 256)
DEFAULT_GEMM_BK = (64, 128)


def kind_of(design: Design) -> str:
    """``"gemm"`` for a design with an MMA (the GEMM generator's), else ``"stream"``."""
    from ..codegen.stream import is_mma_design
    return GEMM if is_mma_design(design) else STREAM


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
        return cls(str(d["grouping"]), int(d["num_stages"]), tuple(int(x) for x in d["tile"]),
                   None if d.get("warps") is None else int(d["warps"]), tuple(sorted(dict(d.get("options") or {}).items())))

    def build(self, base: Design) -> Design:
        """The variant's design; ``PgStudioError`` when the transformation does not apply."""
        d = with_tile(base, self.tile)  # first: the tile spaces are read off the design as given
        d = with_stages(d, self.num_stages)
        if self.warps is not None:
            d = with_consumer_warps(d, self.warps)
        return with_grouping(d, self.grouping)


# -- transformations --------------------------------------------------------------------------------

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


def _check_positive(what: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise PgStudioError(f"sweep {what}={v!r} is not a positive whole number")


def with_stages(design: Design, num_stages: int) -> Design:
    """``design`` with its main pipelines at ``num_stages`` stages."""
    _check_positive("num_stages", num_stages)
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
            raise PgStudioError(f"design {design.name!r} is a GEMM design: its tiles are BMxBNxBK shapes (e.g. 128x256x64) "
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
    _check_positive("tile_bytes", tile_bytes)
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
    from ..codegen.gemm_plan import plan_gemm
    try:
        plan = plan_gemm(design)
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
        _check_positive(what, v)
    acc, spaces = _gemm_spaces(design)
    dims = {"BM": bm, "BN": bn, "BK": bk}
    resources = []
    for r in design.resources:
        shape = (bm, bn) if r.name == acc else tuple(dims[d] for d in _SHAPES[spaces[r.name]]) if r.name in spaces else None
        if shape is not None:
            nbytes = shape[0] * shape[1] * dtype_bytes(r.dtype)
            r = dataclasses.replace(r, tile=shape, pipeline_config=dataclasses.replace(r.pipeline_config, num_bytes=nbytes))
        resources.append(r)
    p = design.problem_dict
    problem = {**p, **gemm_problem(int(p["M"]), int(p["N"]), int(p["K"]), bm, bn, bk, str(p.get("dtype", "float16")))}
    return _rebuild(design, resources, problem)


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
    _check_positive("warps", warps)
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
    """True when ``v``'s stages do not fit in shared memory (by the validator's or the generator's rule)."""
    try:
        d = v.build(design)
    except PgStudioError:
        return False  # not a capacity question: the variant is reported invalid with its reason
    if any("smem" in e.code.split(".")[0] or e.code.split(".")[-1].startswith("smem") for e in d.validate().errors):
        return True
    if kind_of(d) == GEMM:
        from ..codegen.gemm_plan import plan_gemm
        try:
            plan_gemm(d)
        except DesignError as exc:
            return exc.code == "gemm.smem"
    return False


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
        _check_positive("num_stages", s)
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
            _check_positive("warps", w)
            if kind == GEMM:
                with_consumer_warps(design, w)  # raises: GEMM warps are fixed
    option_list = tuple(dict.fromkeys(parse_options(o) for o in options)) if options else ((),)
    if kind == GEMM and any(option_list):
        raise PgStudioError(f"design {design.name!r} is a GEMM design; code options ({', '.join(k for o in option_list for k, _ in o)}) "
                            "apply to streaming designs")
    return Space(kind, tuple(groupings), tuple(sorted(stages)), tile_list, warp_list, option_list, bounded)


__all__ = ["DEFAULT_GROUPINGS", "DESIGNED", "GEMM", "GROUPINGS", "STREAM", "Space", "UNGROUPED", "Variant",
           "consumer_tasks", "default_groupings", "kind_of", "main_pipelines", "parse_options", "parse_tile", "space_for",
           "with_consumer_warps", "with_grouping", "with_stages", "with_tile", "with_tile_bytes", "with_tile_shape"]

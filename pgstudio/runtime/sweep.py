"""``sweep(design, num_stages=[...], tile_bytes=[...], grouping=[...])``: which design choice wins.

Every combination of stage count, stage size and grouping is a variant of the design:

* ``num_stages`` / ``tile_bytes`` set every pipelined resource's stages and bytes per stage (and
  the problem's ``tile_elems`` / ``num_tiles``); ``None`` keeps the design's own;
* ``grouping``: ``"designed"`` (the design as it is), ``"ungrouped"`` (per-resource barriers,
  ``ungrouped(design)``), or a group mode (``"Merge"``, ``"FusedMerge"``, ``"Fork"``): every
  group takes that mode and the schedules are derived afresh for it (``model.derive``).  A mode
  that is the design's own is the designed variant and is not repeated.

A variant that breaks a rule (a mode that does not fit the groups, stages that overflow shared
memory, a shape the generator cannot build) is listed with its diagnostics instead of run.  The
valid ones are compiled, verified on one shared workload (fresh random inputs, poisoned outputs,
compared with the reference) and timed interleaved round by round, like ``benchmark``.  Without
a GPU every valid variant is listed as not run, with the reason.  The result is a ``SweepTable``:
a text / HTML table naming the best variant, and a heatmap or bar chart (``render.sweep``).
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ..codegen.kernel import emit
from ..errors import PgStudioError
from ..model.derive import derive_design
from ..model.design import Design
from ..model.group import PipelineGroup
from ..model.protocol import PipelineGroupMode
from ..model.targets import dtype_bytes
from ..model.ungroup import ungrouped

DESIGNED, UNGROUPED = "designed", "ungrouped"
GROUPINGS = (DESIGNED, UNGROUPED, *(m.value for m in PipelineGroupMode))
#: What ``sweep`` tries when no grouping is given.
DEFAULT_GROUPINGS = (DESIGNED, UNGROUPED, "Merge", "FusedMerge")
OK, INVALID, FAILED, NOT_RUN = "ok", "invalid", "failed", "not run"


# -- variants ------------------------------------------------------------------------------------

def with_stages(design: Design, num_stages: int | None = None, tile_bytes: int | None = None) -> Design:
    """``design`` with every pipelined resource at ``num_stages`` stages of ``tile_bytes`` bytes."""
    if num_stages is None and tile_bytes is None:
        return design
    for what, v in (("num_stages", num_stages), ("tile_bytes", tile_bytes)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise PgStudioError(f"sweep {what}={v!r} is not a positive whole number")
    resources = []
    for r in design.resources:
        cfg = r.pipeline_config
        if cfg is not None:
            cfg = dataclasses.replace(cfg, num_stages=num_stages or cfg.num_stages, num_bytes=tile_bytes or cfg.num_bytes)
            tile = r.tile
            if tile_bytes and len(tile) == 1:
                tile = (tile_bytes // dtype_bytes(r.dtype),)
            r = dataclasses.replace(r, pipeline_config=cfg, tile=tile)
        resources.append(r)
    by_name = {r.name: r for r in resources}
    groups = [PipelineGroup.unchecked(g.name, [by_name.get(m.name, m) for m in g.members], g.mode, g.pipeline_config)
              for g in design.groups]
    problem = design.problem_dict
    if tile_bytes and "tile_elems" in problem:
        elems = tile_bytes // dtype_bytes(str(problem.get("dtype", "float32")))
        problem["tile_elems"] = elems
        if "num_elements" in problem and "num_tiles" in problem:
            problem["num_tiles"] = -(-int(problem["num_elements"]) // max(elems, 1))
    return design.replace(resources=resources, groups=groups, problem=tuple(problem.items()))


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


@dataclass(frozen=True)
class Variant:
    """One point of a sweep: its design, or why it cannot run (``problems``)."""

    grouping: str
    num_stages: int
    tile_bytes: int
    design: Design | None
    problems: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return self.design is not None and not self.problems

    @property
    def label(self) -> str:
        return f"{self.grouping} {self.num_stages}x{self.tile_bytes}B"


def _own_stages(design: Design) -> tuple[int, int]:
    cfgs = [r.pipeline_config for r in design.resources if r.pipeline_config is not None]
    if not cfgs:
        raise PgStudioError(f"design {design.name!r} has no pipelined resource, so there is nothing to sweep")
    return cfgs[0].num_stages, cfgs[0].num_bytes


def _modes(design: Design) -> set[str]:
    return {g.mode.value for g in design.groups}


def variants(design: Design, num_stages: Sequence[int] | None = None, tile_bytes: Sequence[int] | None = None,
             grouping: Sequence[str] = DEFAULT_GROUPINGS) -> list[Variant]:
    """Every (grouping, stages, bytes) variant, checked (``design.validate()`` and the code
    generator); invalid ones carry their diagnostics.  Modes equal to the design's own, and a
    grouping of a design without groups, are skipped (they are the designed variant)."""
    stages0, bytes0 = _own_stages(design)
    stage_list = list(dict.fromkeys(num_stages or [stages0]))
    tile_list = list(dict.fromkeys(tile_bytes or [bytes0]))
    groupings = []
    for g in dict.fromkeys(grouping):
        if g not in GROUPINGS:
            raise PgStudioError(f"grouping {g!r} is not known; use one of {', '.join(GROUPINGS)}")
        if g != DESIGNED and (not design.groups or g in _modes(design)):
            continue  # the same kernel as the designed one (or, without groups, nothing to regroup)
        groupings.append(g)
    out = []
    for g in groupings:
        for s in stage_list:
            for b in tile_list:
                out.append(_variant(design, g, s, b))
    return out


def _variant(design: Design, grouping: str, stages: int, nbytes: int) -> Variant:
    try:
        d = with_grouping(with_stages(design, stages, nbytes), grouping)
    except PgStudioError as exc:
        return Variant(grouping, stages, nbytes, None, (str(exc),))
    report = d.validate()
    if not report.ok:
        return Variant(grouping, stages, nbytes, d, tuple(f"[{e.code}] {e.message}" for e in report.errors))
    try:
        emit(d, validate=False)
    except PgStudioError as exc:
        return Variant(grouping, stages, nbytes, d, (f"[codegen] {exc}",))
    return Variant(grouping, stages, nbytes, d)


# -- results -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SweepRow:
    grouping: str
    num_stages: int
    tile_bytes: int
    status: str  # ok | invalid | failed | not run
    median_ms: float = float("nan")
    gbps: float = float("nan")
    smem_bytes: int = 0
    blocks_per_sm: int = 0
    message: str = ""
    runs: int = 0

    @property
    def label(self) -> str:
        return f"{self.grouping} {self.num_stages}x{self.tile_bytes}B"


@dataclass(frozen=True)
class SweepTable:
    """The rows of a sweep, in the order tried; ``best`` is the fastest verified variant."""

    design: str
    n: int
    dtype: str
    rows: tuple[SweepRow, ...]
    note: str = ""
    seconds: float = 0.0

    @property
    def timed(self) -> tuple[SweepRow, ...]:
        return tuple(r for r in self.rows if r.status == OK)

    @property
    def best(self) -> SweepRow | None:
        return min(self.timed, key=lambda r: r.median_ms, default=None)

    def row(self, grouping: str, num_stages: int, tile_bytes: int) -> SweepRow:
        for r in self.rows:
            if (r.grouping, r.num_stages, r.tile_bytes) == (grouping, num_stages, tile_bytes):
                return r
        raise KeyError(f"no variant {grouping} {num_stages}x{tile_bytes}B in this sweep")

    def table(self) -> str:
        best = self.best
        head = ("grouping", "stages", "stage bytes", "status", "median ms", "GB/s", "x best", "smem B", "blocks/SM")
        lines = [head]
        for r in self.rows:
            timed = r.status == OK
            lines.append((r.grouping, str(r.num_stages), str(r.tile_bytes), r.status,
                          f"{r.median_ms:.4f}" if timed else "-", f"{r.gbps:,.0f}" if timed else "-",
                          f"{r.median_ms / best.median_ms:.3f}" if timed and best else "-",
                          str(r.smem_bytes) if r.smem_bytes else "-", str(r.blocks_per_sm) if r.blocks_per_sm else "-"))
        widths = [max(len(ln[i]) for ln in lines) for i in range(len(head))]
        out = ["  ".join(c.ljust(w) if i in (0, 3) else c.rjust(w) for i, (c, w) in enumerate(zip(ln, widths)))
               for ln in lines]
        out.insert(1, "  ".join("-" * w for w in widths))
        runs = max((r.runs for r in self.rows), default=0)
        took = f" in {self.seconds:.0f} s" if self.seconds else ""
        out.insert(0, f"sweep of {self.design}: {self.n:,} {self.dtype} elements, {len(self.rows)} variants "
                      f"({len(self.timed)} verified and timed, medians of {runs} interleaved runs){took}")
        problems = [r for r in self.rows if r.status in (INVALID, FAILED) and r.message]
        if problems:
            out.append("")
            out += [f"{r.label} {r.status}: {r.message}" for r in problems]
        skipped = [r for r in self.rows if r.status == NOT_RUN]
        if skipped:
            out.append(f"{len(skipped)} valid variant(s) not run: {skipped[0].message or self.note}")
        out.append("")
        out.append(f"best: {best.label} at {best.median_ms:.4f} ms ({best.gbps:,.0f} GB/s)" if best else
                   f"best: none ({self.note or 'no variant was timed'})")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

# -- running -------------------------------------------------------------------------------------

def sweep(design: Design, num_stages: Sequence[int] | None = None, tile_bytes: Sequence[int] | None = None,
          grouping: Sequence[str] = DEFAULT_GROUPINGS, *, n: int | None = None, rounds: int = 10, warmup: int = 2,
          seed: int | None = None, progress: bool = True, budget_ms: float | None = None,
          blocks_per_sm: int | None = None, on_progress: Any = None) -> SweepTable:
    """Compile, verify and time every valid variant; see the module docstring.

    ``on_progress(done, total, label)`` is called as variants are built (the studio's bar);
    ``progress`` draws a text bar on stderr.
    """
    import time
    t0 = time.perf_counter()
    specs = variants(design, num_stages, tile_bytes, grouping)
    invalid = {id(v): SweepRow(v.grouping, v.num_stages, v.tile_bytes, INVALID, message="; ".join(v.problems))
               for v in specs if not v.valid}
    valid = [v for v in specs if v.valid]
    dtype = str(design.problem_dict.get("dtype", design.resources[0].dtype if design.resources else "float32"))
    count = int(n or design.problem_dict.get("num_elements", 1 << 24))
    from ._cupy import gpu_available, require_gpu
    if not valid or not gpu_available():
        why = ""
        if valid:
            try:
                require_gpu()
            except PgStudioError as exc:
                why = str(exc)
            why = why or "no GPU"
        rows = [invalid.get(id(v)) or SweepRow(v.grouping, v.num_stages, v.tile_bytes, NOT_RUN, message=why)
                for v in specs]
        return SweepTable(design.name, count, dtype, tuple(rows), why or "every variant is invalid",
                          time.perf_counter() - t0)
    from .bench import _Progress, interleave, kernel_variant
    from .run import BUDGET_MS, Workload
    work = Workload.make(valid[0].design, count, dtype, seed)
    dtype = work.dtype
    built: dict[int, Any] = {}
    failed: dict[int, SweepRow] = {}
    bar = _Progress(len(valid), progress)
    try:
        for i, v in enumerate(valid):
            try:
                built[id(v)] = kernel_variant(v.design, work, v.label, v.grouping, budget_ms=budget_ms or BUDGET_MS,
                                              blocks_per_sm=blocks_per_sm)
            except PgStudioError as exc:  # verification, watchdog, compile, launch limits: one row, not the sweep
                failed[id(v)] = SweepRow(v.grouping, v.num_stages, v.tile_bytes, FAILED,
                                         message=f"{type(exc).__name__}: {exc}")
            bar.step(f"built {v.label}")
            if on_progress is not None:
                on_progress(i + 1, len(valid), v.label)
    finally:
        bar.close()
    timed = [built[id(v)] for v in valid if id(v) in built]
    if timed:
        interleave(timed, rounds=rounds, warmup=warmup, progress=progress)
    rows = []
    for v in specs:
        if id(v) in invalid:
            rows.append(invalid[id(v)])
        elif id(v) in failed:
            rows.append(failed[id(v)])
        else:
            b = built[id(v)]
            rows.append(SweepRow(v.grouping, v.num_stages, v.tile_bytes, OK, statistics.median(b.times),
                                 b.bytes_moved / (statistics.median(b.times) * 1e-3) / 1e9, b.launcher.src.smem_bytes,
                                 b.launcher.blocks_per_sm, runs=len(b.times)))
    return SweepTable(design.name, work.n, dtype, tuple(rows), seconds=time.perf_counter() - t0)


__all__ = ["DEFAULT_GROUPINGS", "DESIGNED", "GROUPINGS", "SweepRow", "SweepTable", "UNGROUPED", "Variant", "sweep",
           "variants", "with_grouping", "with_stages"]

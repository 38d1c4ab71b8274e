"""The structure checks of the GEMM plan: which accumulator, operands, staged tiles, outputs,
tasks and steps the GEMM generator builds, one concern per method.

``Checks`` extends ``gemm_sizes.SizeChecks`` (the problem's numbers: tile sizes, SPLIT_K, the
cluster shape, the MMA warpgroups' registers), so ``plan_gemm`` asks one collector in the order
it needs: the sizes' retile fixes wait for the tile spaces the structure checks find.  Each
finding is a ``codegen.*`` diagnostic naming the values, the limit (``gemm_limits``) and a fix.
"""

from __future__ import annotations

from ...errors import DesignError
from ...model.design import Design
from ...model.diagnostic import error
from ...model.kinds import OpKind, Side
from ...model.resource import Memory, Resource
from ...model.schedule import Loop
from ...model.targets import DTYPE_BYTES
from ...model.task import Task
from ..expr import compute_exprs
from ..accumulators import operands
from ..barrier_layout import barrier_layout
from ..resolve import resolve
from ..smem_layout import turn_slices
from . import fixes
from .gemm_limits import (B_MAJORS, CHUNK_ELEMS, K_LOOP, MAX_BOX_ROWS, MN_MAJOR_DTYPES, OPERAND_DTYPES, OUTPUT_DTYPES,
                          SPACES, TILE_LOOP, UNIT_BYTES)
from .gemm_sizes import SizeChecks

__all__ = ["option_error", "Checks"]


def option_error(what: str, value, allowed, hint: str) -> DesignError:
    """An option of the call (arch, b_major, acc_stage_dtype), not the design, is wrong: raised."""
    return DesignError(f"{what} {value!r} is not supported; expected one of {', '.join(map(repr, allowed))}",
                       code="codegen.option", hint=hint)


class Checks(SizeChecks):
    """Collects the problems of one design for one arch; each method checks one concern."""

    def __init__(self, design: Design, arch: str) -> None:
        super().__init__(design, arch)
        self.layout = barrier_layout(design, arch)  # the counts the kernel initialises (cluster, mma_done)

    # -- tasks and loops ---------------------------------------------------------------------------
    def loops(self) -> None:
        for t in self.d.tasks:
            if t.schedule is None:
                continue
            nodes = t.schedule.nodes
            fix = (f"give {t.name!r} one `with domain_loop(0, {TILE_LOOP!r}, 1):` around its steps, with "
                   f"`domain_loop(0, {K_LOOP!r}, 1)` inside it for the k steps")
            if len(nodes) != 1 or not isinstance(nodes[0], Loop) or \
                    (nodes[0].start, nodes[0].stop, nodes[0].step) != (0, TILE_LOOP, 1):
                shown = ", ".join(str(n) if isinstance(n, Loop) else repr(str(n)) for n in nodes) or "nothing"
                self.out.append(error("codegen.gemm_loop", f"task {t.name!r} runs {shown} at the top of its schedule; "
                                      f"a GEMM task runs one domain_loop(0, {TILE_LOOP}, 1) over output tiles",
                                      (t.name,), fix))
                continue
            for n in nodes[0].body:
                if isinstance(n, Loop) and ((n.start, n.stop, n.step) != (0, K_LOOP, 1)
                                            or any(isinstance(x, Loop) for x in n.body)):
                    self.out.append(error("codegen.gemm_loop", f"task {t.name!r} runs {n} inside its tile loop; the "
                                          f"GEMM generator knows one level of domain_loop(0, {K_LOOP}, 1) there",
                                          (t.name,), fix))

    def k_steps(self, spaces: dict[str, str]) -> None:
        """Work on a tile with a K dimension, and every mma, happens inside the k loop."""
        for t in self.d.tasks:
            if t.schedule is None or len(t.schedule.nodes) != 1 or not isinstance(t.schedule.nodes[0], Loop):
                continue
            for n in t.schedule.nodes[0].body:
                if isinstance(n, Loop) or n.op not in ("load", "store", "mma"):
                    continue
                space = spaces.get(n.target, "")
                if n.op == "mma" or "K" in SPACES.get(space, ()):
                    why = "an mma steps through K" if n.op == "mma" else f"{n.target!r} is a {space} tile"
                    self.out.append(error("codegen.k_loop", f"task {t.name!r}: {n} is outside domain_loop(0, {K_LOOP}, 1), "
                                          f"but {why}", (t.name, n.target),
                                          f"move {n} into the task's domain_loop(0, {K_LOOP!r}, 1)"))

    # -- the accumulator, B's storage, the split-K store -------------------------------------------
    def accumulator(self) -> Resource | None:
        d = self.d
        mma = [r for r in d.resources if r.compute.op == "mma"]
        tmem = [r for r in d.resources if r.memory is Memory.TMEM]
        if len(mma) == 1 and tmem == mma and mma[0].pipeline_config is not None:
            acc = mma[0]
            cfg = acc.pipeline_config
            if cfg.producer_kind is not OpKind.UMMA or cfg.consumer_kind is not OpKind.ASYNC:
                self.out.append(error("codegen.pipeline_type", f"accumulator {acc.name!r} is {cfg.pipeline_type}; the "
                                      "GEMM generator builds an umma producer (the MMA) and async consumers (the "
                                      "epilogue threads)", (acc.name,),
                                      f"give {acc.name!r} create_umma_async_pipeline_cfg(...)",
                                      [fixes.pipeline_type(acc.name, OpKind.UMMA, OpKind.ASYNC)]))
                return None
            return acc
        names = ", ".join(repr(r.name) for r in dict.fromkeys((*mma, *tmem))) or "none"
        unpiped = [r.name for r in mma if r.pipeline_config is None]
        why = f"; {', '.join(map(repr, unpiped))} has no pipeline_config" if unpiped else ""
        self.out.append(error("codegen.accumulator", f"design {d.name!r}: a GEMM kernel has exactly one accumulator, a "
                              f"pipelined tensor-memory resource computing mma; found {names}{why}",
                              tuple(r.name for r in (*mma, *tmem)) or (d.name,),
                              "give the design one TmemAccumulator with Compute('mma') and a "
                              "create_umma_async_pipeline_cfg(...) config"))
        return None

    def b_major(self, option: str | None) -> str | None:
        """Where B is stored: the emit option, else the problem's ``b_major`` (default "mn")."""
        if option is not None:
            return option
        value = self.d.problem_dict.get("b_major", B_MAJORS[0])
        if value not in B_MAJORS:
            self.out.append(error("codegen.b_major", f"design {self.d.name!r}: problem b_major is {value!r}, expected "
                                  f"{' or '.join(map(repr, B_MAJORS))}", (self.d.name,),
                                  "set b_major='mn' (B stored K x N) or 'k' (B stored N x K)"))
            return None
        return value

    def split_k_store(self, acc: str, splits: int) -> None:
        """A split tile is finished by the store that reads the accumulator: exactly one such step."""
        if splits == 1:
            return
        steps = [(t.name, s) for t in self.d.tasks for s in (t.schedule.steps() if t.schedule else ())
                 if s.op == "store" and acc in self.d.deps(s.target)]
        if len(steps) != 1:
            shown = ", ".join(f"{t}: {s}" for t, s in steps) or "none"
            self.out.append(error("codegen.split_k", f"design {self.d.name!r} splits K {splits} ways, but {len(steps)} "
                                  f"store steps read the accumulator {acc!r} ({shown}); the one that finishes a split "
                                  "tile must be the only one", tuple(t for t, _ in steps) or (self.d.name,),
                                  "store the accumulator in one step, or set SPLIT_K=1"))

    # -- tiles, outputs, sides ---------------------------------------------------------------------
    def operands(self, acc: Resource) -> tuple[str, str] | None:
        d = self.d
        deps = d.deps(acc.name)
        pair = operands(d, acc)
        if pair is None:
            self.out.append(error("codegen.mma_operands", f"accumulator {acc.name!r} depends on {list(deps)}, expected "
                                  "two staged shared-memory tiles (A, B)", (acc.name,),
                                  f"set the dependency graph entry of {acc.name!r} to [smem_a, smem_b], two "
                                  "pipelined MemoryResources"))
            return None
        a, b = pair
        da, db = d.resource(a).dtype, d.resource(b).dtype
        if da not in OPERAND_DTYPES or db != da:
            self.out.append(error("codegen.operand_dtype", f"operands {a!r} / {b!r} are {da!r} / {db!r}; the tensor-core "
                                  f"path takes {', '.join(OPERAND_DTYPES)} (read as tf32) for both", (a, b),
                                  f"give both operand tiles dtype {OPERAND_DTYPES[0]!r}, {OPERAND_DTYPES[1]!r} or "
                                  f"{OPERAND_DTYPES[2]!r}", [self._dtype_fix(a, da, b, db)]))
            return None
        for x in (a, b):
            if d.resource(x).pipeline_config.consumer_kind is not OpKind.UMMA:
                self.out.append(error("codegen.pipeline_type", f"operand {x!r} is {d.resource(x).pipeline_config.pipeline_type}, "
                                      "but the MMA reads it: its consumer is umma", (x,),
                                      f"give {x!r} a create_tma_umma_pipeline_cfg(...) or "
                                      "create_async_umma_pipeline_cfg(...) config",
                                      [fixes.pipeline_type(x, d.resource(x).pipeline_config.producer_kind, OpKind.UMMA)]
                                      if d.resource(x).pipeline_config.producer_kind is not OpKind.UMMA else []))
        return a, b

    def _dtype_fix(self, a: str, da: str, b: str, db: str):
        """One operand to the other's type when that one is a tensor-core type; else the design's
        16-bit tensors (operands, their inputs, outputs; not the fp32 accumulator) to float16."""
        if da in OPERAND_DTYPES:
            return fixes.dtype([b], da)
        if db in OPERAND_DTYPES:
            return fixes.dtype([a], db)
        names = [r.name for r in self.d.resources if r.dtype in (da, db) and r.memory is not Memory.TMEM]
        return fixes.dtype(names, OPERAND_DTYPES[0])

    def tiles(self, a: str, b: str, b_major: str, dtype: str, bm: int, bn: int, bk: int) -> dict | None:
        """Space, shape and source of every staged tile -> {resource: (space, rows, cols, source)}."""
        d = self.d
        b_space = "KN" if b_major == "mn" else "NK"
        if b_major == "mn" and dtype not in MN_MAJOR_DTYPES:
            self.out.append(error("codegen.b_major", f"operands are {dtype}, read as tf32, and B is stored K x N "
                                  "(b_major 'mn'); the tensor cores read tf32 B only K-major (stored N x K)",
                                  (b, d.name), "store B as N x K: set the problem's b_major='k' (or emit with "
                                  "b_major='k')"))
        sources: dict[str, str] = {}
        ok = True
        exprs, _ = compute_exprs(d)
        turns, slices = turn_slices(d)
        for r in d.resources:
            if r.memory is not Memory.SMEM or r.pipeline_config is None:
                continue
            ex = exprs.get(r.name)
            src = ex.operands[0] if ex is not None and len(ex.operands) == 1 else None
            if src is None or ex.text.strip() != src or not d.has_resource(src) \
                    or d.resource(src).memory is not Memory.GMEM or d.resource(src).compute.op != "input":
                self.out.append(error("codegen.tile_source", f"staged tile {r.name!r} computes {r.compute.op!r} of "
                                      f"{list(d.deps(r.name))}; a GEMM stage is a copy of one input tensor",
                                      (r.name,), f"make {r.name!r} Compute('copy') of one GmemTensor input"))
                ok = False
                continue
            sources[r.name] = src
            if r.pipeline_config.producer_kind not in (OpKind.TMA, OpKind.ASYNC):
                self.out.append(error("codegen.pipeline_type", f"staged tile {r.name!r} is "
                                      f"{r.pipeline_config.pipeline_type}; tiles are filled by tma or async producers",
                                      (r.name,), f"give {r.name!r} a create_tma_*_pipeline_cfg(...) config",
                                      [fixes.pipeline_type(r.name, OpKind.TMA, r.pipeline_config.consumer_kind)]))
                ok = False
            if r.pipeline_config.consumer_kind is OpKind.UMMA and r.name not in (a, b):
                self.out.append(error("codegen.pipeline_type", f"staged tile {r.name!r} has an umma consumer but is not an "
                                      f"operand of the accumulator; only the MMA consumes A and B", (r.name,),
                                      f"give {r.name!r} an async consumer (create_tma_async_pipeline_cfg(...))",
                                      [fixes.pipeline_type(r.name, r.pipeline_config.producer_kind, OpKind.ASYNC)]
                                      if r.pipeline_config.producer_kind is not OpKind.UMMA else []))
                ok = False
        if not ok:
            return None
        gmem_space: dict[str, str] = {sources[a]: "MK", sources[b]: b_space}
        dims = {"M": bm, "N": bn, "K": bk}
        out = {}
        for r in d.resources:
            if r.name not in sources:
                continue
            src = sources[r.name]
            if r.name in (a, b):
                space = "MK" if r.name == a else b_space
            elif src in gmem_space:
                space = gmem_space[src]
            elif tuple(r.tile) == (bm, bn):
                space = "MN"
            elif r.name in slices:  # a residual in column slices, one per turn of the accumulator's staging
                space = "MN"  # (before the A-like shape: a quarter of 128 x 256 is 128 x 64, like a BK = 64 tile)
            elif tuple(r.tile) == (bm, bk):
                space = "MK"
            else:
                self.out.append(error("codegen.tile_shape", f"tile {r.name!r} has shape {tuple(r.tile)}; expected "
                                      f"({bm}, {bn}) (a residual, M x N) or ({bm}, {bk}) (A-like, M x K), or a "
                                      f"residual's column slice ({bm}, {bn // 2}) or ({bm}, {bn // 4}) (the tile then "
                                      "taken in turns)", (r.name,),
                                      "stage residual tiles as (BM, BN) or A-like tiles as (BM, BK)"))
                continue
            gmem_space.setdefault(src, space)
            rows, cols = (dims[x] for x in SPACES[space])
            if r.name in slices:
                cols //= turns
            if r.dtype != dtype:
                self.out.append(error("codegen.tile_dtype", f"tile {r.name!r} is {r.dtype!r}, expected {dtype!r} like the "
                                      "operands", (r.name,), f"give it dtype {dtype!r}",
                                      [fixes.dtype([r.name], dtype)]))
            if rows > MAX_BOX_ROWS:
                self.out.append(error("codegen.tma_box", f"tile {r.name!r} has {rows} rows; a TMA box has at most "
                                      f"{MAX_BOX_ROWS}", (r.name,), f"use tiles of at most {MAX_BOX_ROWS} rows"))
            want = rows * cols * DTYPE_BYTES.get(dtype, 2)
            if r.pipeline_config.num_bytes != want:
                self.out.append(error("codegen.stage_bytes", f"tile {r.name!r}: num_bytes is {r.pipeline_config.num_bytes}, "
                                      f"but a {rows}x{cols} {dtype} tile is {want} B", (r.name,),
                                      f"set num_bytes={want}",
                                      [fixes.stage_bytes(r.name, want, f"a {rows}x{cols} {dtype} tile")]))
            out[r.name] = (space, rows, cols, src)
        return out

    def outputs(self, acc: str, dtype: str, tiles: dict) -> tuple[list[str], dict[str, str]]:
        d = self.d
        outputs, spaces = [], {}
        for r in d.resources:
            if r.memory is not Memory.GMEM or r.compute.op == "input":
                continue
            ins = d.deps(r.name)
            found = {("MN" if i == acc else tiles[i][0] if i in tiles else "?") for i in ins}
            if len(found) != 1 or found & {"?", "KN", "NK"}:
                self.out.append(error("codegen.store_space", f"output {r.name!r} is computed from {list(ins)}, whose tiles "
                                      "do not share one M x N or M x K space", (r.name,),
                                      "store the accumulator (with M x N tiles) or an A-like tile"))
                continue
            spaces[r.name] = found.pop()
            allowed = OUTPUT_DTYPES.get(dtype, ())
            if r.dtype not in allowed:
                self.out.append(error("codegen.output_dtype", f"output {r.name!r} is {r.dtype!r}; with {dtype} operands the "
                                      f"epilogue writes {' or '.join(map(repr, allowed))}", (r.name,),
                                      f"give it dtype {allowed[0]!r}" if allowed
                                      else "use float16 or bfloat16 operands",
                                      [fixes.dtype([r.name], allowed[0])] if allowed else []))
            outputs.append(r.name)
        return outputs, spaces

    def warpgroups(self, mma: Task) -> None:
        """Each task other than the MMA task fits in one warpgroup (its role branch is one)."""
        for t in self.d.tasks:
            if t is not mma and t.warp_idx // 4 != (t.warp_idx + t.num_warps - 1) // 4:
                start = fixes.free_warps(self.d, t.name, t.num_warps, one_warpgroup=True)
                self.out.append(error("codegen.task_warpgroup", f"task {t.name!r} spans warps {t.warp_idx}.."
                                      f"{t.warp_idx + t.num_warps - 1}, across warpgroups; a GEMM kernel runs each "
                                      "non-MMA task inside one warpgroup (4 warps starting at a multiple of 4)",
                                      (t.name,), f"move {t.name!r} to warps starting at {(t.warp_idx + 3) // 4 * 4}",
                                      [fixes.move_task(t.name, start)] if start is not None else []))

    def reads(self, a: str, b: str, mma: Task, spaces: dict[str, str]) -> None:
        """Every operand of the MMA and of each store is read from a stage its task waited on
        (the schedule rules put the MMA between the accumulator's acquire and commit, and make
        the MMA task the consumer of what it waits on)."""
        d = self.d
        plans = resolve(d, self.layout)
        want = [(mma, x, f"{mma.name!r} issues mma on it") for x in (a, b)]
        for t in d.tasks:
            for s in (t.schedule.steps() if t.schedule else ()):
                if s.op == "store" and s.target in spaces:
                    want += [(t, x, f"{s} reads it") for x in d.deps(s.target)]
        for t, x, why in want:
            try:
                plans[t.name].cursor_of(x, Side.CONSUMER)
            except KeyError:
                self.out.append(error("codegen.read_without_wait", f"task {t.name!r} never waits on {x!r}, but {why}",
                                      (t.name, x), f"add {x}.wait() before and {x}.release() after its use in "
                                      f"{t.name!r} (through its group if it has one)"))

    def chunks(self, shapes: dict, spaces: dict[str, str], bm: int, bn: int, bk: int) -> None:
        """Threads of a storing task split the tile's 8-element chunks evenly, and threads of a
        thread-loading task split the tile's 16-byte units evenly."""
        d = self.d
        for t in d.tasks:
            for s in (t.schedule.steps() if t.schedule else ()):
                if s.op == "store" and s.target in spaces:
                    rows, cols = {"MN": (bm, bn), "MK": (bm, bk)}[spaces[s.target]]
                    n, what = rows * cols // CHUNK_ELEMS, f"{CHUNK_ELEMS}-element chunks"
                elif s.op == "load" and s.target in shapes and \
                        d.resource(s.target).pipeline_config.producer_kind is OpKind.ASYNC:
                    rows, cols = shapes[s.target][1:3]
                    esz = DTYPE_BYTES.get(d.resource(s.target).dtype, 2)
                    n, what = rows * cols * esz // UNIT_BYTES, f"{UNIT_BYTES}-byte units"
                else:
                    continue
                if n % t.num_threads:
                    self.out.append(error("codegen.chunk_split", f"task {t.name!r}: {s} moves {n} {what} "
                                          f"({rows}x{cols}), which do not split evenly over its {t.num_threads} threads",
                                          (t.name, s.target), f"give {t.name!r} 4 warps (one warpgroup)"))

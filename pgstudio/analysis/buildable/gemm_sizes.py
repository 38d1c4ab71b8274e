"""The GEMM problem's numbers against the generator's limits: M, N, K and the BM x BN x BK tile,
SPLIT_K, the cluster shape, and the MMA warpgroups that cover the tile with their accumulator
registers.

These checks are apart from the design's structure (``gemm_checks``: accumulator, operands,
tiles, outputs, steps) because they share one kind of fix: a finding that a new BM / BN / BK
removes is reported at once and gets its retile fix once the structure checks have given every
tile its space (``attach_retiles``).  Each finding is a ``codegen.*`` diagnostic naming the
values, the limit (``gemm_limits``) and a fix.
"""

from __future__ import annotations

from ...model.design import Design
from ...model.diagnostic import Diagnostic, error, with_fixes
from ...model.kinds import OpKind
from ...model.resource import Resource
from ...model.targets import DTYPE_BYTES
from ...model.task import Task
from . import fixes
from .gemm_limits import (BN_MULTIPLE, BOOKKEEPING_REGS, CHUNK_ELEMS, CLUSTER_ARCHES, CLUSTER_SHAPES, MAX_ACC_PER_THREAD,
                          MAX_BN, MAX_SPLIT_K, PANEL_BYTES, STREAM_K_ARCHES, PROBLEM_KEYS, REGS_PER_SM, SM90_ROWS_PER_WARPGROUP, SM100_BM,
                          SWIZZLE_BYTES, SWIZZLE_ROWS, TMEM_COLUMNS, launch_registers, panel_bytes, warpgroup_grid)

__all__ = ["SizeChecks"]


def _acc_per_thread(bm: int, bn: int, n_wg: int) -> int:
    """fp32 accumulators each thread of ``n_wg`` sm_90a MMA warpgroups holds for a BM x BN block
    (``warpgroup_grid`` must split it)."""
    wg_m, wg_n = warpgroup_grid(bm, bn, n_wg)
    return (bm // wg_m // 64) * (bn // wg_n) // 2


class SizeChecks:
    """Collects the problems (``out``) of one design for one arch, one number or set of numbers of
    the problem per method; ``gemm_checks.Checks`` adds the structure checks."""

    def __init__(self, design: Design, arch: str) -> None:
        self.d, self.arch = design, arch
        self.out: list[Diagnostic] = []
        self.retiles: list[tuple[Diagnostic, tuple[int, int, int], str]] = []  # fixes that need the tile spaces

    def _retile(self, diag: Diagnostic, bm: int, bn: int, bk: int, what: str) -> None:
        """Report ``diag``; its fix (the tile ``bm`` x ``bn`` x ``bk``) is attached once the tiles'
        spaces are known (``attach_retiles``)."""
        self.out.append(diag)
        self.retiles.append((diag, (bm, bn, bk), what))

    def attach_retiles(self, spaces: dict[str, str]) -> None:
        """Give the findings that a new BM / BN / BK removes their fix, the tiles following in ``spaces``."""
        for diag, (bm, bn, bk), what in self.retiles:
            i = self.out.index(diag)
            self.out[i] = with_fixes(diag, [fixes.retile(bm, bn, bk, spaces, what)])

    # -- the problem -------------------------------------------------------------------------------
    def problem(self) -> tuple[int, int, int, int, int, int] | None:
        p = self.d.problem_dict
        bad = [k for k in PROBLEM_KEYS if isinstance(p.get(k), bool) or not isinstance(p.get(k), int) or p[k] <= 0]
        if bad:
            shown = ", ".join(f"{k}={p[k]!r}" if k in p else f"{k} missing" for k in bad)
            self.out.append(error("codegen.problem_shape", f"design {self.d.name!r}: the GEMM problem needs positive "
                                  f"integers M, N, K, BM, BN, BK; {shown}", (self.d.name,),
                                  "set them in the problem, e.g. M=4096, N=4096, K=4096, BM=128, BN=128, BK=64"))
            return None
        m, n, k, bm, bn, bk = (p[x] for x in PROBLEM_KEYS)
        odd = [f"{x}={p[x]}" for x in ("N", "K") if p[x] % CHUNK_ELEMS]
        if odd:
            self.out.append(error("codegen.problem_stride", f"design {self.d.name!r}: {', '.join(odd)} is not a multiple "
                                  f"of {CHUNK_ELEMS}; TMA row strides and the epilogue's 16-byte stores need rows of "
                                  f"whole 16-byte chunks", (self.d.name,),
                                  f"round {' and '.join(o.split('=')[0] for o in odd)} up to a multiple of "
                                  f"{CHUNK_ELEMS}",
                                  [fixes.problem({x: -(-p[x] // CHUNK_ELEMS) * CHUNK_ELEMS for x in ("N", "K")
                                                  if p[x] % CHUNK_ELEMS}, f"multiples of {CHUNK_ELEMS}")]))
        return m, n, k, bm, bn, bk

    def split_k(self) -> int:
        """The problem's ``SPLIT_K`` (1 when absent): parts the K range of an output tile is cut into."""
        value = self.d.problem_dict.get("SPLIT_K", 1)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SPLIT_K:
            self.out.append(error("codegen.split_k", f"design {self.d.name!r}: SPLIT_K is {value!r}, expected an "
                                  f"integer from 1 to {MAX_SPLIT_K}", (self.d.name,),
                                  "set SPLIT_K=1 (no split) or the number of parts to cut K into, e.g. 2 or 4"))
            return 1
        return value

    def stream_k(self, splits: int, cluster: tuple[int, int]) -> bool:
        """The problem's ``STREAM_K`` (0 when absent): 1 shares the last partial wave's tiles among
        all blocks by k tiles (``gemm_limits.stream_k_units``)."""
        d = self.d
        value = d.problem_dict.get("STREAM_K", 0)
        if value not in (0, 1) or isinstance(value, bool):
            self.out.append(error("codegen.stream_k", f"design {d.name!r}: STREAM_K is {value!r}, expected 0 or 1",
                                  (d.name,), "set STREAM_K=1 (share the last wave's tiles by k tiles) or remove it"))
            return False
        if not value:
            return False
        if self.arch not in STREAM_K_ARCHES:
            self.out.append(error("codegen.stream_k", f"design {d.name!r}: stream-K is built for "
                                  f"{', '.join(STREAM_K_ARCHES)}, not {self.arch}", (d.name,),
                                  f"remove STREAM_K, or target {STREAM_K_ARCHES[0]} only"))
        if splits > 1 or tuple(cluster) != (1, 1):
            what = f"splits K {splits} ways" if splits > 1 else f"clusters blocks {tuple(cluster)}"
            self.out.append(error("codegen.stream_k", f"design {d.name!r} {what} and asks for stream-K; the generator "
                                  f"builds one of split-K, clusters and stream-K", (d.name,),
                                  "remove STREAM_K, or set SPLIT_K=1 and remove CLUSTER_M / CLUSTER_N"))
        return True

    def cluster(self, splits: int) -> tuple[int, int]:
        """The problem's cluster shape (CLUSTER_M, CLUSTER_N), (1, 1) when absent (gemm_limits)."""
        d = self.d
        shape = (d.problem_dict.get("CLUSTER_M", 1), d.problem_dict.get("CLUSTER_N", 1))
        if shape not in CLUSTER_SHAPES:
            self.out.append(error("codegen.cluster", f"design {d.name!r}: cluster (CLUSTER_M, CLUSTER_N) = {shape!r}; the "
                                  f"generator builds {', '.join(map(str, CLUSTER_SHAPES))}", (d.name,),
                                  "set CLUSTER_N=2 (pairs share A) or CLUSTER_M=2 (pairs share B), or remove both"))
            return 1, 1
        if shape == (1, 1):
            return shape
        if self.arch not in CLUSTER_ARCHES:
            self.out.append(error("codegen.cluster", f"design {d.name!r}: clusters of blocks with TMA multicast are built "
                                  f"for {', '.join(CLUSTER_ARCHES)}, not {self.arch}", (d.name,),
                                  f"remove CLUSTER_M / CLUSTER_N, or target {CLUSTER_ARCHES[0]} only"))
        if splits > 1:
            self.out.append(error("codegen.cluster", f"design {d.name!r} splits K {splits} ways and clusters blocks "
                                  f"{shape}; the generator builds one or the other", (d.name,),
                                  "set SPLIT_K=1, or remove CLUSTER_M / CLUSTER_N"))
        return shape

    def multicast(self, operand: str, rows: int) -> None:
        """The shared operand of a cluster is TMA-loaded, half of its rows by each block."""
        cfg = self.d.resource(operand).pipeline_config
        if cfg.producer_kind is not OpKind.TMA:
            self.out.append(error("codegen.cluster", f"{operand!r} is shared by the blocks of a cluster, so it is "
                                  f"multicast by TMA, but its pipeline is {cfg.pipeline_type}", (operand,),
                                  f"give {operand!r} a TMA producer, or pair the blocks along the other dimension"))
        if rows % (2 * SWIZZLE_ROWS):
            self.out.append(error("codegen.cluster", f"{operand!r} has {rows} rows per tile; each block of a pair loads "
                                  f"half, a multiple of {SWIZZLE_ROWS} rows (the swizzle pattern)", (operand,),
                                  f"use a tile of {operand!r} with a multiple of {2 * SWIZZLE_ROWS} rows"))

    # -- the tile ----------------------------------------------------------------------------------
    def tile_sizes(self, bm: int, bn: int, bk: int, acc: Resource, dtype: str) -> None:
        d, arch = self.d, self.arch
        esz = DTYPE_BYTES.get(dtype, 2)
        if not panel_bytes(bk, dtype):
            fits = [x for x in range(max(1, bk - 64), bk + 65) if panel_bytes(x, dtype)]
            near = sorted(fits, key=lambda x: (abs(x - bk), -x))[:2]  # a tie goes to the larger BK
            widths = ", ".join(map(str, SWIZZLE_BYTES[:-1]))
            self._retile(error("codegen.bk_swizzle", f"BK is {bk}: a {dtype} row of {bk * esz} B is no swizzled "
                               f"panel ({widths} or a multiple of {PANEL_BYTES} bytes)", (d.name,),
                               "use BK=" + " or ".join(str(x) for x in sorted(near))),
                         bm, bn, near[0], f"BK to {near[0]}")
        if bn % BN_MULTIPLE or bn > MAX_BN:
            near = min(MAX_BN, max(BN_MULTIPLE, (bn + BN_MULTIPLE // 2) // BN_MULTIPLE * BN_MULTIPLE))
            self._retile(error("codegen.bn_tile", f"BN is {bn}, expected a multiple of {BN_MULTIPLE} up to {MAX_BN} "
                               "(one tensor-core instruction covers BN)", (d.name,), "use BN=128 or BN=256"),
                         bm, near, bk, f"BN to {near}")
        if arch == "sm_100a":
            if bm not in SM100_BM:
                self._retile(error("codegen.bm_rows", f"BM is {bm}; the sm_100a path issues "
                                   f"M={'/'.join(map(str, SM100_BM))} tcgen05.mma", (d.name,),
                                   f"use BM={SM100_BM[0]}, or target sm_90a only"),
                             SM100_BM[0], bn, bk, f"BM to {SM100_BM[0]}")
            stages = acc.pipeline_config.num_stages
            if bn * stages > TMEM_COLUMNS:
                most = max(1, TMEM_COLUMNS // bn)
                fit = fixes.most_stages_that_fit(d, acc.name, most, arch)
                self.out.append(error("codegen.tmem_columns", f"{stages} accumulator stage(s) of {bn} fp32 columns need "
                                      f"{bn * stages} tensor-memory columns, more than the {TMEM_COLUMNS} a CTA has "
                                      "(sm_100a)", (acc.name,),
                                      f"use at most {most} accumulator stage(s), or a smaller BN",
                                      [fixes.fix(f"set {acc.name}'s num_stages to {fit}", "set_resource", acc.name,
                                                 num_stages=fit)] if fit else []))

    # -- the MMA warpgroups over the tile ----------------------------------------------------------
    def mma_task(self, acc: Resource, bm: int, bn: int, bk: int) -> Task | None:
        d, arch = self.d, self.arch
        tasks = [t for t in d.tasks if t.schedule and any(s.op == "mma" for s in t.schedule.steps())]
        if len(tasks) != 1:
            self.out.append(error("codegen.mma_task", f"design {d.name!r} has {len(tasks)} tasks issuing mma "
                                  f"({', '.join(repr(t.name) for t in tasks) or 'none'}), expected one",
                                  tuple(t.name for t in tasks) or (d.name,),
                                  "let one task (one or two warpgroups) run every mma step"))
            return None
        mma = tasks[0]
        for s in mma.schedule.steps():
            if s.op == "mma" and s.target != acc.name:
                self.out.append(error("codegen.mma_target", f"task {mma.name!r}: {s} accumulates into {s.target!r}, "
                                      f"but the accumulator is {acc.name!r}", (mma.name, s.target),
                                      f"call {acc.name}.mma(...)"))
        if mma.warp_idx % 4 or mma.num_warps % 4:
            n = 4 if mma.num_warps <= 4 else 8
            start = fixes.free_warps(d, mma.name, n, one_warpgroup=False)
            self.out.append(error("codegen.mma_warpgroup", f"task {mma.name!r} runs the tensor cores on warps "
                                  f"{mma.warp_idx}..{mma.warp_idx + mma.num_warps - 1}; an MMA task is whole "
                                  "warpgroups: 4 warps starting at a warp index divisible by 4", (mma.name,),
                                  f"give {mma.name!r} warps {start}..{start + n - 1} (warp_idx={start}, num_warps={n})"
                                  if start is not None else f"give {mma.name!r} num_warps 4 or 8 at a warp index "
                                  "divisible by 4, after freeing warps for it",
                                  [fixes.move_task(mma.name, start, n)] if start is not None else []))
            return None
        n_wg = mma.num_warps // 4
        if arch == "sm_90a":
            if bn % BN_MULTIPLE or bn > MAX_BN:
                return mma  # codegen.bn_tile says what is wrong with BN
            grid = warpgroup_grid(bm, bn, n_wg)
            if grid is None:
                diag = error("codegen.bm_rows", f"BM x BN is {bm} x {bn} with {n_wg} MMA warpgroup(s): each "
                             f"warpgroup covers {' or '.join(map(str, SM90_ROWS_PER_WARPGROUP))} rows and a "
                             f"multiple of {BN_MULTIPLE} columns, and no split of the block does that",
                             (mma.name, d.name), f"use BM={64 * n_wg} or {128 * n_wg} with {n_wg} MMA "
                             f"warpgroup(s), or give {mma.name!r} {4 * max(1, bm // 128)} warps")
                near = [x for x in range(64, 64 * 2 * n_wg + 1, 64) if warpgroup_grid(x, bn, n_wg)]
                if near:
                    best = min(near, key=lambda x: (abs(x - bm), -x))
                    self._retile(diag, best, bn, bk, f"BM to {best}")
                else:
                    self.out.append(diag)
                return mma
            per = _acc_per_thread(bm, bn, n_wg)
            if per > MAX_ACC_PER_THREAD:
                diag = error("codegen.accumulator_registers", f"each MMA thread of {mma.name!r} would hold "
                             f"{per} fp32 accumulators ({bm}x{bn} over {n_wg} warpgroup(s)); at most "
                             f"{MAX_ACC_PER_THREAD} fit", (mma.name,),
                             f"use {2 * n_wg} MMA warpgroups ({8 * n_wg} warps), or BN={bn // 2}")
                self._bn_that_fits(diag, bm, bn, bk, n_wg, MAX_ACC_PER_THREAD)
            else:
                threads, launch = launch_registers(d.num_warps)
                if per + BOOKKEEPING_REGS > launch:
                    most = REGS_PER_SM // (per + BOOKKEEPING_REGS) // 128 * 4
                    diag = error("codegen.accumulator_registers", f"a block of {threads} threads leaves {launch} "
                                 f"registers per thread, but each thread of {mma.name!r} holds {per} fp32 "
                                 f"accumulators (plus about {BOOKKEEPING_REGS} for addresses and loop state)",
                                 (mma.name,), f"use at most {most} warps in the block, or a smaller BN")
                    self._bn_that_fits(diag, bm, bn, bk, n_wg, launch - BOOKKEEPING_REGS)
        return mma

    def _bn_that_fits(self, diag: Diagnostic, bm: int, bn: int, bk: int, n_wg: int, most: int) -> None:
        """Report ``diag`` with the fix of the widest BN (a multiple of BN_MULTIPLE) whose accumulators
        fit ``most`` registers per MMA thread, if there is one."""
        fits = [x for x in range(BN_MULTIPLE, bn, BN_MULTIPLE)
                if warpgroup_grid(bm, x, n_wg) and _acc_per_thread(bm, x, n_wg) <= most]
        if fits:
            self._retile(diag, bm, fits[-1], bk, f"BN to {fits[-1]}")
        else:
            self.out.append(diag)

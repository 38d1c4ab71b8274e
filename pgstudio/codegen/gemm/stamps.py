"""Instrumented GEMM builds: ``emit_gemm(design, instrument=Instrument())`` stamps every task.

The same records, buffer and step table as the streaming kernel's (``codegen.instrument``), so
one decoder (``runtime.trace``) turns both into a ``Timeline``.  In each sampled block (the
grid's last ``blocks``) thread 0 of every task -- the load warps' issuing thread, the MMA
warpgroups' first thread, the epilogue's first thread -- stamps each step that generates code:
an acquire / wait (with whether its first probe found the barrier closed), a TMA issue, the MMAs
of a k tile (their issue, the wait for the previous k tile's group and its release), a store,
a commit / release.  The iteration a record carries is the count of passes of the innermost loop
around the step so far, per task (the k loop for loads and MMAs, counted across output tiles;
the tile loop for the accumulator's hand-over), which is what the step table's per-iteration
advances are counted against.

Why thread 0 alone: every stamp is a plain global store from one lane, so the warps that issue
tensor-core work keep issuing (the MMA warpgroups wait at their own ``wgmma.wait_group``), and
blocks outside the sample only compare a zero capacity per step (measured: an instrumented build
with no lane recording runs at 1.00x the plain kernel).

What stamping costs a sampled block (``benchmarks/instrument_cost.py``, H200, 4096^3): each stamp
lengthens its thread's chain of steps by some 60 ns (its two cycle-counter reads, the probe, the
record), and the MMA thread's chain is the kernel's critical path: four stamps per k tile of
~440 ns (128 x 128 tiles) make a recorded k tile 1.5-1.7x slower, of ~750 ns (128 x 256) 1.2x.
No one part dominates (leaving out the record, the probe, the timer or the clock reads each gives
back 10-25% of it), and writing records to a shared-memory ring that the copy engine drains was
no cheaper.  Worse, the stamps' code slows a 128 x 128 tile's k loop by about a quarter even where
it records nothing (its branches sit on the MMA warps' chain).  So the build keeps that code off
every pass that records nothing: each task branches once on whether its block is sampled (every
other block runs the plain role branch, line for line), and a sampled block's loops are peeled at
the recorded window (``Instrument.tiles`` work units x ``k_tiles`` k tiles, by default 2 x 16:
the fill, the steady state, the accumulator's hand-over and the epilogue beside the next unit's
mainloop), past which it runs the plain body too, counting k tiles.  What is left is some 130
stamps, about 8 us on the MMA thread's chain of one block, wherever the problem is.  Every
record's iteration is its loop's pass count, recorded or not, so the decoder places the window's
steps without knowing the window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from ..instrument import (LANE_END, SAMPLE, STEP_BEGIN, Instrument, buffer_meta, check_sites, device_prelude,
                          lane_setup, probe_line, step_end_line, step_table)
from ..source import KernelParam

if TYPE_CHECKING:  # pragma: no cover
    from ...analysis.buildable.gemm_plan import GemmPlan
    from ...analysis.resolve import ResolvedStep, TaskPlan
    from .code import Code

#: The per-task counters of passes of each loop a GEMM plan admits (``codegen.gemm_loop``).
ITERATION = {"tile": "pg_ins_ti", "k": "pg_ins_ki"}


def recorded(rs: "ResolvedStep") -> bool:
    """True when a resolved step of a GEMM kernel generates code: a barrier action, or work (a
    load, the MMAs of a k tile, a store).  Probes, reads and a TMA producer's commit (the copy
    engine completes it) generate none."""
    return bool(rs.actions) or rs.step.op in ("load", "mma", "store")


class GemmStamps:
    """What the GEMM task walker (``task.Task``) weaves in when the build is instrumented."""

    def __init__(self, plan: "GemmPlan", plans: Mapping[str, "TaskPlan"], spec: Instrument) -> None:
        design = plan.design
        self.order = [t.name for t in design.tasks]
        self.plans = [plans[name] for name in self.order]
        check_sites(design.name, self.plans)
        self.tasks = tuple((t.name, t.warp_idx, t.num_warps) for t in design.tasks)
        self.sets = plan.layout.sets
        self.spec = spec
        self.site = -1
        self.on = False

    param = KernelParam("pg_trace", "trace", "u32")
    c_arg = "uint4* __restrict__ pg_trace"

    @staticmethod
    def sampled_line() -> str:
        """Kernel scope: is this block one of the sample (the grid's last ``blocks``)?  Each task
        branches on it once, so the blocks outside the sample run the plain role branches."""
        return f"const bool pg_ins_sampled = {SAMPLE} < PG_INS_BLOCKS;  // instrumented: the grid's last blocks"

    def prelude(self) -> str:
        return device_prelude(self.spec, len(self.tasks))

    def meta(self) -> tuple[str, object]:
        return buffer_meta(self.spec, self.tasks, step_table(self.plans, self.sets, recorded), self.sets,
                           self.spec.window())

    # -- hooks, in the order the task walker calls them ------------------------------------------
    def task_begin(self, c: "Code", task: str) -> None:
        c(*lane_setup(self.order.index(task), "tt == 0"),
          "u32 pg_ins_ti = 0, pg_ins_ki = 0;  // passes of the tile loop and of the k loop so far")
        self.site = -1

    def step_begin(self, c: "Code", rs: "ResolvedStep") -> None:
        self.site += 1
        self.on = recorded(rs)
        if self.on:
            c(STEP_BEGIN)

    def probe(self, slot: str, phase: str) -> str:
        """The line before a wait that notes whether the barrier is still closed ("" when the
        current step is not stamped)."""
        return probe_line(slot, phase) if self.on else ""

    def step_end(self, c: "Code", loops: list[str]) -> None:
        if self.on:
            c(step_end_line(self.site, ITERATION[loops[-1]] if loops else "0u"))
        self.on = False

    @staticmethod
    def loop_end(c: "Code", loop: str) -> None:
        c(f"++{ITERATION[loop]};")

    @staticmethod
    def task_end(c: "Code") -> None:
        c(LANE_END)


__all__ = ["GemmStamps", "ITERATION", "recorded"]

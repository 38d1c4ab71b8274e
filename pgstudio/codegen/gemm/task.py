"""One task of a GEMM kernel: its role branch, written by walking its resolved plan.

Every task becomes one role branch (a warp range); its resolved plan (``analysis.resolve``: the
protocol table, ``model/protocol.py``, bound to the slots and init counts of
``barrier_layout(design)``) is walked step by step, and each barrier action of the plan becomes
code -- the walker reads cursors, barrier sets, verbs, who and bytes from the plan and derives
none of them.  What each piece of work becomes lives beside it: loads and the MMA's operands in
``mainloop.py``, the wgmma / tcgen05 issue and the accumulator in ``sm90.py`` / ``sm100.py``,
stores in ``epilogue.py``, the persistent loop over work units in ``scheduler.py``.
"""

from __future__ import annotations

from ...analysis.buildable.gemm_limits import accumulator_in_registers
from ...analysis.buildable.gemm_plan import GemmPlan
from ...analysis.resolve import BarrierAction, ResolvedLoop, ResolvedStep, TaskPlan
from ...model.design import Design
from ...model.kinds import AsyncProducerOp, OpKind, Role, Side, Verb, Who
from . import scheduler
from .code import Code
from .epilogue import StoreSteps
from .mainloop import MainloopSteps
from .sm90 import Sm90Steps
from .sm100 import Sm100Steps
from .stamps import ITERATION, GemmStamps


def _cursor_vars(cursors) -> dict[str, str]:
    """C name stem of each cursor: its owner (resource or group), with the side when one task
    walks both sides of one owner."""
    owners = [c.owner for c in cursors]
    return {c.name: c.owner if owners.count(c.owner) == 1 else f"{c.owner}_{c.side}" for c in cursors}


class Task(MainloopSteps, Sm90Steps, Sm100Steps, StoreSteps):
    """Emits one task's role branch by walking its resolved plan (``analysis.resolve``): cursor
    names, barrier sets, verbs, who and bytes all come from the plan; this class only decides how
    each action and each piece of work is written for the target architecture."""

    def __init__(self, plan: GemmPlan, task, tplan: TaskPlan, index: int, code: Code,
                 stamps: GemmStamps | None = None) -> None:
        self.p, self.t, self.plan, self.i, self.c = plan, task, tplan, index, code
        self.ins = stamps  # an instrumented build's stamps (``stamps.py``), else None
        self.d: Design = plan.design
        self.sm90 = plan.arch == "sm_90a"
        self.is_mma = task is plan.mma_task
        self.nt = task.num_threads
        self.sets = {s.name: s for s in plan.layout.sets}
        self.var = _cursor_vars(tplan.cursors)
        self.pending_acquire: dict[str, list[BarrierAction]] = {}  # sm_90 lazy accumulator waits, by cursor
        self.deferred: dict[str, list[BarrierAction]] = {}  # sm_90 umma releases, by cursor
        self.label = f"done_{task.name}" + ("_stamped" if stamps else "")  # a stamped build holds both branches
        self.loops: list[str] = []
        self.split = plan.split_k
        self.nkt = "unit_k_tiles" if plan.unit_k_range else "num_k_tiles"  # k tiles of this work unit

    # -- cursors ---------------------------------------------------------------------------------
    def v(self, cursor: str) -> str:
        return self.var[cursor]

    def advance(self, cursor: str) -> None:
        v, stages = self.v(cursor), self.plan.cursor(cursor).stages
        self.c(f"if (++s_{v} == {stages}) {{ s_{v} = 0; ph_{v} ^= 1u; }}")

    def stage_cursor(self, resource: str) -> str:
        """The stage index variable through which this task reads ``resource``."""
        return f"s_{self.v(self.plan.cursor_of(resource, Side.CONSUMER).name)}"

    # -- barrier actions -------------------------------------------------------------------------
    def addr(self, a: BarrierAction, stage: str | None = None) -> str:
        return f"(bar0 + 8u * ({self.sets[a.set].first} + {stage or 's_' + self.v(a.cursor)}))"

    def wait_code(self, a: BarrierAction) -> str:
        """The watchdog's bounded wait on ``a``'s barrier (and, instrumented, the probe before it)."""
        v = self.v(a.cursor)
        s = f"s_{v}"
        wait = (f"if (!wd_wait({self.addr(a)}, ph_{v}, wd_abort, wd_diag, wd_budget_ns, "
                f"{self.sets[a.set].first} + {s}, {s}, tile, kt, {self.i})) goto {self.label};")
        probe = self.ins.probe(self.addr(a), f"ph_{v}") if self.ins else ""
        return f"{probe}\n{wait}" if probe else wait

    def is_accumulator(self, rs: ResolvedStep) -> bool:
        """The MMA task's umma producer side: the accumulator."""
        return self.is_mma and rs.kind is OpKind.UMMA and rs.side is Side.PRODUCER

    def holds_accumulator(self, rs: ResolvedStep) -> bool:
        """The accumulator lives in the MMA threads' registers (``gemm_limits.accumulator_in_registers``):
        its acquire of the staging buffer waits until commit."""
        return self.is_accumulator(rs) and accumulator_in_registers(self.p.arch)

    @staticmethod
    def mma_releases(rs: ResolvedStep) -> list[BarrierAction]:
        """An umma consumer's commit-arrives on the empty barrier of the stages its MMAs read."""
        return [a for a in rs.actions if a.after_mma and a.role is Role.EMPTY]

    # -- walking ---------------------------------------------------------------------------------
    def emit(self) -> None:
        t, c = self.t, self.c
        c.mark(f"task:{t.name}")
        c(f"// task '{t.name}': warps {t.warp_idx}..{t.warp_idx + t.num_warps - 1}, schedule {t.schedule.name}")
        c(f"[[maybe_unused]] const int tt = threadIdx.x - {t.warp_idx * 32};  // thread index within the task")
        c("[[maybe_unused]] int tile = blockIdx.x, kt = 0, mb = 0, nb = 0, m0 = 0, n0 = 0, k0 = 0;")
        if self.split > 1:
            c("[[maybe_unused]] int sk = 0, kt0 = 0, unit_k_tiles = 0;  // split of the tile, its first k tile, its k tiles")
        if self.p.stream_k:
            c("[[maybe_unused]] int kt0 = 0, unit_k_tiles = 0, unit_stores = 1, sk_tile = -1, sk_w = -1;  "
              "// stream-K: the unit's k tiles, whether it finishes its tile, its shared tile and worker")
        for cur in self.plan.cursors:
            v = self.v(cur.name)
            c(f"int s_{v} = 0; u32 ph_{v} = {cur.start_phase}u;  // cursor {cur.name}: stage, phase")
        if self.is_mma and self.sm90:
            self.declare_accumulator()
        if self.ins:
            self.ins.task_begin(c, t.name)
        self.walk(self.plan.nodes)
        c(f"{self.label}: ;")
        if self.ins:
            self.ins.task_end(c)
        if self.t.name in self.p.tma_store_tasks:
            c("if (tt == 0) bulk_wait_all();  // this task's TMA stores have reached global memory")
        if self.is_mma and self.sm90:
            c("wgmma_wait<0>();  // nothing may stay in flight past here")

    def walk(self, nodes) -> None:
        for n in nodes:
            if isinstance(n, ResolvedLoop):
                self.loop(n)
            else:
                self.step(n)

    def loop(self, n: ResolvedLoop) -> None:
        """A loop of the plan.  In a sampled block of an instrumented build each loop is peeled at
        its recorded window (``Instrument.tiles`` work units, ``k_tiles`` k tiles of each): the
        window's passes run the stamped body, the rest the plain one (the stamps' code, even
        where it records nothing, slows a 128 x 128 tile's k loop by a quarter)."""
        if n.loop.stop == "num_tiles":
            window = self.ins.spec.tiles if self.ins else None
            self.tile_loop(scheduler.tile_loop(self.p, f"{ITERATION['tile']} < {window}u" if window else ""), n)
            if window:
                ins, self.ins = self.ins, None
                self.tile_loop(scheduler.tile_loop_rest(self.p), n)  # past the window: nothing more is recorded
                self.ins = ins
        else:  # num_k_tiles, the only other loop a plan admits (codegen.gemm_loop)
            deferred_before = set(self.deferred)
            window = self.ins.spec.k_tiles if self.ins else None
            self.k_loop(f"for (kt = 0; kt < {self.nkt}{f' && kt < {window}' if window else ''}; ++kt)", n, True)
            if window:
                ins, self.ins = self.ins, None
                self.k_loop(f"for (; kt < {self.nkt}; ++kt)", n, False, count=True)  # the rest of the unit's k tiles
                self.ins = ins
            if self.is_mma and self.sm90:
                self.drain_releases(deferred_before)

    def tile_loop(self, head: str, n: ResolvedLoop) -> None:
        c = self.c
        with c.block(head):
            c(*scheduler.unit_coords(self.p))
            self.loops.append("tile")
            if self.p.stream_k and not any(isinstance(x, ResolvedLoop) for x in n.body):
                # a task with no k loop works on finished tiles only (the epilogue, a residual's loads)
                with c.block("if (unit_stores)"):
                    self.turns(n.body)
            else:
                self.turns(n.body)
            if self.ins:
                self.ins.loop_end(c, "tile")
            self.loops.pop()

    def turns(self, body) -> None:
        """A tile's body; where the tiles take several turns through the accumulator's staging
        (``Staging.turns``), a task draining it or loading a slice of its residual
        (``GemmPlan.turn_tasks``) runs it once per turn."""
        turns = self.p.staging.turns if self.p.staging else 1
        if turns > 1 and self.t.name in self.p.turn_tasks:
            with self.c.block(f"for (int turn = 0; turn < {turns}; ++turn)"):
                self.walk(body)
        else:
            self.walk(body)

    def k_loop(self, head: str, n: ResolvedLoop, first: bool, count: bool = False) -> None:
        """One k loop over ``n``'s body (``first``: the loop that registers the sm_90 MMA's deferred
        releases; ``count``: a plain pass of a stamped build still counts its k tiles, which the
        records of the next window carry)."""
        c = self.c
        with c.block(head):
            c(f"k0 = (kt0 + kt) * {self.p.bk};" if self.p.unit_k_range else f"k0 = kt * {self.p.bk};")
            self.loops.append("k")
            if first and self.is_mma and self.sm90:
                self.prescan_releases(n.body)
            self.walk(n.body)
            if self.ins or count:
                GemmStamps.loop_end(c, "k")
            self.loops.pop()

    # -- steps -----------------------------------------------------------------------------------
    def step(self, rs: ResolvedStep) -> None:
        c, s = self.c, rs.step
        c.mark(f"{'group' if s.via == 'group' else 'resource'}:{s.target}")
        c(f"// {s}")
        if self.ins:
            self.ins.step_begin(c, rs)
        self.step_code(rs)
        if self.ins:
            self.ins.step_end(c, self.loops)

    def step_code(self, rs: ResolvedStep) -> None:
        if self.p.stream_k and self.is_accumulator(rs) and any(a.after_mma and a.role is Role.FULL for a in rs.actions):
            # stream-K: only the unit holding its tile's last k tile commits (after adding the
            # partials of the blocks before it); any other unit with k tiles hands its partial over
            with self.c.block("if (unit_stores)"):
                self.stream_k_finish()
                self.step_work(rs)
            with self.c.block("else if (unit_k_tiles > 0)"):
                self.stream_k_hand_over()
            return
        self.step_work(rs)

    def step_work(self, rs: ResolvedStep) -> None:
        c, s = self.c, rs.step
        # work: what the step does to the stage (its complete_tx is the tma copy itself)
        if s.op == "load":
            return self.load(rs)
        if s.op == "mma":
            return self.mma(rs)
        if s.op == "store":
            return self.store(rs)
        # barrier actions, as the plan gives them (probes and reads have none)
        waited = False
        for a in rs.actions:
            if a.verb is Verb.WAIT:
                if self.holds_accumulator(rs):
                    self.pending_acquire.setdefault(a.cursor, []).append(a)
                    c("// deferred: the registers hold the accumulator; its staging buffer is awaited at commit")
                else:
                    c(self.wait_code(a))
                    waited = True
            elif a.verb is Verb.ARRIVE_EXPECT_TX:
                c(f"if (tt == 0) pg_mbar_arrive_expect_tx({self.addr(a)}, {a.bytes}u);  // expect_tx before the copies")
            elif a.verb is Verb.ARRIVE:
                self.arrive(rs, a)
            else:  # pragma: no cover - complete_tx belongs to a load, handled above
                raise AssertionError(f"{s}: unexpected barrier action {a}")
        if waited and not self.sm90 and self.is_accumulator(rs):
            c("tc_fence_after();")
        for cur in rs.advances:
            self.advance(cur)

    def release(self, a: BarrierAction, note: str, stage: str | None = None) -> None:
        """One arrive on ``a``'s barrier; on a cluster's shared tile, on the peer block's too (its
        TMA writes this block's stage, so it waits for this block's release)."""
        if a.set in self.p.peer_sets:
            addr = self.addr(a, stage)
            self.c(f"pg_mbar_arrive_cluster({addr});  {note}",
                   f"pg_mbar_arrive_cluster(peer_addr({addr}, (u32)cl_rank ^ 1u));  // ... and in the peer block")
        else:
            self.c(f"pg_mbar_arrive({self.addr(a, stage)});  {note}")

    def arrive(self, rs: ResolvedStep, a: BarrierAction) -> None:
        c = self.c
        if a.who is Who.ALL and a.role is Role.FULL:  # async producer: every thread arrives after its writes
            s = rs.step
            op = self.d.resource(s.target).pipeline_config.async_producer_op if s.via != "group" else \
                self.d.group(s.target).members[0].pipeline_config.async_producer_op
            if op is AsyncProducerOp.AsyncLoad:
                c(f"pg_cp_async_arrive_noinc({self.addr(a)});  // arrives when this thread's cp.async landed")
            else:
                c("fence_proxy_async();  // generic-proxy stores -> async-proxy (tensor core / TMA) readers",
                  f"pg_mbar_arrive({self.addr(a)});")
        elif a.who is Who.ALL:
            self.release(a, "// async release: every thread arrives")
        elif a.after_mma and a.role is Role.FULL:  # umma producer: the accumulator's results are in place
            if self.sm90:
                self.commit_accumulator(a)
            else:
                self.stage_tmem(a)
        elif a.after_mma:  # umma release
            if self.sm90:
                c(f"// released after wgmma.wait_group retires it ({self.p.mma_lag} k tile(s) later)")
            else:
                c(f"if (tt == 0) umma_commit({self.addr(a)});  // umma release: arrives once the MMAs read it")
        elif a.set in self.p.peer_sets:
            with c.block("if (tt == 0)"):
                self.release(a, "// one elected arrive")
        else:
            c(f"if (tt == 0) pg_mbar_arrive({self.addr(a)});  // one elected arrive")


__all__ = ["Task"]

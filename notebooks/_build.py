"""Write the teaching notebooks from the cells below, so they stay reviewable as plain Python.

    python notebooks/_build.py          # rewrite every notebook (no outputs, python3 kernel)
    python notebooks/_build.py --check  # exit 1 if a committed notebook differs from this file

Each notebook is a list of cells: a string starting with "md:" is Markdown, anything else code.
GPU cells go through ``timed_or_compiled`` (defined in each notebook that needs it), which
benchmarks on a GPU and otherwise compiles for sm_90a / sm_100a and says why nothing was timed.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

GPU_HELPER = '''\
from pgstudio import runtime
from pgstudio.codegen import emit


def timed_or_compiled(design):
    """Benchmark on a GPU (each variant verified first); without one, compile for both targets."""
    if runtime.gpu_available():
        print(runtime.benchmark(design, progress=False))  # every variant was verified before it was timed
        return
    print(f"no GPU here: {design.name} is compiled, not timed")
    for arch in ("sm_90a", "sm_100a"):
        try:
            cubin = runtime.compile_cubin(emit(design, arch=arch), arch)
            print(f"  {arch}: {len(cubin.data):,} B cubin")
        except Exception as exc:  # no NVRTC wheels, or a generator limit: say it, do not fail the notebook
            print(f"  {arch}: not compiled ({type(exc).__name__}: {exc})")'''

NOTEBOOKS: dict[str, list[str]] = {}


def _try_it_counts() -> tuple[int, int, int]:
    """00_studio's first try-it, computed (not typed): barriers of the canonical merge_gemm as a
    Merge and after the switch to FusedMerge, and the errors the switch leaves (0: its schedules
    follow the design).  tests/notebooks/test_try_it.py replays the switch in the studio."""
    from pgstudio import examples
    from pgstudio.analysis.layout import barrier_layout
    from pgstudio.model import edits
    from pgstudio.model.derive import adopt_derived, derive_design

    merge = adopt_derived(examples.merge_gemm())
    fused = derive_design(edits.set_group(merge, "ab", mode="FusedMerge"))
    return barrier_layout(merge).num_barriers, barrier_layout(fused).num_barriers, len(fused.validate().errors)


TRY_IT = _try_it_counts()

NOTEBOOKS["00_studio"] = [
    """md:# The pgstudio studio

The studio edits one **design** -- resources, the dependency graph, pipeline groups and tasks --
and redraws everything about it after each edit:

* **top**: the design's status (valid, or how many errors) and its barrier count against the
  per-resource-barrier twin; then **Diagnostics**, one line per problem with its code, message
  and fix (**show** highlights the element in the graph);
* **left**: editors for Resources, Edges, Groups, Tasks and the Design as a whole;
* **right**: the dependency Graph, the Barriers layout (grouped vs ungrouped), the simulated
  Timeline, the exhaustive Checker's verdict, the generated CUDA source, and
  **Compile & Benchmark**.

Schedules are derived from the design (acquire / work / commit on the producer side, wait /
work / release on the consumer side, collapsed steps on the group object), unless one written
with `@schedule` is attached. Every edit is undoable and autosaved next to this notebook
(`00_studio.pgstudio-autosave.json`); after a kernel restart, `Studio(name="00_studio")` offers
to restore it.""",
    """from pgstudio import examples
from pgstudio.studio import Studio

studio = Studio(examples.merge_gemm(), name="00_studio")
studio""",
    f"""md:Try it: in **Groups**, switch `ab` to **FusedMerge** and watch the barrier count drop from
{TRY_IT[0]} to {TRY_IT[1]} (the schedules are re-derived for the new mode); in **Resources**, change `smem_b` to **TmaAsync** and read the diagnostic that
appears (a Merge collapses the consumer side, so every member needs the same consumer kind).

Everything the widgets do is a method, too. Each edit makes a new design; the studio keeps the
current one and the history:""",
    """studio.add_resource("smem_r")  # a pipelined tile that no task uses yet
print(studio.report)""",
    """studio.undo()
print(studio.design.summary(), "->", "valid" if studio.report.ok else "invalid")""",
    """md:The example's schedules were written by hand with `@schedule`; derived from the graph, the
groups and the tasks they come out step for step the same, so the studio takes the derived ones and
re-derives them after every edit (a mode switch, a member added or removed):""",
    """from pgstudio.model.derive import derive_schedule

print(derive_schedule(studio.design, "mma").text())
print(derive_schedule(studio.design, "mma").nodes == studio.design.task("mma").schedule.nodes)""",
    """md:A schedule written in Python can be attached to a task; its parameters are bound to the
design's resources and groups by name:""",
    """from pgstudio import domain_loop, schedule


@schedule
def drain(tmem_c, gmem_d):
    with domain_loop(0, "num_tiles", 1):
        tmem_c.try_wait()
        tmem_c.wait()
        gmem_d.store(val=tmem_c.read())
        tmem_c.release()


studio.attach_schedule("epilogue", drain)
print(studio.design.task("epilogue").schedule.text())
print(studio.report.ok)""",
]

NOTEBOOKS["01_barrier_basics"] = [
    """md:# Barrier basics: one pipeline

A pipelined resource has `num_stages` buffers. Each stage has two mbarriers:

* **full[i]**: the producer arrives (a tma copy lands its bytes); the consumer **waits** on it;
* **empty[i]**: the consumer arrives when it is done reading (**release**); the producer waits
  on it before writing the stage again (**acquire**).

Here one tma copy task fills `smem_a` and one warpgroup stores it back to global memory.""",
    """from pgstudio import (Agent, CooperativeGroup, Compute, Design, GmemTensor, MemoryResource, Task, barrier_layout,
                      create_tma_async_pipeline_cfg, domain_loop, schedule)

cfg = create_tma_async_pipeline_cfg(num_stages=2, num_bytes=8192, consumer_group=CooperativeGroup(Agent.Warp, 4))
gmem_a = GmemTensor("gmem_a")
smem_a = MemoryResource("smem_a", cfg, Compute("copy"), "float32", (2048,))
gmem_d = GmemTensor("gmem_d", compute=Compute("store", "smem_a"))


@schedule
def load(gmem_a, smem_a):
    with domain_loop(0, "num_tiles", 1):
        smem_a.try_acquire()
        smem_a.acquire()  # wait(empty[i]), then arm full[i] with expect_tx(8192)
        smem_a.load(gmem_a)  # the bulk copy completes the bytes on full[i]
        smem_a.commit()  # tma: nothing more to do, the bytes complete the phase


@schedule
def store(smem_a, gmem_d):
    with domain_loop(0, "num_tiles", 1):
        smem_a.try_wait()
        smem_a.wait()  # wait(full[i])
        gmem_d.store(val=smem_a.read())
        smem_a.release()  # all 128 threads arrive on empty[i]


design = Design("one_pipeline", [gmem_a, smem_a, gmem_d], {smem_a: [gmem_a], gmem_d: [smem_a]}, [],
                [Task("load", 0, 1, [gmem_a], [smem_a], load(gmem_a, smem_a)),
                 Task("store", 4, 4, [smem_a], [gmem_d], store(smem_a, gmem_d))],
                {"num_tiles": 8, "num_elements": 8 * 2048, "tile_elems": 2048, "dtype": "float32"})
design.validate()""",
    """md:## The layout

Two stages give four barriers: `[full x 2][empty x 2]`. The full barrier expects one arrival
(the elected thread's `arrive.expect_tx`) plus 8192 transaction bytes per phase; the empty barrier
expects 128 arrivals (every consumer thread).""",
    """layout = barrier_layout(design)
print(layout.table())
layout""",
    """md:## Phases and parity

Iteration `k` uses stage `i = k % S` in round `r = k // S`. Each completed phase flips a
barrier's phase bit, so a wait only needs the **parity** of the phase it is waiting for: the
consumer waits on full[i] with parity `r & 1`; the producer waits on empty[i] with parity
`(r & 1) ^ 1`. A fresh barrier counts as if phase "-1" (parity 1) had completed, so the first
`S` acquires pass at once: the producer may run `S` stages ahead.""",
    """S = cfg.num_stages
print(f"{'iteration':>9} {'stage':>5} {'round':>5} {'wait full parity':>17} {'acquire empty parity':>21}")
for k in range(6):
    i, r = k % S, k // S
    print(f"{k:>9} {i:>5} {r:>5} {r & 1:>17} {(r & 1) ^ 1:>21}")""",
    """md:## The timeline

The simulator runs the same protocol table on an exact mbarrier model with a cost model of an
H200. Blocked time is hatched in the colour of the barrier waited on (blue: a consumer waiting
for data; orange: a producer waiting for a free stage); the lower panel marks each phase flip.""",
    """from pgstudio.analysis.simulate import simulate

timeline = simulate(design, iterations=8)
print(timeline.summary())
timeline""",
    """md:And the exhaustive checker: every interleaving of the two tasks over a few iterations.""",
    """from pgstudio.analysis.check import check

check(design, iterations=4)""",
]

NOTEBOOKS["02_merge"] = [
    """md:# Merge: N producers, 1 consumer

The seed's GEMM mainloop: `load_a` fills `smem_a`, `load_b` fills `smem_b`, and one MMA task
consumes both in the same iteration. With a **Merge** group the consumer side collapses: the
members keep their own full barriers (each producer commits its member), and one shared empty
barrier is released once by the consumer with `group.release()`.""",
    """import inspect

from pgstudio import barrier_layout, examples, ungrouped

design = examples.merge_gemm()
print(inspect.getsource(examples.merge_mma_schedule))
print(inspect.getsource(examples.gemm_load_schedule))""",
    """md:As captured (what the validator, simulator, checker and code generator read):""",
    """for task in design.tasks:
    print(f"# task {task}")
    print(task.schedule.text(), end="\\n\\n")""",
    """md:## Layout: (N + 1) x S barriers

`[full_0 x S][full_1 x S][shared_empty x S]`: with N = 2 members and S = 4 stages the group owns
12 barriers; per-resource barriers would need 2 x 2 x 4 = 16.""",
    """group = design.group("ab")
n, s = len(group.members), group.merged_config.num_stages
print(f"Merge group: {barrier_layout(group).num_barriers} barriers = (N + 1) x S = ({n} + 1) x {s}")
print(f"ungrouped members: {2 * n * s} barriers")
print(barrier_layout(group).table())""",
    """%matplotlib inline
from pgstudio.render.barriers import comparison_figure

comparison_figure(design)""",
    """md:## Benchmark

The streaming Merge (`merge_copy`, D = A + B) against its ungrouped twin and CuPy, and the GEMM
against its twin and cuBLAS; every variant is verified on fresh random data before it is
timed. Without a GPU the kernels are compiled for sm_90a and sm_100a instead.""",
    GPU_HELPER,
    """timed_or_compiled(examples.merge_copy())""",
    """timed_or_compiled(design)""",
]

NOTEBOOKS["03_fork"] = [
    """md:# Fork: 1 producer, N consumers

One load task fills a tile that two consumer tasks read: the MMA and an activation. With a
**Fork** group the producer side collapses: one shared full barrier, committed once by the
producer with `group.commit()`, and one empty barrier per member, released by each consumer.
Here both members are views of one buffer (`aliases=`), so one copy lands once and the merged
transaction count is one tile, not two.""",
    """import inspect

from pgstudio import barrier_layout, examples

design = examples.fork_gemm_act()
print(inspect.getsource(examples.fork_gemm_load_schedule))
print(design.task("load_a").schedule.text())""",
    """md:Each consumer releases its own member (`fa.smem_a.release()`, `fa.smem_act.release()`);
calling `fa.smem_a.commit()` on the producer side would be rejected: the collapsed stage belongs to
the group object.""",
    """print(design.task("mma").schedule.text())
print(design.task("act").schedule.text())""",
    """md:## Layout: (N + 1) x S barriers

`[shared_full x S][empty_0 x S][empty_1 x S]`.""",
    """group = design.group("fa")
cfg = group.merged_config
print(f"Fork group: {barrier_layout(group).num_barriers} barriers; merged bytes per stage {cfg.num_bytes} "
      f"({'one aliased buffer' if cfg.aliased else 'distinct buffers, summed'})")
print(barrier_layout(group).table())""",
    """%matplotlib inline
from pgstudio.render.barriers import comparison_figure

comparison_figure(examples.fork_copy())""",
    """md:## Benchmark""",
    GPU_HELPER,
    """timed_or_compiled(examples.fork_copy())""",
]

NOTEBOOKS["04_fused_merge"] = [
    """md:# FusedMerge: both sides shared

Same dataflow as Merge, but the producers also arrive on **one shared full barrier**, each
through its own view (its op and its transaction bytes). The consumer waits once
(`group.wait()`) and releases once (`group.release()`): 2 x S barriers in all. The shared full
barrier's init count is the sum of the producers' counts, and it expects the sum of the tma
members' bytes.""",
    """import inspect

from pgstudio import barrier_layout, examples

design = examples.fused_merge_gemm()
print(inspect.getsource(examples.fused_mma_schedule))
print(design.task("mma").schedule.text())""",
    """group = design.group("ab")
layout = barrier_layout(group)
print(f"FusedMerge: {layout.num_barriers} barriers = 2 x {group.merged_config.num_stages}")
print(layout.table())""",
    """md:The same group with a tma member and an async member (the async producer's 128 threads each
arrive): the shared full barrier counts 1 + 128 = 129 arrivals per phase.""",
    """from pgstudio import (Agent, CooperativeGroup, MemoryResource, PipelineGroup, PipelineGroupMode,
                      create_async_umma_pipeline_cfg, create_tma_umma_pipeline_cfg)

a = MemoryResource("a", create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=16384))
b = MemoryResource("b", create_async_umma_pipeline_cfg(num_stages=4, producer_group=CooperativeGroup(Agent.Warp, 4)))
mixed = PipelineGroup(name="ab_mixed", members=[a, b], mode=PipelineGroupMode.FusedMerge)
print(barrier_layout(mixed).table())""",
    """%matplotlib inline
from pgstudio.render.barriers import comparison_figure

comparison_figure(examples.fused_merge_copy())""",
    """md:## Benchmark""",
    GPU_HELPER,
    """timed_or_compiled(examples.fused_merge_copy())""",
]

NOTEBOOKS["05_mixes"] = [
    """md:# Heterogeneous groups: which mixes are allowed

Only the **collapsed** side must be homogeneous in kind, because its tasks arrive on one shared
barrier: Merge and FusedMerge collapse the consumer side, Fork the producer side. The other side
may mix kinds freely. The seed's table, from the rule pgstudio checks:""",
    """from pgstudio.model.group_rules import ALLOWED_MIXES

print(f"{'mode':<10} {'collapsed kind':<18} allowed member mixes")
for (side, kind), types in ALLOWED_MIXES.items():
    for mode in (("Merge", "FusedMerge") if side == "consumer" else ("Fork",)):
        print(f"{mode:<10} {side + ' ' + kind.value:<18} {' + '.join(sorted(t.value for t in types))}")""",
    """md:Every pair of a row builds a valid group (each member keeps the config it would have alone),
and each lays out (N + 1) x S barriers, or 2 x S for FusedMerge:""",
    """import itertools

from pgstudio import MemoryResource, PipelineGroup, PipelineGroupMode, barrier_layout
from pgstudio.model.config import FACTORIES

rows = []
for (side, kind), types in ALLOWED_MIXES.items():
    modes = (PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge) if side == "consumer" else (PipelineGroupMode.Fork,)
    for mode in modes:
        for t1, t2 in itertools.combinations(sorted(types, key=lambda t: t.value), 2):
            members = [MemoryResource(f"m{i}", FACTORIES[t](num_stages=2, num_bytes=1024)) for i, t in enumerate((t1, t2))]
            group = PipelineGroup(name="g", members=members, mode=mode)
            group.release_members()
            rows.append((mode.value, f"{t1.value} + {t2.value}", group.merged_config.type_name,
                         barrier_layout(group).num_barriers))
print(f"{'mode':<11} {'members':<22} {'merged type':<13} barriers (S = 2)")
for row in rows:
    print(f"{row[0]:<11} {row[1]:<22} {row[2]:<13} {row[3]}")""",
    """md:## A rejected mix

A Merge of a TmaAsync tile (consumed by threads) and a TmaUmma tile (consumed by an MMA) has two
consumer kinds on its collapsed side. The group refuses it when it is built, and says which side,
which members, which kinds, and what is allowed:""",
    """from pgstudio import create_tma_async_pipeline_cfg, create_tma_umma_pipeline_cfg

x = MemoryResource("smem_x", create_tma_async_pipeline_cfg(num_stages=4, num_bytes=8192))
y = MemoryResource("smem_y", create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=8192))
try:
    PipelineGroup(name="xy", members=[x, y], mode=PipelineGroupMode.Merge)
except ValueError as err:
    print(f"{type(err).__name__}: {err}")""",
    """md:The same two members as a **Fork** are fine: a Fork collapses the producer side, and both
are tma producers.""",
    """fork = PipelineGroup(name="xy_fork", members=[x, y], mode=PipelineGroupMode.Fork)
print(fork.merged_config.type_name, barrier_layout(fork).num_barriers, "barriers")""",
]

NOTEBOOKS["06_compile_and_benchmark"] = [
    """md:# Compile and benchmark

`emit(design)` writes a warp-specialised CUDA kernel (one role branch per task, loops from the
schedules, every wait bounded by a watchdog); NVRTC compiles it for sm_90a (H100 / H200) and
sm_100a (Blackwell) with or without a GPU; on a GPU the runtime verifies it against a reference
on fresh random data and times it against the ungrouped twin and a library peer.""",
    """from pgstudio import examples
from pgstudio.codegen import emit

design = examples.merge_copy()
source = emit(design)
print(f"{source.entry}: block {source.block}, {source.smem_bytes:,} B shared memory, {len(source.code.splitlines())} lines")
print("\\n".join(source.code.splitlines()[:25]))""",
    """from pgstudio import runtime

for arch in ("sm_90a", "sm_100a"):
    try:
        cubin = runtime.compile_cubin(emit(design, arch=arch), arch)
        print(f"{arch}: {len(cubin.data):,} B cubin in {cubin.seconds:.2f} s")
    except Exception as exc:  # no NVRTC wheels here
        print(f"{arch}: not compiled ({type(exc).__name__}: {exc})")""",
    """md:## One click

The studio's **Compile & Benchmark** pane does all of it for the design on screen: progress per
step, then the results table and a bar chart of design vs ungrouped vs library peer. Without a
GPU it says so and still compiles for both targets.""",
    """from pgstudio.studio import Studio

studio = Studio(design, name="06_compile_and_benchmark")
studio.views.show("barriers")
studio.compile_and_benchmark()
studio.bench.widget""",
    """md:## Grouped vs ungrouped vs library, from Python""",
    """if runtime.gpu_available():
    for d in (examples.merge_copy(), examples.fork_copy(), examples.fused_merge_copy()):
        print(runtime.benchmark(d, progress=False), end="\\n\\n")
else:
    print("no GPU here: nothing is timed (the kernels above compiled for sm_90a and sm_100a)")""",
]

NOTEBOOKS["07_mistakes"] = [
    """md:# Mistakes and how pgstudio catches them

## The hard rules

Inside `@schedule`, the collapsed stage of a group is emitted once, on the group object.
`Task(...)` captures the schedule and rejects each of these with `ScheduleError` (a `ValueError`)
saying what to call instead.""",
    """from pgstudio import ScheduleError, Task, domain_loop, examples, schedule

design = examples.merge_copy()
ab = design.group("ab")


@schedule
def merge_member_release(output, group):
    with domain_loop(0, "num_tiles", 1):
        group.smem_a.wait()
        group.smem_b.wait()
        output.store(a=group.smem_a.read(), b=group.smem_b.read())
        group.smem_a.release()  # wrong: Merge releases the group once
        group.smem_b.release()


try:
    Task("store", 4, 4, ["smem_a", "smem_b"], ["gmem_d"], merge_member_release(design.resource("gmem_d"), ab))
except ScheduleError as err:
    print(err)""",
    """fork = examples.fork_copy()
xy = fork.group("xy")


@schedule
def fork_member_commit(src, group):
    with domain_loop(0, "num_tiles", 1):
        group.smem_x.acquire()
        group.smem_y.acquire()
        group.smem_x.load(src)
        group.smem_x.commit()  # wrong: Fork commits the group once
        group.smem_y.commit()


try:
    Task("load", 0, 1, ["gmem_a"], ["smem_x", "smem_y"], fork_member_commit(fork.resource("gmem_a"), xy))
except ScheduleError as err:
    print(err)""",
    """fused = examples.fused_merge_copy()
fab = fused.group("ab")


@schedule
def fused_member_wait(output, group):
    with domain_loop(0, "num_tiles", 1):
        group.smem_a.wait()  # wrong: FusedMerge waits on the group once
        group.smem_b.wait()
        output.store(a=group.smem_a.read(), b=group.smem_b.read())
        group.release()


try:
    Task("store", 4, 4, ["smem_a", "smem_b"], ["gmem_d"], fused_member_wait(fused.resource("gmem_d"), fab))
except ScheduleError as err:
    print(err)""",
    """md:## Bugs the rules cannot see: the exhaustive checker

`pgstudio.mistakes` plants one classic pipeline bug in a canonical design each. Structural rules
pass some of them; the checker explores every interleaving of the tasks over a few iterations and
reports the first violation with a witness: the shortest run into it, step by step, with the
barrier state each step left behind.""",
    """from pgstudio import mistakes
from pgstudio.analysis.check import check

print(f"{'mistake':<27} {'checker says':<26} expected")
for name, (build, expected) in mistakes.MISTAKES.items():
    verdict = check(build(num_stages=2), iterations=4)  # more iterations than stages: the ring wraps
    print(f"{name:<27} {verdict.status + ' ' + (verdict.kind or ''):<26} {expected}")""",
    """md:A deadlock: the store task of `merge_copy` never releases the group, so after S iterations
both loaders wait on empty barriers that never flip. The witness:""",
    """verdict = check(mistakes.never_releases(num_stages=2), iterations=3)
verdict""",
    """md:## A hang on the GPU: the watchdog

Generated kernels never hang a notebook: every barrier wait is bounded. When the budget runs
out the kernel records which task, barrier, stage, phase and iteration stopped, exits, and the
runtime raises `KernelHangError` with that record; the CUDA context stays usable. Without a GPU
the simulator shows the same stop.""",
    """from pgstudio import KernelHangError, runtime
from pgstudio.analysis.simulate import simulate

hung = mistakes.never_releases(num_stages=2)
if runtime.gpu_available():
    try:
        runtime.run(hung, validate=False, timing=False, budget_ms=200)
        print("it finished?")
    except KernelHangError as err:
        print(err)
        print(err.record)
else:
    timeline = simulate(hung, iterations=4)
    meta = dict(timeline.meta)
    print("no GPU here; the simulator's run of the same design ends with:", meta.get("status"))
    for line in meta.get("stuck", ()):
        print("  stuck:", line)""",
]


def notebook(cells: list[str]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for text in cells:
        if text.startswith("md:"):
            nb.cells.append(nbformat.v4.new_markdown_cell(textwrap.dedent(text[3:]).strip()))
        else:
            nb.cells.append(nbformat.v4.new_code_cell(text.strip()))
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    for i, cell in enumerate(nb.cells):  # stable ids: rebuilding changes nothing
        cell["id"] = f"cell-{i:02d}"
    return nb


def render(name: str) -> str:
    return nbformat.writes(notebook(NOTEBOOKS[name])) + "\n"


def main(argv: list[str]) -> int:
    stale = []
    for name in NOTEBOOKS:
        path = HERE / f"{name}.ipynb"
        text = render(name)
        if "--check" in argv:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        else:
            path.write_text(text)
    if stale:
        print(f"out of date with notebooks/_build.py: {', '.join(stale)}; run python notebooks/_build.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

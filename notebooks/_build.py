"""Write the teaching notebooks from the cells below, and run them so they are committed with the
outputs of a CPU run (pictures, tables): readable without running them.

    python notebooks/_build.py            # write every notebook and run it (what `make notebooks` does)
    python notebooks/_build.py 02_merge   # only the notebooks named
    python notebooks/_build.py --check    # exit 1 if a committed notebook's cells differ from this file

Each notebook is a list of cells: a string starting with "md:" is Markdown, a ``TryIt`` is a "Try
it" sentence (Markdown; tests/notebooks/test_try_it.py does what it says and finds its numbers), an
``exercise(key)`` a question with a check cell (``pgstudio.exercises``), anything else code.  Every
number the prose states is computed here with pgstudio, never typed.

Notebooks run on a scratch copy of this folder with no GPU visible (``CUDA_VISIBLE_DEVICES=""``),
even on a machine with one: a GPU cell compiles its kernels for sm_90a / sm_100a and shows the
table a GPU run recorded (``notebooks/recorded/``, written by ``python benchmarks/notebooks.py
--record``; ``pgstudio.runtime.recorded``), labelled with the device and date, or says that none
exists yet.  Figures are kept as SVG.  tests/notebooks/test_notebooks.py runs each notebook again
and compares its outputs with the committed ones by structure (``outline``): the same cells, the
same output types per cell, the same text modulo timings and addresses.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import textwrap
from html import unescape
from pathlib import Path
from typing import NamedTuple

import nbformat

from pgstudio.studio import _notebook_save

HERE = Path(__file__).resolve().parent
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
#: Kernel options for a run: matplotlib inline, figures as SVG with text kept as text (small), and
#: the same bytes for the same figure (no date, fixed ids), so a rerun changes only what changed.
SVG_SETUP = ("import matplotlib; matplotlib.rcParams['svg.fonttype'] = 'none'; "
             "matplotlib.rcParams['svg.hashsalt'] = 'pgstudio'; get_ipython().run_line_magic('config', "
             "\"InlineBackend.print_figure_kwargs = {'bbox_inches': 'tight', 'metadata': {'Date': None}}\")")
KERNEL_ARGS = ["--InlineBackend.figure_formats=svg", "--matplotlib=inline", f"--IPKernelApp.exec_lines={SVG_SETUP}"]
#: Seconds a cell may take in a run (GEMM kernels compile in a few seconds each).
CELL_TIMEOUT = 300


class TryIt(NamedTuple):
    """A "Try it" sentence: in the code cell that contains ``cell``, change ``old`` to ``new`` and
    run the notebook down to the cell that contains ``shows``; its output then contains every
    string of ``expect`` (computed here).  ``text`` is the sentence, numbers included."""

    text: str
    cell: str
    old: str
    new: str
    shows: str
    expect: tuple[str, ...]


def exercise(key: str) -> list[str]:
    """A question from ``pgstudio.exercises`` and its check cell."""
    from pgstudio.exercises import EXERCISES

    ex = EXERCISES[key]
    return [f"md:**Exercise.** {ex.question}\n\nWrite your answer in place of `...` and run the cell: "
            "pgstudio works it out and says whether yours is right.",
            f"from pgstudio import exercises\n\nanswer = ...  # your answer: {ex.form}\n"
            f"exercises.check({key!r}, answer)"]  # by module: a bare check would hide the checker's


#: The benchmark cells' one import: ``timed_or_compiled`` times on a GPU and compiles elsewhere.
GPU_HELPER = "from pgstudio.explore.bench import timed_or_compiled"

NOTEBOOKS: dict[str, list] = {}


# -- facts the prose states, computed ---------------------------------------------------------------

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


def _one_pipeline(num_stages: int = 2, warps: int = 4, num_bytes: int = 8192) -> dict:
    """01's design in numbers: barriers, bytes, and the two sets' init counts and tx bytes."""
    from pgstudio import Agent, CooperativeGroup, MemoryResource, barrier_layout, create_tma_async_pipeline_cfg

    cfg = create_tma_async_pipeline_cfg(num_stages=num_stages, num_bytes=num_bytes,
                                        consumer_group=CooperativeGroup(Agent.Warp, warps))
    layout = barrier_layout(MemoryResource("smem_a", cfg))
    full, empty = layout.sets
    return {"barriers": layout.num_barriers, "bytes": layout.num_bytes, "full_count": full.init_count,
            "tx": full.tx_bytes, "empty_count": empty.init_count, "stages": num_stages}


def _group_counts(design) -> tuple[int, int, int, int]:
    """(N members, S stages, barriers of the group, barriers of the members ungrouped)."""
    from pgstudio import barrier_layout, ungrouped

    group = design.groups[0]
    twin = ungrouped(design)
    alone = sum(barrier_layout(twin.resource(m)).num_barriers for m in group.member_names)
    return len(group.members), group.merged_config.num_stages, barrier_layout(group).num_barriers, alone


def _fused_mixed(warps: int) -> int:
    """Init count of the shared full barrier of 04's mixed FusedMerge (tma + async of ``warps`` warps)."""
    from pgstudio import (Agent, CooperativeGroup, MemoryResource, PipelineGroup, PipelineGroupMode, barrier_layout,
                          create_async_umma_pipeline_cfg, create_tma_umma_pipeline_cfg)

    a = MemoryResource("a", create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=16384))
    b = MemoryResource("b", create_async_umma_pipeline_cfg(num_stages=4,
                                                           producer_group=CooperativeGroup(Agent.Warp, warps)))
    group = PipelineGroup(name="ab_mixed", members=[a, b], mode=PipelineGroupMode.FusedMerge)
    group.release_members()
    return next(s.init_count for s in barrier_layout(group).sets if s.shared and s.role == "full")


def _facts() -> dict:
    from pgstudio import examples

    return {"one": _one_pipeline(), "one3": _one_pipeline(num_stages=3),
            "merge": _group_counts(examples.merge_gemm()), "merge4": _group_counts(examples.merge_gemm(num_stages=4)),
            "fork": _group_counts(examples.fork_gemm_act()),
            "fork4": _group_counts(examples.fork_gemm_act(num_stages=4)),
            "fused": _group_counts(examples.fused_merge_gemm()),
            "fused4": _group_counts(examples.fused_merge_gemm(num_stages=4)),
            "mixed4": _fused_mixed(4), "mixed2": _fused_mixed(2)}


F = _facts()
ONE, ONE3 = F["one"], F["one3"]


# -- the notebooks --------------------------------------------------------------------------------

NOTEBOOKS["00_studio"] = [
    """md:# The pgstudio studio

The studio edits one **design** -- resources, the dependency graph, pipeline groups and tasks --
and redraws everything about it after each edit:

* **top**: the design's status (valid, or how many errors) and its barrier count against the
  per-resource-barrier twin; then **Diagnostics**, one line per problem with its code, message
  and fix (**show** highlights the element in the graph; a one-click fix applies it);
* **left**: editors for Resources, Edges, Groups, Tasks and the Design as a whole;
* **right**: the dependency Graph, the Barriers layout, the simulated Timeline (zoom, pan, hover,
  click; on a GPU, **Measure on the GPU** draws the instrumented kernel's measured timeline below
  it, on one time axis), the exhaustive Checker's verdict, the generated CUDA source,
  **Compile & Benchmark** and **Sweep**.

Schedules are derived from the design (acquire / work / commit on the producer side, wait /
work / release on the consumer side, collapsed steps on the group object), unless one written
with `@schedule` is attached. Every edit is undoable and autosaved next to this notebook
(`00_studio.pgstudio-autosave.json`); after a kernel restart, `Studio(name="00_studio")` offers
to restore it. (On a page read without a running kernel the studio is a line of text: open the
notebook in JupyterLab, or `make studio`, to use it.)""",
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
    """md:What the panes draw, as pictures: the design (its diagnostics and dependency graph), then its
barriers next to the per-resource-barrier twin.""",
    """studio.design""",
    """from pgstudio.render import comparison_figure

comparison_figure(studio.design)""",
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
    f"""md:## The layout

{ONE['stages']} stages give {ONE['barriers']} barriers: `[full x {ONE['stages']}][empty x {ONE['stages']}]`. The full
barrier expects {ONE['full_count']} arrival per phase (the elected thread's `arrive.expect_tx`) plus {ONE['tx']}
transaction bytes; the empty barrier expects {ONE['empty_count']} arrivals (every thread of the consumer's
{ONE['empty_count'] // 32} warps).
Each cell of the picture also says which iterations use its stage and the parity their waits pass
on, and the strip under the cells shows the shared-memory bytes each stage's barriers guard.""",
    """layout = barrier_layout(design)
print(layout.table())
layout""",
    TryIt(f"Try it: in the first code cell, change `num_stages=2` to `num_stages=3` and run the notebook "
          f"again: the layout cell prints {ONE3['barriers']} barriers ({ONE3['bytes']} bytes), "
          f"`[full x 3][empty x 3]`.",
          cell="cfg = create_tma_async_pipeline_cfg(", old="num_stages=2", new="num_stages=3",
          shows="layout = barrier_layout(design)",
          expect=(f"{ONE3['barriers']} barriers, {ONE3['bytes']} bytes",)),
    """md:## Phases and parity

Iteration `k` uses stage `i = k % S` in round `r = k // S`. Each completed phase flips a
barrier's phase bit, so a wait only needs the **parity** of the phase it is waiting for: the
consumer waits on full[i] with parity `r & 1`; the producer waits on empty[i] with parity
`(r & 1) ^ 1`. A fresh barrier counts as if phase "-1" (parity 1) had completed, so the first
`S` acquires pass at once: the producer may run `S` stages ahead.""",
    """from pgstudio.model.protocol import wait_parity

S = cfg.num_stages
print(f"{'iteration':>9} {'stage':>5} {'round':>5} {'wait full parity':>17} {'acquire empty parity':>21}")
for k in range(6):
    i, r = k % S, k // S
    print(f"{k:>9} {i:>5} {r:>5} {wait_parity('consumer', r):>17} {wait_parity('producer', r):>21}")""",
    *exercise("stage_and_parity"),
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
    *exercise("pipeline_barriers"),
]

_N, _S, _MB, _MU = F["merge"]
_N4, _S4, _MB4, _MU4 = F["merge4"]
NOTEBOOKS["02_merge"] = [
    """md:# Merge: N producers, 1 consumer

The GEMM mainloop: `load_a` fills `smem_a`, `load_b` fills `smem_b`, and one MMA task
consumes both in the same iteration. With a **Merge** group the consumer side collapses: the
members keep their own full barriers (each producer commits its member), and one shared empty
barrier is released once by the consumer with `group.release()`.""",
    """import inspect

from pgstudio import barrier_layout, examples

design = examples.merge_gemm()
print(inspect.getsource(examples.merge_mma_schedule))
print(inspect.getsource(examples.gemm_load_schedule))""",
    """md:As captured (what the validator, simulator, checker and code generator read):""",
    """for task in design.tasks:
    print(f"# task {task}")
    print(task.schedule.text(), end="\\n\\n")""",
    f"""md:## Layout: (N + 1) x S barriers

`[full_0 x S][full_1 x S][shared_empty x S]`: with N = {_N} members and S = {_S} stages the group owns
{_MB} barriers; per-resource barriers would need 2 x {_N} x {_S} = {_MU}.""",
    """group = design.group("ab")
n, s = len(group.members), group.merged_config.num_stages
print(f"Merge group: {barrier_layout(group).num_barriers} barriers = (N + 1) x S = ({n} + 1) x {s}")
print(f"ungrouped members: {2 * n * s} barriers")
print(barrier_layout(group).table())""",
    TryIt(f"Try it: in the first code cell, change `examples.merge_gemm()` to `examples.merge_gemm(num_stages=4)` "
          f"and run the notebook again: the group owns ({_N4} + 1) x {_S4} = {_MB4} barriers, the ungrouped "
          f"members {_MU4}.",
          cell="design = examples.merge_gemm()", old="examples.merge_gemm()", new="examples.merge_gemm(num_stages=4)",
          shows='group = design.group("ab")',
          expect=(f"Merge group: {_MB4} barriers = (N + 1) x S = ({_N4} + 1) x {_S4}",
                  f"ungrouped members: {_MU4} barriers")),
    """md:The whole design's barriers (the accumulator `tmem_c` has its own) next to its ungrouped twin:""",
    """from pgstudio.render import comparison_figure

comparison_figure(design)""",
    """md:## The same members, three ways

Merge shares the empty barriers, Fork the full ones, FusedMerge both. The same two tiles as each
mode, with what it costs and what its task calls once on the group object:""",
    """from pgstudio.render import modes_figure

modes_figure(group)""",
    *exercise("merge_barriers"),
    """md:## Benchmark

The GEMM against its ungrouped twin and cuBLAS, and the streaming Merge (`merge_copy`, D = A + B)
against its twin and CuPy; every variant is verified on fresh random data before it is timed.
Without a GPU the kernels are compiled for sm_90a and sm_100a instead, and the table a GPU run
recorded is shown, labelled as such.""",
    GPU_HELPER,
    """timed_or_compiled(examples.merge_gemm())""",
    """timed_or_compiled(examples.merge_copy())""",
]

_FN, _FS, _FB, _FU = F["fork"]
_FN4, _FS4, _FB4, _FU4 = F["fork4"]
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
    """md:The design: `load_a` fills the Fork group `fa` (`smem_a` and its view `smem_act`), the MMA reads
`smem_a`, the activation task reads `smem_act`:""",
    """design""",
    """md:Each consumer releases its own member (`fa.smem_a.release()`, `fa.smem_act.release()`);
calling `fa.smem_a.commit()` on the producer side would be rejected: the collapsed stage belongs to
the group object.""",
    """print(design.task("mma").schedule.text())
print(design.task("act").schedule.text())""",
    f"""md:## Layout: (N + 1) x S barriers

`[shared_full x S][empty_0 x S][empty_1 x S]`: with N = {_FN} members and S = {_FS} stages the group owns
{_FB} barriers instead of {_FU}.""",
    """group = design.group("fa")
cfg = group.merged_config
print(f"Fork group: {barrier_layout(group).num_barriers} barriers; merged bytes per stage {cfg.num_bytes} "
      f"({'one aliased buffer' if cfg.aliased else 'distinct buffers, summed'})")
print(barrier_layout(group).table())""",
    TryIt(f"Try it: in the first code cell, change `examples.fork_gemm_act()` to "
          f"`examples.fork_gemm_act(num_stages=4)` and run the notebook again: the Fork group owns "
          f"({_FN4} + 1) x {_FS4} = {_FB4} barriers.",
          cell="design = examples.fork_gemm_act()", old="examples.fork_gemm_act()",
          new="examples.fork_gemm_act(num_stages=4)", shows='group = design.group("fa")',
          expect=(f"Fork group: {_FB4} barriers",)),
    """md:The whole design next to its ungrouped twin. In the grouped picture, `shared_full` guards both
views; the data strip shows `smem_act` on the same bytes as `smem_a`:""",
    """from pgstudio.render import comparison_figure

comparison_figure(design)""",
    """md:The simulated timeline of four tiles (the MMA's k loop cut to two steps per tile, so the
picture stays readable): one load feeds two consumers per stage.""",
    """from pgstudio.analysis.simulate import simulate

simulate(design, iterations=4, inner=2)""",
    *exercise("fork_tx_bytes"),
    """md:## Benchmark

The Fork GEMM against its ungrouped twin and cuBLAS, and the streaming Fork (`fork_copy`).""",
    GPU_HELPER,
    """timed_or_compiled(examples.fork_gemm_act())""",
    """timed_or_compiled(examples.fork_copy())""",
]

_UN, _US, _UB, _UU = F["fused"]
_UN4, _US4, _UB4, _UU4 = F["fused4"]
NOTEBOOKS["04_fused_merge"] = [
    f"""md:# FusedMerge: both sides shared

Same dataflow as Merge, but the producers also arrive on **one shared full barrier**, each
through its own view (its op and its transaction bytes). The consumer waits once
(`group.wait()`) and releases once (`group.release()`): 2 x S barriers in all ({_UB} for the
{_US}-stage GEMM below, where per-resource barriers need {_UU}). The shared full barrier's init count
is the sum of the producers' counts, and it expects the sum of the tma members' bytes.""",
    """import inspect

from pgstudio import barrier_layout, examples

design = examples.fused_merge_gemm()
print(inspect.getsource(examples.fused_mma_schedule))
print(design.task("mma").schedule.text())""",
    """design""",
    """group = design.group("ab")
layout = barrier_layout(group)
print(f"FusedMerge: {layout.num_barriers} barriers = 2 x {group.merged_config.num_stages}")
print(layout.table())""",
    TryIt(f"Try it: in the first code cell, change `examples.fused_merge_gemm()` to "
          f"`examples.fused_merge_gemm(num_stages=4)` and run the notebook again: the group owns 2 x {_US4} = "
          f"{_UB4} barriers.",
          cell="design = examples.fused_merge_gemm()", old="examples.fused_merge_gemm()",
          new="examples.fused_merge_gemm(num_stages=4)", shows='group = design.group("ab")',
          expect=(f"FusedMerge: {_UB4} barriers = 2 x {_US4}",)),
    """md:The whole design next to its ungrouped twin:""",
    """from pgstudio.render import comparison_figure

comparison_figure(design)""",
    f"""md:The same group with a tma member and an async member (the async producer's {F['mixed4'] - 1} threads each
arrive): the shared full barrier counts 1 + {F['mixed4'] - 1} = {F['mixed4']} arrivals per phase.""",
    """from pgstudio import (Agent, CooperativeGroup, MemoryResource, PipelineGroup, PipelineGroupMode,
                      create_async_umma_pipeline_cfg, create_tma_umma_pipeline_cfg)

a = MemoryResource("a", create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=16384))
b = MemoryResource("b", create_async_umma_pipeline_cfg(num_stages=4, producer_group=CooperativeGroup(Agent.Warp, 4)))
mixed = PipelineGroup(name="ab_mixed", members=[a, b], mode=PipelineGroupMode.FusedMerge)
mixed_layout = barrier_layout(mixed)
full = next(s for s in mixed_layout.sets if s.shared and s.role == "full")
print(f"{full.name}: {full.init_count} arrivals per phase, {full.tx_bytes} tx bytes")
print(mixed_layout.table())""",
    TryIt(f"Try it: change `CooperativeGroup(Agent.Warp, 4)` to `CooperativeGroup(Agent.Warp, 2)` in the cell "
          f"above and run it again: the shared full barrier now counts {F['mixed2']} arrivals "
          f"(1 + {F['mixed2'] - 1}).",
          cell="mixed = PipelineGroup(", old="CooperativeGroup(Agent.Warp, 4)", new="CooperativeGroup(Agent.Warp, 2)",
          shows="mixed = PipelineGroup(", expect=(f"ab_mixed.shared_full: {F['mixed2']} arrivals per phase",)),
    *exercise("fused_init_count"),
    """md:The three modes of the same two tiles, side by side:""",
    """from pgstudio.render import modes_figure

modes_figure(group)""",
    """md:## Benchmark""",
    GPU_HELPER,
    """timed_or_compiled(examples.fused_merge_gemm())""",
    """timed_or_compiled(examples.fused_merge_copy())""",
]

NOTEBOOKS["05_mixes"] = [
    """md:# Heterogeneous groups: which mixes are allowed

Only the **collapsed** side must be homogeneous in kind, because its tasks arrive on one shared
barrier: Merge and FusedMerge collapse the consumer side, Fork the producer side. The other side
may mix kinds freely. The table, from the rule pgstudio checks:""",
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
for (side, _kind), types in ALLOWED_MIXES.items():
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
    """md:The same two tiles in every mode at once: Merge and FusedMerge say why they cannot hold them.""",
    """from pgstudio.render import modes_figure

modes_figure([x, y])""",
    *exercise("allowed_mode"),
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
    """print(studio.bench.log_text())  # what the pane says, as text""",
    """md:## Grouped vs ungrouped vs library, from Python

Each streaming design against its ungrouped twin, CuPy and a device-to-device copy (the bandwidth
ceiling); on a GPU each variant is verified before it is timed. Without one, the kernels are
compiled and the table a GPU run recorded is shown, labelled with the device and the date.""",
    GPU_HELPER,
    """timed_or_compiled(examples.merge_copy())""",
    """timed_or_compiled(examples.fork_copy())""",
    """timed_or_compiled(examples.fused_merge_copy())""",
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
    """md:## Mistakes from the field: the rules name them

Some bugs need no search: `validate()` names them from the design alone, before anything runs.
`mistakes.RULE_MISTAKES` plants one of each:

- **a trip count of one** (`one_tile`): every task brackets the pipeline once, the ring never
  wraps and no wait sees a flipped phase; `schedule.trip_count` warns that such a run tests none
  of the phase logic.
- **a trip count of zero** (`zero_trip`): one side never reaches the barrier the other waits on;
  `schedule.iterations` names the loop that runs 0 times as the cause.
- **a lead of two phases** (`skipped_acquire`): a loader commits without acquiring, so it can run
  a ring ahead; a wait names a parity, so phase r + 2 looks like phase r (`schedule.phase_lead`).
- **a round that completes two phases** (`two_phase_round`): 128 threads arrive on a barrier
  counting 64 (`config.arrive_count` says the other side can run two phases ahead).
- **a register budget** (`register_overdraft`): a setmaxnreg layout (`SETMAXNREG_<task>`) asks
  more registers than the block launched with; `codegen.register_budget` refuses it and offers the
  value that fits.
- **a missing proxy fence**: threads write the staged accumulator with `st.shared`, the TMA engine
  stores it; `fence.proxy.async` must order the two proxies. The generator places every such fence
  and a test checks each emitted kernel, so no design can plant this one.""",
    """print(f"{'mistake':<20} {'severity':<8} rule")
for name, (build, code) in mistakes.RULE_MISTAKES.items():
    found = [d for d in build().validate().diagnostics if d.code == code]
    print(f"{name:<20} {str(found[0].severity):<8} {code}")""",
    """md:Each finding names the values and the fix; where the fix is mechanical it is one click in the
studio (here: applied with `apply_fix`).""",
    """from pgstudio.model.edits import apply_fix

overdraft = mistakes.register_overdraft()
(diag,) = overdraft.validate().errors
print(diag)
print("fix:", diag.fixes[0])
print("after the fix:", apply_fix(overdraft, diag.fixes[0]).validate())""",
    """md:The proxy fences of a generated GEMM kernel: after the MMA warpgroups' `st.shared` writes of the
staging buffer, before the arrive that lets the epilogue's TMA store read it.""",
    """from pgstudio.codegen import emit

for line in emit(examples.merge_gemm()).code.splitlines():
    if "fence_proxy_async();" in line:
        print(line.strip())""",
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
    *exercise("checker_kind"),
]


# -- building, running, comparing -----------------------------------------------------------------

def notebook(cells: list) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for item in cells:
        text = ("md:" + item.text) if isinstance(item, TryIt) else item
        if text.startswith("md:"):
            nb.cells.append(nbformat.v4.new_markdown_cell(textwrap.dedent(text[3:]).strip()))
        else:
            nb.cells.append(nbformat.v4.new_code_cell(text.strip()))
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    for i, cell in enumerate(nb.cells):  # stable ids: rebuilding changes nothing
        cell["id"] = f"cell-{i:02d}"
    return nb


def try_its(name: str) -> list[TryIt]:
    return [c for c in NOTEBOOKS[name] if isinstance(c, TryIt)]


def recorded_designs() -> list[str]:
    """The designs whose GPU tables the notebooks show (``timed_or_compiled(examples.X())`` cells):
    what ``benchmarks/notebooks.py --record`` records."""
    names = []
    for cells in NOTEBOOKS.values():
        for c in cells:
            if isinstance(c, str):
                names += re.findall(r"timed_or_compiled\(examples\.(\w+)\(\)\)", c)
    return list(dict.fromkeys(names))


def kernel_env() -> dict[str, str]:
    """The kernel's environment: no GPU visible (committed outputs are a CPU run's), a scratch
    matplotlib cache."""
    return {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}


def run(nb: nbformat.NotebookNode, timeout: int = CELL_TIMEOUT) -> nbformat.NotebookNode:
    """Execute ``nb`` in a scratch copy of this folder (recordings included; autosave files and the
    like stay out of the repository) and return it with its outputs."""
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="pgstudio-notebooks-") as tmp:
        work = Path(tmp) / "notebooks"
        shutil.copytree(HERE, work, ignore=shutil.ignore_patterns("*.ipynb", "*.pgstudio-autosave.json",
                                                                   "__pycache__", ".ipynb_checkpoints"))
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=False,
                                extra_arguments=list(KERNEL_ARGS), resources={"metadata": {"path": str(work)}})
        client.execute(env=kernel_env())
    return tidy(nb)


WIDGET, NO_WIDGET = _notebook_save.WIDGET, _notebook_save.NO_WIDGET


def tidy(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """What a run leaves that is not worth keeping (``pgstudio.studio._notebook_save.tidy``, the
    same the save hook of ``make lab`` applies): timestamps, stream text split however the kernel
    flushed it, widget views and state (their state is not saved, so a reader would see "model not
    found"; the text or HTML the object gives for a page without widgets stays), the Python version."""
    return _notebook_save.tidy(nb)


def executed(name: str) -> nbformat.NotebookNode:
    return run(notebook(NOTEBOOKS[name]))


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


# What differs between two runs of the same notebook, and is not what it teaches.
_VOLATILE = [
    (re.compile(r"\b\d+(?:\.\d+)?(?:e-?\d+)?\s?(?:s|ms|us|µs|seconds?)\b"), "<time>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x<addr>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<id>"),
    (re.compile(r"\S*pgstudio-notebooks-\w+\S*"), "<scratch>"),
    (re.compile(r"\d+(?:\.\d+)?\s?(?:states|transitions)/s"), "<rate>"),
]
_TAGS = re.compile(r"<[^>]+>")
_TEXT = ("text/plain", "text/html", "text/markdown")


def normalise(text: str, html: bool = False) -> str:
    if html:
        text = unescape(_TAGS.sub(" ", text))
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return " ".join(text.split())


def outline(nb: nbformat.NotebookNode) -> list[tuple]:
    """A notebook by structure: per cell its type and source, and per output its type, mimetypes
    and text (timings, addresses, ids and scratch paths blanked; pictures by type only; a stream
    as one text however the kernel happened to flush it)."""
    out = []
    for cell in nb.cells:
        outputs: list[tuple] = []
        for o in cell.get("outputs", []):
            if o.output_type == "stream":
                if outputs and outputs[-1][:2] == ("stream", o.name):
                    outputs[-1] = ("stream", o.name, normalise(outputs[-1][2] + " " + o.text))
                else:
                    outputs.append(("stream", o.name, normalise(o.text)))
            elif o.output_type == "error":
                outputs.append(("error", o.ename, normalise(o.evalue)))
            else:
                data = o.get("data", {})
                texts = tuple((m, normalise(data[m], html=m == "text/html")) for m in sorted(data) if m in _TEXT)
                outputs.append((o.output_type, tuple(sorted(data)), texts))
        out.append((cell.cell_type, cell.source, tuple(outputs)))
    return out


def same_cells(a: nbformat.NotebookNode, b: nbformat.NotebookNode) -> bool:
    """Same cells (types, sources, ids) and kernel, outputs aside."""
    def cells(nb: nbformat.NotebookNode) -> list[tuple]:
        return [(c.cell_type, c.source, c.get("id")) for c in nb.cells]

    return cells(a) == cells(b) and a.metadata.get("kernelspec") == b.metadata.get("kernelspec")


def _modes_svg() -> str:
    from pgstudio import examples
    from pgstudio.render import modes_svg

    return modes_svg(examples.merge_gemm().group("ab"))


#: Figures of the documentation, written with the notebooks: path from the repository root ->
#: (the page that shows it, how to draw it).
FIGURES = {"docs/modes.svg": ("docs/model.md", _modes_svg)}


def main(argv: list[str]) -> int:
    names = [a for a in argv if not a.startswith("-")] or list(NOTEBOOKS)
    unknown = [n for n in names if n not in NOTEBOOKS]
    if unknown:
        print(f"no notebook {', '.join(unknown)}; notebooks: {', '.join(NOTEBOOKS)}")
        return 2
    if "--check" in argv:
        stale = [n for n in names if not (HERE / f"{n}.ipynb").exists()
                 or not same_cells(nbformat.read(HERE / f"{n}.ipynb", as_version=4), notebook(NOTEBOOKS[n]))]
        if stale:
            print(f"out of date with notebooks/_build.py: {', '.join(stale)}; run make notebooks")
            return 1
        return 0
    for name in names:
        path = HERE / f"{name}.ipynb"
        print(f"running {name} ...", flush=True)
        path.write_text(render(executed(name)))
        print(f"  wrote {path.name}: {path.stat().st_size / 1024:,.0f} KiB", flush=True)
    if names == list(NOTEBOOKS):
        for rel, (_page, draw) in FIGURES.items():
            path = HERE.parent / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(draw())
            print(f"wrote {rel}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""How long the analysis core takes on a mid-sized design: ``validate()`` + ``barrier_layout()``.

The design has 20 resources and 6 groups (2 Merge, 2 Fork, 2 FusedMerge of two tma tiles
each), 2 gmem inputs, 6 outputs, and the tasks that drive them, and it is valid (the code
generator's rules included).  The studio re-runs
both after every edit, so the target is <= 10 ms on a 2-core machine.

    python benchmarks/analyze.py [--repeat 200]
"""

from __future__ import annotations

import argparse
import statistics
import time

from pgstudio import (CooperativeGroup, Design, GmemTensor, MemoryResource, PipelineGroup, PipelineGroupMode, Task,
                      barrier_layout, create_tma_async_pipeline_cfg, domain_loop, schedule)
from pgstudio.examples import (consume_store_schedule, fused_store_schedule, load_schedule,
                               merge_store_schedule)
from pgstudio.model import Agent, Compute

TARGET_MS = 10.0


@schedule
def fork_load(src, group):
    with domain_loop(0, "num_tiles", 1):
        for m in group.member_names:
            group.member(m).acquire()
        group.member(group.member_names[0]).load(src)
        group.member(group.member_names[1]).load(src)
        group.commit()


def build() -> Design:
    """20 resources (12 smem tiles in 6 groups, 2 gmem inputs, 6 outputs), 6 groups, 18 tasks; each
    consumer task stores its own output, so the streaming generator builds it."""
    wg = CooperativeGroup(Agent.Warp, 2)
    cfg = create_tma_async_pipeline_cfg(num_stages=4, num_bytes=4096, consumer_group=wg)
    gin = [GmemTensor(f"gin{i}") for i in range(2)]
    resources, graph, groups, tasks = [*gin], {}, [], []
    warp = 0

    def task(name, warps, src, dst, sched):
        nonlocal warp
        tasks.append(Task(name, warp, warps, src, dst, sched))
        warp += warps

    def output(name, deps):
        out = GmemTensor(name, compute=Compute("store", " + ".join(r.name for r in deps)))
        resources.append(out)
        graph[out.name] = [r.name for r in deps]
        return out

    modes = [PipelineGroupMode.Merge, PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge,
             PipelineGroupMode.FusedMerge, PipelineGroupMode.Fork, PipelineGroupMode.Fork]
    for gi, mode in enumerate(modes):
        a, b = (MemoryResource(f"s{gi}_{k}", cfg, Compute("copy")) for k in "ab")
        resources += [a, b]
        g = PipelineGroup(f"g{gi}", [a, b], mode)
        groups.append(g)
        src = gin[gi % 2]
        graph[a.name], graph[b.name] = [src.name], [src.name]
        if mode is PipelineGroupMode.Fork:
            task(f"load{gi}", 1, [src], [a, b], fork_load(src, g))
            for m in (a, b):
                out = output(f"gout{gi}{m.name[-1]}", [m])
                task(f"use{gi}{m.name[-1]}", 2, [m], [out], consume_store_schedule(g.member(m.name), out))
        else:
            out = output(f"gout{gi}", [a, b])
            task(f"load{gi}a", 1, [src], [a], load_schedule(src, g.member(a.name)))
            task(f"load{gi}b", 1, [src], [b], load_schedule(src, g.member(b.name)))
            task(f"use{gi}", 2, [a, b], [out], (merge_store_schedule if mode is PipelineGroupMode.Merge else fused_store_schedule)(out, g))
    return Design("bench16", resources, graph, groups, tasks, {"num_tiles": 64})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    design = build()
    report = design.validate()
    layout = barrier_layout(design)
    times = {"validate": [], "barrier_layout": [], "both": []}
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        design.validate()
        t1 = time.perf_counter()
        barrier_layout(design)
        t2 = time.perf_counter()
        times["validate"].append(t1 - t0)
        times["barrier_layout"].append(t2 - t1)
        times["both"].append(t2 - t0)
    print(f"design: {design.summary()}; {len(report.errors)} error(s); {layout.num_barriers} barriers")
    print(f"{'step':<16} {'median ms':>10} {'min ms':>8} {'max ms':>8}")
    for step, ts in times.items():
        print(f"{step:<16} {1e3 * statistics.median(ts):>10.3f} {1e3 * min(ts):>8.3f} {1e3 * max(ts):>8.3f}")
    med = 1e3 * statistics.median(times["both"])
    print(f"validate() + barrier_layout(): median {med:.3f} ms (target <= {TARGET_MS:.0f} ms: "
          f"{'met' if med <= TARGET_MS else 'MISSED'}) over {args.repeat} runs")


if __name__ == "__main__":
    main()

"""How long the analysis core takes on a mid-sized design: ``validate()`` + ``barrier_layout()``.

The design has 20 resources and 6 groups (2 Merge, 2 Fork, 2 FusedMerge of two tma tiles
each), 2 gmem inputs, 6 outputs, and the tasks that drive them, and it is valid (the code
generator's rules included).  The studio re-runs
both after every edit, so the target is <= 10 ms on a 2-core machine.

``--scale`` measures how validation grows instead: ``validate()`` of designs whose schedules
hold 1k .. 16k steps (``unrolled(steps)``: merge_copy with every task moving many tiles per
loop iteration), of chains of 2 .. 31 groups, and of designs with absurd counts (10^8 warps,
10^8 stages), which are reported by value without work per warp or per stage.  Targets: 16k
steps under 0.5 s, and time per step about constant.

    python benchmarks/analyze.py [--repeat 200]
    python benchmarks/analyze.py --scale [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from pgstudio import (CooperativeGroup, Design, DesignError, GmemTensor, MemoryResource, PipelineGroup, PipelineGroupMode, Task,
                      barrier_layout, create_tma_async_pipeline_cfg, domain_loop, schedule)
from pgstudio import examples
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


@schedule
def unrolled_load(src, dst, unroll):
    with domain_loop(0, "num_tiles", 1):
        for _ in range(unroll):
            dst.try_acquire()
            dst.acquire()
            dst.load(src)
            dst.commit()


@schedule
def unrolled_store(output, group, unroll):
    a, b = group.member_names
    with domain_loop(0, "num_tiles", 1):
        for _ in range(unroll):
            for m in (a, b):
                group.member(m).try_wait()
                group.member(m).wait()
            output.store(val_a=group.member(a).read(), val_b=group.member(b).read())
            group.release()


def unrolled(steps: int) -> Design:
    """merge_copy whose three tasks move ``steps // 16`` tiles per loop iteration: a design with
    ``steps`` schedule steps (16 per tile: 4 per loader, 8 for the store) that every rule passes
    up to 2,048 steps; from 4,096 its CUDA would pass NVRTC's budget (``codegen.source_size``)."""
    unroll = max(1, steps // 16)
    base = examples.merge_copy()
    ab = base.group("ab")
    gmem_a, gmem_b, gmem_d = (base.resource(n) for n in ("gmem_a", "gmem_b", "gmem_d"))
    tasks = [Task("load_a", 0, 1, [gmem_a], [ab.smem_a], unrolled_load(gmem_a, ab.smem_a, unroll)),
             Task("load_b", 1, 1, [gmem_b], [ab.smem_b], unrolled_load(gmem_b, ab.smem_b, unroll)),
             Task("store", 4, 4, ["smem_a", "smem_b"], [gmem_d], unrolled_store(gmem_d, ab, unroll))]
    return base.replace(name=f"unrolled_{unroll}", tasks=tasks)


def _best(fn, repeat: int) -> float:
    """The least CPU seconds of ``repeat`` calls (other processes on the machine do not count)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def scale(repeat: int) -> bool:
    print(f"{'design':<22} {'steps':>7} {'validate ms':>12} {'us/step':>8}  diagnostics   (CPU time, best of {repeat})")
    rows = []
    for steps in (1024, 2048, 4096, 8192, 16384):
        d = unrolled(steps)
        n = sum(len(list(t.schedule.steps())) for t in d.tasks)
        sec = _best(d.validate, repeat)
        rows.append((n, sec))
        print(f"{d.name:<22} {n:>7} {1e3 * sec:>12.1f} {1e6 * sec / n:>8.2f}  {d.validate().codes() or 'none'}")
    for groups in (2, 8, 16, examples.MAX_CHAIN_GROUPS):
        d = examples.chain(groups)
        n = sum(len(list(t.schedule.steps())) for t in d.tasks)
        sec = _best(d.validate, repeat)
        print(f"{d.name:<22} {n:>7} {1e3 * sec:>12.1f} {1e6 * sec / n:>8.2f}  {d.validate().codes() or 'none'}")
    base = examples.merge_copy()
    store = base.task("store")
    try:  # a count past the value domain is refused when the object is built, before any rule runs
        Task("store", 4, 10**8, store.src_resources, store.dst_resources, store.schedule)
    except DesignError as e:
        print(f"{'10^8 warps':<22} {'':>7} {'refused':>12} {'':>8}  {e.code}: {e}")
    absurd = {"warps 31-62 (span 63)": base.with_task(Task("store", 31, 32, store.src_resources,
                                                              store.dst_resources, store.schedule)),
              "64 stages of 8 KiB": examples.merge_copy(num_stages=64, tile_bytes=8192)}
    for label, d in absurd.items():
        sec = _best(d.validate, repeat)
        print(f"{label:<22} {'':>7} {1e3 * sec:>12.1f} {'':>8}  {d.validate().codes()}")
    (n0, t0), (n1, t1) = rows[0], rows[-1]
    growth = (t1 / t0) / (n1 / n0)
    ok = t1 < 0.5 and growth < 1.5
    print(f"16k steps: {1e3 * t1:.0f} ms (target < 500 ms); from {n0} to {n1} steps the time grew {t1 / t0:.1f}x for "
          f"{n1 / n0:.0f}x the steps ({'about linear' if growth < 1.5 else 'FASTER THAN LINEAR'}): "
          f"{'met' if ok else 'MISSED'}")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--scale", action="store_true", help="validation time against schedule length and counts")
    args = parser.parse_args()
    if args.scale:
        raise SystemExit(0 if scale(args.repeat or 5) else 1)
    args.repeat = args.repeat or 200
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

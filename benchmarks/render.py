"""How long the three pictures of a 16-resource design take, after the first import.

The design is the one ``benchmarks/analyze.py`` builds (16 resources, 6 groups, 18 tasks).  Each
round draws the dependency graph (graphviz -> SVG), the barrier layout (matplotlib -> SVG) and
the timeline of ``--iterations`` iterations (matplotlib -> SVG).  The timeline comes from the
simulator when pgstudio has one, otherwise from a stand-in with the same number of events per
task and iteration (sync, work, arrive, phase flip, some blocking).  Target: the median round
<= 300 ms of wall time.  CPU time (this process and its children) is printed too: on a busy
machine it is the steadier figure.

    python benchmarks/render.py [--repeat 15] [--iterations 8]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyze import build  # noqa: E402  (the shared 16-resource design)

from pgstudio import barrier_layout  # noqa: E402
from pgstudio.analysis.timeline import ARRIVE, BLOCKED, PHASE_FLIP, SYNC, WORK, Event, Timeline  # noqa: E402

TARGET_MS = 300.0


def stand_in_timeline(design, iterations: int) -> Timeline:
    """Events shaped like a simulated run: per task and iteration one wait or acquire (blocked
    every third time), the work, a commit or release, an arrive and a phase flip."""
    layout = barrier_layout(design)
    events = []
    for lane, t in enumerate(design.tasks):
        staged = [r for r in (*t.src_resources, *t.dst_resources) if design.resource(r).pipeline_config]
        consumer = bool(set(staged) & set(t.src_resources))
        res = staged[0]
        wait_set = layout.set_for(res, "full" if consumer else "empty").name
        arrive_set = layout.set_for(res, "empty" if consumer else "full").name
        stages = design.resource(res).num_stages
        now = 3.0 * lane
        for k in range(iterations):
            stage, phase = k % stages, (k // stages) & 1
            w = (t.warp_idx, t.num_warps)
            if k % 3 == 2:
                events.append(Event(t.name, "blocked", BLOCKED, now, now + 12, res, wait_set, -1, stage, phase, k, w))
                now += 12
            events.append(Event(t.name, "wait" if consumer else "acquire", SYNC, now, now + 2, res, wait_set, -1,
                                stage, phase, k, w))
            events.append(Event(t.name, "read" if consumer else "load", WORK, now + 2, now + 32, res, "", -1, stage,
                                -1, k, w))
            events.append(Event(t.name, "release" if consumer else "commit", SYNC, now + 32, now + 34, res,
                                arrive_set, -1, stage, phase, k, w))
            events.append(Event(t.name, "arrive", ARRIVE, now + 34, now + 34, res, arrive_set, -1, stage, phase, k, w))
            events.append(Event(t.name, "phase_flip", PHASE_FLIP, now + 34, now + 34, res, arrive_set, -1, stage,
                                phase, k, w))
            now += 36
    tasks = [(t.name, t.warp_idx, t.num_warps) for t in design.tasks]
    return Timeline.from_events(design.name, events, tasks, source="stand-in")


def cpu_seconds() -> float:
    """CPU time of this process and its children (the graphviz executable runs as a child)."""
    try:
        import resource
    except ImportError:  # not on Windows: this process only
        return time.process_time()
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timeline_of(design, iterations: int) -> Timeline:
    try:
        from pgstudio.analysis.simulate import simulate
    except ImportError:
        return stand_in_timeline(design, iterations)
    return simulate(design, iterations=iterations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--iterations", type=int, default=8)
    args = parser.parse_args()

    t_import = time.perf_counter()
    from pgstudio.render import _graphviz, barrier_figure, dependency_graph, timeline_figure, to_svg
    design = build()
    report = design.validate()
    timeline = timeline_of(design, args.iterations)
    steps = {
        "graph": lambda: dependency_graph(design, report).pipe(format="svg"),
        "barriers": lambda: to_svg(barrier_figure(design)),
        "timeline": lambda: to_svg(timeline_figure(timeline)),
    }
    for fn in steps.values():  # first import of graphviz / matplotlib and font caches
        fn()
    first_ms = 1e3 * (time.perf_counter() - t_import)

    times: dict[str, list[float]] = {name: [] for name in [*steps, "all three"]}
    cpu: dict[str, list[float]] = {name: [] for name in times}
    for _ in range(args.repeat):
        total = total_cpu = 0.0
        for name, fn in steps.items():
            t0, c0 = time.perf_counter(), cpu_seconds()
            fn()
            dt, dc = time.perf_counter() - t0, cpu_seconds() - c0
            times[name].append(dt)
            cpu[name].append(dc)
            total += dt
            total_cpu += dc
        times["all three"].append(total)
        cpu["all three"].append(total_cpu)

    print(f"design: {design.summary()}; {barrier_layout(design).num_barriers} barriers; "
          f"timeline: {timeline.source}, {len(timeline.events)} events, {args.iterations} iterations")
    print(f"graphviz executable: {_graphviz.select()}; first round with imports: {first_ms:.0f} ms")
    print(f"{'picture':<10} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'cpu median ms':>14}")
    for name, ts in times.items():
        print(f"{name:<10} {1e3 * statistics.median(ts):>10.1f} {1e3 * min(ts):>8.1f} {1e3 * max(ts):>8.1f} "
              f"{1e3 * statistics.median(cpu[name]):>14.1f}")
    med = 1e3 * statistics.median(times["all three"])
    print(f"all three pictures: median {med:.1f} ms (target <= {TARGET_MS:.0f} ms: "
          f"{'met' if med <= TARGET_MS else 'MISSED'}) over {args.repeat} rounds")
    if statistics.median(times["all three"]) > 1.3 * statistics.median(cpu["all three"]):
        print("note: wall time well above CPU time: the machine is busy, so the wall figures are inflated")


if __name__ == "__main__":
    main()

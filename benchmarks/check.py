"""The exhaustive checker: states and wall time of the reduced search against the plain one.

Per canonical design at 4 stages x 8 iterations (inner k loops 2): the states the
partial-order-reduced search explores and its wall time, the states of the plain breadth-first
search (the reference) and its wall time.  The plain search stops at ``--cap`` states; a capped
count is printed as ">= N (capped)", so the ratio is then a lower bound.  Targets: <= 1 s per
design for the reduced search on a 2-core machine, >= 10x fewer states than the plain search.

A second table checks the planted mistakes (``pgstudio.mistakes``) with both searches and
prints both verdicts: they must be identical.

A third table measures how the reduced search scales with the depth of a design: generated
chains of 2 ... 31 groups (``examples.chain``: the deepest a 32-warp block holds) of each mode,
at ``--stages`` stages and ``--iterations`` iterations.  It prints the resources, the states, the
whole ``check()`` call's wall and CPU seconds and the CPU microseconds per state, which must stay
about flat as chains grow (the states grow linearly).  Target: the deepest chain of every mode
in <= 1 s of CPU.

    python benchmarks/check.py [--iterations 8] [--stages 4] [--cap 300000] [--mistake-iterations 4]
                               [--chains 2,4,8,16,31]
"""

from __future__ import annotations

import argparse
import time

from pgstudio import examples, mistakes
from pgstudio.analysis.check import check
from pgstudio.model.group import PipelineGroupMode

TARGET_S = 1.0
TARGET_RATIO = 10.0


def _count(v) -> str:
    return f">= {v.states} (capped)" if v.incomplete else str(v.states)


def canonical(iterations: int, stages: int, inner: int, cap: int) -> bool:
    rows = [("design", "verdict", "reduced states", "reduced s", "plain states", "plain s", "ratio")]
    ok = True
    for name in examples.CANONICAL:
        design = examples.example(name, num_stages=stages)
        red = check(design, iterations, inner=inner, max_states=cap)
        plain = check(design, iterations, inner=inner, method="bfs", max_states=cap)
        ratio = plain.states / max(red.states, 1)
        ok &= red.safe and red.seconds <= TARGET_S and ratio >= TARGET_RATIO and plain.status in ("SAFE", "INCOMPLETE")
        rows.append((name, red.status, str(red.states), f"{red.seconds:.3f}", _count(plain), f"{plain.seconds:.2f}",
                     f"{'>= ' if plain.incomplete else ''}{ratio:.0f}x"))
    _print(rows)
    return ok


def planted(iterations: int, stages: int, inner: int, cap: int) -> bool:
    rows = [("mistake", "expected", "reduced verdict", "states", "witness", "plain verdict", "states", "witness")]
    ok = True
    for name, (build, kind) in mistakes.MISTAKES.items():
        design = build(num_stages=stages)
        red = check(design, iterations, inner=inner, max_states=cap)
        plain = check(design, iterations, inner=inner, method="bfs", max_states=cap)
        same = (red.status, red.kind) == (plain.status, plain.kind) == ("UNSAFE", kind)
        ok &= same
        rows.append((name, kind, f"{red.status} {red.kind}", str(red.states), str(len(red.witness)),
                     f"{plain.status} {plain.kind}", _count(plain), str(len(plain.witness))))
    _print(rows)
    return ok


def chains(iterations: int, stages: int, sizes: list[int]) -> bool:
    rows = [("mode", "groups", "resources", "tasks", "verdict", "states", "wall s", "cpu s", "cpu us/state")]
    ok = True
    for mode in PipelineGroupMode:
        for n in sizes:
            design = examples.chain(n, mode, num_stages=stages)
            wall, cpu = time.perf_counter(), time.process_time()
            v = check(design, iterations)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if n == max(sizes):
                ok &= v.safe and cpu <= TARGET_S
            rows.append((mode.name, str(n), str(len(design.resources)), str(len(design.tasks)), v.status,
                         str(v.states), f"{wall:.3f}", f"{cpu:.3f}", f"{cpu / max(v.states, 1) * 1e6:.0f}"))
    _print(rows)
    return ok


def _print(rows) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for k, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=8)
    p.add_argument("--stages", type=int, default=4)
    p.add_argument("--inner", type=int, default=2)
    p.add_argument("--cap", type=int, default=300_000, help="state cap of both searches")
    p.add_argument("--mistake-iterations", type=int, default=8)
    p.add_argument("--chains", default=f"2,4,8,16,{examples.MAX_CHAIN_GROUPS}", help="chain depths (groups)")
    args = p.parse_args()
    print(f"canonical designs, {args.stages} stages x {args.iterations} iterations (inner loops {args.inner}):")
    a = canonical(args.iterations, args.stages, args.inner, args.cap)
    print()
    print(f"planted mistakes, {args.stages} stages x {args.mistake_iterations} iterations:")
    b = planted(args.mistake_iterations, args.stages, args.inner, args.cap)
    print()
    sizes = [int(x) for x in args.chains.split(",")]
    print(f"chains of groups, {args.stages} stages x {args.iterations} iterations (reduced search):")
    c = chains(args.iterations, args.stages, sizes)
    print()
    print(f"targets (reduced <= {TARGET_S:.0f} s, >= {TARGET_RATIO:.0f}x fewer states, SAFE): {'met' if a else 'MISSED'}; "
          f"identical verdicts on planted mistakes: {'yes' if b else 'NO'}; "
          f"deepest chains SAFE in <= {TARGET_S:.0f} s of CPU: {'met' if c else 'MISSED'}")


if __name__ == "__main__":
    main()

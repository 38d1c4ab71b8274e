#!/usr/bin/env python3
"""Source size and NVRTC time of ever deeper designs: ``examples.chain(n)`` for n = 2 .. 31 groups.

Each group of a chain is computed from both members of the group before, so a generator that
substitutes expressions textually doubles its output per group (such a generator, measured, wrote
2.3 MB at 16 groups and took more than 400 s of NVRTC).  pgstudio names every produced value once, so the emitted
source and the compile time grow linearly.  Targets: the deepest chain (31 groups: one warp per
task fills a 32-warp block) under 1 MB of CUDA and under 5 s of NVRTC on one core.

NVRTC runs in this process, pinned to one core (Linux); the table gives the best of
``--repeat`` compiles in CPU seconds (what the compile costs, whatever else the machine runs)
and the wall seconds of that compile.  No GPU is needed, only the NVRTC wheels.

    PYTHONPATH=$PWD python3 benchmarks/chain_compile.py [--modes Merge,Fork,FusedMerge] [--dtype float32]
        [--depths 2,4,8,12,16,20,24,28,31] [--repeat 3] [--emit-only]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from pgstudio import examples
from pgstudio.codegen import emit

MAX_BYTES = 1 << 20
MAX_NVRTC_S = 5.0


def nvrtc_seconds(src, repeat: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the fastest of ``repeat`` compiles of ``src`` for its arch."""
    from pgstudio.runtime.compile import compile_cubin
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        compile_cubin(src)
        best = min(best, (time.process_time() - c0, time.perf_counter() - w0))
    return best


def measure(mode: str, dtype: str, depths: list[int], repeat: int, emit_only: bool) -> list[dict]:
    rows = []
    print(f"{mode} chains, {dtype}")
    print(f"{'groups':>6} {'tile B':>6} {'source B':>10} {'B/group':>8} {'emit ms':>8} {'nvrtc cpu s':>11} "
          f"{'nvrtc wall s':>12}")
    for n in depths:
        design = examples.chain(n, mode, dtype=dtype)
        t0 = time.perf_counter()
        src = emit(design)
        emit_ms = 1e3 * (time.perf_counter() - t0)
        cpu, wall = (float("nan"), float("nan")) if emit_only else nvrtc_seconds(src, repeat)
        row = {"groups": n, "tile": design.resource("s0_a").pipeline_config.num_bytes, "bytes": len(src.code),
               "emit_ms": emit_ms, "cpu_s": cpu, "wall_s": wall}
        rows.append(row)
        print(f"{n:>6} {row['tile']:>6} {row['bytes']:>10,} {row['bytes'] / n:>8,.0f} {emit_ms:>8.1f} {cpu:>11.2f} "
              f"{wall:>12.2f}", flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="Merge")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--depths", default=f"2,4,8,12,16,20,24,28,{examples.MAX_CHAIN_GROUPS}")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--emit-only", action="store_true", help="skip NVRTC (source sizes and emit times only)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    depths = sorted(int(d) for d in args.depths.split(","))
    ok = True
    for mode in args.modes.split(","):
        rows = measure(mode, args.dtype, depths, args.repeat, args.emit_only)
        deepest = rows[-1]
        small = deepest["bytes"] < MAX_BYTES
        fast = args.emit_only or deepest["cpu_s"] < MAX_NVRTC_S
        print(f"deepest ({deepest['groups']} groups): {deepest['bytes']:,} B of source (target < {MAX_BYTES:,}: "
              f"{'met' if small else 'MISSED'})" + ("" if args.emit_only else
                                                     f", {deepest['cpu_s']:.2f} s NVRTC on one core (target < "
                                                     f"{MAX_NVRTC_S:.0f} s: {'met' if fast else 'MISSED'})"))
        print()
        ok = ok and small and fast
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Sweeps at scale: compile throughput on CPU workers, and the timed merge_copy sweep on a GPU.

``--part compile`` (any machine with the NVRTC wheels): a 200-variant compile-only sweep of
merge_copy (stages 2 3 4 6 8 x 512..8192 B per stage x designed / FusedMerge x four code-option
sets), each variant built, validated, generated and NVRTC-compiled into an empty kernel cache,
once with 1 CPU worker and once with all of them.  It reports variants per second and the ratio
(target: at least 0.6 x the core count).

``--part gpu`` (a GPU): merge_copy over 4 stage counts x 4 stage sizes x 3 groupings, every
variant compiled, verified on fresh random inputs with a poisoned output, and timed (median of
``--rounds``).  Targets: all 48 verified, the whole sweep under two minutes.  ``--ray ADDRESS``
runs it on Ray (``local`` starts an instance here) instead of the worker processes; ``--out DIR``
saves the heatmap.

    PYTHONPATH=$PWD python3 benchmarks/sweep.py [--part compile|gpu|all] [--n 134217728] [--rounds 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from pgstudio import examples
from pgstudio.runtime._cupy import gpu_available
from pgstudio.runtime.executor.embedded import EmbeddedExecutor, available_cpus
from pgstudio.explore.sweep import COMPILED, OK, sweep

STAGES = (2, 4, 6, 8)
TILES = (1024, 2048, 4096, 8192)
GROUPINGS = ("designed", "ungrouped", "FusedMerge")
#: The 200-variant compile space: 5 x 5 x 2 x 4.
C_STAGES = (2, 3, 4, 6, 8)
C_TILES = (512, 1024, 2048, 4096, 8192)
C_GROUPINGS = ("designed", "FusedMerge")
C_OPTIONS = ("default", "store=cs", "load_hint=evict_first", "store=cs,load_hint=evict_first")


def compile_throughput(workers: int, options: tuple[str, ...] = C_OPTIONS) -> tuple[float, float, int]:
    """(seconds, variants per second, variants compiled) of the compile sweep (50 variants per code-option
    set, 200 with all four) on ``workers``."""
    with tempfile.TemporaryDirectory(prefix="pgstudio-cache-") as cache:
        old = os.environ.get("PGSTUDIO_CACHE")
        os.environ["PGSTUDIO_CACHE"] = cache  # empty: every variant really compiles; workers inherit it
        ex = EmbeddedExecutor(cpu_workers=workers, gpus=[])
        try:
            t0 = time.perf_counter()
            table = sweep(examples.merge_copy(), C_STAGES, C_TILES, C_GROUPINGS, options=options, executor=ex,
                          compile_only=True, progress=False)
            took = time.perf_counter() - t0
        finally:
            ex.close()
            if old is None:
                os.environ.pop("PGSTUDIO_CACHE", None)
            else:
                os.environ["PGSTUDIO_CACHE"] = old
    compiled, want = table.count(COMPILED), len(C_STAGES) * len(C_TILES) * len(C_GROUPINGS) * len(options)
    if len(table.rows) != want or compiled != want:
        raise SystemExit(f"expected {want} compiled variants, got {compiled} of {len(table.rows)}:\n{table.table()}")
    if any(r.cubin_bytes <= 0 for r in table.rows):
        raise SystemExit("a variant has no cubin")
    return took, compiled / took, compiled


def part_compile(option_sets: int = len(C_OPTIONS)) -> bool:
    cores = available_cpus()
    options = C_OPTIONS[:option_sets]
    n = len(C_STAGES) * len(C_TILES) * len(C_GROUPINGS) * len(options)
    print(f"compile throughput: {n}-variant compile-only sweep of merge_copy, empty kernel cache, {cores} core(s)")
    one_s, one_rate, _ = compile_throughput(1, options)
    print(f"  1 CPU worker   : {one_s:6.1f} s  {one_rate:5.2f} variants/s")
    all_s, all_rate, _ = compile_throughput(cores, options)
    print(f"  {cores} CPU worker(s): {all_s:6.1f} s  {all_rate:5.2f} variants/s")
    ratio = all_rate / one_rate
    target = 0.6 * cores
    ok = ratio >= target
    print(f"  speed-up {ratio:.2f}x with {cores} workers (target >= {target:.1f}x): {'PASS' if ok else 'MISS'}")
    try:
        load = os.getloadavg()
        print(f"  (load average during the run: {load[0]:.1f}; other processes on the machine lower the ratio)")
    except OSError:
        pass
    return ok


def part_gpu(args: argparse.Namespace) -> bool:
    if args.ray is None and not gpu_available():
        print("gpu part: no GPU here, skipped")
        return True
    executor = None
    if args.ray is not None:
        from pgstudio.runtime.executor.cluster import RayExecutor
        executor = RayExecutor(args.ray)
    t0 = time.perf_counter()
    table = sweep(examples.merge_copy(num_elements=args.n), STAGES, TILES, GROUPINGS, n=args.n, rounds=args.rounds,
                  executor=executor, progress=False)
    took = time.perf_counter() - t0
    print(table.table())
    if args.out:
        from pgstudio.render import to_png
        from pgstudio.render.sweep import sweep_figure
        path = Path(args.out) / "sweep_merge_copy.png"
        path.write_bytes(to_png(sweep_figure(table)))
        print(f"wrote {path}")
    verified = sum(r.status == OK for r in table.rows)
    ok = verified == 48 == len(table.rows) and took < 120
    print()
    print(f"summary: {verified}/{len(table.rows)} variants verified and timed in {took:.1f} s on {table.executor} "
          f"(targets: 48/48, < 120 s): {'PASS' if ok else 'MISS'}")
    if executor is not None:
        executor.close()
    return ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", choices=("compile", "gpu", "all"), default="all")
    p.add_argument("--n", type=int, default=1 << 27, help="fp32 elements per operand (gpu part)")
    p.add_argument("--rounds", type=int, default=20, help="timed runs per variant (gpu part)")
    p.add_argument("--ray", help="run the gpu part on Ray: auto, local or a cluster address")
    p.add_argument("--out", help="folder for the heatmap PNG (gpu part)")
    p.add_argument("--option-sets", type=int, choices=range(1, len(C_OPTIONS) + 1), default=len(C_OPTIONS),
                   help="code-option sets in the compile part: 50 variants each (default all four: 200)")
    args = p.parse_args(argv)
    ok = True
    if args.part in ("compile", "all"):
        ok &= part_compile(args.option_sets)
    if args.part in ("gpu", "all"):
        ok &= part_gpu(args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

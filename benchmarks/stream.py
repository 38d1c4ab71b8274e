#!/usr/bin/env python3
"""Streaming kernels on the GPU: pgstudio's generated code against the bandwidth ceiling and CuPy.

1. merge_copy, D = A + B, fp32, 1 GiB per operand: the generated Merge kernel, its ungrouped
   twin, ``cp.add(a, b, out=d)``, CuPy's ElementwiseKernel and a device-to-device copy (the
   bandwidth ceiling), interleaved in one process.
2. 256-byte stages, where barriers cost the most: Merge and FusedMerge against their ungrouped
   twins (every kernel on the same arrays, interleaved).

Targets: merge_copy >= 0.97x device-copy bandwidth and >= 1.6x cp.add; at 256-byte
stages FusedMerge >= 1.15x and Merge >= 1.03x their twins.  ``--sweep`` also times stage sizes,
stage counts, store hints and occupancy, to see where the defaults stand.

    PYTHONPATH=$PWD python3 benchmarks/stream.py [--sweep] [--rounds 30]
"""

from __future__ import annotations

import argparse
import sys
import time

from pgstudio import examples
from pgstudio import benchmark
from pgstudio.runtime.bench import interleave, kernel_contender
from pgstudio.runtime.stream_run import StreamWorkload

GIB_FP32 = 1 << 28  # elements of 1 GiB of float32
SMALL_N = 1 << 26  # 256 MiB per operand for the 256-byte-stage comparison
SMALL_STAGES = 16  # stages of 256 B (4 KiB of each operand in flight per block)
#: The headline design's stages: 4 KiB x 6 (picked with --sweep on an H200: 4 blocks per SM keep
#: more loads and stores in flight than the example's default 8 KiB x 4 at 3 blocks per SM).
BIG_TILE, BIG_STAGES = 4096, 6


def headline(rounds: int) -> dict:
    design = examples.merge_copy(num_stages=BIG_STAGES, tile_bytes=BIG_TILE, num_elements=GIB_FP32)
    print(f"merge_copy with {BIG_STAGES} stages of {BIG_TILE} B per operand")
    t = benchmark(design, rounds=rounds, progress=False)
    print(t.table())
    print()
    return {"copy": t.bandwidth_ratio("merge_copy", "device copy"), "cp.add": t.speedup("merge_copy", "cp.add"),
            "twin": t.speedup("merge_copy", "merge_copy_ungrouped"), "GB/s": t.row("merge_copy").rate}


def small_stages(rounds: int, stages: int) -> dict:
    """Merge, FusedMerge and the ungrouped twin (both twins are the same kernel) on one workload."""
    merge = examples.merge_copy(num_stages=stages, tile_bytes=256, num_elements=SMALL_N)
    fused = examples.fused_merge_copy(num_stages=stages, tile_bytes=256, num_elements=SMALL_N)
    work = StreamWorkload.make(merge, SMALL_N, "float32")
    vs = [kernel_contender(merge, work, "Merge", "shared empty barrier"),
          kernel_contender(fused, work, "FusedMerge", "shared full + empty barriers"),
          kernel_contender(examples.ungrouped(merge), work, "ungrouped", "per-resource barriers")]
    interleave(vs, rounds=rounds, progress=False)
    base = vs[2].median_ms
    print(f"256-byte stages x {stages}, {SMALL_N:,} fp32 elements per operand, medians of {rounds} interleaved runs")
    for v in vs:
        print(f"  {v.name:<11} {v.what:<30} {v.median_ms:8.4f} ms  {v.rate:7,.0f} GB/s  "
              f"{base / v.median_ms:5.3f}x ungrouped  (blocks/SM {v.launcher.blocks_per_sm})")
    print()
    return {"Merge": base / vs[0].median_ms, "FusedMerge": base / vs[1].median_ms}


def sweep(rounds: int) -> None:
    """Where the defaults stand: stage size / count, store hint, occupancy, watchdog cost."""
    n = GIB_FP32
    work = StreamWorkload.make(examples.merge_copy(), n, "float32")
    vs = []
    for tile in (4096, 8192, 16384):
        for stages in (3, 4, 6, 8):
            if 2 * tile * stages > 200 * 1024:  # does not fit in one block's shared memory
                continue
            d = examples.merge_copy(num_stages=stages, tile_bytes=tile, num_elements=n)
            vs.append(kernel_contender(d, work, f"{tile}Bx{stages}", "default"))
    d = examples.merge_copy(num_stages=BIG_STAGES, tile_bytes=BIG_TILE, num_elements=n)
    name = f"{BIG_TILE}Bx{BIG_STAGES}"
    vs.append(kernel_contender(d, work, f"{name} cs", "st.global.cs", tuning={"store": "cs"}))
    vs.append(kernel_contender(d, work, f"{name} ef", "L2 evict_first loads", tuning={"load_hint": "evict_first"}))
    vs.append(kernel_contender(d, work, f"{name} ef+cs", "both hints", tuning={"load_hint": "evict_first", "store": "cs"}))
    vs.append(kernel_contender(d, work, f"{name} nowd", "no watchdog", watchdog=False))
    for bps in (2, 3):
        vs.append(kernel_contender(d, work, f"{name} {bps}/SM", f"{bps} blocks per SM", blocks_per_sm=bps))
    interleave(vs, rounds=rounds, progress=False)
    print(f"sweep: merge_copy fp32, {n:,} elements per operand, medians of {rounds} interleaved runs")
    for v in sorted(vs, key=lambda v: v.median_ms):
        print(f"  {v.name:<16} {v.what:<20} {v.median_ms:8.4f} ms  {v.rate:7,.0f} GB/s  "
              f"blocks/SM {v.launcher.blocks_per_sm}  smem {v.launcher.src.smem_bytes}")
    print()
    small = []
    for stages in (4, 8, 16, 32):
        for build, label in ((examples.merge_copy, "Merge"), (examples.fused_merge_copy, "FusedMerge")):
            small.append((stages, label, build(num_stages=stages, tile_bytes=256, num_elements=SMALL_N)))
    work = StreamWorkload.make(small[0][2], SMALL_N, "float32")
    vs = []
    for stages, label, d in small:
        vs.append(kernel_contender(d, work, f"{label} x{stages}", "grouped"))
        if label == "Merge":
            vs.append(kernel_contender(examples.ungrouped(d), work, f"ungrouped x{stages}", "twin"))
    interleave(vs, rounds=rounds, progress=False)
    print(f"sweep: 256-byte stages, {SMALL_N:,} fp32 elements per operand")
    for v in vs:
        print(f"  {v.name:<16} {v.median_ms:8.4f} ms  {v.rate:7,.0f} GB/s  blocks/SM {v.launcher.blocks_per_sm}")
    print()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--stages", type=int, default=SMALL_STAGES, help="stages for the 256-byte comparison")
    p.add_argument("--sweep", action="store_true", help="also time stage sizes, counts, hints and occupancy")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    if args.sweep:
        sweep(args.rounds)
    big = headline(args.rounds)
    small = small_stages(args.rounds, args.stages)
    rows = [
        ("merge_copy fp32 1 GiB/operand vs device copy (bandwidth)", big["copy"], 0.97),
        ("merge_copy fp32 1 GiB/operand vs cp.add (speed)", big["cp.add"], 1.6),
        (f"merge_copy vs its ungrouped twin, {BIG_TILE}-byte stages (speed)", big["twin"], None),
        (f"Merge vs ungrouped, 256-byte stages x{args.stages} (speed)", small["Merge"], 1.03),
        (f"FusedMerge vs ungrouped, 256-byte stages x{args.stages} (speed)", small["FusedMerge"], 1.15),
    ]
    print(f"summary (merge_copy at {big['GB/s']:,.0f} GB/s; {time.perf_counter() - t0:.0f} s)")
    ok = True
    for label, value, target in rows:
        verdict = "" if target is None else ("  PASS" if value >= target else "  MISS")
        ok &= target is None or value >= target
        print(f"  {label:<62} {value:6.3f}x" + (f"  (target >= {target}){verdict}" if target else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

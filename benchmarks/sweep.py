#!/usr/bin/env python3
"""The design-space sweep on the GPU: merge_copy over 4 stage counts x 4 stage sizes x 3 groupings.

Groupings: as designed (Merge), ungrouped (per-resource barriers) and FusedMerge.  Every variant
is compiled, verified on the shared workload (fresh random inputs, poisoned output) and timed,
interleaved round by round.  Targets: all 48 verified, the whole sweep under two minutes.
``--out DIR`` saves the heatmap (``sweep_merge_copy.png``).

    PYTHONPATH=$PWD python3 benchmarks/sweep.py [--n 134217728] [--rounds 10] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pgstudio import examples
from pgstudio.runtime.sweep import OK, sweep

STAGES = (2, 4, 6, 8)
TILES = (1024, 2048, 4096, 8192)
GROUPINGS = ("designed", "ungrouped", "FusedMerge")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1 << 27, help="fp32 elements per operand")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--out", help="folder for the heatmap PNG")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    table = sweep(examples.merge_copy(num_elements=args.n), STAGES, TILES, GROUPINGS, n=args.n, rounds=args.rounds,
                  progress=False)
    took = time.perf_counter() - t0
    print(table.table())
    if args.out:
        from pgstudio.render import to_png
        path = Path(args.out) / "sweep_merge_copy.png"
        path.write_bytes(to_png(table.figure()))
        print(f"wrote {path}")
    verified = sum(r.status == OK for r in table.rows)
    print()
    print(f"summary: {verified}/{len(table.rows)} variants verified and timed in {took:.1f} s "
          f"(targets: 48/48, < 120 s): {'PASS' if verified == 48 == len(table.rows) and took < 120 else 'MISS'}")
    return 0 if verified == len(table.rows) and took < 120 else 1


if __name__ == "__main__":
    sys.exit(main())

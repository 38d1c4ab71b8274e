"""Good defaults without tuning: ``benchmark(examples.merge_copy())`` with no options.

    python benchmarks/defaults.py [--n ELEMENTS]

The first call finds the design's default tuning for this GPU by a short search (stages x bytes
per stage, every variant verified then timed; ``explore.tuning``) and caches it per device; the
table names the settings that ran.  The second call reads the cache and searches nothing.
Target: the tuned merge_copy moves at least 0.99x the bandwidth of a device-to-device copy.
"""

from __future__ import annotations

import argparse
import sys
import time

from pgstudio import examples
from pgstudio import benchmark

TARGET = 0.99


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None, help="elements per operand (default: the example's)")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--big", action="store_true", help="also at 1 GiB per operand, and fit the fixed cost per launch")
    args = ap.parse_args(argv)
    ratios = []
    for call in ("first call", "second call"):
        t0 = time.perf_counter()
        table = benchmark(examples.merge_copy(), n=args.n, rounds=args.rounds, progress=False)
        print(f"{call} ({time.perf_counter() - t0:.1f} s):")
        print(table.table())
        ratio = table.bandwidth_ratio("merge_copy", "device copy")
        ratios.append(ratio)
        print(f"merge_copy vs device copy (bandwidth): {ratio:.3f}x  (target >= {TARGET}) "
              f"{'PASS' if ratio >= TARGET else 'MISS'}\n", flush=True)
    if args.big:
        # where the default falls short: a fixed cost per launch weighs on 64 MiB operands, not on 1 GiB ones
        times = {}
        for n in (args.n or examples.merge_copy().problem_dict["num_elements"], 1 << 28):
            table = benchmark(examples.merge_copy(), n=n, rounds=args.rounds, progress=False)
            print(table.table())
            times[n] = (table.row("merge_copy").median_ms, table.row("device copy").median_ms)
            print(f"n = {n:,}: merge_copy vs device copy (bandwidth) "
                  f"{table.bandwidth_ratio('merge_copy', 'device copy'):.3f}x\n", flush=True)
        (n1, (a1, c1)), (n2, (a2, c2)) = sorted(times.items())
        fixed = (a1 * n2 - a2 * n1) / (n2 - n1) * 1e3
        fixed_copy = (c1 * n2 - c2 * n1) / (n2 - n1) * 1e3
        print(f"time = fixed + n / bandwidth, fitted at n = {n1:,} and {n2:,}: merge_copy's fixed part {fixed:.1f} us, "
              f"the device copy's {fixed_copy:.1f} us")
    return 0 if min(ratios) >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())

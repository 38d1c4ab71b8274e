#!/usr/bin/env python3
"""Predicted vs measured kernel time, for the sweep of every canonical design.

On a GPU: each canonical design (streaming and GEMM families) is swept over stages x tiles x
every grouping (``pgstudio.explore.sweep``: each variant compiled, verified on fresh random
inputs with a poisoned output, then timed; only verified runs count), and every verified variant
is predicted by ``pgstudio.analysis.predict`` for the same problem and occupancy.  Per family it
prints Spearman's rank correlation and the median absolute error, then the worst variants.
``--quick`` sweeps a reduced set (a few minutes on an H200); ``--record PATH`` writes the
measurements as a recording that ``pgstudio.analysis.calibrate.calibrate`` reads; ``--fit PATH``
also fits the machine constants to them and writes a fitted file (e.g.
``pgstudio/analysis/fitted/h200.json``, the default every user gets).

Without a GPU: ``--recording PATH ...`` compares the model with existing recordings (by default
the recordings the shipped fit names, which ``--fit`` refits to); ``--repo-figures`` rewrites
``pgstudio/analysis/fitted/h200_repo_figures.json`` from the H200 figures the repository quotes
(``notebooks/recorded``, docs/gemm.md).  ``--fit`` fits an H200's recordings together with those
figures and names the recordings in the fitted file (keep them beside it).  ``--refresh`` derives
the recorded sweep runs' workloads again from their labels (after a change of what the model
reads of a design) and writes them back; the measured times stay.  ``--store`` keeps a
fit beside the tuning cache for the recording's device kind, where
``fitted.default_machine(kind, <cache>/calibration)`` finds it.

    python benchmarks/predict.py --quick --passes 3 --rounds 20 --designs merge_copy fork_copy fused_merge_copy \\
        --record pgstudio/analysis/fitted/h200_stream_sweep.json          # GPU: the streaming families
    python benchmarks/predict.py --quick --designs merge_gemm merge_gemm_resadd fork_gemm_act fused_merge_gemm \\
        --record pgstudio/analysis/fitted/h200_sweep.json                 # GPU: the GEMM families
    python benchmarks/predict.py --recording pgstudio/analysis/fitted/h200_sweep.json \\
        pgstudio/analysis/fitted/h200_stream_sweep.json --fit pgstudio/analysis/fitted/h200.json  # refit
    python benchmarks/predict.py                     # CPU: the model against the shipped recordings
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path
from statistics import median

from pgstudio import examples
from pgstudio.analysis.fitted import H200_FILE, H200_REPO_FIGURES, recordings_of, save_machine, shipped_h200
from pgstudio.analysis.kernel_fit import (Ratio, Recording, Run, calibrate, fit_machine, rank_correlation,
                                         read_recording)
from pgstudio.analysis.machine import H200_DATASHEET
from pgstudio.analysis.predict import predict_workload
from pgstudio.analysis.workload import workload
from pgstudio.explore.reshape import with_grouping, with_stages, with_tile

COMMAND = "python benchmarks/predict.py"
#: The sweep of each family: (stages, tiles); None = the sweep's defaults (every grouping always).
FULL = {name: (None, None) for name in examples.CANONICAL}
#: Streaming stages from 256 B, where the bytes in flight per SM decide the time (few small stages
#: cannot cover the load latency), to 8 KiB, where every variant runs at memory speed and the
#: measured differences are noise: a sweep of the fast end alone ranks noise.
QUICK_STREAM = ((2, 4, 8), (256, 512, 1024, 4096, 8192))
QUICK_GEMM = ((2, 3, 4, 6), ("128x64x64", "128x128x64", "128x256x64"))
#: Streaming sweeps move this many elements per operand (the designs' default).
STREAM_N = 1 << 24


def _axes(name: str, quick: bool):
    if not quick:
        return FULL[name]
    stages, tiles = QUICK_STREAM if name in examples.STREAMING else QUICK_GEMM
    bn = examples.example(name).problem_dict.get("BN", 0)
    tiles = tuple(t for t in tiles if isinstance(t, int) or int(t.split("x")[1]) <= bn)
    return stages, tiles


def measure(names: list[str], quick: bool, rounds: int, passes: int = 1) -> list[Run]:
    """Sweep each family on this machine's GPU ``passes`` times; the variants verified in every
    pass as runs, each at the median of its passes' times.  With two or more passes it prints how
    well the passes agree on the ranks (Spearman between the first two): the ceiling any model's
    rank correlation can reach on this machine, since variants that run at one limit (memory speed)
    differ by noise alone."""
    from pgstudio.explore.sweep import OK, sweep
    runs = []
    for name in names:
        base = examples.example(name)
        stages, tiles = _axes(name, quick)
        n = STREAM_N if name in examples.STREAMING else None
        t0 = time.perf_counter()
        times: dict[str, list[float]] = {}
        rows = {}
        for _ in range(passes):
            table = sweep(base, stages, tiles, n=n, rounds=rounds, progress=False)
            for r in table.rows:
                if r.status == OK:
                    times.setdefault(r.label, []).append(r.median_ms)
                    rows.setdefault(r.label, r)
        both = [label for label, ts in times.items() if len(ts) == passes]
        agree = ""
        if passes > 1 and len(both) > 2:
            rho = rank_correlation([times[lb][0] for lb in both], [times[lb][1] for lb in both])
            agree = f"; pass 1 vs pass 2 Spearman {rho:.3f}"
        print(f"{name}: {len(both)} of {len(table.rows)} variants verified and timed in {passes} pass(es), "
              f"{time.perf_counter() - t0:.0f} s{agree}")
        for label in both:
            r = rows[label]
            d = r.variant.build(base)
            runs.append(Run(name, label, workload(d, num_elements=n, blocks_per_sm=r.blocks_per_sm), median(times[label])))
    return runs


def report_ratios(ratios, machine) -> None:
    """Measured slow / fast ratios beside the model's."""
    if ratios:
        print("\nmeasured ratios (slow / fast):")
    for q in ratios:
        got = predict_workload(q.slow, machine).ms / predict_workload(q.fast, machine).ms
        print(f"  {q.label:<70} measured {q.ratio:5.2f}  predicted {got:5.2f}")


def report(runs: list[Run], machine, worst: int = 8) -> dict[str, tuple[float, float]]:
    """Print per family Spearman and median |error|, then the worst variants; return them."""
    rows = [(r, predict_workload(r.workload, machine).ms) for r in runs]
    out = {}
    print(f"model: {machine.label()}")
    print(f"{'family':<20} {'variants':>8} {'spearman':>9} {'median |err|':>12}")
    for fam in dict.fromkeys(r.family for r in runs):
        mine = [(r, p) for r, p in rows if r.family == fam]
        rho = rank_correlation([p for _, p in mine], [r.ms for r, _ in mine])
        err = median(abs(p / r.ms - 1) for r, p in mine)
        out[fam] = (rho, err)
        print(f"{fam:<20} {len(mine):>8} {rho:>9.3f} {100 * err:>11.1f}%")
    allerr = median(abs(p / r.ms - 1) for r, p in rows)
    print(f"{'all':<20} {len(rows):>8} {rank_correlation([p for _, p in rows], [r.ms for r, _ in rows]):>9.3f} "
          f"{100 * allerr:>11.1f}%")
    print("\nworst variants (predicted vs measured):")
    for r, p in sorted(rows, key=lambda rp: -abs(rp[1] / rp[0].ms - 1))[:worst]:
        print(f"  {r.family:<18} {r.label:<34} predicted {p * 1000:9.1f} us  measured {r.ms * 1000:9.1f} us  "
              f"{100 * (p / r.ms - 1):+6.1f}%")
    return out


def _gemm(name, m=4096, n=4096, k=4096, **kw):
    return examples.example(name, m=m, n=n, k=k, **kw)


def _stream(name, stages, tile_bytes, grouping="designed"):
    d = with_stages(with_tile(examples.example(name), (tile_bytes,)), stages)
    return with_grouping(d, grouping)


def repo_figures() -> Recording:
    """The H200 kernel times the repository quotes, as a recording (each label names its source)."""
    nb = "notebooks/recorded (benchmarks/notebooks.py --record, 2026-12-01)"
    figures = [  # (family, label, design, ms)
        ("merge_gemm", f"4096^3 128x256x64 s3, {nb}", _gemm("merge_gemm"), 0.1885),
        ("merge_gemm", f"4096^3 ungrouped, {nb}", with_grouping(_gemm("merge_gemm"), "ungrouped"), 0.1887),
        ("fused_merge_gemm", f"4096^3 128x256x64 s3, {nb}", _gemm("fused_merge_gemm"), 0.1881),
        ("fused_merge_gemm", f"4096^3 ungrouped, {nb}", with_grouping(_gemm("fused_merge_gemm"), "ungrouped"), 0.1886),
        ("fork_gemm_act", f"4096^3 128x128x64 s3, {nb}", _gemm("fork_gemm_act"), 0.2803),
        ("fork_gemm_act", f"4096^3 ungrouped, {nb}", with_grouping(_gemm("fork_gemm_act"), "ungrouped"), 0.3321),
        ("merge_gemm", "128x8192x8192 128x64x64 s8, docs/gemm.md (small M)",
         _gemm("merge_gemm", 128, 8192, 8192, num_stages=8, bn=64), 0.0454),
        ("merge_gemm", "8192^3 128x256x64 s3, docs/gemm.md (1.02x cuBLAS's ~1.65 ms)", _gemm("merge_gemm", 8192, 8192, 8192),
         1.62),
        ("merge_copy", f"6 x 4096 B, {nb}", _stream("merge_copy", 6, 4096), 0.0506),
        ("merge_copy", f"4 x 8192 B as designed, {nb}", _stream("merge_copy", 4, 8192), 0.0521),
        ("merge_copy", f"6 x 4096 B ungrouped, {nb}", _stream("merge_copy", 6, 4096, "ungrouped"), 0.0506),
        ("fork_copy", f"4 x 4096 B, {nb}", _stream("fork_copy", 4, 4096), 0.0532),
        ("fork_copy", f"4 x 8192 B as designed, {nb}", _stream("fork_copy", 4, 8192), 0.0549),
        ("fork_copy", f"4 x 4096 B ungrouped, {nb}", _stream("fork_copy", 4, 4096, "ungrouped"), 0.0535),
        ("fused_merge_copy", f"6 x 4096 B, {nb}", _stream("fused_merge_copy", 6, 4096), 0.0504),
        ("fused_merge_copy", f"4 x 8192 B as designed, {nb}", _stream("fused_merge_copy", 4, 8192), 0.0520),
        ("fused_merge_copy", f"6 x 4096 B ungrouped, {nb}", _stream("fused_merge_copy", 6, 4096, "ungrouped"), 0.0506),
    ]
    runs = tuple(Run(f, label, workload(d), ms) for f, label, d, ms in figures)
    sweep = "merge_gemm 4096^3 sweep at 128x128x64 (pgstudio sweep, 32 verified variants)"
    g = lambda s: workload(_gemm("merge_gemm", num_stages=s, bn=128))  # noqa: E731
    ratios = (Ratio(f"2 stages / 4 stages, {sweep}", g(2), g(4), 2.5),
              Ratio(f"3 stages / 5 stages, {sweep}", g(3), g(5), 1.35))
    return Recording("NVIDIA H200", "NVIDIA_H200-132sm-cc90", "2026-12-01", f"{COMMAND} --repo-figures", runs, ratios)


def refreshed(rec: Recording) -> Recording:
    """``rec`` with every sweep run's workload derived again from its family and variant label
    (``workload`` of the variant's design, at the occupancy and element count recorded): the
    measured times stay, what the model reads of each design follows the current rule.  Runs
    whose label is not a sweep variant (the repository's figures: ``--repo-figures``) are kept."""
    from pgstudio.errors import PgStudioError
    from pgstudio.explore.sweep_space import Variant, parse_tile
    runs = []
    for r in rec.runs:
        grouping, _, rest = r.label.partition(" ")
        stages, _, tile = rest.partition("x")
        try:
            v = Variant(grouping, int(stages), parse_tile(tile[:-1] if tile.endswith("B") else tile))
            d = v.build(examples.example(r.family))
        except (ValueError, PgStudioError):  # not a sweep label (or no longer a variant): kept as recorded
            runs.append(r)
            continue
        n = r.workload.num_elements if r.family in examples.STREAMING else None
        runs.append(Run(r.family, r.label, workload(d, num_elements=n, blocks_per_sm=r.workload.blocks_per_sm), r.ms))
    return Recording(rec.device, rec.device_kind, rec.date, rec.command, tuple(runs), rec.ratios)


def combined(paths: list[Path]) -> Recording:
    """The runs and ratios of every recording in ``paths`` as one (device of the first)."""
    recs = [read_recording(p) for p in paths]
    first = recs[0]
    return Recording(first.device, first.device_kind, first.date, first.command,
                     tuple(r for x in recs for r in x.runs), tuple(q for x in recs for q in x.ratios))


def measured(args: argparse.Namespace, argv: list[str] | None) -> list[Path]:
    """The recordings this run compares with: measured now on the GPU (written to ``--record``),
    the one given, or the ones the shipped fit was made from."""
    from pgstudio.runtime._cupy import gpu_available
    if args.repo_figures:
        rec = repo_figures()
        print(f"wrote {rec.write(H200_REPO_FIGURES)} ({len(rec.runs)} runs, {len(rec.ratios)} ratios)")
        return [H200_REPO_FIGURES]
    if args.recording or not gpu_available():
        paths = [Path(p) for p in args.recording] if args.recording else list(recordings_of(H200_FILE)) or [H200_REPO_FIGURES]
        for path in paths:
            rec = read_recording(path)
            print(f"recording: {path} ({rec.device}, {rec.date}, {len(rec.runs)} runs, {len(rec.ratios)} ratios)")
        return paths
    from pgstudio.runtime.recorded import device_name
    from pgstudio.explore.tuning import device_kind
    t0 = time.perf_counter()
    runs = measure(args.designs, args.quick, args.rounds, args.passes)
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    cmd = " ".join([COMMAND, *(argv if argv is not None else sys.argv[1:])])
    rec = Recording(device_name(), device_kind(), date, cmd, tuple(runs))
    print(f"measured {len(runs)} verified variants in {time.perf_counter() - t0:.0f} s")
    path = Path(args.record or "predict_recording.json")
    print(f"wrote {rec.write(path)}")
    return [path]


def fit_to(paths: list[Path], out: Path) -> None:
    """Fit the machine to the recordings (an H200's together with the repository's H200 figures)
    and write the fitted file, naming its recordings relative to it."""
    first = read_recording(paths[0])
    if "H200" in first.device and H200_REPO_FIGURES.resolve() not in [p.resolve() for p in paths]:
        paths = [*paths, H200_REPO_FIGURES]
    rec = combined(paths)
    what = f"{rec.device}, {first.date[:10]}, {len(rec.runs)} measured kernels"
    fit = fit_machine(rec.runs, rec.ratios, H200_DATASHEET.replace(name=rec.device or "NVIDIA H200"), fitted_on=what)
    print(f"\n{fit}")
    names = tuple(os.path.relpath(p.resolve(), out.resolve().parent) for p in paths)
    save_machine(out, fit.machine, rec.device_kind, fit.summary() | {"command": first.command}, names)
    print(f"wrote {out} (fitted to {', '.join(names)})\n\n-- the fitted model --")
    report(list(rec.runs), fit.machine)
    report_ratios(rec.ratios, fit.machine)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a reduced variant set (GPU: a few minutes)")
    p.add_argument("--designs", nargs="*", default=list(examples.CANONICAL), choices=list(examples.CANONICAL))
    p.add_argument("--rounds", type=int, default=10, help="timed launches per variant (GPU)")
    p.add_argument("--passes", type=int, default=1,
                   help="sweeps of each family (GPU): each variant at the median of its passes, and how well "
                        "the passes agree on the ranks")
    p.add_argument("--record", help="write the measurements to this recording (GPU; default predict_recording.json)")
    p.add_argument("--recording", nargs="+", help="compare with these recordings instead of measuring")
    p.add_argument("--repo-figures", action="store_true", help="rewrite the shipped recording from the repo's figures")
    p.add_argument("--fit", help="fit the machine constants to the measurements and write the fitted file here")
    p.add_argument("--refresh", action="store_true",
                   help="derive the workloads of the --recording files' sweep runs again from their labels "
                        "(after a change of what the model reads of a design) and write them back")
    p.add_argument("--store", action="store_true",
                   help="fit and keep the fit beside the tuning cache, for this device kind (<cache>/calibration)")
    args = p.parse_args(argv)
    paths = measured(args, argv)
    if args.refresh:
        for path in paths:
            before = read_recording(path)
            after = refreshed(before)
            changed = sum(a.workload != b.workload for a, b in zip(after.runs, before.runs))
            after.write(path)
            print(f"refreshed {path}: {changed} of {len(after.runs)} workloads changed")
    rec = combined(paths)
    if not rec.runs:
        print("no verified runs to compare")
        return 1
    print("\n-- the shipped model --")
    report(list(rec.runs), shipped_h200())
    report_ratios(rec.ratios, shipped_h200())
    if args.fit:
        fit_to(paths, Path(args.fit))
    if args.store:
        from pgstudio.runtime.compile import cache_dir
        fit = calibrate(rec, store=cache_dir() / "calibration")
        print(f"\nkept the fit for {rec.device_kind} in {cache_dir() / 'calibration'} ({fit.summary()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

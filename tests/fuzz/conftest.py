"""Prints the fuzz suite's and the injection corpus's outcome counts at the end of every run that ran them."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import fuzz_harness  # noqa: E402


def pytest_terminal_summary(terminalreporter):
    tr = terminalreporter
    planted = fuzz_harness.INJECTION
    if planted:
        tr.section("injection corpus (planted files per outcome)")
        tr.write_line(f"{sum(planted.values())} files: " + ", ".join(f"{k} {v}" for k, v in sorted(planted.items())))
    counts = fuzz_harness.OUTCOMES
    if not counts:
        return
    tr.section("fuzz outcomes (inputs per source, stage and outcome)")
    width = max(len(f"{src} / {stage}") for src, stage, _ in counts)
    for (src, stage) in sorted({(s, g) for s, g, _ in counts}):
        row = {o: counts.get((src, stage, o), 0) for o in ("ok", "refused", "crash", "hang")}
        tr.write_line(f"{f'{src} / {stage}':<{width}}  " + "  ".join(f"{o} {n:>4}" for o, n in row.items()))
    inputs = fuzz_harness.INPUTS
    bad = sum(n for (_, _, o), n in counts.items() if o in ("crash", "hang"))
    tr.write_line(f"inputs: {sum(inputs.values())} ({', '.join(f'{s} {n}' for s, n in sorted(inputs.items()))}); "
                  f"stage runs: {sum(counts.values())}; crashes + hangs: {bad}")

"""runtime.progress: one tqdm-drawn bar with an ETA for compile, benchmark and sweep; the studio
gets the same figures through ``on_update``; a worker relays its steps to the caller's process."""

from __future__ import annotations

import queue

from pgstudio.runtime import progress
from pgstudio.runtime.progress import Progress


def test_steps_count_and_carry_tqdms_meter_with_an_eta(capsys):
    seen = []
    with Progress(4, "compile", "target", enabled=True, on_update=lambda d, t, text: seen.append((d, t, text))) as bar:
        for arch in ("a", "b", "c", "d"):
            bar.update(1, arch)
    assert [s[0] for s in seen] == [1, 2, 3, 4] and all(s[1] == 4 for s in seen)
    assert seen[1][2].startswith("2/4 [") and "<" in seen[1][2] and seen[1][2].endswith(" b")  # elapsed<remaining
    assert "compile" in capsys.readouterr().err  # tqdm drew its bar on stderr


def test_a_disabled_bar_still_counts_and_calls_back():
    seen = []
    bar = Progress(2, enabled=False, on_update=lambda d, t, text: seen.append(text.split()[-1]))
    bar.update(1, "x")
    bar.update(1, "y")
    bar.close()
    assert bar.done == 2 and seen == ["x", "y"]


def test_in_a_worker_steps_go_to_the_relay_and_the_caller_absorbs_them():
    q: queue.Queue = queue.Queue()
    progress.relay_to(q)
    try:
        progress.running("job-1")
        worker_bar = Progress(3, "benchmark", "launch", enabled=True)
        assert worker_bar.bar is None  # a worker draws nothing itself
        worker_bar.update(2, "round 2")
    finally:
        progress.relay_to(None)
        progress._RELAY.clear()
    job, desc, unit, done, total, label = q.get_nowait()
    assert (job, desc, unit, done, total, label) == ("job-1", "benchmark", "launch", 2, 3, "round 2")
    seen = []
    here = Progress(1, "benchmark", "launch", enabled=False, on_update=lambda d, t, text: seen.append((d, t)))
    here.absorb(done, total, label)
    assert seen == [(2, 3)] and here.total == 3

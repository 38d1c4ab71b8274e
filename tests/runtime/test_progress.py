"""runtime.progress: one tqdm-drawn bar with an ETA for compile, benchmark and sweep; the studio
gets the same figures through ``on_step``."""

from __future__ import annotations

import io

from pgstudio.runtime.progress import Progress


def test_steps_count_and_estimate_the_time_left():
    seen = []
    out = io.StringIO()
    with Progress(4, enabled=True, desc="compile", on_step=seen.append, file=out) as bar:
        for arch in ("a", "b", "c", "d"):
            bar.step(arch)
    assert [s.done for s in seen] == [1, 2, 3, 4] and seen[-1].label == "d"
    assert seen[0].remaining is not None and seen[0].remaining >= 0 and seen[-1].remaining == 0
    assert "compile" in out.getvalue() and "4/4" in out.getvalue()  # tqdm drew it
    assert seen[1].text().startswith("2/4 b, 00:00 so far, about")
    assert "left" not in seen[-1].text()


def test_a_disabled_bar_still_counts_and_calls_back():
    seen = []
    bar = Progress(2, enabled=False, on_step=seen.append)
    bar.step("x")
    bar.step("y")
    bar.close()
    assert bar.done == 2 and [s.label for s in seen] == ["x", "y"]

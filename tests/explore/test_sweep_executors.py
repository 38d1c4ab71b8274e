"""A compile-only sweep of the 48 merge_copy variants on the embedded executor and on a local
Ray instance, each with a worker killed mid-sweep: both complete, with equal results; a resumed
sweep recomputes nothing already recorded.

Without a GPU (CI) the sweep compiles every variant (NVRTC) and times none.  One Ray instance
serves the whole test session (``ray_local`` in tests/conftest.py).
"""

import json
import os
import signal
import time
from pathlib import Path

import pytest

from pgstudio import examples
from pgstudio.runtime.executor.embedded import EmbeddedExecutor
from pgstudio.runtime.executor.inline import InlineExecutor
from pgstudio.explore.sweep import COMPILED, sweep

pytestmark = pytest.mark.nvrtc

#: What must agree between executors (timings, attempts and worker names may differ).
SAME = ("status", "kernel", "source_key", "smem_bytes", "threads", "cubin_bytes", "codes", "message", "arch")


def _records(path: Path) -> dict[str, dict]:
    lines = path.read_text().splitlines()[1:]
    out = {}
    for line in lines:
        rec = json.loads(line)
        out[rec["key"]] = rec
    return out


class Killer:
    """A progress callback that kills one worker process after a few variants are done."""

    def __init__(self, find_pid, after: int = 5) -> None:
        self.find_pid, self.after, self.killed = find_pid, after, None

    def __call__(self, done: int, total: int, text: str) -> None:
        if self.killed is None and done >= self.after:
            deadline = time.monotonic() + 10
            while self.killed is None and time.monotonic() < deadline:
                pid = self.find_pid()
                if pid:
                    os.kill(pid, signal.SIGKILL)
                    self.killed = pid
                else:
                    time.sleep(0.02)


def _embedded_worker():
    import multiprocessing as mp
    kids = mp.active_children()
    return kids[0].pid if kids else None


def _ray_worker_running_a_variant():
    """A Ray worker process while it runs a sweep task (its title is ray::pgstudio:<variant>)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if cmd.startswith(b"ray::pgstudio:"):
                return int(entry)
    return None


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both executors sweep merge_copy's default space (48 variants), each losing a worker."""
    if not Path("/proc").is_dir():
        pytest.skip("finding worker processes needs /proc")
    tmp = tmp_path_factory.mktemp("sweeps")
    design = examples.merge_copy()
    out = {}
    old_cache = os.environ.get("PGSTUDIO_CACHE")
    try:
        os.environ["PGSTUDIO_CACHE"] = str(tmp / "cache-embedded")  # spawned workers read it
        ex = EmbeddedExecutor(cpu_workers=2, gpus=[])
        killer = Killer(_embedded_worker)
        table = sweep(design, executor=ex, results=tmp / "embedded.jsonl", compile_only=True, progress=False,
                      on_progress=killer)
        ex.close()
        out["embedded"] = (table, killer, tmp / "embedded.jsonl")
    finally:
        if old_cache is None:
            os.environ.pop("PGSTUDIO_CACHE", None)
        else:
            os.environ["PGSTUDIO_CACHE"] = old_cache
    return design, tmp, out


@pytest.fixture(scope="module")
def ray_run(runs, ray_local):
    design, tmp, out = runs
    from pgstudio.runtime.executor.cluster import RayExecutor
    killer = Killer(_ray_worker_running_a_variant)
    table = sweep(design, executor=RayExecutor(), results=tmp / "ray.jsonl", compile_only=True, progress=False,
                  on_progress=killer)
    return table, killer, tmp / "ray.jsonl"


def test_embedded_sweep_survives_a_killed_worker(runs):
    _, _, out = runs
    table, killer, path = out["embedded"]
    assert killer.killed, "no worker was killed: the test did not test anything"
    assert len(table.rows) == 48 and table.count(COMPILED) == 48
    assert any(r.attempts > 1 for r in table.rows), "the killed worker's variants were not retried"
    assert table.best is None and "nothing was timed" in table.note
    assert len(_records(path)) == 48


@pytest.mark.cluster
def test_ray_sweep_equals_the_embedded_one_despite_a_killed_worker(runs, ray_run):
    _, _, out = runs
    table, killer, path = ray_run
    assert killer.killed, "no Ray worker was killed: the test did not test anything"
    assert len(table.rows) == 48 and table.count(COMPILED) == 48
    assert table.executor.startswith("ray: 1 node(s), 2 CPU(s)")
    ray_recs, emb_recs = _records(path), _records(out["embedded"][2])
    assert ray_recs.keys() == emb_recs.keys() and len(ray_recs) == 48
    for key, rec in ray_recs.items():
        assert {k: rec.get(k) for k in SAME} == {k: emb_recs[key].get(k) for k in SAME}, key
    assert all(r["where"].startswith("ray ") for r in ray_recs.values())


class CountingInline(InlineExecutor):
    """The inline executor, counting what it is asked to run."""

    def __init__(self):
        self.submitted = []

    def session(self, on_progress=None):
        s = super().session(on_progress)
        submit = s.submit

        def counting(job, payload=None):
            self.submitted.append(job.key)
            submit(job, payload)
        s.submit = counting
        return s


def test_a_resumed_sweep_recomputes_nothing_recorded(runs, monkeypatch):
    design, tmp, out = runs
    table, _, path = out["embedded"]
    lines = path.read_text().splitlines()
    partial = tmp / "partial.jsonl"
    partial.write_text("\n".join(lines[:41]) + "\n" + lines[41][:25])  # header + 40 records + a torn line
    monkeypatch.setenv("PGSTUDIO_CACHE", str(tmp / "cache-embedded"))
    ex = CountingInline()
    resumed = sweep(design, executor=ex, results=partial, compile_only=True, progress=False)
    recorded = {json.loads(ln)["key"] for ln in lines[1:41]}
    assert len(ex.submitted) == 8 and not recorded & set(ex.submitted)
    assert resumed.reused == 40 and resumed.count(COMPILED) == 48
    for r in resumed.rows:
        assert r.cubin_bytes == table.row(r.grouping, r.num_stages, r.tile).cubin_bytes
    again = CountingInline()
    sweep(design, executor=again, results=partial, compile_only=True, progress=False)
    assert again.submitted == []  # everything is recorded now

"""Executor plumbing on a CPU: the shared executors by name and their shutdown, errors as data
(a class whose constructor takes more, a plain value), a broken GPU context marking the worker,
the "no GPU" failure where the process sees one but the executor has none, and the embedded
executor's own ways to lose a job: arguments that do not pickle, a session closed while a GPU
worker still runs one."""

from __future__ import annotations

import os
import sys
import threading
import time
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # spawned workers inherit sys.path
import executor_jobs as jobs  # noqa: E402

from pgstudio import errors  # noqa: E402
from pgstudio.runtime import _cupy  # noqa: E402
from pgstudio.runtime import executor as E  # noqa: E402
from pgstudio.runtime.executor import _job  # noqa: E402
from pgstudio.runtime.executor.embedded import EmbeddedExecutor  # noqa: E402


def test_every_name_is_one_shared_executor_and_ray_connects_only_when_used():
    from pgstudio.runtime.executor.cluster import RayExecutor
    ray = E.get_executor("ray")
    assert isinstance(ray, RayExecutor) and ray is E.get_executor("ray") and ray.name == "ray"
    assert not ray.started  # nothing was asked of Ray yet
    assert {E.get_executor(n).name for n in E.NAMES} == set(E.NAMES)
    with pytest.raises(errors.PgStudioError, match="executor 'gpu' is not known; use one of embedded, inline"):
        E.get_executor("gpu")


def test_shutdown_stops_the_shared_workers_and_they_start_again():
    ex = E.get_executor("embedded")
    assert ex.call(E.Job("sq", jobs.square, (7,))) == 49
    workers = list(ex._cpu._processes)  # the CPU pool's worker processes
    assert workers
    E.shutdown()
    assert ex._cpu is None and all(_gone(pid) for pid in workers)
    assert all(pid is None for pid in ex.gpu_worker_pids())
    assert ex.call(E.Job("again", jobs.square, (8,))) == 64  # the next job starts them again
    E.shutdown()


def test_an_error_class_with_other_constructor_arguments_comes_back_as_pgstudios(monkeypatch):
    class PlacementError(errors.PgStudioError):
        def __init__(self, message, node):
            super().__init__(message)
            self.node = node
    monkeypatch.setattr(errors, "PlacementError", PlacementError, raising=False)
    err = E.Failure("PlacementError", "no node fits").exception("sweep of 'x'")
    assert type(err) is errors.PgStudioError and str(err) == "sweep of 'x': PlacementError: no node fits"
    assert type(E.Failure("KeyError", "'M'").exception()) is errors.PgStudioError  # not pgstudio's: the base


def test_a_plain_value_unwraps_as_itself():
    assert _job.unwrap(42) == (42, None, 0.0, "")
    fail = E.Failure("ValueError", "x")
    assert _job.unwrap(fail) == (None, fail, 0.0, "")


@pytest.fixture
def broken_cupy(monkeypatch):
    """A CuPy whose context is gone (every call fails), as after a trap in this process."""
    def gone(*a):
        raise RuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered")
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(deviceSynchronize=gone)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    yield fake
    _job._POISONED.clear()


def test_a_job_that_leaves_the_context_broken_marks_its_worker(broken_cupy):
    raw, payload = _job.run_job(jobs.fail, (1,), {})
    assert raw.poisoned and raw.kind == "ValueError" and payload is None
    assert _job._POISONED == []  # the calling process is never marked: it is not a worker
    raw, _ = _job.run_job(jobs.fail, (2,), {}, worker=True)
    assert raw.poisoned and _job._POISONED == ["ValueError"]  # the next job in this worker would exit it
    with pytest.raises(errors.KernelFault, match="the job: ValueError: job 2 failed on purpose"):
        raise raw.exception("the job")


def test_a_job_that_succeeds_never_asks_about_the_context(broken_cupy):
    raw, _ = _job.run_job(jobs.square, (3,), {}, worker=True)
    assert _job.unwrap(raw)[:2] == (9, None) and _job._POISONED == []


def test_no_gpu_for_the_executor_though_this_process_sees_one(monkeypatch):
    monkeypatch.setattr(_cupy, "_gpu_count", lambda: (1, ""))
    fail = _job.no_gpu()
    assert fail.kind == "GpuUnavailable" and fail.message == "no GPU is visible to this executor"


def test_arguments_that_do_not_pickle_fail_their_job_only():
    ex = EmbeddedExecutor(cpu_workers=1, gpus=[])
    try:
        with ex.session() as s:
            s.submit(E.Job("lock", jobs.square, (threading.Lock(),)))
            s.submit(E.Job("ok", jobs.square, (6,)))
            outs = {o.job.key: o for o in s}
        assert outs["ok"].value == 36
        bad = outs["lock"]
        assert not bad.ok and "pickle" in bad.error.message and bad.where == "CPU worker"
        assert ex.cpu_count() == 1 and ex.describe() == "embedded: 1 CPU worker(s), 0 GPU worker(s)"
    finally:
        ex.close()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_closing_a_session_stops_the_gpu_worker_still_running_a_job():
    ex = EmbeddedExecutor(cpu_workers=1, gpus=["7"], timeout_s=120)
    try:
        with ex.session() as s:
            s.submit(E.Job("long", jobs.sleep, (120,), gpu=True))
            s.submit(E.Job("quick", jobs.sleep, (0.5,)))
            first = next(iter(s))  # the CPU job; the GPU one is still sleeping
            (pid,) = ex.gpu_worker_pids()
        assert first.job.key == "quick" and pid is not None
        deadline = time.monotonic() + 30
        while not _gone(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _gone(pid) and ex.gpu_worker_pids() == [None]  # killed, and the next job gets a fresh one
    finally:
        ex.close()


UNGUARDED = """
import os
from pgstudio.runtime.executor import Job, get_executor
print(get_executor("embedded").call(Job("getpid", os.getpid)))
"""


def test_a_script_without_a_main_guard_is_told_to_add_one(tmp_path):
    """A worker starts by importing the caller's script: an unguarded script would start its jobs
    again in every worker.  The worker stops at once, naming the guard, and so does the caller."""
    import subprocess
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    t0 = time.monotonic()
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert time.monotonic() - t0 < 60
    assert run.returncode != 0
    # the caller's error: its last line names the guard.  A worker still shutting down shares the
    # stderr and may write after it (under load, once: "OSError: [Errno 9] Bad file descriptor"),
    # so the caller's line is found by its exception, not by being last
    (last,) = [ln for ln in run.stderr.splitlines() if ln.startswith("pgstudio.errors.KernelFault: ")][-1:]
    assert "WorkerDied" in last and 'if __name__ == "__main__":' in last and 'executor="inline"' in last
    assert 'PgStudioError: a script that runs pgstudio jobs must keep them under `if __name__ == "__main__":`' in run.stderr
    guarded = tmp_path / "guarded.py"
    guarded.write_text(UNGUARDED.replace("print(", 'if __name__ == "__main__":\n    print('))
    ok = subprocess.run([sys.executable, str(guarded)], capture_output=True, text=True, timeout=120, env=env)
    assert ok.returncode == 0 and int(ok.stdout.strip()) > 0, ok.stderr[-2000:]


def test_check_gpu_is_the_one_rule_for_what_can_reach_a_gpu(monkeypatch):
    monkeypatch.setattr(_cupy, "gpu_available", lambda: False)
    with pytest.raises(errors.GpuUnavailable, match="sees no NVIDIA GPU"):
        E.check_gpu("inline")
    E.check_gpu("null", null_ok=True)  # a benchmark's plumbing runs on the null device
    monkeypatch.setattr(_cupy, "gpu_available", lambda: True)
    with pytest.raises(errors.GpuUnavailable, match="null runtime launches nothing"):
        E.check_gpu("null")
    E.check_gpu("inline")

"""Executors with plain jobs (no GPU, no NVRTC): errors come back as data, a dying worker is
replaced and its jobs retried, a GPU job past its time limit costs its worker, nothing starts
before the first job, and the names resolve."""

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # spawned workers inherit sys.path
import executor_jobs as jobs  # noqa: E402

from pgstudio.errors import KernelFault, PgStudioError  # noqa: E402
from pgstudio.runtime.executor import Job, get_executor  # noqa: E402
from pgstudio.runtime.executor.embedded import EmbeddedExecutor  # noqa: E402
from pgstudio.runtime.executor.inline import InlineExecutor  # noqa: E402


@pytest.fixture
def embedded():
    ex = EmbeddedExecutor(cpu_workers=2, gpus=["7"], timeout_s=30, max_retries=2)
    yield ex
    ex.close()


def test_values_and_errors_come_back_per_job(embedded):
    outs = jobs.outcomes(embedded, [Job(f"sq{i}", jobs.square, (i,)) for i in range(5)] + [Job("bad", jobs.fail, (3,))])
    assert {k: o.value for k, o in outs.items() if o.ok} == {f"sq{i}": i * i for i in range(5)}
    bad = outs["bad"]
    assert not bad.ok and bad.error.kind == "ValueError" and "job 3 failed on purpose" in bad.error.message
    assert "ValueError" in bad.error.trace
    with pytest.raises(PgStudioError, match="bad: ValueError: job 3 failed on purpose"):
        bad.result()
    assert all(o.where.startswith("CPU worker") for o in outs.values())


def test_a_dying_worker_is_replaced_and_its_jobs_retried(embedded):
    outs = jobs.outcomes(embedded, [Job("die", jobs.die)] + [Job(f"sq{i}", jobs.square, (i,)) for i in range(6)])
    # every other job completes (those in flight when the pool broke ran again)
    assert all(outs[f"sq{i}"].value == i * i for i in range(6)), {k: (o.value, o.error) for k, o in outs.items()}
    # the ones in flight with it ran again, alone, and were not charged for the crash
    assert all(outs[f"sq{i}"].attempts <= 2 for i in range(6))
    died = outs["die"]
    assert died.error.kind == "WorkerDied" and died.error.crashed
    assert "died 3 time(s) with only this job in it" in died.error.message and died.attempts in (3, 4)
    with pytest.raises(KernelFault, match="worker process running die died"):
        died.result()
    # the executor is usable afterwards
    assert embedded.call(Job("after", jobs.square, (9,))) == 81


def test_gpu_workers_are_bound_to_their_device_and_started_lazily(embedded):
    assert embedded.gpu_worker_pids() == []  # nothing started yet
    assert embedded.call(Job("dev", jobs.visible_devices, gpu=True)) == "7"
    first = embedded.gpu_worker_pids()
    assert first[0] is not None
    assert embedded.call(Job("pid", jobs.pid, gpu=True)) == first[0]  # warm: the same worker


def test_a_gpu_job_past_its_time_limit_costs_its_worker_only(embedded):
    t0 = time.monotonic()
    outs = jobs.outcomes(embedded, [Job("hang", jobs.sleep, (60,), gpu=True, timeout_s=1.0),
                           Job("next", jobs.pid, gpu=True)])
    assert time.monotonic() - t0 < 30
    hang = outs["hang"]
    assert hang.error.kind == "Timeout" and "did not finish within 1 s" in hang.error.message
    assert outs["next"].ok and outs["next"].value != outs["hang"].value  # a fresh worker ran it


def test_a_worker_with_a_broken_gpu_context_exits_before_its_next_job(embedded):
    outs = jobs.outcomes(embedded, [Job("trap", jobs.break_context, gpu=True), Job("next", jobs.pid, gpu=True)])
    assert "simulated" in outs["trap"].error.message
    nxt = outs["next"]
    assert nxt.ok and nxt.attempts == 2  # the poisoned worker refused it; a fresh one ran it


def test_inline_runs_in_this_process_and_names_resolve():
    ex = get_executor("inline")
    assert isinstance(ex, InlineExecutor) and ex.call(Job("pid", jobs.pid)) == os.getpid()
    assert get_executor("embedded") is get_executor("embedded")
    assert get_executor(ex) is ex
    with pytest.raises(PgStudioError, match="executor 'fast' is not known; use one of embedded, inline, ray"):
        get_executor("fast")


def test_gpu_jobs_without_a_gpu_say_so():
    ex = EmbeddedExecutor(cpu_workers=1, gpus=[])
    out = jobs.outcomes(ex, [Job("t", jobs.pid, gpu=True)])["t"]
    assert out.error.kind == "GpuUnavailable"
    assert ex.gpu_worker_pids() == []


def test_import_pgstudio_starts_no_worker():
    import subprocess
    code = ("import multiprocessing as mp, pgstudio, pgstudio.runtime, pgstudio.explore.sweep; "
            "print(len(mp.active_children()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


def test_inline_never_exits_the_calling_process_after_a_broken_context():
    from pgstudio.runtime.executor import _job
    ex = InlineExecutor()
    try:
        out = jobs.outcomes(ex, [Job("trap", jobs.break_context), Job("next", jobs.square, (4,))])
        assert not out["trap"].ok and out["next"].value == 16  # still here: the inline caller is not a worker
    finally:
        _job._POISONED.clear()

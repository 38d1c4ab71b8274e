"""The Ray executor's sessions on the local Ray instance of the test session (``ray_local``): a GPU
job on a cluster without GPUs, a job past its time limit, a worker that dies on every attempt and
a closed session each come back as one outcome in words, never as a Ray exception in the caller;
and the executor connects, and shuts down, only what it should.  The jobs are standard-library
functions, which every Ray worker imports by name."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from pgstudio.errors import KernelFault, PgStudioError
from pgstudio.runtime.executor import Job
from pgstudio.runtime.executor import cluster as R

sys.path.insert(0, str(Path(__file__).resolve().parent))
from executor_jobs import outcomes  # noqa: E402

pytestmark = pytest.mark.cluster


@pytest.fixture
def ray_ex(ray_local):
    return R.RayExecutor(max_retries=0, timeout_s=60)


def test_the_local_instance_is_described_by_what_it_holds(ray_ex):
    assert ray_ex.cpu_count() == 2 and ray_ex.gpu_count() >= 0
    assert ray_ex.describe().startswith("ray: 1 node(s), 2 CPU(s)")


def test_a_gpu_job_on_a_cluster_without_gpus_says_why_and_cpu_jobs_still_run(ray_ex):
    if ray_ex.gpu_count():
        pytest.skip("this Ray instance has GPUs")
    outs = outcomes(ray_ex, [Job("gpu", os.getpid, gpu=True), Job("cpu", abs, (-3,)),
                              Job("gpu2", os.getpid, gpu=True)])
    assert outs["cpu"].value == 3 and outs["cpu"].where.startswith("ray")
    for key in ("gpu", "gpu2"):
        assert outs[key].error.kind == "GpuUnavailable" and "no GPU" in outs[key].error.message


def test_a_job_past_its_time_limit_is_stopped_and_said_in_words(ray_ex):
    t0 = time.monotonic()
    outs = outcomes(ray_ex, [Job("slow", time.sleep, (120,), label="a slow variant", timeout_s=1.0),
                              Job("quick", abs, (-2,))])
    assert time.monotonic() - t0 < 60
    slow = outs["slow"]
    assert slow.error.kind == "Timeout" and slow.error.crashed and slow.where == "ray"
    assert slow.error.message.startswith("a slow variant did not finish within 1 s, so Ray stopped its worker")
    assert outs["quick"].value == 2


def test_a_worker_that_dies_on_every_attempt_is_one_failure(ray_ex):
    outs = outcomes(ray_ex, [Job("die", os._exit, (7,), label="a crashing variant"), Job("after", abs, (-5,))])
    died = outs["die"]
    assert died.error.kind == "WorkerDied" and died.error.crashed and died.attempts == 1 and died.where == "ray"
    assert died.error.message.startswith("the Ray worker running a crashing variant died after 0 retries (")
    with pytest.raises(KernelFault, match="a crashing variant: WorkerDied"):
        died.result()
    assert outs["after"].value == 5


def test_closing_a_session_cancels_what_still_runs(ray_ex):
    s = ray_ex.session()
    s.submit(Job("long", time.sleep, (120,)))
    (ref,) = list(s.pending)
    s.close()
    assert s.pending == {}
    with pytest.raises(s.ray.exceptions.RayError):  # cancelled, not left running for two minutes
        s.ray.get(ref, timeout=60)


def test_connecting_starts_ray_only_where_none_runs_and_shutdown_stops_only_that(monkeypatch):
    import ray
    started, stopped = [], []
    monkeypatch.setattr(ray, "is_initialized", lambda: bool(started) and not stopped)
    monkeypatch.setattr(ray, "init", lambda **kw: started.append(kw))
    monkeypatch.setattr(ray, "shutdown", lambda: stopped.append(True))
    ex = R.RayExecutor(num_cpus=3)
    assert ex.connect() is ray and started == [{"num_cpus": 3, "include_dashboard": False, "log_to_driver": False}]
    assert ex.connect() is ray and len(started) == 1  # running now: joined, not started again
    ex.close()
    ex.close()
    assert stopped == [True] and not ex.started
    joined = R.RayExecutor("auto")
    joined.connect()
    assert started[-1]["address"] == "auto" and joined.started
    monkeypatch.setattr(ray, "is_initialized", lambda: True)  # a notebook's own ray.init
    mine = R.RayExecutor()
    mine.connect()
    mine.close()
    assert len(started) == 2 and stopped == [True]  # neither started nor stopped: it was not ours


def test_a_cluster_that_refuses_ray_is_said_in_one_line(monkeypatch):
    import ray

    def refuse(**kw):
        raise ConnectionError("Could not find any running Ray instance")
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(PgStudioError, match=r"no Ray cluster answers at 'auto' \(Could not find any running Ray "
                                            r"instance\); start one there with `ray start --head`"):
        R.RayExecutor("auto").connect()
    with pytest.raises(PgStudioError, match="no Ray cluster answers at None"):
        R.RayExecutor().connect()


def test_without_ray_the_executor_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(PgStudioError, match=r"the Ray executor needs Ray: pip install 'pgstudio\[cluster\]'"):
        R.ray_module()
    ex = R.RayExecutor()
    with pytest.raises(PgStudioError, match="needs Ray"):
        ex.session()

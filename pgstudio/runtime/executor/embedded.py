"""``executor="embedded"`` (the default): jobs run in worker processes on this machine.

* **CPU workers** (one ``concurrent.futures.ProcessPoolExecutor``, one process per core) take
  jobs that need no GPU, e.g. NVRTC compiles; their cubins meet the GPU workers in the on-disk
  kernel cache (``runtime.compile``), keyed by source.
* **GPU workers**: one single-process pool per visible GPU, started with
  ``CUDA_VISIBLE_DEVICES`` set to that GPU only, so each worker owns one device and one CUDA
  context.  They launch, verify and time.

Every pool uses the ``spawn`` start method (CUDA must not be initialised before a fork), and
nothing starts before the first job: ``import pgstudio`` and an idle executor cost nothing.

What can go wrong and what it costs:

* a job raises: the error comes back as the job's ``Failure``; the worker stays;
* a kernel traps (illegal address, launch failure): the job's ``Failure`` says so and is
  marked ``poisoned``; that GPU worker is shut down and a fresh one starts for the next job;
* a worker process dies (killed, a crash in native code): it is replaced and its job retried,
  up to ``max_retries`` times, then reported; a dying CPU worker breaks its whole pool, so the
  jobs in flight there run again one at a time to find the one that did it (``EmbeddedSession``);
* a GPU job runs past ``timeout_s``: its worker is killed and the job reported, not retried.

The caller's process never touches CUDA; the notebook stays usable whatever a kernel does.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections import deque
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Iterator

from ...errors import PgStudioError
from .. import progress
from ._job import Failure, Job, Outcome, no_gpu, run_job, unwrap
from .base import Executor, ProgressCallback, Session

#: Seconds a GPU job may run before its worker is stopped (a kernel that hangs outside the
#: watchdog's waits); a benchmark or one sweep variant takes seconds.
GPU_TIMEOUT_S = 600.0
#: Retries of a job whose worker process died.
MAX_RETRIES = 2
#: Why a worker of a script without a main guard cannot start, and the fix.
MAIN_GUARD = ("a script that runs pgstudio jobs must keep them under `if __name__ == \"__main__\":` -- each "
              "worker process starts by importing the script (the spawn start method, which CUDA needs), and "
              "an unguarded script starts its jobs again there; or pass executor=\"inline\" to run them in "
              "the script's own process")


def in_worker_start() -> bool:
    """True while a starting worker process imports the caller's main script (spawn's bootstrap):
    an executor created then belongs to a script without a main guard."""
    return bool(getattr(mp.current_process(), "_inheriting", False))


def _main_is_script() -> bool:
    """The caller runs a script or ``-m`` module (which every worker imports as it starts), not a
    notebook or an interactive session."""
    return hasattr(sys.modules.get("__main__"), "__file__")


def available_cpus() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def visible_gpus() -> list[str]:
    """The device ids a worker may be bound to: ``CUDA_VISIBLE_DEVICES`` as given, else 0..n-1."""
    from .._cupy import gpu_count
    n = gpu_count()
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [x.strip() for x in env.split(",") if x.strip()] if env else [str(i) for i in range(n)]
    return ids[:n]


def _bind_gpu(device: str, relay: Any) -> None:
    """GPU worker initializer: see only ``device``; send progress steps to the caller."""
    os.environ["CUDA_VISIBLE_DEVICES"] = device
    progress.relay_to(relay)


def _run_on_gpu(key: str, fn: Any, args: tuple, kwargs: dict, payload: Any) -> tuple[Any, Any]:
    progress.running(key)
    return run_job(fn, args, kwargs, payload, worker=True)


class _GpuWorker:
    """One GPU's worker: a single-process pool bound to the device, started on first use."""

    def __init__(self, device: str, ctx: Any) -> None:
        self.device, self.ctx = device, ctx
        self.relay: Any = None
        self.pool: cf.ProcessPoolExecutor | None = None
        self.pid: int | None = None
        self.started = 0

    def ensure(self) -> cf.ProcessPoolExecutor:
        if self.pool is None:
            # A SimpleQueue writes each step into the pipe before the job's result leaves the worker,
            # so no step arrives after its job; a fresh one per worker, so a worker killed halfway
            # through a write leaves nothing behind.
            self.relay = self.ctx.SimpleQueue()
            pool = cf.ProcessPoolExecutor(1, mp_context=self.ctx, initializer=_bind_gpu,
                                          initargs=(self.device, self.relay))
            self.pid = pool.submit(os.getpid).result(timeout=300)  # its pid, to stop it on a hang
            self.pool = pool
            self.started += 1
        return self.pool

    @property
    def name(self) -> str:
        return f"GPU {self.device} worker (pid {self.pid})"

    def kill(self) -> None:
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def retire(self, wait: bool) -> None:
        """Shut this worker down; the next job starts a fresh one (a fresh CUDA context)."""
        pool, self.pool, self.pid = self.pool, None, None
        if pool is not None:
            pool.shutdown(wait=wait, cancel_futures=True)

    def drain(self) -> Iterator[tuple]:
        """The progress steps the worker has sent so far.  Each is one pipe write of a few hundred
        bytes, below PIPE_BUF, so it arrives whole or not at all, even from a worker killed while
        writing: reading never waits on half a message."""
        relay = self.relay
        while relay is not None:
            try:
                if relay.empty():
                    return
                yield relay.get()
            except (OSError, EOFError, ValueError):
                return


@dataclass
class _Queued:
    """A job waiting for a worker: how often it started, and how often a worker died under it alone."""

    job: Job
    payload: Any
    starts: int = 0
    crashes: int = 0


@dataclass
class _Flight:
    item: _Queued
    pool: cf.ProcessPoolExecutor
    worker: _GpuWorker | None
    deadline: float | None
    solo: bool  # the only job in its pool: a dying worker is its doing
    timed_out: bool = False

    @property
    def job(self) -> Job:
        return self.item.job


class EmbeddedSession(Session):
    """Jobs of one batch on an ``EmbeddedExecutor``.

    A CPU worker that dies breaks its whole pool, and the pool cannot say which job killed it:
    the jobs in flight become *suspects*, run again one at a time, alone in a fresh pool.  A job
    that takes a worker down while alone is charged for it; after ``max_retries`` + 1 such deaths
    it is reported (``WorkerDied``), while jobs that merely shared the pool are never charged.
    A GPU worker runs one job at a time, so each of its deaths is charged at once.
    """

    def __init__(self, executor: "EmbeddedExecutor", on_progress: ProgressCallback | None) -> None:
        self.ex = executor
        self.on_progress = on_progress
        self.cpu_q: deque[_Queued] = deque()
        self.suspects: deque[_Queued] = deque()
        self.gpu_q: deque[_Queued] = deque()
        self.flights: dict[cf.Future, _Flight] = {}
        self.ready: deque[Outcome] = deque()

    def submit(self, job: Job, payload: Any = None) -> None:
        if job.gpu and not self.ex.gpu_ids():
            self.ready.append(Outcome(job, error=no_gpu()))
            return
        (self.gpu_q if job.gpu else self.cpu_q).append(_Queued(job, payload))

    def __iter__(self) -> Iterator[Outcome]:
        while self.ready or self.cpu_q or self.suspects or self.gpu_q or self.flights:
            if self.ready:
                yield self.ready.popleft()
                continue
            self._fill()
            if not self.flights:
                continue
            done, _ = cf.wait(list(self.flights), timeout=0.2, return_when=cf.FIRST_COMPLETED)
            self._pump()
            self._watch_deadlines()
            for fut in done:
                self._finish(fut)

    # -- dispatch ---------------------------------------------------------------------------------
    def _fill(self) -> None:
        busy_cpu = sum(1 for f in self.flights.values() if f.worker is None)
        if self.suspects:  # after a crash: one suspect at a time, alone
            if not busy_cpu:
                self._start_cpu(self.suspects.popleft(), solo=True)
        else:
            refused = 0
            while self.cpu_q and busy_cpu < self.ex.cpu_workers + 1 and refused < 3:  # one ahead keeps all fed
                refused += not self._start_cpu(self.cpu_q.popleft(), solo=False)
                busy_cpu = sum(1 for f in self.flights.values() if f.worker is None)
        busy = {id(f.worker) for f in self.flights.values() if f.worker is not None}
        for worker in self.ex._gpu_workers():
            if not self.gpu_q:
                break
            if id(worker) in busy:
                continue
            item = self.gpu_q.popleft()
            try:
                pool = worker.ensure()
                fut = pool.submit(_run_on_gpu, item.job.key, item.job.fn, item.job.args, dict(item.job.kwargs),
                                  item.payload)
            except Exception as exc:  # noqa: BLE001 - the worker could not start: say why, per job
                worker.retire(wait=False)
                self.ready.append(Outcome(item.job, error=Failure.of(exc), attempts=item.starts, where=worker.name))
                continue
            item.starts += 1
            self.flights[fut] = _Flight(item, pool, worker, self._deadline(item.job, gpu=True), solo=True)

    def _start_cpu(self, item: _Queued, solo: bool) -> bool:
        """Send ``item`` to the CPU pool; False when the pool refused it (it is queued again or failed)."""
        pool = self.ex._cpu_pool()
        try:
            fut = pool.submit(run_job, item.job.fn, item.job.args, dict(item.job.kwargs), item.payload, False, True)
        except (BrokenProcessPool, RuntimeError) as exc:  # broke between two jobs: a fresh pool next time
            self.ex._drop_cpu_pool(pool)
            if item.starts > 2 * (self.ex.max_retries + 1):  # no worker can start at all
                self.ready.append(Outcome(item.job, error=Failure.of(exc), attempts=item.starts, where="CPU worker"))
            else:
                item.starts += 1
                (self.suspects if solo else self.cpu_q).appendleft(item)
            return False
        item.starts += 1
        self.flights[fut] = _Flight(item, pool, None, self._deadline(item.job, gpu=False), solo)
        return True

    def _deadline(self, job: Job, gpu: bool) -> float | None:
        limit = job.timeout_s if job.timeout_s is not None else (self.ex.timeout_s if gpu else None)
        return time.monotonic() + limit if limit else None

    def _pump(self) -> None:
        for worker in self.ex._gpu_workers():
            for key, desc, unit, done, total, label in worker.drain():
                if self.on_progress is not None:
                    self.on_progress(key, desc, unit, done, total, label)

    def _watch_deadlines(self) -> None:
        now = time.monotonic()
        for fl in self.flights.values():
            if fl.worker is not None and fl.deadline is not None and now > fl.deadline and not fl.timed_out:
                fl.timed_out = True
                fl.worker.kill()

    # -- results ----------------------------------------------------------------------------------
    def _finish(self, fut: cf.Future) -> None:
        fl = self.flights.pop(fut)
        where = fl.worker.name if fl.worker is not None else "CPU worker"
        try:
            raw, handle = fut.result()
        except (BrokenProcessPool, cf.CancelledError):
            self._lost(fl, where)
            return
        except Exception as exc:  # noqa: BLE001 - e.g. arguments that do not pickle
            self.ready.append(Outcome(fl.job, error=Failure.of(exc), attempts=fl.item.starts, where=where))
            return
        if fl.worker is not None:
            self._pump()  # the job's last steps are in the pipe already: show them before its result
        value, error, seconds, ran_at = unwrap(raw)
        if fl.worker is None and ran_at:
            where = f"CPU worker {ran_at}"
        if error is not None and error.poisoned and fl.worker is not None:
            fl.worker.kill()  # its CUDA context is gone: the next job gets a fresh worker
            fl.worker.retire(wait=False)
        self.ready.append(Outcome(fl.job, value, error, fl.item.starts, where, seconds, handle))

    def _lost(self, fl: _Flight, where: str) -> None:
        """The worker running ``fl`` died (or was stopped): replace it; retry or report."""
        if fl.worker is not None:
            fl.worker.retire(wait=False)
        else:
            self.ex._drop_cpu_pool(fl.pool)
        item, job = fl.item, fl.job
        if fl.timed_out:
            limit = job.timeout_s if job.timeout_s is not None else self.ex.timeout_s
            self.ready.append(Outcome(job, error=Failure(
                "Timeout", f"{job.name} did not finish within {limit:.0f} s, so its worker ({where}) was stopped: a "
                "kernel that loops outside the watchdog's barrier waits, or a time limit too short for the work "
                "(timeout_s)", crashed=True), attempts=item.starts, where=where))
            return
        if not fl.solo:  # it shared the pool: a suspect, not yet charged
            self.suspects.append(item)
            return
        item.crashes += 1
        if item.crashes <= self.ex.max_retries:
            (self.gpu_q if job.gpu else self.suspects).appendleft(item)
        else:
            self.ready.append(Outcome(job, error=Failure(
                "WorkerDied", f"the worker process running {job.name} died {item.crashes} time(s) with only this job "
                "in it (killed from outside, out of memory, or a crash in native code); it was replaced each time"
                + (f". If it died as it started: {MAIN_GUARD}" if _main_is_script() else ""),
                crashed=True), attempts=item.starts, where=where))

    def close(self) -> None:
        """Drop queued jobs; stop GPU workers still running one (an interrupted sweep)."""
        self.cpu_q.clear()
        self.suspects.clear()
        self.gpu_q.clear()
        for fut, fl in list(self.flights.items()):
            fut.cancel()
            if fl.worker is not None:
                fl.worker.kill()
                fl.worker.retire(wait=False)
        self.flights.clear()


class EmbeddedExecutor(Executor):
    """Worker processes on this machine (see the module docstring)."""

    name = "embedded"

    def __init__(self, cpu_workers: int | None = None, gpus: list[str] | None = None, *,
                 timeout_s: float | None = GPU_TIMEOUT_S, max_retries: int = MAX_RETRIES) -> None:
        if in_worker_start():  # this process is a worker importing an unguarded script: stop it here, saying why
            raise PgStudioError(MAIN_GUARD)
        self.cpu_workers = max(1, int(cpu_workers or available_cpus()))
        self._gpus = [str(g) for g in gpus] if gpus is not None else None
        self.timeout_s = timeout_s
        self.max_retries = int(max_retries)
        self._ctx = mp.get_context("spawn")
        self._cpu: cf.ProcessPoolExecutor | None = None
        self._workers: list[_GpuWorker] | None = None
        self._lock = threading.Lock()

    def gpu_ids(self) -> list[str]:
        if self._gpus is None:
            self._gpus = visible_gpus()
        return self._gpus

    def gpu_count(self) -> int:
        return len(self.gpu_ids())

    def cpu_count(self) -> int:
        return self.cpu_workers

    def describe(self) -> str:
        return f"embedded: {self.cpu_workers} CPU worker(s), {self.gpu_count()} GPU worker(s)"

    def session(self, on_progress: ProgressCallback | None = None) -> EmbeddedSession:
        return EmbeddedSession(self, on_progress)

    def _cpu_pool(self) -> cf.ProcessPoolExecutor:
        with self._lock:
            if self._cpu is None:
                self._cpu = cf.ProcessPoolExecutor(self.cpu_workers, mp_context=self._ctx)
            return self._cpu

    def _drop_cpu_pool(self, pool: cf.ProcessPoolExecutor) -> None:
        with self._lock:
            if self._cpu is pool:
                self._cpu = None
        pool.shutdown(wait=False, cancel_futures=True)

    def _gpu_workers(self) -> list[_GpuWorker]:
        with self._lock:
            if self._workers is None:
                self._workers = [_GpuWorker(d, self._ctx) for d in self.gpu_ids()]
            return self._workers

    def gpu_worker_pids(self) -> list[int | None]:
        """Process ids of the GPU workers (None: not started); tests and the studio show them."""
        return [w.pid for w in self._workers or []]

    def close(self) -> None:
        with self._lock:
            cpu, self._cpu = self._cpu, None
            workers = self._workers or []
        if cpu is not None:
            cpu.shutdown(wait=True, cancel_futures=True)
        for w in workers:
            w.retire(wait=True)


__all__ = ["EmbeddedExecutor", "EmbeddedSession", "available_cpus", "visible_gpus"]

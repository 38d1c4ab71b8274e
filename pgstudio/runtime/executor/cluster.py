"""``executor="ray"``: jobs as Ray tasks, on one machine or a cluster (``pip install 'pgstudio[cluster]'``).

Ray does the scheduling; pgstudio only says what each job needs:

* CPU jobs (compiles) are tasks with ``num_cpus=1``; their cubins go into Ray's object store
  (the second return value) and are handed to the timing task that needs them, on whatever
  node it lands, without passing through the caller;
* GPU jobs (launch, verify, time) are tasks with ``num_gpus=1``: Ray pins each to one GPU
  (``CUDA_VISIBLE_DEVICES``) and, as it does for GPU tasks by default, runs each in a fresh
  worker process, so a kernel that traps costs that one process;
* results stream back as they finish (``ray.wait``); a task whose worker died is retried by
  Ray (``max_retries``); a GPU task past its time limit is cancelled (``ray.cancel(force=True)``).

``RayExecutor(address)`` connects with ``ray.init(address=...)`` unless Ray is already
initialised in this process (a notebook that called ``ray.init`` itself, a test fixture):
``"auto"`` finds a running cluster (``ray start --head``), ``"local"`` (or None) starts a
local instance, anything else is a cluster address (``ray://host:10001``, ``host:6379``).  Before
Ray is asked to join a cluster address, that host and port must accept a TCP connection within
``connect_timeout_s`` (``CONNECT_TIMEOUT_S``): ``ray.init`` itself waits for a silent address for
minutes, retrying, so an unreachable one is said in one line within seconds instead of hanging.
Every node needs pgstudio installed (``pip install 'pgstudio[cluster,gpu]'``).
"""

from __future__ import annotations

import socket
import time
from collections import deque
from typing import Any, Iterator
from urllib.parse import urlsplit

from ...errors import PgStudioError
from ._job import Failure, Job, Outcome, no_gpu, run_job, unwrap
from .base import Executor, ProgressCallback, Session
from .embedded import GPU_TIMEOUT_S, MAX_RETRIES


#: Seconds a cluster address has to accept a connection before pgstudio says that no cluster answers.
CONNECT_TIMEOUT_S = 5.0
#: Ray's own default ports: the GCS of ``host`` alone, the Ray Client server of ``ray://host``.
GCS_PORT, CLIENT_PORT = 6379, 10001
#: The fix for an address where no cluster answers.
NO_CLUSTER_FIX = ("start one there with `ray start --head`, give the address of a running cluster (`ray status` on "
                  "its head node prints it), or use --ray local for a Ray instance on this machine")


def host_port(address: str) -> tuple[str, int] | None:
    """(host, port) that a cluster address names -- ``host:port``, ``host`` (the GCS port),
    ``ray://host[:port]`` (the Ray Client port), ``[::1]:6379`` -- or None for one Ray resolves
    itself (``auto``, ``local``) or cannot be read as host and port."""
    text = address.strip()
    if text in ("", "auto", "local"):
        return None
    scheme, _, rest = text.rpartition("://")
    try:
        parts = urlsplit(f"//{rest}")
        port = parts.port
    except ValueError:  # a port that is not a number: Ray says what is wrong with it
        return None
    if not parts.hostname:
        return None
    return parts.hostname, port or (CLIENT_PORT if scheme == "ray" else GCS_PORT)


def check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """``PgStudioError`` in one line when the host and port of ``address`` do not accept a TCP
    connection within ``timeout_s`` seconds (the module docstring says why)."""
    target = host_port(address)
    if target is None:
        return
    host, port = target
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        if isinstance(exc, TimeoutError):
            what = f"did not answer within {timeout_s:g} s"
        elif isinstance(exc, ConnectionRefusedError):
            what = "refused the connection (nothing listens there)"
        else:
            what = f"cannot be reached ({exc.strerror or type(exc).__name__})"
        raise PgStudioError(f"no Ray cluster answers at {address!r}: {host}:{port} {what}; {NO_CLUSTER_FIX}") from None


def ray_module() -> Any:
    """The ``ray`` module, or a clear error saying how to get it."""
    try:
        import ray
    except ImportError:
        raise PgStudioError("the Ray executor needs Ray: pip install 'pgstudio[cluster]' (ray>=2.40)") from None
    return ray


def _task(fn: Any, args: tuple, kwargs: dict, payload: Any) -> tuple[Any, Any]:
    """What a Ray worker runs: the job, its error as data, and its payload as a second return."""
    return run_job(fn, args, kwargs, payload, keep_payload=True, worker=True)


_REMOTE: dict[str, Any] = {}


def _remote(ray: Any, gpu: bool) -> Any:
    """The remote function for CPU or GPU jobs (GPU: ``num_gpus=1``, a fresh worker per task)."""
    key = "gpu" if gpu else "cpu"
    if key not in _REMOTE:
        _REMOTE[key] = ray.remote(num_gpus=1)(_task) if gpu else ray.remote(num_cpus=1)(_task)
    return _REMOTE[key]


class RaySession(Session):
    def __init__(self, executor: "RayExecutor") -> None:
        self.ex = executor
        self.ray = executor.connect()
        self.pending: dict[Any, tuple[Job, Any, float | None]] = {}
        self.cancelled: set[Any] = set()
        self.ready: deque[Outcome] = deque()
        self.gpus: int | None = None  # asked once per session: a sweep submits thousands of jobs

    def submit(self, job: Job, payload: Any = None) -> None:
        if job.gpu and self.gpus is None:
            self.gpus = self.ex.gpu_count()
        if job.gpu and self.gpus == 0:
            self.ready.append(Outcome(job, error=no_gpu()))
            return
        task = _remote(self.ray, job.gpu).options(num_returns=2, max_retries=self.ex.max_retries,
                                                  retry_exceptions=False, name=f"pgstudio:{job.key}"[:120])
        value_ref, payload_ref = task.remote(job.fn, job.args, dict(job.kwargs), payload)
        limit = job.timeout_s if job.timeout_s is not None else (self.ex.timeout_s if job.gpu else None)
        self.pending[value_ref] = (job, payload_ref, time.monotonic() + limit if limit else None)

    def __iter__(self) -> Iterator[Outcome]:
        ray = self.ray
        while self.ready or self.pending:
            if self.ready:
                yield self.ready.popleft()
                continue
            done, _ = ray.wait(list(self.pending), num_returns=1, timeout=0.2)
            now = time.monotonic()
            for ref, (_job, _, deadline) in self.pending.items():
                if deadline is not None and now > deadline and ref not in self.cancelled:
                    self.cancelled.add(ref)
                    ray.cancel(ref, force=True)
            for ref in done:
                self.ready.append(self._finish(ref))

    def _finish(self, ref: Any) -> Outcome:
        ray = self.ray
        job, payload_ref, _ = self.pending.pop(ref)
        try:
            raw = ray.get(ref)
        except ray.exceptions.TaskCancelledError:
            limit = job.timeout_s if job.timeout_s is not None else self.ex.timeout_s
            return Outcome(job, error=Failure(
                "Timeout", f"{job.name} did not finish within {limit:.0f} s, so Ray stopped its worker: a kernel that "
                "loops outside the watchdog's barrier waits, or a time limit too short for the work (timeout_s)",
                crashed=True), where="ray")
        except ray.exceptions.RayError as exc:  # the worker died on every attempt, the node went away ...
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return Outcome(job, error=Failure(
                "WorkerDied", f"the Ray worker running {job.name} died after {self.ex.max_retries} retries "
                f"({type(exc).__name__}: {first})", crashed=True), attempts=self.ex.max_retries + 1, where="ray")
        value, error, seconds, where = unwrap(raw)
        return Outcome(job, value, error, 1, f"ray {where}".strip(), seconds, payload_ref)

    def close(self) -> None:
        for ref in list(self.pending):
            self.ray.cancel(ref, force=True)
        self.pending.clear()


class RayExecutor(Executor):
    """Jobs as Ray tasks (see the module docstring)."""

    name = "ray"

    def __init__(self, address: str | None = None, *, max_retries: int = MAX_RETRIES,
                 timeout_s: float | None = GPU_TIMEOUT_S, connect_timeout_s: float = CONNECT_TIMEOUT_S,
                 **init_kwargs: Any) -> None:
        self.address = address
        self.max_retries = int(max_retries)
        self.timeout_s = timeout_s
        self.connect_timeout_s = float(connect_timeout_s)
        self.init_kwargs = init_kwargs
        self.started = False

    def connect(self) -> Any:
        """``ray``, initialised (see the module docstring for ``address``)."""
        ray = ray_module()
        if ray.is_initialized():
            return ray
        kw = dict(self.init_kwargs)
        kw.setdefault("include_dashboard", False)
        kw.setdefault("log_to_driver", False)
        if self.address not in (None, "local"):
            check_reachable(self.address, self.connect_timeout_s)  # ray.init would wait for minutes
            kw["address"] = self.address
        try:
            ray.init(**kw)
        except ConnectionError as exc:
            raise PgStudioError(f"no Ray cluster answers at {self.address!r} ({exc}); {NO_CLUSTER_FIX}") from None
        self.started = True
        return ray

    def _resources(self) -> dict:
        return self.connect().cluster_resources()

    def gpu_count(self) -> int:
        return int(self._resources().get("GPU", 0))

    def cpu_count(self) -> int:
        return max(1, int(self._resources().get("CPU", 1)))

    def describe(self) -> str:
        res = self._resources()
        nodes = sum(1 for k in res if k.startswith("node:") and k != "node:__internal_head__")
        return f"ray: {nodes} node(s), {int(res.get('CPU', 0))} CPU(s), {int(res.get('GPU', 0))} GPU(s)"

    def session(self, on_progress: ProgressCallback | None = None) -> RaySession:
        return RaySession(self)

    def close(self) -> None:
        """Shut Ray down if this executor started it (a cluster it joined keeps running)."""
        if self.started:
            ray_module().shutdown()
            self.started = False


__all__ = ["CONNECT_TIMEOUT_S", "RayExecutor", "RaySession", "check_reachable", "host_port", "ray_module"]

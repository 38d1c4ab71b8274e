"""Jobs for the executor tests: plain top-level functions a spawned worker can import by name; and
``outcomes``, which runs a list of them through one session."""

import os
import time


def square(x):
    return x * x


def fail(x):
    raise ValueError(f"job {x} failed on purpose")


def die(_x=None):
    os._exit(7)  # the worker process vanishes, as after a crash in native code


def sleep(seconds):
    time.sleep(seconds)
    return os.getpid()


def pid():
    return os.getpid()


def visible_devices():
    return os.environ.get("CUDA_VISIBLE_DEVICES")


def break_context():
    """Mark this worker's GPU context broken (as a trap would) and fail."""
    from pgstudio.runtime.executor import _job
    _job._POISONED.append("test")
    raise RuntimeError("cudaErrorIllegalAddress (simulated)")


# -- design functions for runtime.isolated.on_gpu: fn(design, executor="inline", **kwargs) --------

def describe(design, executor=None, steps=3):
    """Reports progress like a benchmark does, then returns what it saw."""
    from pgstudio.runtime.progress import Progress
    bar = Progress(steps, "benchmark", "launch", enabled=True)
    for i in range(steps):
        bar.update(1, f"round {i}")
    bar.close()
    return {"design": design.name, "executor": executor, "pid": os.getpid(), "steps": steps}


def crash(design, executor=None):
    """Dies as a process does when the driver kills it."""
    os._exit(9)


def hang_report(design, executor=None):
    from pgstudio.errors import KernelHangError
    raise KernelHangError(f"kernel of {design.name} hung", {"task": "store", "stage": 2})


def outcomes(ex, job_list):
    """Submit ``job_list`` to one session of executor ``ex``: each job's outcome by its key."""
    with ex.session() as s:
        for job in job_list:
            s.submit(job)
        return {o.job.key: o for o in s}

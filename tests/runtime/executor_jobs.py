"""Jobs for the executor tests: plain top-level functions a spawned worker can import by name."""

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

"""Runtime tests share the streaming designs of the code generator's tests, and one local Ray
instance per test session."""

import os
import secrets
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))


@pytest.fixture(scope="session")
def ray_local(tmp_path_factory):
    """One local Ray instance for the session: 2 CPUs (and the GPUs Ray finds), no dashboard,
    files under pytest's temporary directory, the auth token from the environment (Ray would
    otherwise write ~/.ray/auth_token), a kernel cache of its own."""
    import ray  # tests that use this are marked `cluster`: skipped without Ray, failing in CI
    tmp = tmp_path_factory.mktemp("ray")
    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_TOKEN", "PGSTUDIO_CACHE")}
    os.environ["RAY_AUTH_TOKEN"] = saved["RAY_AUTH_TOKEN"] or secrets.token_hex(16)  # not ~/.ray/auth_token
    os.environ["PGSTUDIO_CACHE"] = str(tmp / "cache")  # Ray's workers inherit it: a cache of their own
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=str(tmp / "r"),
                 object_store_memory=100 * 1024 * 1024)
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    yield ray
    if started:
        ray.shutdown()

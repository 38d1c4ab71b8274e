"""Servers and a browser for the real-browser tests: Voila or JupyterLab serving a notebook from a
temp folder, and Debian's chromium driven by Playwright (no browser download).

Everything runs under a temp HOME with temp Jupyter dirs; servers start and stop inside the test,
each on a free port (a port another process takes first is retried on another); every wait has a
timeout, and pytest-timeout bounds each test as a whole.  Screenshots go to a folder of their own
per test run, ``test-artifacts/<run>/`` at the repository root (git-ignored; ``<run>`` is
``$PGSTUDIO_TEST_RUN`` or the start time and process id), so a CI run keeps them and two runs on
one machine never overwrite each other's files.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TOKEN = "pgstudio-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PortTaken(RuntimeError):
    """The server exited because another process bound its port between ``free_port()`` and its start."""


def wait_for_http(url: str, proc: subprocess.Popen, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            text = log.read_text()
            kind = PortTaken if "already in use" in text.lower() else RuntimeError
            raise kind(f"server exited with {proc.returncode}:\n{text[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:  # an answer, if not a page: the server is up
            return
        except Exception:
            time.sleep(0.3)
    raise TimeoutError(f"server did not answer {url} within {timeout} s:\n{log.read_text()[-3000:]}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


@pytest.fixture
def jupyter_env(tmp_path) -> dict:
    """A private HOME and Jupyter / matplotlib dirs, so runs leave nothing behind and share nothing."""
    dirs = {k: tmp_path / k.lower() for k in ("HOME", "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR",
                                              "JUPYTER_DATA_DIR", "JUPYTERLAB_SETTINGS_DIR",
                                              "JUPYTERLAB_WORKSPACES_DIR", "MPLCONFIGDIR")}
    for d in dirs.values():
        d.mkdir()
    (dirs["JUPYTER_CONFIG_DIR"] / "labconfig").mkdir()
    # no "get notified about Jupyter news?" toast over the page
    (dirs["JUPYTER_CONFIG_DIR"] / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
    env.update({k: str(v) for k, v in dirs.items()})
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@contextlib.contextmanager
def serve(cmd: list[str], env: dict, url: str, log: Path, timeout: float = 60) -> Iterator[None]:
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        wait_for_http(url, proc, timeout, log)
        yield
    finally:
        stop(proc)


def serve_on_a_free_port(stack: contextlib.ExitStack, command, env: dict, log: Path, attempts: int = 3) -> int:
    """Start ``command(port) -> (argv, ready url)`` on a free port; a port taken in the meantime
    (another test run on this machine) is retried on a new one.  Returns the port."""
    for attempt in range(attempts):
        port = free_port()
        cmd, url = command(port)
        try:
            stack.enter_context(serve(cmd, env, url, log))
            return port
        except PortTaken:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


@pytest.fixture
def voila(jupyter_env, tmp_path):
    """``voila(notebook) -> url``: serve one notebook with Voila until the test ends."""
    stack = contextlib.ExitStack()

    def start(notebook: Path) -> str:
        def command(port: int):
            return ([sys.executable, "-m", "voila", str(notebook), "--no-browser", f"--port={port}",
                     "--Voila.ip=127.0.0.1", "--show_tracebacks=True"],
                    # not the page itself: every request of it runs the notebook in a new kernel
                    # (whose studio would autosave before the test's own first visit)
                    f"http://127.0.0.1:{port}/api/status")

        port = serve_on_a_free_port(stack, command, jupyter_env, tmp_path / "voila.log")
        return f"http://127.0.0.1:{port}/"

    with stack:
        yield start


@pytest.fixture
def lab(jupyter_env, tmp_path):
    """``lab(root, notebook) -> url``: JupyterLab on ``root`` until the test ends (token auth), with
    ``notebook``'s kernel already started and idle (``start_notebook_kernel``); the url opens it."""
    stack = contextlib.ExitStack()

    def start(root: Path, notebook: str) -> str:
        def command(port: int):
            return ([sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                     "--port-retries=0", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
                     "--allow-root", "--LabApp.expose_app_in_browser=True",
                     "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
                    f"http://127.0.0.1:{port}/api/status?token={TOKEN}")

        port = serve_on_a_free_port(stack, command, jupyter_env, tmp_path / "lab.log")
        base = f"http://127.0.0.1:{port}"
        start_notebook_kernel(base, notebook)
        return f"{base}/lab/tree/{notebook}?token={TOKEN}&reset"

    with stack:
        yield start


def api(base: str, path: str, body: dict | None = None, timeout: float = 60) -> dict:
    """One Jupyter server REST call with the test token (GET, or POST of ``body`` as JSON)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"{base}{path}", data=data, method="GET" if body is None else "POST",
                                 headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"{}")


def start_notebook_kernel(base: str, path: str) -> str:
    """Start the notebook's python3 kernel through the server (the call returns once the kernel
    process is up) before Lab opens the notebook: Lab then attaches to this session instead of
    choosing a kernel itself, which on a loaded machine can end in its modal "Select Kernel"
    dialog (Lab looks for the notebook's kernel among kernel specs it may not have fetched yet).
    Returns the kernel id; the page then waits for the kernel to report idle to Lab."""
    session = api(base, "/api/sessions", {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}})
    return session["kernel"]["id"]


@pytest.fixture
def page(jupyter_env, request, artifacts):
    """A chromium page (1400x1000) with a 30 s default timeout on every wait.  What the page
    writes to its console (errors, warnings) is kept as ``<test>.console.txt`` beside the
    screenshots: a failure in the front end shows there, not in the test's own output."""
    from playwright.sync_api import sync_playwright

    console: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, env=jupyter_env, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run", "--disable-quic"])
        try:
            pg = browser.new_page(viewport={"width": 1400, "height": 1000})
            pg.set_default_timeout(30_000)
            start = time.monotonic()
            pg.on("console", lambda m: console.append(f"{time.monotonic() - start:8.1f} s {m.type}: {m.text}"))
            pg.on("pageerror", lambda e: console.append(f"{time.monotonic() - start:8.1f} s page error: {e}"))
            yield pg
        finally:
            browser.close()
            (artifacts / f"{request.node.name}.console.txt").write_text("\n".join(console) + "\n")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """This run's folder under ``test-artifacts/`` (created on first use)."""
    run = os.environ.get("PGSTUDIO_TEST_RUN") or f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    folder = ARTIFACTS / run
    folder.mkdir(parents=True, exist_ok=True)
    return folder

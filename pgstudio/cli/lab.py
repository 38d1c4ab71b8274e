"""``pgstudio lab [DIR]``: JupyterLab on the teaching notebooks (``00_studio`` opens the studio).

The server saves notebooks through pgstudio's pre-save hook (``studio._notebook_save``): no widget
views or state, no timings, so running the studio's cells never makes a committed notebook differ."""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from ..errors import PgStudioError
from ..studio._notebook_save import SERVER_ARGS
from ._common import count

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "lab"
HELP = "open JupyterLab on the teaching notebooks (the studio is in 00_studio)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", nargs="?", default="notebooks", help="folder to open (default: notebooks)")
    p.add_argument("--port", type=count(1, 65535), default=None, help="port for the server (default: JupyterLab's)")
    p.add_argument("--allow-root", action="store_true",
                   help="let JupyterLab run as root (passed on by itself when pgstudio runs as root, as in a container)")


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        raise PgStudioError(f"no folder {str(folder)!r} to open; run from the pgstudio checkout or give a folder")
    if importlib.util.find_spec("jupyterlab") is None:
        raise PgStudioError("JupyterLab is not installed; install the studio extra: pip install 'pgstudio[studio]'")
    cmd = [sys.executable, "-m", "jupyter", "lab", str(folder), *SERVER_ARGS]
    if args.port:
        cmd.append(f"--port={args.port}")
    if args.allow_root or _is_root():  # JupyterLab refuses root unless told: a container's user often is
        cmd.append("--allow-root")
    return subprocess.call(cmd)

"""Which Graphviz executable lays out the dependency graph.

The system ``dot`` when it is on the PATH (full Graphviz); otherwise the ``graphviz-pure``
wheel (one static binary, no apt needed: what CI and a plain ``pip install`` get).  The
``graphviz`` Python package runs whatever ``graphviz.backend.dot_command.DOT_BINARY`` names, so
we point it there.  That attribute is not documented API, hence the ``graphviz<0.22`` pin and
a test.  graphviz-pure renders SVG and PNG (not PDF), and ``graphviz.version()`` cannot parse
its banner, so pgstudio never calls it.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

from ..errors import PgStudioError

__all__ = ["PURE", "find_pure", "select"]

PURE = "graphviz-pure"


def _script_dirs() -> list[Path]:
    """Where pip puts console scripts for this interpreter (venv, system, --user)."""
    dirs = [Path(sys.executable).parent]
    for scheme in (None, f"{os.name}_user"):
        try:
            path = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        if path:
            dirs.append(Path(path))
    return dirs


def find_pure() -> Path | None:
    """The graphviz-pure executable, on the PATH or beside this interpreter."""
    found = shutil.which(PURE)
    if found:
        return Path(found)
    for d in _script_dirs():
        for name in (PURE, PURE + ".exe"):
            if (d / name).is_file():
                return d / name
    return None


def select() -> str:
    """Point the graphviz package at ``dot`` or graphviz-pure; return which ("dot" / path).

    Called before each layout (cheap), so installing Graphviz mid-session is noticed.
    """
    try:
        import graphviz.backend.dot_command as dot_command
    except ImportError as exc:
        raise PgStudioError("the dependency graph needs the 'graphviz' Python package: "
                            "pip install 'pgstudio[render]'") from exc
    dot = shutil.which("dot")
    if dot:
        dot_command.DOT_BINARY = Path("dot")
        return "dot"
    pure = find_pure()
    if pure is None:
        raise PgStudioError("no Graphviz executable: neither 'dot' is on the PATH nor 'graphviz-pure' is installed; "
                            "pip install graphviz-pure (or apt-get install graphviz)")
    dot_command.DOT_BINARY = pure
    return str(pure)

"""notebooks/_build.py loaded once, as a module: the notebooks' cells, their stated numbers and
the designs they time, for the tests that check them."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@functools.lru_cache(maxsize=1)
def builder():
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOKS / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

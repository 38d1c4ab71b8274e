"""The examples in docstrings run: every ``>>>`` line in pgstudio is a test (doctest)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import pgstudio

ROOT = Path(pgstudio.__file__).parent
MODULES = sorted(".".join(p.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
                 for p in ROOT.rglob("*.py") if p.name != "__main__.py" and ">>> " in p.read_text())


def test_there_are_examples_to_run():
    assert len(MODULES) >= 3, MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (run python -m doctest -v)"

"""Puts this folder on sys.path so the notebook tests share their helpers (pytest runs with
--import-mode=importlib, which puts no test folder on sys.path)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

"""Make the checker's independent reference (``unrolled_reference.py``) importable (pytest runs
with --import-mode=importlib, which puts no test folder on sys.path)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

"""Shared helpers of the TS tests: small canonical designs (TS's own checker explores every
interleaving of the schedules it is given, so CI hands it short loops), and TS's objects read
into plain numbers."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

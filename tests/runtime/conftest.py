"""Runtime tests share the streaming designs of the code generator's tests (``ray_local``, one
local Ray instance per test session, is in the top-level conftest: the explorer's tests use it too)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))

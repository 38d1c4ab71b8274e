"""Runtime tests share the streaming designs of the code generator's tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))

"""The notebook studio: ``Studio(design)`` edits one Design with widgets and redraws every pane.

The only package that imports ipywidgets; it is imported on first use of ``Studio`` so that
``import pgstudio.studio`` stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Studio"]


def __getattr__(name: str) -> Any:
    if name == "Studio":
        from .app import Studio
        return Studio
    raise AttributeError(f"module 'pgstudio.studio' has no attribute {name!r}")

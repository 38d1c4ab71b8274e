"""Save / load a design file, upload one, and the offer to restore the autosaved design."""

from __future__ import annotations

from html import escape
from typing import Any, Callable

import ipywidgets as W

from ._ui import button



class FileBar:
    def __init__(self, current: Callable[[], Any], *, save: Callable[[str], Any], load: Callable[[str], Any],
                 load_bytes: Callable[[bytes, str], Any]) -> None:
        """``current()``: the design (for the default file name); ``save(path)`` / ``load(path)`` /
        ``load_bytes(data, name)``: the file edits."""
        self.current, self._save_to, self._load_from, self._load_bytes = current, save, load, load_bytes
        self.path = W.Text(placeholder="my_design.json", layout=W.Layout(width="auto", flex="1 1 220px", min_width="160px",
                                                                          max_width="260px"),
                           description="file", style={"description_width": "30px"})
        self.save = button("Save", self._save, icon="save", tip="write the design as JSON to this file")
        self.load = button("Load", self._load, icon="folder-open", tip="read a design JSON file (undo brings the old one back)")
        self.upload = W.FileUpload(accept=".json", multiple=False, description="Upload JSON",
                                   layout=W.Layout(width="auto"))
        self.upload.observe(self._uploaded, names="value")
        # wraps in a narrow pane rather than cutting off its last buttons
        self.widget = W.HBox([self.path, self.save, self.load, self.upload],
                             layout=W.Layout(align_items="center", flex_flow="row wrap"))
        self.widget.add_class("pg-file-bar")

    def _save(self) -> None:
        self._save_to(self.path.value or f"{self.current().name}.json")

    def _load(self) -> None:
        self._load_from(self.path.value)

    def _uploaded(self, change: dict) -> None:
        files = change["new"]
        if not files:
            return
        f = files[0]
        content = f["content"] if isinstance(f, dict) else getattr(f, "content", b"")
        name = f["name"] if isinstance(f, dict) else getattr(f, "name", "upload")
        self._load_bytes(bytes(content), name)
        self.upload.value = ()

    def refresh(self, design: Any) -> None:
        if not self.path.value:
            self.path.value = f"{design.name}.json"


class RestoreBanner:
    """Shown when an earlier visit's autosave differs from the design on screen: restore it,
    discard it, or keep both (the earlier one as a design file beside the autosave).  Until one
    is chosen the studio writes no autosave, so reloading the page or running the notebook's cells
    never replaces what is offered."""

    def __init__(self, *, restore: Callable[[], Any], discard: Callable[[], Any], keep_both: Callable[[], Any]) -> None:
        self.text = W.HTML()
        self.version = W.Dropdown(options=[], layout=W.Layout(width="auto", max_width="320px"),
                                  description="version", style={"description_width": "52px"})
        self.restore = button("Restore it", restore, icon="undo", style="warning",
                              tip="open the autosaved design (undo brings back the one on screen)")
        self.discard = button("Discard", discard, tip="keep the design on screen; the autosaved one is not offered again")
        self.keep_both = button("Keep both", keep_both, icon="copy",
                                tip="save the autosaved design as a file beside the autosave and carry on with this one")
        self.widget = W.HBox([self.text, self.version, self.restore, self.discard, self.keep_both],
                             layout=W.Layout(align_items="center", flex_flow="row wrap"))
        self.widget.add_class("pg-restore")
        self.hide()

    def offer(self, versions: list, path: str) -> None:
        """``versions``: (label, key) pairs, newest first."""
        self.version.options = versions
        self.version.value = versions[0][1]
        self.version.layout.display = None if len(versions) > 1 else "none"
        label = versions[0][0]
        self.text.value = (f"<div class='pg-banner'>An autosaved design from an earlier visit was found: "
                           f"<b>{escape(label)}</b> (<code>{escape(path)}</code>). Autosave waits until you "
                           f"restore, discard or keep both.</div>")
        self.widget.layout.display = None

    def hide(self) -> None:
        self.widget.layout.display = "none"

    @property
    def shown(self) -> bool:
        return self.widget.layout.display != "none"

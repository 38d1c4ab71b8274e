"""The studio's side of the autosave: offer an earlier visit's design before writing anything.

``Keeper`` owns the ``AutosaveFile`` of one studio and the banner's three choices.  While an
offer is open, edits are not written (``save`` returns at once): a notebook that builds and edits
its studio in its first cells, "Run All", or a reloaded page can therefore never replace what the
person did last time.  Every failure is a message; a file that cannot be used turns autosave off
rather than being replaced.
"""

from __future__ import annotations

import os
from typing import Callable

from ..model.design import Design
from ._autosave import AutosaveFile, AutosaveRefused, AutosaveUnreadable, Version
from ._file_bar import RestoreBanner
from ._files import autosave_path, set_aside


class Keeper:
    """``say(text, bad)``: the studio's message line; ``open_design(design, what)``: an undoable edit."""

    def __init__(self, name: str, folder: str | os.PathLike | None, *, say: Callable[..., None],
                 open_design: Callable[[Design, str], None], enabled: bool = True) -> None:
        self.file: AutosaveFile | None = AutosaveFile(name, autosave_path(name, folder)) if enabled else None
        self.say, self.open_design = say, open_design
        self.offered: list[Version] = []
        self._failed = False
        self._written: Design | None = None
        self.banner = RestoreBanner(restore=self.restore, discard=self.discard, keep_both=self.keep_both)

    @property
    def path(self):
        return self.file.path if self.file is not None else None

    @property
    def waiting(self) -> bool:
        """An offer is open: nothing is written until the person chooses."""
        return bool(self.offered)

    def _versions(self) -> list[Version] | None:
        """The file's versions, or None after turning autosave off / keeping the file aside."""
        assert self.file is not None
        try:
            return self.file.versions()
        except AutosaveRefused as exc:
            self._turn_off(str(exc))
        except AutosaveUnreadable as exc:
            self._keep_aside(str(exc))
        return None

    def latest(self) -> Design | None:
        """The newest design not discarded earlier (what a studio opened without a design shows)."""
        if self.file is None:
            return None
        vs = [v for v in (self._versions() or []) if not v.dismissed]
        return vs[0].design if vs else None

    def offer(self, current: Design) -> None:
        """Show the banner when an earlier visit saved a design other than ``current``."""
        if self.file is None:
            return
        vs = [v for v in (self._versions() or []) if not v.dismissed and v.visit != self.file.visit]
        if not vs or vs[0].design == current:
            return
        self.offered = vs
        self.banner.offer([(f"{v.design.name}, saved {v.when}", i) for i, v in enumerate(vs)], str(self.file.path))

    def _chosen(self) -> Version:
        return self.offered[self.banner.version.value or 0]

    def _close(self) -> None:
        self.offered = []
        self.banner.hide()

    # -- the three choices ------------------------------------------------------------------
    def restore(self) -> bool:
        """Open the chosen version (undo returns to what was on screen)."""
        if not self.offered or self.file is None:
            return False
        chosen = self._chosen()
        versions = self._versions()
        if versions is None:  # unreadable now: kept aside (or autosave turned off), and said so
            return False
        now = {v.visit: v for v in versions}
        if chosen.visit not in now:  # the file changed since the offer (or was kept aside)
            self._close()
            if self.file is not None:
                self.say(f"the autosave {self.file.path} changed since it was offered; nothing restored", bad=True)
            return False
        self._close()
        self.open_design(now[chosen.visit].design, f"restored the autosave of {chosen.when}")
        return True

    def discard(self) -> None:
        """Keep the design on screen; the offered version stays in the file, not offered again."""
        if not self.offered or self.file is None:
            return
        chosen = self._chosen()
        try:
            self.file.dismiss(chosen.visit)
        except (AutosaveRefused, AutosaveUnreadable, OSError) as exc:
            self.say(f"cannot mark the autosave as discarded: {exc}", bad=True)
        self._close()
        self.say(f"discarded the autosave of {chosen.when} (kept in {self.file.path} until newer visits replace it)")

    def keep_both(self) -> None:
        """Write the offered design to a file of its own beside the autosave and carry on."""
        if not self.offered or self.file is None:
            return
        chosen = self._chosen()
        try:
            copy = self.file.keep_copy(chosen)
        except (AutosaveRefused, OSError) as exc:
            self.say(f"cannot keep a copy of the autosave ({exc}); it stays offered", bad=True)
            return
        self._close()
        self.say(f"kept the autosave of {chosen.when} as {copy} (Load it any time)")

    # -- writing ----------------------------------------------------------------------------
    def save(self, design: Design) -> None:
        """This visit's entry becomes ``design`` -- unless an offer is open or nothing changed."""
        if self.file is None or self.waiting or design == self._written:
            return
        try:
            self.file.save(design)
            self._written, self._failed = design, False
        except AutosaveRefused as exc:
            self._turn_off(str(exc))
        except AutosaveUnreadable as exc:
            self._keep_aside(str(exc))
        except OSError as exc:
            if not self._failed:
                self.say(f"autosave to {self.file.path} failed: {exc.strerror or exc}", bad=True)
            self._failed = True

    def _turn_off(self, why: str) -> None:
        self.file, self.offered = None, []
        self.banner.hide()
        self.say(f"autosave is off for this studio: {why}; nothing there is replaced (give the studio another "
                 f"name=, or move the file away and reopen)", bad=True)

    def _keep_aside(self, why: str) -> None:
        """An autosave that cannot be read may still be a person's only copy: rename it aside,
        and if even that fails, stop autosaving so that no edit overwrites it."""
        assert self.file is not None
        path = self.file.path
        try:
            aside = set_aside(path)
        except OSError as exc:
            self.file, self.offered = None, []
            self.banner.hide()
            self.say(f"the autosave file could not be read ({why}) nor kept aside ({exc.strerror or exc}); "
                     f"autosave is off for this studio so that it is not overwritten: move {path} away and reopen",
                     bad=True)
            return
        self.offered = []
        self.banner.hide()
        self.say(f"the autosave file could not be read ({why}); it is kept as {aside} and a new autosave starts",
                 bad=True)

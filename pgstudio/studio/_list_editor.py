"""What the resource, group and task editors share: a list of one kind of design element, an add
button that selects what it added, remove and rename of the selected one, and a refresh that keeps
the selection across edits.  Each editor says which elements (``kind``), how to describe one,
and which studio edits add / remove / rename them."""

from __future__ import annotations

from typing import Any, Callable

from ._ui import option_values, set_options


class ListEditor:
    """Mixin; the subclass provides ``self.current`` (returns the current design), ``self.sync``,
    ``self.list`` and ``show()``."""

    kind: str = ""  # "resources" | "groups" | "tasks": the Design attribute listed
    keep_last: bool = False  # with nothing selected, pick the last element (else the first)

    @staticmethod
    def describe(element: Any) -> str:  # pragma: no cover - every editor overrides it
        return element.name

    def show(self, design: Any) -> None:  # pragma: no cover - every editor overrides it
        raise NotImplementedError

    def _elements(self, design: Any) -> tuple:
        return getattr(design, self.kind)

    @property
    def selected(self) -> str | None:
        return self.list.value

    def _add_with(self, add: Callable[[], Any]) -> None:
        """Run a studio ``add_*`` edit and select the element it created."""
        before = {e.name for e in self._elements(self.current())}
        if add():
            new = [e.name for e in self._elements(self.current()) if e.name not in before]
            if new:
                self.select(new[0])

    def _remove_with(self, remove: Callable[[str], Any]) -> None:
        if self.selected:
            remove(self.selected)

    def _rename_with(self, rename: Callable[[str, str], Any], new: str) -> None:
        new = new.strip()
        if self.selected and rename(self.selected, new):
            self.select(new)

    def select(self, name: str) -> None:
        with self.sync():
            if name in option_values(self.list):
                self.list.value = name
        self.show(self.current())

    def refresh(self, design: Any) -> None:
        elements = self._elements(design)
        names = [e.name for e in elements]
        fallback = (names[-1] if self.keep_last else names[0]) if names else None
        keep = self.list.value if self.list.value in names else fallback
        with self.sync():
            set_options(self.list, [(self.describe(e), e.name) for e in elements], keep)
        self.show(design)

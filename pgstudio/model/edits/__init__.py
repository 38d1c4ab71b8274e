"""Every edit of a design, as a pure function ``Design -> Design``.

The studio's editors only collect values and call these; a diagnostic's one-click ``Fix`` names
one of them (``FIX_EDITS``); tests call them directly, without widgets.
They build resources, groups and tasks through the ``unchecked`` paths and the ``Design`` edit
helpers, so a design may hold a wrong state while the user is still editing (the diagnostics
pane says what is wrong).  An edit that cannot be expressed at all (a name that is not an
identifier, a negative warp index) raises ``EditError`` with a message for the user.
"""

from __future__ import annotations

from . import common, fixes, groups_tasks, problem, resources
from .common import *  # noqa: F403  (each part's __all__ is the package's, listed once)
from .fixes import *  # noqa: F403
from .groups_tasks import *  # noqa: F403
from .problem import *  # noqa: F403
from .resources import *  # noqa: F403

__all__ = [*common.__all__, *resources.__all__, *groups_tasks.__all__, *problem.__all__, *fixes.__all__]

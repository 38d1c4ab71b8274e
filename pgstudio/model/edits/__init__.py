"""Every edit of a design, as a pure function ``Design -> Design``.

The studio's editors only collect values and call these; a diagnostic's one-click ``Fix`` names
one of them (``FIX_EDITS``); tests call them directly, without widgets.
They build resources, groups and tasks through the ``unchecked`` paths and the ``Design`` edit
helpers, so a design may hold a wrong state while the user is still editing (the diagnostics
pane says what is wrong).  An edit that cannot be expressed at all (a name that is not an
identifier, a negative warp index) raises ``EditError`` with a message for the user.
"""

from __future__ import annotations

from .common import (NOT_PIPELINED, DEFAULT_COMPUTE, ASYNC_DEFAULT_THREADS, EditError, unique_name, check_new_name)
from .fixes import (set_resources, update_problem, set_stage_bytes, retile_gemm, FIX_EDITS, apply_fix)
from .groups_tasks import (add_group, add_task, attach_schedule, merge_tasks, remove_group, remove_task, set_group,
                           set_task, use_derived_schedule)
from .problem import (blank_design, derived_problem, parse_problem, problem_text, rename_design, set_problem,
                      set_problem_value)
from .resources import (add_edge, default_group, edges, new_resource, parse_tile, remove_edge, remove_resource,
                        rename_resource, set_resource, tile_bytes)

__all__ = [
    "NOT_PIPELINED",
    "DEFAULT_COMPUTE",
    "ASYNC_DEFAULT_THREADS",
    "EditError",
    "unique_name",
    "check_new_name",
    "default_group",
    "new_resource",
    "rename_resource",
    "parse_tile",
    "tile_bytes",
    "set_resource",
    "remove_resource",
    "add_edge",
    "remove_edge",
    "edges",
    "add_group",
    "set_group",
    "remove_group",
    "add_task",
    "set_task",
    "merge_tasks",
    "remove_task",
    "attach_schedule",
    "use_derived_schedule",
    "rename_design",
    "parse_problem",
    "problem_text",
    "set_problem",
    "derived_problem",
    "set_problem_value",
    "blank_design",
    "set_resources",
    "update_problem",
    "set_stage_bytes",
    "retile_gemm",
    "FIX_EDITS",
    "apply_fix",
]

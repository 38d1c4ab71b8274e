"""One palette for every picture, so a colour means the same thing in all three.

* memory kinds colour resources (dependency graph nodes, barrier-layout row labels);
* roles colour barriers and the arrows of the tasks that arrive on them: **full** (blue) is
  what producers arrive on and consumers wait on, **empty** (orange) the other way round;
* stages colour barrier cells and the work done in that stage on the timeline, so "stage 2"
  is the same colour in the barrier strip and in the timeline.

Nothing here imports graphviz or matplotlib: the values are plain strings.
"""

from __future__ import annotations

from ..analysis.timeline import role_of  # noqa: F401 - the rule lives with the timeline; drawn here

__all__ = [
    "MEMORY",
    "MEMORY_WHAT",
    "ROLE",
    "ROLE_WHAT",
    "STAGES",
    "NO_STAGE",
    "SEVERITY",
    "HIGHLIGHT",
    "INK",
    "MUTED",
    "TASK_FILL",
    "TASK_BORDER",
    "SYNC",
    "GROUP_FILL",
    "FONT",
    "stage_colour",
    "memory_colours",
    "role_of",
    "role_colour",
    "fmt_warps",
    "fmt_threads",
    "fmt_bytes",
]

#: Resources by memory: (fill, border).
MEMORY = {
    "gmem": ("#E8EEF4", "#5D6D7E"),
    "smem": ("#E2F0D9", "#3C8D40"),
    "tmem": ("#EFE3F6", "#7D3C98"),
}
MEMORY_WHAT = {"gmem": "global memory", "smem": "shared memory", "tmem": "tensor memory"}

#: Barrier roles: full = producers arrive / consumers wait; empty = consumers arrive / producers wait.
ROLE = {"full": "#1F6FB4", "empty": "#D35400"}
ROLE_WHAT = {"full": "full: producer arrives, consumer waits", "empty": "empty: consumer arrives, producer waits"}

#: Stage colours (cycled when a pipeline has more stages than colours).
STAGES = ("#B8E186", "#FDE08B", "#C2B9E0", "#8FD5C9", "#F8C3DC", "#F6B98A", "#A9CCE8", "#D8D8A0")
#: Work that belongs to no pipeline stage (e.g. a store to global memory).
NO_STAGE = "#D5D8DC"

#: Diagnostics and selection.
SEVERITY = {"error": "#C0392B", "warning": "#B9770E", "info": "#2E86C1"}
HIGHLIGHT = "#F1C40F"

#: Neutral ink.
INK = "#2C3E50"
MUTED = "#7F8C8D"
TASK_FILL = "#FFFFFF"
TASK_BORDER = "#34495E"
SYNC = "#95A5A6"
GROUP_FILL = "#FBFCFC"

FONT = "Helvetica"  # graphviz-pure knows its metrics; SVG viewers substitute a sans font


def stage_colour(stage: int) -> str:
    """The colour of ``stage`` (cycled); NO_STAGE for -1 (work outside any pipeline)."""
    return NO_STAGE if stage is None or stage < 0 else STAGES[stage % len(STAGES)]


def memory_colours(memory: str) -> tuple[str, str]:
    """(fill, border) for a memory kind name; grey for an unknown one."""
    return MEMORY.get(str(memory), ("#FFFFFF", MUTED))


def role_colour(barrier_or_role: str) -> str:
    return ROLE.get(barrier_or_role) or ROLE[role_of(barrier_or_role)]


def fmt_warps(threads: int) -> str:
    """An arrive count in warps: 128 -> '4 warps', 32 -> '1 warp', 129 -> '4 warps + 1', 1 -> '1 thread'.

    Init counts are thread counts (every thread of the cooperative group arrives); a form that
    asks for warps (``CooperativeGroup(Agent.Warp, 4)``) means 4 x 32 of them."""
    warps, rest = divmod(threads, 32)
    if not warps:
        return f"{threads} thread{'s' if threads != 1 else ''}"
    head = f"{warps} warp{'s' if warps != 1 else ''}"
    return head if not rest else f"{head} + {rest}"


def fmt_threads(threads: int) -> str:
    """'128 threads = 4 warps', '1 thread', '129 threads = 4 warps + 1'."""
    text = f"{threads} thread{'s' if threads != 1 else ''}"
    return text if threads < 32 else f"{text} = {fmt_warps(threads)}"


def fmt_bytes(n: int) -> str:
    """16384 -> '16 KiB', 96 -> '96 B' (exact when not a whole KiB)."""
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"

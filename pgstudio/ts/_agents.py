"""Which agent a script's cooperative groups count in, once the tasks are known.

Two things a ``CooperativeGroup`` alone does not say:

- **pgstudio's warps.**  An exported script writes every group as ``Agent.Thread`` with its thread
  count (``_cooperative.py`` says why), so a design's ``CooperativeGroup(Agent.Warp, 4)`` would come
  back as 128 threads: the same arrivals, another design.  The script therefore lists the groups
  pgstudio counts in warps in a module-level ``warp_groups`` (``{"smem_a": ["consumer"], ...}``,
  by resource or group name), which TS ignores and import reads back.
- **CUTLASS's one arrival per warp.**  A TmaAsync consumer of ``n`` warps may give
  ``CooperativeGroup(Agent.Thread, n)``: TS then initialises the empty barrier with ``n`` and one
  lane of each warp releases.  pgstudio's consumers release from every thread, so import reads
  that group as the ``n`` warps it stands for (``Warp n``, 32n arrivals): the phase completes when
  the same warps have released.  pgstudio's barrier for it counts 32n where TS's counts n (a known
  difference, docs/ts.md); an export writes the 32n threads, which TS reads the same way.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import DesignError
from ..model.config import CooperativeGroup
from ..model.kinds import Agent, PipelineType

#: The module-level name an exported script lists pgstudio's Warp groups in.
WARP_GROUPS = "warp_groups"
SIDES = ("producer", "consumer")


def warp_sides(module: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """``warp_groups`` of a script as {owner name: sides}; absent means none."""
    table = module.get(WARP_GROUPS)
    if table is None:
        return {}
    ok = isinstance(table, dict) and all(
        isinstance(k, str) and isinstance(v, (list, tuple)) and all(s in SIDES for s in v) for k, v in table.items())
    if not ok:
        raise DesignError(f"ts: {WARP_GROUPS} is {table!r}, expected a dict of resource or group names to lists of "
                          f"'producer' / 'consumer'", code="ts.script",
                          hint=f"write {WARP_GROUPS} = {{\"smem_a\": [\"consumer\"]}} or leave it out (a pgstudio name "
                               f"TS ignores)")
    return {k: tuple(v) for k, v in table.items()}


def _in_warps(cfg, sides: tuple[str, ...], owner: str):
    changes = {}
    for side in sides:
        group = cfg.group(side)
        if group.agent is Agent.Warp:
            continue
        if group.size % 32:
            raise DesignError(f"ts: {WARP_GROUPS} counts {owner!r}'s {side} group in warps, but it has {group.size} "
                              f"threads, not whole warps", code="ts.script",
                              hint=f"drop {owner!r} from {WARP_GROUPS} or give a multiple of 32 threads")
        changes[f"{side}_group"] = CooperativeGroup(Agent.Warp, group.size // 32)
    return dataclasses.replace(cfg, **changes) if changes else cfg


def _per_warp_consumer(cfg, warps: int):
    """A TmaAsync consumer group of one arrival per warp as the warps it stands for (module docstring)."""
    group = cfg.consumer_group
    one_per_warp = cfg.pipeline_type is PipelineType.TmaAsync and group.agent is Agent.Thread \
        and warps > 0 and group.size == warps
    return dataclasses.replace(cfg, consumer_group=CooperativeGroup(Agent.Warp, warps)) if one_per_warp else cfg


def read_agents(model: dict[str, Any], module: dict[str, Any], consumer_warps: dict[str, int]) -> dict[str, Any]:
    """The model resources with their groups in the agents the script means (module docstring).
    ``consumer_warps``: per resource, the warps of the tasks that consume it."""
    sides = warp_sides(module)
    out = {}
    for name, r in model.items():
        cfg = r.pipeline_config
        if cfg is not None:
            new = _in_warps(cfg, sides.get(name, ()), name) if name in sides else \
                _per_warp_consumer(cfg, consumer_warps.get(name, 0))
            if new is not cfg:
                r = dataclasses.replace(r, pipeline_config=new)
        out[name] = r
    return out


def explicit_in_warps(cfg, group: str, module: dict[str, Any]):
    """A group's explicit config with the sides ``warp_groups`` lists for it in warps."""
    sides = warp_sides(module).get(group)
    return cfg if cfg is None or not sides else _in_warps(cfg, sides, group)


def warp_groups_text(design) -> dict[str, list[str]]:
    """What an exported script lists in ``warp_groups``: every Warp group of the design."""
    out: dict[str, list[str]] = {}
    owners = [(r.name, r.pipeline_config) for r in design.resources] + \
        [(g.name, g.pipeline_config) for g in design.groups]
    for owner, cfg in owners:
        if cfg is not None:
            sides = [s for s in SIDES if cfg.group(s).agent is Agent.Warp]
            if sides:
                out[owner] = sides
    return out


__all__ = ["WARP_GROUPS", "explicit_in_warps", "read_agents", "warp_groups_text", "warp_sides"]

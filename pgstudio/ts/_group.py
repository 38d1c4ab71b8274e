"""TS's ``PipelineGroup``: members that one task drives together share one barrier set.

``PipelineGroup(name=..., members=[...], mode=PipelineGroupMode.X, pipeline_config=None)`` checks
its members with pgstudio's construction rules (``model/group_rules.py``) and raises
``DesignError`` (a ``ValueError``, as TS raises) on the first problem.  As in TS, a checked group
claims its members (``member.pipeline_group``): a resource object belongs to one group while
either lives, and a refused group claims nothing.  ``group.member`` (``ab.smem_a``) is how a
schedule reaches one member; the group object itself only takes the collapsed stage.

A TS Fork loads one buffer once, so its members view the first member's buffer unless a member
says otherwise (``aliases``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import DesignError
from ..model.group import PipelineGroup as ModelGroup
from ..model.group import PipelineGroupMode
from ..model.names import check_name
from ._agents import explicit_in_warps
from ._config import PipelineConfig
from ._resource import _CREATED, MemoryResource, WorkQueue, to_model
from ._unmodelled import TSAttributes, listed_owner, unmodelled_attribute


class PipelineGroup(TSAttributes):
    """See the module docstring."""

    def __init__(self, *, name: str = "", members: Sequence[Any] = (), mode: Any = PipelineGroupMode.Merge,
                 pipeline_config: PipelineConfig | None = None, **_ts_runtime: Any) -> None:
        check_name(name, "group")
        try:
            mode = PipelineGroupMode(getattr(mode, "value", mode))
        except ValueError:
            raise DesignError(f"group {name!r}: mode {mode!r} is not one of "
                              f"{', '.join(m.value for m in PipelineGroupMode)}", code="group.mode",
                              hint="use PipelineGroupMode.Merge, .Fork or .FusedMerge") from None
        members = list(members) if isinstance(members, (list, tuple)) else members
        if not isinstance(members, list) or not all(isinstance(m, MemoryResource) and not isinstance(m, WorkQueue)
                                                    for m in members):
            raise DesignError(f"group {name!r}: members must be a list of resource objects, got {members!r}",
                              code="group.members", hint="pass members=[smem_a, smem_b] (the resources themselves)")
        if pipeline_config is not None and not isinstance(pipeline_config, PipelineConfig):
            raise DesignError(f"group {name!r}: pipeline_config is {pipeline_config!r}, expected a config from "
                              f"PipelineConfig.create_*_pipeline_cfg(...) or None", code="group.explicit_config",
                              hint="drop pipeline_config (the group derives it)")
        for m in members:
            if m.pipeline_group is not None:
                raise DesignError(f"resource {m.name!r} is already in group {m.pipeline_group.name!r}; a resource "
                                  f"object belongs to one group while either of them lives", code="group.membership",
                                  hint="group a new resource object")
        self.name = name
        self.members = members
        self.mode = mode
        self.pipeline_config = pipeline_config
        self.pipeline_group = None
        # TS's resource fields of a group, at the values TS's group has (none of them modelled).
        self.is_barrier, self.pipeline, self.consumer_wait_signaling_threads = False, None, None
        self.consumer_vars, self.producer_vars = {}, {}
        self.__pgstudio_order__ = next(_CREATED)
        self.model = self.to_model()  # raises on the first broken rule, before anything is claimed
        for m in members:
            m.pipeline_group = self

    def member_aliases(self) -> dict[str, str]:
        """Member name -> the buffer it views, for members that do not say (a Fork's one buffer)."""
        if self.mode is not PipelineGroupMode.Fork or not self.members:
            return {}
        first = self.members[0].name
        return {m.name: first for m in self.members[1:]}

    def to_model(self, resources: dict[str, Any] | None = None, module: dict[str, Any] | None = None) -> ModelGroup:
        """The checked model group; ``resources`` maps names to the design's model resources,
        ``module`` is the script's globals (its ``warp_groups``, ``_agents.py``)."""
        if resources is None:
            aliases = self.member_aliases()
            resources = {m.name: to_model(m, produced=True, aliases=aliases.get(m.name)) for m in self.members}
        explicit = None
        if self.pipeline_config is not None:
            explicit = explicit_in_warps(self.pipeline_config.model, self.name, module or {})
        return ModelGroup(self.name, [resources[m.name] for m in self.members], self.mode, explicit)

    # -- what TS exposes -------------------------------------------------------------------
    @property
    def num_barriers_per_stage(self) -> int:
        return 2 if self.mode is PipelineGroupMode.FusedMerge else len(self.members) + 1

    @property
    def is_heterogeneous(self) -> bool:
        return len({m.pipeline_config.pipeline_type for m in self.members}) > 1

    @property
    def merged_config(self):
        """pgstudio's merged config of the members (``GroupConfig``)."""
        return self.model.merged_config

    def get_smem_requirements(self) -> list:
        """A group's own data SMEM: none (its members' allocations are theirs), as in TS."""
        return []

    def get_tmem_requirements(self) -> list:
        """A group's own TMEM columns: none, as in TS."""
        return []

    def __getattr__(self, name: str) -> "MemberRef":
        if name.startswith("_") or name in ("name", "members", "mode", "pipeline_config", "model"):
            raise AttributeError(name)
        for m in self.__dict__.get("members", ()):
            if m.name == name:
                return MemberRef(self, m)
        if listed_owner(type(self), name) is not None:
            raise unmodelled_attribute("PipelineGroup", name)
        raise AttributeError(f"group {self.__dict__.get('name')!r} has no member {name!r}; members: "
                             f"{', '.join(m.name for m in self.__dict__.get('members', ()))}")

    def __repr__(self) -> str:
        return f"PipelineGroup(name={self.name!r}, members=[{', '.join(m.name for m in self.members)}], " \
               f"mode=PipelineGroupMode.{self.mode.value})"


@dataclass(frozen=True)
class MemberRef:
    """``group.member``: one member reached through its group (how TS schedules take a member)."""

    group: PipelineGroup
    member: MemoryResource

    @property
    def name(self) -> str:
        return self.member.name


__all__ = ["MemberRef", "PipelineGroup", "PipelineGroupMode"]

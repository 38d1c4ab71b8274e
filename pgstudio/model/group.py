"""PipelineGroup: several pipelined resources that one task drives together share one barrier
set on that side (Merge: the empty barrier, Fork: the full barrier, FusedMerge: both).

Members keep their own configs; the group validates them (``group_rules``), derives the merged
config and owns the barrier slots.  In a ``@schedule`` use ``group.<member>`` for per-member
steps and the group object only for its collapsed stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import DesignError
from .config import PipelineConfig
from .diagnostic import raise_first
from .group_rules import check_group, merged_num_bytes
from .kinds import OpKind, PipelineType, Side
from .limits import MAX_RESOURCES, check_count
from .names import check_name
from .protocol import PipelineGroupMode
from .resource import Resource, alias_roots
from .steps import SyncSteps, WorkSteps

__all__ = ["GroupConfig", "OWNER_ATTR", "owner_of", "PipelineGroup", "MemberRef"]


@dataclass(frozen=True)
class GroupConfig:
    """The merged config a group derives from its members (semantics.md section 3)."""

    num_stages: int
    num_bytes: int
    collapsed_side: Side
    collapsed_kind: OpKind
    pipeline_type: PipelineType | None  # None when the members' types differ
    collapsed_threads: int
    many_threads: int
    aliased: bool

    @property
    def type_name(self) -> str:
        """The members' type, or the collapsed kind with 'Mixed' on the other side."""
        if self.pipeline_type is not None:
            return self.pipeline_type.value
        kind = self.collapsed_kind.value.capitalize()
        return f"Mixed{kind}" if self.collapsed_side is Side.CONSUMER else f"{kind}Mixed"


#: The attribute a checked group writes on each member object: the group that owns it, as TS
#: records ``member.pipeline_group``.  It lives on the object itself (never in a registry keyed by
#: ``id()``, which Python reuses), and it is a strong reference, so a resource object belongs to one
#: group while either of them lives.  Copies and pickles of a resource are new objects: unclaimed.
OWNER_ATTR = "_pgstudio_group"


def owner_of(resource: object) -> "PipelineGroup | None":
    """The live group that claimed this resource object at construction, or None."""
    return getattr(resource, "__dict__", {}).get(OWNER_ATTR)


@dataclass(frozen=True)
class PipelineGroup(SyncSteps):
    """``PipelineGroup(name=..., members=[...], mode=PipelineGroupMode.X, pipeline_config=None)``.

    Raises ``DesignError`` (a ``ValueError``) at construction when the members cannot be merged.
    ``PipelineGroup.unchecked(...)`` builds one without checking, so a design can hold a wrong
    group and ``Design.validate()`` can say what is wrong with it.
    """

    name: str
    members: tuple[Resource, ...]
    mode: PipelineGroupMode = PipelineGroupMode.Merge
    pipeline_config: PipelineConfig | None = None

    def __init__(self, name: str, members: Sequence[Resource], mode: PipelineGroupMode = PipelineGroupMode.Merge,
                 pipeline_config: PipelineConfig | None = None, *, _check: bool = True) -> None:
        check_name(name, "group")
        try:
            mode = PipelineGroupMode(mode)
        except ValueError:
            raise DesignError(f"group {name!r}: mode {mode!r} is not one of "
                              f"{', '.join(m.value for m in PipelineGroupMode)}", code="group.mode",
                              hint="use PipelineGroupMode.Merge, .Fork or .FusedMerge") from None
        if isinstance(members, (str, Resource)) or not all(isinstance(m, Resource) for m in members):
            raise DesignError(f"group {name!r}: members must be a list of resource objects, got {members!r}",
                              code="group.members", hint="pass members=[smem_a, smem_b] (the resources, not their names)")
        check_count(len(members), f"group {name!r}: members", MAX_RESOURCES)
        if pipeline_config is not None and not isinstance(pipeline_config, PipelineConfig):
            raise DesignError(f"group {name!r}: pipeline_config is {pipeline_config!r}, expected a PipelineConfig or None",
                              code="group.explicit_config", hint="build it with a create_*_pipeline_cfg factory")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "members", tuple(members))
        object.__setattr__(self, "mode", mode)
        object.__setattr__(self, "pipeline_config", pipeline_config)
        if _check:
            for m in self.members:
                other = owner_of(m)
                if other is not None:
                    same = " (a group of the same name is still another group)" if other.name == name else ""
                    raise DesignError(
                        f"resource {m.name!r} is already in group {other.name!r}{same}; a resource object belongs "
                        f"to one group while either of them lives",
                        code="group.membership",
                        hint=f"call {other.name}.release_members() first, or group a new resource object")
            raise_first(check_group(name, self.members, self.mode, pipeline_config), DesignError)
            # Claim only once every rule passed: a refused group leaves its members free.
            for m in self.members:
                object.__setattr__(m, OWNER_ATTR, self)

    @classmethod
    def unchecked(cls, name: str, members: Sequence[Resource], mode: PipelineGroupMode = PipelineGroupMode.Merge,
                  pipeline_config: PipelineConfig | None = None) -> "PipelineGroup":
        """A group that skips the construction rules (for files and the studio)."""
        return cls(name, members, mode, pipeline_config, _check=False)

    def release_members(self) -> None:
        """Forget this group's claim on its members so they can join another group."""
        for m in self.members:
            if owner_of(m) is self:
                del m.__dict__[OWNER_ATTR]

    # -- derived ----------------------------------------------------------------------------
    @property
    def member_names(self) -> tuple[str, ...]:
        names = self.__dict__.get("_member_names")  # members never change: named once
        if names is None:
            names = tuple(m.name for m in self.members)
            object.__setattr__(self, "_member_names", names)
        return names

    def member(self, name: str) -> "MemberRef":
        for m in self.members:
            if m.name == name:
                return MemberRef(self, m)
        raise AttributeError(f"group {self.name!r} has no member {name!r}; members: {', '.join(self.member_names)}")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("name", "members", "mode", "pipeline_config"):
            raise AttributeError(name)
        return self.member(name)

    @property
    def merged_config(self) -> GroupConfig:
        """The derived config (meaningful for a valid group; see ``check_group``)."""
        side = self.mode.collapsed_side
        other = side.other
        cfgs = [m.pipeline_config for m in self.members if m.pipeline_config is not None]
        if not cfgs:
            raise DesignError(f"group {self.name!r} has no pipelined member, so it has no merged config",
                              code="group.members", hint="give each member its own create_*_pipeline_cfg(...) config")
        types = {c.pipeline_type for c in cfgs}
        first = cfgs[0]
        return GroupConfig(
            num_stages=first.num_stages,
            num_bytes=merged_num_bytes([m for m in self.members if m.pipeline_config is not None], self.mode),
            collapsed_side=side,
            collapsed_kind=first.pipeline_type.kind(side),
            pipeline_type=types.pop() if len(types) == 1 else None,
            collapsed_threads=first.arrive_count(side),
            many_threads=sum(c.arrive_count(other) for c in cfgs),
            aliased=self.mode is PipelineGroupMode.Fork and len(set(alias_roots(self.members).values())) == 1,
        )

    # -- collapsed stage, recorded inside @schedule ---------------------------------------
    def _record(self, op: str, args: dict | None = None) -> None:
        """The collapsed stage on the group object (``mode.group_ops``); other ops are recorded
        too, and rejected by the schedule rules."""
        from .capture import record
        record(op, self, via="group", args={})


@dataclass(frozen=True)
class MemberRef(WorkSteps):
    """``group.member`` inside a schedule: per-member steps that know their group."""

    group: PipelineGroup
    resource: Resource

    @property
    def name(self) -> str:
        return self.resource.name

    def _record(self, op: str, args: dict | None = None) -> Any:
        from .capture import record
        return record(op, self.resource, via="member", args=args or {}, group=self.group)

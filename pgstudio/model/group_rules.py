"""The construction rules of a PipelineGroup (semantics.md section 3), as diagnostics.

``PipelineGroup(...)`` raises the first error of ``check_group`` as ``DesignError`` (a
``ValueError``); ``Design.validate()`` reports all of them.  Same functions, two uses.
"""

from __future__ import annotations

from typing import Iterator, Sequence

from .config import PipelineConfig, threads_text
from .diagnostic import Diagnostic, Fix, error, fix
from .kinds import OpKind, PipelineType
from .resource import Resource, alias_roots

__all__ = ["ALLOWED_MIXES", "check_group", "merged_num_bytes"]

#: The allowed member types per (mode's collapsed side, collapsed kind): the mixes of semantics.md section 3.
ALLOWED_MIXES: dict[tuple[str, OpKind], frozenset[PipelineType]] = {
    ("consumer", OpKind.ASYNC): frozenset({PipelineType.AsyncAsync, PipelineType.TmaAsync, PipelineType.UmmaAsync}),
    ("consumer", OpKind.UMMA): frozenset({PipelineType.TmaUmma, PipelineType.AsyncUmma, PipelineType.UmmaUmma}),
    ("producer", OpKind.TMA): frozenset({PipelineType.TmaAsync, PipelineType.TmaUmma}),
    ("producer", OpKind.ASYNC): frozenset({PipelineType.AsyncAsync, PipelineType.AsyncUmma}),
    ("producer", OpKind.UMMA): frozenset({PipelineType.UmmaAsync, PipelineType.UmmaUmma}),
}


def _members_text(members: Sequence[Resource], value) -> str:
    return ", ".join(f"{m.name!r}={value(m)}" for m in members)


def check_group(name: str, members: Sequence[Resource], mode, pipeline_config: PipelineConfig | None,
                ) -> Iterator[Diagnostic]:
    """Every construction rule, in order; stops after the first structural failure that makes
    later rules meaningless (too few members, a member without a config)."""
    where = (name, *[getattr(m, "name", str(m)) for m in members])
    side = mode.collapsed_side
    if len(members) < 2:
        yield error("group.members", f"group {name!r} ({mode.value}) has {len(members)} member(s), expected at least 2",
                    where, "add the other resources that one task drives together, or drop the group")
        return
    names = [m.name for m in members]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        yield error("group.members", f"group {name!r} lists {', '.join(map(repr, dupes))} more than once",
                    where, "list each member once")
        return
    bare = [m.name for m in members if m.pipeline_config is None]
    if bare:
        yield error("group.members",
                    f"group {name!r}: member(s) {', '.join(map(repr, bare))} have no pipeline_config, "
                    f"expected every member to be a pipelined resource",
                    where, "give each member its own create_*_pipeline_cfg(...) config")
        return
    first = members[0]
    fcfg = first.pipeline_config
    stages = {m.pipeline_config.num_stages for m in members}
    if len(stages) > 1:
        yield error("group.num_stages",
                    f"group {name!r}: members' num_stages differ ({_members_text(members, lambda m: m.pipeline_config.num_stages)}), "
                    f"expected num_stages {fcfg.num_stages} for every member (as {first.name!r})",
                    where, f"give every member num_stages {fcfg.num_stages} (as {first.name!r})",
                    [fix(f"set {m.name}'s num_stages to {fcfg.num_stages}", "set_resource", m.name,
                         num_stages=fcfg.num_stages)
                     for m in members if m.pipeline_config.num_stages != fcfg.num_stages])
    kinds = {m.pipeline_config.pipeline_type.kind(side) for m in members}
    if len(kinds) > 1:
        allowed = " / ".join(
            f"{kind}: {' + '.join(sorted(t.value for t in types))}"
            for (s, kind), types in ALLOWED_MIXES.items() if s == side)
        yield error("group.collapsed_kind",
                    f"group {name!r} ({mode.value}) collapses the {side} side, so every member needs one "
                    f"{side} kind; got {_members_text(members, lambda m: _type_and_kind(m, side))}, "
                    f"expected {side} kind {fcfg.pipeline_type.kind(side)} for every member (as {first.name!r})",
                    where, f"allowed {mode.value} mixes: {allowed}; or leave the odd member out of the group",
                    _kind_fixes(name, members, side))
    sizes = {m.pipeline_config.arrive_count(side) for m in members}
    if len(sizes) > 1:
        yield error("group.collapsed_size",
                    f"group {name!r} ({mode.value}): the collapsed {side} side is driven by one task, so its "
                    f"cooperative groups must match; "
                    f"got {_members_text(members, lambda m: f'{m.pipeline_config.arrive_count(side)} threads')}, "
                    f"expected {fcfg.arrive_count(side)} threads for every member (as {first.name!r})",
                    where, f"give every member the {side}_group of {first.name!r} ({fcfg.group(side)})",
                    [fix(f"set {m.name}'s {side}_group to {threads_text(fcfg.arrive_count(side), fcfg.group(side).agent)}",
                         "set_resource", m.name, **{f"{side}_agent": fcfg.group(side).agent.value,
                                                    f"{side}_size": fcfg.group(side).size})
                     for m in members if m.pipeline_config.arrive_count(side) != fcfg.arrive_count(side)])
    if mode.value == "Fork":
        yield from _check_fork_alias(name, members, where)
    if pipeline_config is not None and not (len(stages) > 1 or len(kinds) > 1 or len(sizes) > 1):
        yield from _check_explicit(name, members, mode, pipeline_config, where)


def _kind_fixes(name: str, members: Sequence[Resource], side: str) -> list[Fix]:
    """Members whose collapsed-side kind differs from the first member's: make each of them the
    first member's pipeline type, or (when two stay) leave them out of the group."""
    first = members[0].pipeline_config.pipeline_type
    odd = [m for m in members if m.pipeline_config.pipeline_type.kind(side) != first.kind(side)]
    fixes = [fix(f"make {m.name} {first.value} (as {members[0].name})", "set_resource", m.name,
                 pipeline_type=first.value) for m in odd]
    keep = [m.name for m in members if m not in odd]
    if len(keep) >= 2:
        fixes.append(fix(f"leave {', '.join(m.name for m in odd)} out of group {name}", "set_group", name,
                         members=tuple(keep)))
    return fixes


def _type_and_kind(m: Resource, side: str) -> str:
    """``TmaAsync (consumer async)``: a member's pipeline type and its kind on ``side``."""
    ptype = m.pipeline_config.pipeline_type
    return f"{ptype} ({side} {ptype.kind(side)})"


def _buffers(members: Sequence[Resource]) -> dict[str, list[Resource]]:
    """Physical buffer -> the members that view it, in member order."""
    out: dict[str, list[Resource]] = {}
    roots = alias_roots(members, past_the_set=True)
    for m in members:
        out.setdefault(roots[m.name], []).append(m)
    return out


def _check_fork_alias(name: str, members: Sequence[Resource], where) -> Iterator[Diagnostic]:
    for root, views in _buffers(members).items():
        nbytes = {m.pipeline_config.num_bytes for m in views}
        if len(views) > 1 and len(nbytes) > 1:
            yield error("group.alias_bytes",
                        f"fork {name!r}: members {', '.join(repr(m.name) for m in views)} view one buffer {root!r} but "
                        f"their num_bytes differ ({_members_text(views, lambda m: m.pipeline_config.num_bytes)}), "
                        f"expected {views[0].pipeline_config.num_bytes} for each (one copy lands once)",
                        where, "give the aliased members the same num_bytes",
                        [fix(f"set {m.name}'s num_bytes to {views[0].pipeline_config.num_bytes}", "set_resource",
                             m.name, num_bytes=views[0].pipeline_config.num_bytes)
                         for m in views[1:] if m.pipeline_config.num_bytes != views[0].pipeline_config.num_bytes])


def merged_num_bytes(members: Sequence[Resource], mode) -> int:
    """Bytes per stage of the group: the sum over members, except that in a Fork the views of
    one physical buffer count once (one copy lands once)."""
    if mode.value == "Fork":
        return sum(views[0].pipeline_config.num_bytes for views in _buffers(members).values())
    return sum(m.pipeline_config.num_bytes for m in members)


def _check_explicit(name: str, members: Sequence[Resource], mode, cfg: PipelineConfig, where,
                    ) -> Iterator[Diagnostic]:
    side = mode.collapsed_side
    first = members[0].pipeline_config
    want = {
        "num_stages": first.num_stages,
        f"{side} kind": first.pipeline_type.kind(side).value,
        "num_bytes": merged_num_bytes(members, mode),
        f"{side}_group threads": first.arrive_count(side),
    }
    got = {
        "num_stages": cfg.num_stages,
        f"{side} kind": cfg.pipeline_type.kind(side).value,
        "num_bytes": cfg.num_bytes,
        f"{side}_group threads": cfg.arrive_count(side),
    }
    types = {m.pipeline_config.pipeline_type for m in members}
    if len(types) == 1:  # members of one type derive exactly that type (TS checks it too)
        want["pipeline_type"], got["pipeline_type"] = first.pipeline_type.value, cfg.pipeline_type.value
    for key, value in want.items():
        if got[key] != value:
            yield error("group.explicit_config",
                        f"group {name!r}: explicit pipeline_config has {key} {got[key]!r}, expected {value!r} "
                        f"(derived from members {', '.join(repr(m.name) for m in members)})",
                        where, "drop pipeline_config (the group derives it) or make it agree with the members")

"""PipelineGroup construction rules (semantics.md section 3), the allowed mixes and the merged config."""

import itertools

import pytest

from pgstudio import (Agent, CooperativeGroup, DesignError, MemoryResource, PipelineGroup, PipelineGroupMode,
                      PipelineType, create_async_umma_pipeline_cfg, create_tma_async_pipeline_cfg,
                      create_tma_umma_pipeline_cfg)
from pgstudio.model import MemberRef
from pgstudio.model.config import FACTORIES
from pgstudio.model.group_rules import ALLOWED_MIXES

Merge, Fork, FusedMerge = PipelineGroupMode.Merge, PipelineGroupMode.Fork, PipelineGroupMode.FusedMerge
T = PipelineType


def res(name, ptype=T.TmaUmma, stages=4, nbytes=1024, aliases=None, **groups):
    cfg = FACTORIES[ptype](num_stages=stages, num_bytes=nbytes, **groups)
    return MemoryResource(name=name, pipeline_config=cfg, aliases=aliases)


def threads(n):
    return CooperativeGroup(Agent.Thread, n)


def reject(code, *args, **kwargs):
    with pytest.raises(DesignError) as err:
        PipelineGroup(*args, **kwargs)
    assert err.value.code == code, str(err.value)
    return str(err.value)


# -- rule 1: members ------------------------------------------------------------------------------

def test_a_valid_group_constructs_and_exposes_its_members():
    a, b = res("smem_a"), res("smem_b")
    g = PipelineGroup(name="ab", members=[a, b], mode=Merge)
    assert g.member_names == ("smem_a", "smem_b")
    assert isinstance(g.smem_a, MemberRef) and g.smem_a.resource is a and g.smem_b.name == "smem_b"
    with pytest.raises(AttributeError, match="group 'ab' has no member 'smem_c'; members: smem_a, smem_b"):
        _ = g.smem_c


def test_one_member_is_rejected():
    msg = reject("group.members", name="solo", members=[res("smem_a")], mode=Merge)
    assert "group 'solo' (Merge) has 1 member(s), expected at least 2" in msg


def test_a_member_listed_twice_is_rejected():
    a = res("smem_a")
    msg = reject("group.members", "ab", [a, a], Merge)
    assert "'smem_a' more than once" in msg


def test_a_member_without_pipeline_config_is_rejected():
    msg = reject("group.members", "ab", [res("smem_a"), MemoryResource(name="smem_b")], Merge)
    assert "member(s) 'smem_b' have no pipeline_config" in msg and "expected every member to be a pipelined" in msg


def test_members_must_be_resource_objects():
    msg = reject("group.members", "ab", ["smem_a", "smem_b"], Merge)
    assert "members must be a list of resource objects" in msg


def test_an_unknown_mode_is_rejected():
    msg = reject("group.mode", "ab", [res("smem_a"), res("smem_b")], "Zip")
    assert "mode 'Zip' is not one of Merge, Fork, FusedMerge" in msg
    assert PipelineGroup("ab", [res("smem_a"), res("smem_b")], "Fork").mode is Fork  # the string value works


def test_a_resource_already_in_another_group_is_rejected():
    a, b, c = res("smem_a"), res("smem_b"), res("smem_c")
    first = PipelineGroup("ab", [a, b], Merge)
    msg = reject("group.membership", "ac", [a, c], Merge)
    assert "resource 'smem_a' is already in group 'ab'" in msg
    first.release_members()
    assert PipelineGroup("ac", [a, c], Merge).member_names == ("smem_a", "smem_c")


def test_a_second_group_of_the_same_name_cannot_claim_a_member_of_a_live_group():
    a, b, c = res("smem_a"), res("smem_b"), res("smem_c")
    first = PipelineGroup("ab", [a, b], Merge)
    msg = reject("group.membership", "ab", [a, c], Merge)
    assert "already in group 'ab' (a group of the same name is still another group)" in msg
    assert first.member_names == ("smem_a", "smem_b")


def test_membership_lasts_while_the_member_or_the_group_lives_as_in_ts():
    import gc

    a, b = res("smem_a"), res("smem_b")
    PipelineGroup("ab", [a, b], Merge)  # the group object is dropped at once ...
    gc.collect()
    msg = reject("group.membership", "ac", [a, res("smem_c")], Merge)  # ... but its member keeps it alive
    assert "resource 'smem_a' is already in group 'ab'" in msg and "fix: call ab.release_members() first" in msg


def test_a_refused_group_claims_nothing():
    a, bad = res("smem_a"), res("smem_b", stages=3)
    reject("group.num_stages", "ab", [a, bad], Merge)
    assert PipelineGroup("ab", [a, res("smem_c")], Merge).member_names == ("smem_a", "smem_c")


def test_copies_and_pickles_of_a_member_are_new_unclaimed_resources():
    import copy
    import pickle

    a = res("smem_a")
    g = PipelineGroup("ab", [a, res("smem_b")], Merge)
    for twin in (copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert twin == a and twin is not a
        assert PipelineGroup("g2", [twin, res("smem_c")], Merge).member_names == ("smem_a", "smem_c")
    assert pickle.loads(pickle.dumps(g)).member_names == ("smem_a", "smem_b")


def test_unchecked_groups_neither_check_nor_claim():
    a = res("smem_a")
    bad = PipelineGroup.unchecked("solo", [a], Merge)
    assert bad.members == (a,)
    assert PipelineGroup("ab", [a, res("smem_b")], Merge).member_names == ("smem_a", "smem_b")


def test_group_names_must_be_identifiers():
    with pytest.raises(DesignError, match="group name 'a b' is not an identifier"):
        PipelineGroup("a b", [res("smem_a"), res("smem_b")], Merge)


def test_group_errors_are_value_errors_as_in_ts():
    with pytest.raises(ValueError):
        PipelineGroup("ab", [res("smem_a")], Merge)


# -- rule 2: num_stages ----------------------------------------------------------------------------

@pytest.mark.parametrize("mode", list(PipelineGroupMode))
def test_members_num_stages_must_match(mode):
    msg = reject("group.num_stages", "ab", [res("smem_a", stages=4), res("smem_b", stages=3)], mode)
    assert "'smem_a'=4, 'smem_b'=3" in msg and "expected num_stages 4 for every member (as 'smem_a')" in msg
    assert PipelineGroup("ab", [res("smem_a", stages=3), res("smem_b", stages=3)], mode)


# -- rule 3: collapsed kind and the table of allowed mixes ------------------------------------------

# The contract's table of allowed mixes (semantics.md section 3), written out here independently of
# ALLOWED_MIXES (FusedMerge validates like Merge).
CONTRACT_MIXES = {
    Merge: [{T.AsyncAsync, T.TmaAsync, T.UmmaAsync}, {T.TmaUmma, T.AsyncUmma, T.UmmaUmma}],
    Fork: [{T.TmaAsync, T.TmaUmma}, {T.AsyncAsync, T.AsyncUmma}, {T.UmmaAsync, T.UmmaUmma}],
}
CONTRACT_MIXES[FusedMerge] = CONTRACT_MIXES[Merge]


def test_the_mix_table_is_the_contracts():
    for mode in (Merge, Fork):
        rows = [set(types) for (side, _), types in ALLOWED_MIXES.items() if side == mode.collapsed_side]
        assert sorted(map(sorted, rows)) == sorted(map(sorted, CONTRACT_MIXES[mode]))


@pytest.mark.parametrize("mode", list(PipelineGroupMode))
@pytest.mark.parametrize("t1,t2", list(itertools.product(list(T), repeat=2)))
def test_every_pair_constructs_exactly_when_the_contract_allows_it(mode, t1, t2):
    a, b = res("smem_a", t1), res("smem_b", t2)
    allowed = any({t1, t2} <= row for row in CONTRACT_MIXES[mode])
    if allowed:
        g = PipelineGroup("ab", [a, b], mode)
        assert g.merged_config.pipeline_type is (t1 if t1 is t2 else None)
    else:
        side = mode.collapsed_side
        msg = reject("group.collapsed_kind", "ab", [a, b], mode)
        assert f"collapses the {side} side" in msg
        assert f"'smem_a'={t1} ({side} {t1.kind(side)})" in msg and f"'smem_b'={t2} ({side} {t2.kind(side)})" in msg
        assert f"expected {side} kind {t1.kind(side)} for every member (as 'smem_a')" in msg


@pytest.mark.parametrize("mode", list(PipelineGroupMode))
def test_every_full_row_of_the_table_constructs(mode):
    for row in CONTRACT_MIXES[mode]:
        members = [res(f"smem_{t.value.lower()}", t) for t in sorted(row)]
        g = PipelineGroup("mix", members, mode)
        assert len(g.members) == len(row)


# -- rule 4: collapsed-side size -------------------------------------------------------------------

def test_merge_consumer_sizes_must_match_producer_sizes_may_differ():
    a = res("smem_a", T.TmaAsync, consumer_group=threads(128))
    b = res("smem_b", T.TmaAsync, consumer_group=threads(64))
    msg = reject("group.collapsed_size", "ab", [a, b], Merge)
    assert "collapsed consumer side" in msg and "'smem_a'=128 threads, 'smem_b'=64 threads" in msg
    assert "expected 128 threads for every member (as 'smem_a')" in msg
    # the many (producer) side is free: one member's producer is 1 tma thread, the other 96 async threads
    c = res("smem_c", T.AsyncAsync, producer_group=threads(96), consumer_group=threads(128))
    assert PipelineGroup("ac", [res("smem_d", T.TmaAsync), c], Merge)


def test_fork_producer_sizes_must_match_consumer_sizes_may_differ():
    a = res("smem_a", T.AsyncAsync, producer_group=threads(128))
    b = res("smem_b", T.AsyncUmma, producer_group=threads(32))
    msg = reject("group.collapsed_size", "ab", [a, b], Fork)
    assert "collapsed producer side" in msg and "'smem_a'=128 threads, 'smem_b'=32 threads" in msg
    c = res("smem_c", T.TmaAsync, consumer_group=threads(4))
    d = res("smem_d", T.TmaUmma)
    assert PipelineGroup("cd", [c, d], Fork)


def test_fused_merge_checks_the_consumer_size():
    a = res("smem_a", T.TmaAsync, consumer_group=threads(128))
    b = res("smem_b", T.AsyncAsync, consumer_group=threads(32))
    assert "expected 128 threads" in reject("group.collapsed_size", "ab", [a, b], FusedMerge)


# -- aliased Fork ----------------------------------------------------------------------------------

def test_aliased_fork_members_need_equal_bytes():
    x = res("smem_x", T.TmaAsync, nbytes=4096)
    y = res("smem_y", T.TmaUmma, nbytes=2048, aliases="smem_x")
    msg = reject("group.alias_bytes", "xy", [x, y], Fork)
    assert "'smem_x', 'smem_y' view one buffer 'smem_x'" in msg and "'smem_x'=4096, 'smem_y'=2048" in msg
    assert "expected 4096 for each" in msg
    y_ok = res("smem_y", T.TmaUmma, nbytes=4096, aliases="smem_x")
    assert PipelineGroup("xy", [res("smem_x", T.TmaAsync, nbytes=4096), y_ok], Fork)


# -- rule 5: explicit pipeline_config --------------------------------------------------------------

def _merge_members():
    a = res("smem_a", T.TmaUmma, nbytes=16384)
    b = res("smem_b", T.AsyncUmma, nbytes=8192, producer_group=threads(128))
    return a, b


def test_an_explicit_config_that_agrees_is_accepted():
    a, b = _merge_members()
    cfg = create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=16384 + 8192)
    assert PipelineGroup("ab", [a, b], Merge, pipeline_config=cfg).pipeline_config is cfg


@pytest.mark.parametrize("cfg,quoted", [
    (create_tma_umma_pipeline_cfg(num_stages=2, num_bytes=24576), "num_stages 2, expected 4"),
    (create_tma_async_pipeline_cfg(num_stages=4, num_bytes=24576), "consumer kind 'async', expected 'umma'"),
    (create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=16384), "num_bytes 16384, expected 24576"),
    (create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=24576, consumer_group=threads(2)),
     "consumer_group threads 2, expected 1"),
])
def test_an_explicit_config_that_disagrees_is_rejected(cfg, quoted):
    a, b = _merge_members()
    msg = reject("group.explicit_config", "ab", [a, b], Merge, pipeline_config=cfg)
    assert f"explicit pipeline_config has {quoted}" in msg and "members 'smem_a', 'smem_b'" in msg


def test_an_explicit_fork_config_is_checked_on_the_producer_side():
    x = res("smem_x", T.TmaAsync, nbytes=4096)
    y = res("smem_y", T.TmaUmma, nbytes=4096, aliases="smem_x")
    ok = create_tma_async_pipeline_cfg(num_stages=4, num_bytes=4096)  # aliased: one copy's bytes
    assert PipelineGroup("xy", [x, y], Fork, pipeline_config=ok)
    bad = create_tma_async_pipeline_cfg(num_stages=4, num_bytes=8192)
    msg = reject("group.explicit_config", "xy2", [res("smem_p", T.TmaAsync, nbytes=4096),
                                                    res("smem_q", T.TmaUmma, nbytes=4096, aliases="smem_p")],
                 Fork, pipeline_config=bad)
    assert "num_bytes 8192, expected 4096" in msg


def test_an_explicit_config_of_members_of_one_type_must_have_that_type():
    a, b = res("smem_a", T.TmaUmma), res("smem_b", T.TmaUmma)  # consumer kind umma either way
    cfg = create_async_umma_pipeline_cfg(num_stages=4, num_bytes=2048, producer_group=threads(1))
    msg = reject("group.explicit_config", "ab", [a, b], Merge, pipeline_config=cfg)
    assert "explicit pipeline_config has pipeline_type 'AsyncUmma', expected 'TmaUmma'" in msg


def test_explicit_config_must_be_a_pipeline_config():
    assert "expected a PipelineConfig" in reject("group.explicit_config", "ab", [res("smem_a"), res("smem_b")],
                                                 Merge, pipeline_config={"num_stages": 4})


# -- the merged config -----------------------------------------------------------------------------

def test_merge_sums_bytes_and_many_side_sizes():
    a, b = _merge_members()
    m = PipelineGroup("ab", [a, b], Merge).merged_config
    assert (m.num_stages, m.num_bytes) == (4, 16384 + 8192)
    assert (m.collapsed_side, m.collapsed_kind.value, m.collapsed_threads, m.many_threads) == ("consumer", "umma", 1, 129)
    assert m.pipeline_type is None and m.type_name == "MixedUmma" and not m.aliased


def test_fused_merge_sums_like_merge():
    a, b = res("smem_a", nbytes=1024), res("smem_b", nbytes=2048)
    m = PipelineGroup("ab", [a, b], FusedMerge).merged_config
    assert (m.num_bytes, m.many_threads, m.pipeline_type, m.type_name) == (3072, 2, T.TmaUmma, "TmaUmma")


def test_fork_of_distinct_buffers_sums_and_aliased_fork_counts_one_copy():
    distinct = PipelineGroup("xy", [res("smem_x", T.TmaAsync, nbytes=4096), res("smem_y", T.TmaUmma, nbytes=2048)], Fork)
    m = distinct.merged_config
    assert (m.num_bytes, m.aliased, m.type_name, m.collapsed_threads) == (6144, False, "TmaMixed", 1)
    x = res("smem_p", T.TmaAsync, nbytes=4096, consumer_group=threads(4))
    y = res("smem_q", T.TmaUmma, nbytes=4096, aliases="smem_p")
    m = PipelineGroup("pq", [x, y], Fork).merged_config
    assert (m.num_bytes, m.aliased, m.many_threads) == (4096, True, 5)


def test_fork_with_two_views_of_one_buffer_and_a_third_buffer():
    p = res("smem_p", T.TmaAsync, nbytes=4096)
    q = res("smem_q", T.TmaUmma, nbytes=4096, aliases="smem_p")
    r = res("smem_r", T.TmaAsync, nbytes=1024)
    m = PipelineGroup("pqr", [p, q, r], Fork).merged_config
    assert (m.num_bytes, m.aliased) == (4096 + 1024, False)

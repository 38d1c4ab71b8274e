"""PipelineConfig factories and the config rules (semantics.md section 2)."""

import dataclasses
import re

import pytest

from pgstudio import (Agent, AsyncProducerOp, CooperativeGroup, DesignError, PipelineConfig, PipelineType,
                      create_async_async_pipeline_cfg, create_async_umma_pipeline_cfg, create_tma_async_pipeline_cfg,
                      create_tma_umma_pipeline_cfg, create_umma_async_pipeline_cfg, create_umma_umma_pipeline_cfg)
from pgstudio.model.config import FACTORIES, check_config

# (factory, type, default producer threads, default consumer threads): tma / umma sides are one
# elected thread, async sides a warpgroup (semantics.md section 2).
FACTORY_TABLE = [
    (create_async_async_pipeline_cfg, PipelineType.AsyncAsync, 128, 128),
    (create_tma_async_pipeline_cfg, PipelineType.TmaAsync, 1, 128),
    (create_tma_umma_pipeline_cfg, PipelineType.TmaUmma, 1, 1),
    (create_umma_async_pipeline_cfg, PipelineType.UmmaAsync, 1, 128),
    (create_async_umma_pipeline_cfg, PipelineType.AsyncUmma, 128, 1),
    (create_umma_umma_pipeline_cfg, PipelineType.UmmaUmma, 1, 1),
]


@pytest.mark.parametrize("factory,ptype,producers,consumers", FACTORY_TABLE)
def test_factory_builds_its_type_with_default_groups(factory, ptype, producers, consumers):
    cfg = factory(num_stages=3, num_bytes=1024)
    assert cfg.pipeline_type is ptype
    assert (cfg.num_stages, cfg.num_bytes) == (3, 1024)
    assert cfg.arrive_count("producer") == producers
    assert cfg.arrive_count("consumer") == consumers
    assert FACTORIES[ptype] is factory


@pytest.mark.parametrize("factory", [row[0] for row in FACTORY_TABLE])
def test_factories_are_keyword_only(factory):
    with pytest.raises(TypeError):
        factory(2, 1024)


def test_kinds_of_every_type():
    kinds = {t.value: (t.producer_kind.value, t.consumer_kind.value) for t in PipelineType}
    assert kinds == {"AsyncAsync": ("async", "async"), "TmaAsync": ("tma", "async"), "TmaUmma": ("tma", "umma"),
                     "UmmaAsync": ("umma", "async"), "AsyncUmma": ("async", "umma"), "UmmaUmma": ("umma", "umma")}


def test_cooperative_group_counts_threads_or_warps():
    assert CooperativeGroup(Agent.Thread, 7).num_threads == 7
    assert CooperativeGroup(Agent.Warp, 4).num_threads == 128
    # the enum's string value means the same thing (files and the studio hold strings)
    assert CooperativeGroup("Warp", 2).num_threads == 64
    assert CooperativeGroup("Warp", 2) == CooperativeGroup(Agent.Warp, 2)


def test_explicit_groups_set_the_arrive_counts():
    cfg = create_async_umma_pipeline_cfg(num_stages=2, producer_group=CooperativeGroup(Agent.Thread, 64),
                                         async_producer_op=AsyncProducerOp.AsyncLoad)
    assert cfg.arrive_count("producer") == 64 and cfg.arrive_count("consumer") == 1
    assert cfg.async_producer_op is AsyncProducerOp.AsyncLoad


@pytest.mark.parametrize("kwargs,code,quoted", [
    (dict(num_stages=0, num_bytes=1024), "config.num_stages", "num_stages is 0, expected an integer from 1 to 64"),
    (dict(num_stages=True, num_bytes=1024), "config.num_stages", "num_stages is True, expected an integer from 1 to 64"),
    (dict(num_stages="2", num_bytes=1024), "config.num_stages", "num_stages is '2', expected an integer from 1 to 64"),
    (dict(num_stages=65, num_bytes=1024), "config.num_stages", "num_stages is 65, expected an integer from 1 to 64"),
    (dict(num_stages=2.0, num_bytes=1024), "config.num_stages", "num_stages is 2.0, expected an integer from 1 to 64"),
    (dict(num_stages=2, num_bytes=-16), "config.num_bytes", "num_bytes is -16, expected an integer from 0 to 1048575"),
    (dict(num_stages=2, num_bytes=1 << 20), "config.num_bytes", "num_bytes is 1048576, expected an integer from 0 to"),
    (dict(num_stages=2, num_bytes=0), "config.tma_bytes", "num_bytes is 0, expected a positive multiple of 16"),
    (dict(num_stages=2, num_bytes=100), "config.tma_bytes", "num_bytes is 100, expected a positive multiple of 16"),
    (dict(num_stages=2, num_bytes=1024, producer_group=128), "config.group_size",
     "producer_group is 128, expected a CooperativeGroup"),
])
def test_config_rules_reject_with_value_and_expected(kwargs, code, quoted):
    with pytest.raises(DesignError) as err:
        create_tma_async_pipeline_cfg(**kwargs)
    assert err.value.code == code
    assert quoted in str(err.value)
    assert isinstance(err.value, ValueError)


def test_config_rules_accept_the_boundary_values():
    assert create_tma_async_pipeline_cfg(num_stages=1, num_bytes=16).num_stages == 1
    # only a tma producer needs bytes: the others may land 0 bytes (e.g. a flag-only pipeline)
    assert create_async_async_pipeline_cfg(num_stages=1, num_bytes=0).num_bytes == 0
    assert create_umma_umma_pipeline_cfg(num_stages=1).num_bytes == 0
    assert create_async_async_pipeline_cfg(num_stages=2, num_bytes=12).num_bytes == 12  # not tma: no alignment


def test_unknown_enum_values_are_design_errors():
    with pytest.raises(DesignError, match="cooperative group agent 'Block' is not one of Thread, Warp"):
        CooperativeGroup("Block", 1)
    with pytest.raises(DesignError, match="pipeline_type 'TmaTma' is not one of"):
        PipelineConfig("TmaTma")


@pytest.mark.parametrize("agent,size,quoted", [
    (Agent.Warp, 0, "cooperative group size (Warp) is 0, expected an integer from 1 to 32"),
    (Agent.Warp, 33, "cooperative group size (Warp) is 33, expected an integer from 1 to 32"),
    (Agent.Thread, 1025, "cooperative group size (Thread) is 1025, expected an integer from 1 to 1024"),
    (Agent.Thread, -1, "cooperative group size (Thread) is -1"),
    (Agent.Thread, 1.5, "cooperative group size (Thread) is 1.5"),
])
def test_cooperative_group_sizes_fit_one_block(agent, size, quoted):
    with pytest.raises(DesignError, match=re.escape(quoted)) as err:
        CooperativeGroup(agent, size)
    assert err.value.code == "config.group_size"
    assert CooperativeGroup(agent, 32).num_threads in (32, 1024)


def test_the_config_dataclass_checks_its_value_domain_too():
    """Not only the factories: dataclasses.replace, the studio and the file loader build the
    dataclass, and a config with 0 stages must not exist (every ring divides by it)."""
    cfg = create_tma_async_pipeline_cfg(num_stages=2, num_bytes=1024)
    for change in (dict(num_stages=0), dict(num_stages=10 ** 9), dict(num_bytes=-1), dict(num_bytes=float("nan"))):
        with pytest.raises(DesignError) as err:
            dataclasses.replace(cfg, **change)
        assert err.value.code in ("config.num_stages", "config.num_bytes")


def test_check_config_names_the_resource():
    cfg = PipelineConfig(PipelineType.TmaAsync, num_stages=2, num_bytes=24)
    diags = list(check_config(cfg, "smem_a"))
    assert [d.code for d in diags] == ["config.tma_bytes"]
    assert all(d.where == ("smem_a",) and "resource 'smem_a'" in d.message for d in diags)
    assert "num_bytes is 24" in diags[0].message and "TmaAsync" in diags[0].message


def test_factories_are_also_static_methods_of_pipeline_config_as_in_ts():
    from pgstudio.model.config import FACTORIES

    for ptype, factory in FACTORIES.items():
        method = getattr(PipelineConfig, factory.__name__)
        assert method is factory
        cfg = method(num_stages=3, num_bytes=1024)
        assert cfg == factory(num_stages=3, num_bytes=1024) and cfg.pipeline_type is ptype

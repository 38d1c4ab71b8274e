"""The cluster rule: which operand tile a cluster's blocks share, with how many peers, and the
clusters pgstudio refuses to model (with the rule's name, the values and the fix)."""

import dataclasses

import pytest

from pgstudio import examples
from pgstudio.analysis.cluster import cluster_of, require_modelled
from pgstudio.errors import DesignError
from pgstudio.model.config import FACTORIES
from pgstudio.model.kinds import PipelineType


def with_problem(design, **keys):
    return design.replace(problem={**design.problem_dict, **keys})


@pytest.mark.parametrize("shape, tile, peers", [((1, 2), "smem_a", 2), ((2, 1), "smem_b", 2), ((1, 4), "smem_a", 4),
                                                ((1, 1), None, 1)])
def test_pairs_along_n_share_a_and_along_m_share_b(shape, tile, peers):
    c = cluster_of(examples.merge_gemm(cluster=shape))
    assert (c.shape, c.tile, c.peers, c.problem) == (shape, tile, peers, "")
    assert c.shares == tile and c.size == shape[0] * shape[1]


def test_a_streaming_design_shares_nothing_whatever_its_cluster_keys():
    c = cluster_of(with_problem(examples.merge_copy(), CLUSTER_N=2))
    assert (c.tile, c.peers, c.problem) == (None, 1, "")


def _async_a(design):
    a = design.resource("smem_a")
    cfg = a.pipeline_config
    async_cfg = FACTORIES[PipelineType.AsyncUmma](num_stages=cfg.num_stages, num_bytes=cfg.num_bytes)
    return design.with_resource(dataclasses.replace(a, pipeline_config=async_cfg), design.deps("smem_a"))


@pytest.mark.parametrize("build, words", [
    (lambda: examples.merge_gemm(cluster=(2, 2)), ["2 x 2 blocks shares both operand tiles", "one dimension"]),
    (lambda: with_problem(examples.merge_gemm(), CLUSTER_N=2.0), ["(1, 2.0)", "two positive integers"]),
    (lambda: _async_a(examples.merge_gemm(cluster=(1, 2))), ["'smem_a' is shared by the 2 blocks", "AsyncUmma"]),
])
def test_a_cluster_the_symmetry_rule_does_not_cover_is_refused_by_name(build, words):
    design = build()
    c = cluster_of(design)
    assert c.problem and c.shares is None
    with pytest.raises(DesignError) as e:
        require_modelled(design, "the checker")
    assert e.value.code == "analysis.cluster" and e.value.hint
    assert all(w in str(e.value) for w in words), str(e.value)

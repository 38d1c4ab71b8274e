"""The checker and the simulator on what the barrier layout adds to the protocol table: a cluster's
shared tile checked with its peers' arrivals counted (the symmetry rule of ``cluster.py``), a
planted wrong peer count found, a cluster the rule does not cover refused; sm_100a's mma_done
barriers run, a planted wrong count on them found."""

import dataclasses

import pytest

from pgstudio import barrier_layout, examples
from pgstudio.analysis.check import check, verdict_of
from pgstudio.analysis.program import unroll
from pgstudio.analysis.search import bfs
from pgstudio.analysis.simulate import simulate
from pgstudio.analysis.statespace import StateSpace
from pgstudio.errors import DesignError

LOOPS = {"num_tiles": 3, "num_k_tiles": 3}


def planted(layout, name, **changes):
    """``layout`` with set ``name`` changed (its slots' arrive counts following its init count)."""
    def fix(sets):
        return tuple(dataclasses.replace(s, **changes) if s.name == name else s for s in sets)

    sets, internal = fix(layout.sets), fix(layout.internal)
    count = next(s.init_count for s in sets + internal if s.name == name)

    def slots(ss):
        return tuple(dataclasses.replace(sl, arrive_count=count) if sl.set == name else sl for sl in ss)
    return dataclasses.replace(layout, sets=sets, internal=internal, slots=slots(layout.slots),
                               internal_slots=slots(layout.internal_slots))


def verdict(design, layout):
    space = StateSpace(unroll(design, LOOPS, layout))
    return verdict_of(space, bfs(space, reduced=True), "reduced")


@pytest.mark.parametrize("shape", [(1, 2), (2, 1)])
def test_a_cluster_design_is_safe_with_the_peers_arrivals_counted(shape):
    d = examples.merge_gemm(cluster=shape)
    v = check(d, iterations=4)
    assert v.status == "SAFE", str(v)
    program = unroll(d, LOOPS)
    releases = [a for run in program.runs[program.tasks.index("mma")] for a in run.acts
                if a.set == "ab.shared_empty"]
    assert releases and all(a.arrivals == 2 for a in releases)  # its own release and the mirrored peer's
    assert check(examples.ungrouped(d), iterations=4).status == "SAFE"


def test_a_peer_count_the_kernel_would_not_initialise_is_unsafe():
    d = examples.merge_gemm(cluster=(1, 2))
    lay = barrier_layout(d)
    assert verdict(d, lay).status == "SAFE"
    # initialised for one block while both release: the phase completes on the first release
    v = verdict(d, planted(lay, "ab.shared_empty", init_count=1))
    assert (v.status, v.kind) == ("UNSAFE", "arrive_count"), str(v)
    assert "ab.shared_empty" in v.message and "init count 1" in v.message
    # initialised for both blocks but the peer's release never counted: nothing frees a stage
    v = verdict(d, planted(lay, "ab.shared_empty", peers=1))
    assert (v.status, v.kind) == ("UNSAFE", "deadlock"), str(v)


def test_a_cluster_the_rule_does_not_cover_is_refused_by_the_checker_and_the_simulator():
    d = examples.merge_gemm(cluster=(2, 2))
    for run in (lambda: check(d, iterations=2), lambda: simulate(d, iterations=2)):
        with pytest.raises(DesignError) as e:
            run()
        assert e.value.code == "analysis.cluster" and "both operand tiles" in str(e.value)


def test_the_simulator_runs_a_cluster_design_to_the_end():
    tl = simulate(examples.merge_gemm(cluster=(1, 2)), iterations=4, inner=4)
    assert tl.meta_dict["status"] == "complete"


def test_sm100a_commits_through_mma_done_and_waits_for_it():
    d = examples.merge_gemm_resadd().with_targets("sm_100a")
    program = unroll(d, LOOPS)
    commits = [run for run in program.runs[program.tasks.index("mma")] if run.step.op == "commit"]
    assert commits
    for k, run in enumerate(commits):
        verbs = [(a.verb, a.set) for a in run.acts]
        assert verbs == [("arrive", "tmem_c.mma_done"), ("wait", "tmem_c.mma_done"), ("arrive", "cr.full_0")]
        assert run.acts[1].parity == k & 1  # the phase its own commit completes (one stage)
    assert check(d, iterations=4).status == "SAFE"
    assert simulate(d, iterations=3).meta_dict["status"] == "complete"
    assert "tmem_c.mma_done" not in {a.set for runs in unroll(d.with_targets("sm_90a"), LOOPS).runs
                                     for run in runs for a in run.acts}


def test_a_wrong_mma_done_count_hangs_the_mma_task():
    d = examples.merge_gemm().with_targets("sm_100a")
    v = verdict(d, planted(barrier_layout(d), "tmem_c.mma_done", init_count=2))
    assert (v.status, v.kind) == ("UNSAFE", "deadlock") and "tmem_c.mma_done" in v.message, str(v)

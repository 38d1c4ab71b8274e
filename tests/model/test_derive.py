"""Schedules derived from the graph, groups and tasks (model/derive.py).

The canonical designs' schedules were written by hand, members reached as ``group.member``;
deriving them from the design alone must give the same steps, and the derived designs must pass
every rule."""

import pytest

from pgstudio import examples
from pgstudio.model import Design, Loop, PipelineGroup, PipelineGroupMode, Step, Task, ungrouped
from pgstudio.model.derive import DERIVED, derive_design, derive_schedule, is_derived


def shape(nodes):
    """Steps and loops as comparable tuples: names only, argument values without parameter names."""
    out = []
    for n in nodes:
        if isinstance(n, Loop):
            out.append(("loop", n.start, n.stop, n.step, shape(n.body)))
        else:
            out.append((n.op, n.target, n.via, n.group, tuple(v for _, v in n.args)))
    return out


@pytest.mark.parametrize("name", list(examples.CANONICAL))
def test_derived_schedules_equal_the_hand_written_ones(name):
    design = examples.example(name)
    for task in design.tasks:
        derived = derive_schedule(design, task.name)
        assert derived.name == DERIVED
        assert shape(derived.nodes) == shape(task.schedule.nodes), task.name


@pytest.mark.parametrize("name", list(examples.CANONICAL))
def test_derived_designs_pass_every_rule_grouped_and_ungrouped(name):
    design = examples.example(name)
    for d in (design, ungrouped(design)):
        derived = derive_design(d, replace_attached=True)
        assert all(is_derived(t.schedule) for t in derived.tasks)
        report = derived.validate()
        assert report.ok, str(report)


def test_attached_schedules_are_kept_unless_asked():
    design = examples.merge_copy()
    assert derive_design(design) is design  # every schedule was written with @schedule
    bare = design.replace(tasks=[Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources,
                                                t.dst_resources) for t in design.tasks])
    filled = derive_design(bare)
    assert all(t.schedule is not None and t.schedule.name == DERIVED for t in filled.tasks)
    assert derive_design(filled) == filled  # idempotent


def _steps(design, task):
    return [s for s in design.task(task).schedule.steps()]


def test_grouping_moves_the_collapsed_stage_onto_the_group():
    """Ungrouped -> Merge: the consumer's two releases become one group.release()."""
    base = derive_design(ungrouped(examples.merge_copy()), replace_attached=True)
    releases = [s for s in _steps(base, "store") if s.op == "release"]
    assert [(s.target, s.via) for s in releases] == [("smem_a", "bare"), ("smem_b", "bare")]
    for mode, want in ((PipelineGroupMode.Merge, [("release", "ab", "group")]),
                       (PipelineGroupMode.FusedMerge, [("try_wait", "ab", "group"), ("wait", "ab", "group"),
                                                       ("release", "ab", "group")])):
        grouped = base.with_group(PipelineGroup.unchecked("ab", [base.resource("smem_a"), base.resource("smem_b")], mode))
        grouped = derive_design(grouped)
        on_group = [(s.op, s.target, s.via) for s in _steps(grouped, "store") if s.via == "group"]
        assert on_group == want
        assert grouped.validate().ok, str(grouped.validate())
        # the producers still commit each member on its own
        commits = [(s.target, s.via, s.group) for s in _steps(grouped, "load_a") if s.op == "commit"]
        assert commits == [("smem_a", "member", "ab")]


def test_fork_commits_once_and_loads_one_buffer_once():
    design = derive_design(examples.fork_copy(), replace_attached=True)
    steps = _steps(design, "load")
    assert [(s.op, s.target, s.via) for s in steps if s.op in ("commit", "load")] == [
        ("load", "smem_x", "member"), ("commit", "xy", "group")]


def test_gemm_accumulator_is_acquired_per_tile_and_fed_per_k_tile():
    design = derive_design(examples.merge_gemm(), replace_attached=True)
    outer = design.task("mma").schedule.nodes[0]
    assert (outer.stop, [type(n).__name__ for n in outer.body]) == ("num_tiles", ["Step", "Step", "Loop", "Step"])
    assert [n.op for n in outer.body if isinstance(n, Step)] == ["try_acquire", "acquire", "commit"]
    assert outer.body[2].stop == "num_k_tiles"
    loader = design.task("load_a").schedule.nodes[0]
    assert isinstance(loader.body[0], Loop) and loader.body[0].stop == "num_k_tiles"
    epilogue = design.task("epilogue").schedule.nodes[0]
    assert not any(isinstance(n, Loop) for n in epilogue.body)


def test_a_task_without_resources_or_problem_gets_an_empty_loop_of_default_length():
    design = Design("tiny", tasks=[Task.unchecked("idle", 0, 1)])
    sched = derive_schedule(design, "idle")
    assert len(sched.nodes) == 1 and sched.nodes[0].body == () and isinstance(sched.nodes[0].stop, int)


def test_derivation_survives_a_broken_design():
    """Tasks naming resources that do not exist, a group with one member: derive, never raise."""
    design = examples.merge_copy()
    broken = design.replace(
        groups=[PipelineGroup.unchecked("ab", [design.resource("smem_a")], PipelineGroupMode.Merge)],
        tasks=[*[Task.unchecked(t.name, t.warp_idx, t.num_warps, t.src_resources, t.dst_resources)
                 for t in design.tasks], Task.unchecked("ghost", 12, 1, ["nowhere"], ["smem_b"])])
    derived = derive_design(broken)
    assert all(t.schedule is not None for t in derived.tasks)
    assert not derived.validate().ok  # the validator, not the derivation, says what is wrong

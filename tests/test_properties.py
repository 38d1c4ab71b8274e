"""Property tests over random designs (hypothesis): analysis never crashes, construction raises
only DesignError / ScheduleError, every group has (N+1)S or 2S slots, JSON round trips."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pgstudio import (Agent, CooperativeGroup, Design, DesignError, GmemTensor, MemoryResource, PipelineConfig,
                      PipelineGroup, PipelineGroupMode, PipelineType, Report, Task, TmemAccumulator, barrier_layout,
                      schedule, smem_layout)
from pgstudio.analysis.layout import BARRIER_BYTES
from pgstudio.model import CapturedSchedule, Compute, Loop, Step
from pgstudio.model.config import FACTORIES
from pgstudio.model.resource import COMPUTE_OPS
from pgstudio.model.schedule import ALL_OPS, VIAS

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RES_NAMES = ["smem_a", "smem_b", "smem_c", "smem_d", "smem_e", "tmem_c", "gmem_a", "gmem_d"]
GROUP_NAMES = ["ab", "cd", "grp"]
TASK_NAMES = ["load_a", "load_b", "mma", "store", "epilogue"]
SYMBOLS = ["num_tiles", "num_k_tiles", "n"]

# Random designs hold wrong designs, but only values inside the domain (model/limits.py): the
# constructors refuse the rest, and test_limits / the fuzz suite check that refusal.
cgroups = st.builds(CooperativeGroup, st.sampled_from(list(Agent)), st.integers(1, 5))
configs = st.builds(PipelineConfig, st.sampled_from(list(PipelineType)), st.integers(1, 5),
                    st.sampled_from([0, 8, 16, 1024, 4096]), cgroups, cgroups)
maybe_configs = st.one_of(st.none(), configs, configs)


@st.composite
def resources(draw):
    names = draw(st.lists(st.sampled_from(RES_NAMES), min_size=1, max_size=len(RES_NAMES), unique=True))
    out = []
    for name in names:
        cls = GmemTensor if name.startswith("gmem") else TmemAccumulator if name.startswith("tmem") else MemoryResource
        cfg = draw(maybe_configs if cls is not GmemTensor else st.one_of(st.none(), st.none(), configs))
        out.append(cls(name=name, pipeline_config=cfg,
                       compute=Compute(draw(st.sampled_from([*COMPUTE_OPS, "conv"])), draw(st.sampled_from(["", "x + y"]))),
                       dtype=draw(st.sampled_from(["float32", "float16", "int8"])),
                       tile=tuple(draw(st.lists(st.integers(1, 256), max_size=2))),
                       aliases=draw(st.one_of(st.none(), st.sampled_from(RES_NAMES)))))
    return out


def steps_for(names):
    step = st.builds(Step, st.sampled_from(ALL_OPS), st.sampled_from(names), st.sampled_from(VIAS),
                     st.one_of(st.none(), st.sampled_from(GROUP_NAMES)),
                     st.lists(st.tuples(st.sampled_from(["arg0", "val"]), st.sampled_from(names)), max_size=2).map(tuple))
    bound = st.one_of(st.integers(0, 6), st.sampled_from(SYMBOLS))
    stride = st.one_of(st.integers(1, 3), st.sampled_from(SYMBOLS))
    loop = st.builds(Loop, bound, bound, stride, st.lists(step, max_size=8).map(tuple))
    return st.builds(CapturedSchedule, st.just("s"), st.lists(st.one_of(loop, step), max_size=3).map(tuple))


@st.composite
def designs(draw):
    res = draw(resources())
    names = [r.name for r in res]
    groups = []
    for gname in draw(st.lists(st.sampled_from(GROUP_NAMES), max_size=2, unique=True)):
        members = draw(st.lists(st.sampled_from(res), max_size=4, unique_by=lambda r: r.name))
        groups.append(PipelineGroup.unchecked(gname, members, draw(st.sampled_from(list(PipelineGroupMode))),
                                              draw(st.one_of(st.none(), configs))))
    targets = names + [g.name for g in groups]
    tasks = [Task.unchecked(t, draw(st.integers(0, 31)), draw(st.integers(1, 8)),
                            draw(st.lists(st.sampled_from(names), max_size=3, unique=True)),
                            draw(st.lists(st.sampled_from(names), max_size=3, unique=True)),
                            draw(st.one_of(st.none(), steps_for(targets))))
             for t in draw(st.lists(st.sampled_from(TASK_NAMES), max_size=4, unique=True))]
    graph = {k: draw(st.lists(st.sampled_from(names + ["ghost"]), max_size=3))
             for k in draw(st.lists(st.sampled_from(names + ["ghost"]), max_size=5, unique=True))}
    problem = {k: draw(st.one_of(st.integers(0, 100), st.sampled_from(["float16", "num_tiles"])))
               for k in draw(st.lists(st.sampled_from(SYMBOLS), max_size=3, unique=True))}
    return Design("random", res, graph, groups, tasks, problem)


def expected_slots(group):
    pipelined = [m for m in group.members if m.pipeline_config is not None]
    if not pipelined:
        return 0
    stages = max(pipelined[0].pipeline_config.num_stages, 0)
    return (2 if group.mode is PipelineGroupMode.FusedMerge else len(pipelined) + 1) * stages


@SETTINGS
@given(designs())
def test_validation_and_layouts_never_crash(design):
    report = design.validate()
    assert isinstance(report, Report)
    assert all(d.code and d.message for d in report.diagnostics)
    layout = barrier_layout(design)
    assert [s.index for s in layout.slots] == list(range(layout.num_barriers))
    assert [s.offset for s in layout.slots] == [BARRIER_BYTES * i for i in range(layout.num_barriers)]
    smem_layout(design).report()
    str(report)


@SETTINGS
@given(designs())
def test_every_group_has_n_plus_one_or_two_times_s_slots(design):
    for group in design.groups:
        assert barrier_layout(group).num_barriers == expected_slots(group)


@SETTINGS
@given(designs())
def test_json_round_trips(design):
    text = design.to_json()
    back = Design.from_json(text)
    assert back == design
    assert back.to_json() == text


# -- the checked constructors raise only DesignError / ScheduleError ------------------------------------

@SETTINGS
@given(st.sampled_from(list(PipelineType)), st.one_of(st.integers(-2, 6), st.booleans(), st.text(max_size=2)),
       st.one_of(st.integers(-32, 5000), st.none()), st.one_of(st.none(), cgroups, st.integers(0, 3)))
def test_factories_raise_only_design_errors(ptype, stages, nbytes, group):
    kwargs = {"num_stages": stages, "producer_group": group}
    if nbytes is not None:
        kwargs["num_bytes"] = nbytes
    try:
        cfg = FACTORIES[ptype](**kwargs)
    except DesignError:
        return
    except TypeError:  # a tma factory called without its required num_bytes: a Python call error
        assert nbytes is None
        return
    assert cfg.num_stages >= 1 and cfg.arrive_count("producer") >= 1


good_configs = st.builds(lambda t, s, b, p, c: FACTORIES[t](num_stages=s, num_bytes=b, producer_group=p,
                                                             consumer_group=c),
                         st.sampled_from(list(PipelineType)), st.integers(1, 4), st.sampled_from([16, 1024, 4096]),
                         st.builds(CooperativeGroup, st.sampled_from(list(Agent)), st.integers(1, 4)),
                         st.builds(CooperativeGroup, st.sampled_from(list(Agent)), st.integers(1, 4)))


@SETTINGS
@given(st.lists(st.one_of(good_configs, st.none()), max_size=4), st.sampled_from(list(PipelineGroupMode)),
       st.one_of(st.none(), good_configs), st.lists(st.sampled_from(["smem_a", None]), max_size=4))
def test_group_construction_raises_only_design_errors_and_valid_groups_lay_out(cfgs, mode, explicit, aliases):
    members = [MemoryResource(f"m{i}", cfg, aliases=aliases[i] if i < len(aliases) else None)
               for i, cfg in enumerate(cfgs)]
    try:
        group = PipelineGroup("g", members, mode, explicit)
    except DesignError as exc:
        assert exc.code.startswith("group.")
        return
    stages = cfgs[0].num_stages
    assert barrier_layout(group).num_barriers == (2 if mode is PipelineGroupMode.FusedMerge else len(cfgs) + 1) * stages
    merged = group.merged_config
    assert merged.num_stages == stages and merged.num_bytes <= sum(c.num_bytes for c in cfgs)
    group.release_members()


@SETTINGS
@given(st.data())
def test_task_capture_raises_only_schedule_or_design_errors(data):
    cfg = FACTORIES[PipelineType.TmaAsync](num_stages=2, num_bytes=1024)
    a, b, c = (MemoryResource(n, cfg) for n in ("smem_a", "smem_b", "smem_c"))
    d = GmemTensor("gmem_d")
    group = PipelineGroup("ab", [a, b], data.draw(st.sampled_from(list(PipelineGroupMode))))
    objects = [a, b, c, d, group, group.smem_a, group.smem_b]
    calls = data.draw(st.lists(st.tuples(st.sampled_from(objects), st.sampled_from(ALL_OPS)), max_size=10))

    @schedule
    def random_schedule():
        for obj, op in calls:
            fn = getattr(obj, op, None)
            if fn is not None:
                fn()

    src = data.draw(st.lists(st.sampled_from([a, b, c, d]), max_size=4, unique=True))
    dst = data.draw(st.lists(st.sampled_from([a, b, c, d]), max_size=4, unique=True))
    try:
        task = Task("t", 0, 4, src, dst, random_schedule())
    except DesignError:  # ScheduleError is a DesignError
        return
    assert task.schedule is not None
    group.release_members()

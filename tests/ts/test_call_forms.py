"""TS's own call forms that a valid TS script uses are accepted by pgstudio.ts, and a call form it
does not take yet is never called the script's fault: each call is checked against TS itself."""

import pytest

from pgstudio import DesignError
from pgstudio.ts import SmemAllocator, TileSchedulerConfig, TileSchedulerType, WorkQueue


def test_a_work_queue_takes_its_scheduler_config_positionally_as_in_ts():
    cfg = TileSchedulerConfig(TileSchedulerType.StaticPersistent, None)
    positional, keyword = WorkQueue(cfg, name="wq"), WorkQueue(name="wq", tile_scheduler_config=cfg)
    assert positional.tile_scheduler_config is cfg and keyword.tile_scheduler_config is cfg
    with pytest.raises(TypeError, match="one positional argument"):
        WorkQueue(cfg, cfg, name="wq")


def test_the_allocator_prints_its_usage_report(capsys):
    allocator = SmemAllocator()
    allocator.compute_layout()
    allocator.print_usage_report()
    assert "0 B of data, 0 B of barriers" in capsys.readouterr().out


# -- a TypeError at a script's call of a pgstudio.ts name: whose it is --------------------------------

HEAD = """from cutlass.pipeline import Agent, CooperativeGroup
from cutlass.experimental.task_scheduling import schedule
from cutlass.experimental.task_scheduling.enums import PipelineType, TileSchedulerType
from cutlass.experimental.task_scheduling.memory import SmemAllocator
from cutlass.experimental.task_scheduling.resources import MemoryResource, PipelineConfig, TileSchedulerConfig, WorkQueue
from cutlass.experimental.task_scheduling.schedule_builder import Schedule
g = CooperativeGroup(Agent.Thread, 1)
"""
#: Calls and what TS says of them: True (TS runs the call) or False (TS refuses it with a TypeError).
CALLS = {
    "a schedule built by hand": ("Schedule(name='s', body=[], resources=[])", True),
    "TS's own config constructor": ("PipelineConfig(2, 4096, g, g, PipelineType.TmaAsync, cta_layout_vmnk=(1, 1, 1, 1))",
                                    True),
    "an unknown factory keyword": ("PipelineConfig.create_tma_async_pipeline_cfg(2, 4096, g, g, (1, 1, 1, 1), bogus=1)",
                                   False),
    "a group with four arguments": ("CooperativeGroup(Agent.Thread, 1, 1, 1)", False),
    "an allocator method given two resources": ("SmemAllocator().add_resource(MemoryResource(name='r'), 2)", False),
    "a work queue given two configs": ("cfg = TileSchedulerConfig(TileSchedulerType.StaticPersistent, None)\n"
                                       "WorkQueue(cfg, cfg, name='wq')", False),
    "the script's schedule given two resources": ("@schedule\ndef s(a):\n    pass\n\n"
                                                  "s(MemoryResource(name='a'), MemoryResource(name='b'))", False),
}


def _pgstudio_says(path) -> str:
    from pgstudio.ts import load
    try:
        load(path)
    except DesignError as exc:
        return str(exc)
    return "loaded"


@pytest.mark.ts
@pytest.mark.parametrize("case", list(CALLS))
def test_a_call_ts_takes_is_never_the_scripts_fault_and_one_ts_refuses_is(case, tmp_path):
    """Each call runs under TS itself and under pgstudio.ts: where TS takes it, pgstudio takes it
    too or says in one line that it does not take this call form of the name yet; where TS refuses
    it, pgstudio says to fix the script, with TS's signature."""
    import runpy

    from ts_side import quiet
    body, ts_takes = CALLS[case]
    path = tmp_path / "call.py"
    path.write_text(HEAD + body + "\n")
    with quiet():
        try:
            runpy.run_path(str(path))
            ts_verdict = True
        except TypeError:
            ts_verdict = False
    assert ts_verdict is ts_takes, f"TS {'took' if ts_verdict else 'refused'} {case}"
    said = _pgstudio_says(path)
    assert "\n" not in said
    if ts_takes:
        assert "fix the script" not in said
        assert "built 0 TaskManager" in said or "pgstudio does not take this call form of" in said, said
    else:
        assert "fix the script" in said or "fix: call s with the arguments it declares" in said, said
        assert "pgstudio cannot build this yet" not in said and "does not take this call form" not in said, said


def test_ts_constructor_of_a_config_builds_what_its_factory_builds():
    from pgstudio.ts import Agent, CooperativeGroup, PipelineConfig, PipelineOp, PipelineType
    one, many = CooperativeGroup(Agent.Thread, 1), CooperativeGroup(Agent.Warp, 4)
    for ptype in PipelineType:
        kinds = f"{ptype.producer_kind.value}_{ptype.consumer_kind.value}"
        factory = getattr(PipelineConfig, f"create_{kinds}_pipeline_cfg")
        takes_bytes = ptype.producer_kind.value == "tma"
        given = dict(num_stages=3, producer_group=one, consumer_group=many, cta_layout_vmnk=(1, 1, 1, 1))
        made = factory(**given, **({"num_bytes": 4096} if takes_bytes else {}))
        direct = PipelineConfig(3, 4096 if takes_bytes else 0, one, many, ptype, cta_layout_vmnk=(1, 1, 1, 1))
        assert direct == made, ptype
        assert direct.interleave_strides == (1, 1, 1, 1) and direct.barrier_ptr is None
    load = PipelineConfig(2, 0, many, many, PipelineType.AsyncAsync, async_producer_op=PipelineOp.AsyncLoad)
    assert load.async_producer_op is PipelineOp.AsyncLoad and load.model.async_producer_op.value == "AsyncLoad"
    with pytest.raises(DesignError, match="only for PipelineType.AsyncAsync"):
        PipelineConfig(2, 4096, one, many, PipelineType.TmaAsync, async_producer_op=PipelineOp.AsyncLoad)
    with pytest.raises(DesignError, match="cannot be modelled yet"):
        PipelineConfig(2, 4096, one, many, PipelineType.TmaAsync, advance_on_wait=True)
    with pytest.raises(DesignError, match="missing pipeline_type"):
        PipelineConfig(2, 4096, one, many)


def test_without_ts_an_unsupported_call_form_says_so_and_claims_no_verdict(tmp_path, monkeypatch):
    """Where TS is not installed, pgstudio cannot ask it: a call form pgstudio.ts does not take is
    named as such, with the form pgstudio takes, and never called the script's fault."""
    from pgstudio.ts import _call_forms
    monkeypatch.setattr(_call_forms, "_ts_modules", lambda: ())
    path = tmp_path / "call.py"
    path.write_text(HEAD + "Schedule(name='s', body=[], resources=[])\n")
    said = _pgstudio_says(path)
    assert f"{path}, line 8: pgstudio does not take this call form of Schedule yet (" in said, said
    assert "which TS takes" not in said and "fix the script" not in said
    assert "call it as pgstudio.ts takes it, Schedule(name, body, resources, symbols, module)" in said
    # A call the script gets wrong that is not a pgstudio.ts name stays the script's.
    path.write_text(HEAD + "len(1, 2)\n")
    assert "fix the script" in _pgstudio_says(path)

"""``@schedule`` capture: the three schedules of the group modes (a Merge consumer, a Fork producer, a
FusedMerge consumer) record exactly the steps they call."""

import pytest

from pgstudio import (CooperativeGroup, Agent, GmemTensor, MemoryResource, PipelineGroup, PipelineGroupMode,
                      ScheduleError, Task, TmemAccumulator, create_tma_async_pipeline_cfg,
                      create_tma_umma_pipeline_cfg, domain_loop, schedule)
from pgstudio.model import CapturedSchedule, Loop, Step, Value

num_iters = 8
num_k_tiles = 16
WG = CooperativeGroup(Agent.Warp, 4)


def tma_async(name, **kw):
    return MemoryResource(name=name, pipeline_config=create_tma_async_pipeline_cfg(num_stages=4, num_bytes=4096,
                                                                                     consumer_group=WG), **kw)


def tma_umma(name, **kw):
    return MemoryResource(name=name, pipeline_config=create_tma_umma_pipeline_cfg(num_stages=4, num_bytes=4096), **kw)


# -- the three schedules, written with group.member as the schedule rules prescribe ---------------

@schedule
def store_schedule(output, group):
    with domain_loop(0, num_iters, 1):
        group.smem_a.try_wait()
        group.smem_a.wait()
        group.smem_b.try_wait()
        group.smem_b.wait()
        val_a = group.smem_a.read()
        val_b = group.smem_b.read()
        output.store(val_a=val_a, val_b=val_b)
        group.release()          # one collapsed release for both members


@schedule
def load_schedule(group):
    with domain_loop(0, num_k_tiles, 1):
        group.smem_gemm.try_acquire()
        group.smem_gemm.acquire()
        group.smem_act.try_acquire()
        group.smem_act.acquire()
        group.smem_gemm.load()
        group.commit()           # one collapsed commit for both members


@schedule
def mma_schedule(smem_a, smem_b, tmem, ab_group):
    with domain_loop(0, num_k_tiles, 1):
        ab_group.try_wait()         # one collapsed wait for all members
        ab_group.wait()
        tmem.mma(...)
        ab_group.release()          # one collapsed release for all members


def test_merge_consumer_captures():
    smem_a, smem_b, output = tma_async("smem_a"), tma_async("smem_b"), GmemTensor("gmem_d")
    ab = PipelineGroup(name="ab_sync", members=[smem_a, smem_b], mode=PipelineGroupMode.Merge)
    task = Task("store", 4, 4, src_resources=[smem_a, smem_b], dst_resources=[output],
                schedule=store_schedule(output, ab))
    assert task.schedule == CapturedSchedule("store_schedule", (Loop(0, 8, 1, (
        Step("try_wait", "smem_a", "member", "ab_sync"),
        Step("wait", "smem_a", "member", "ab_sync"),
        Step("try_wait", "smem_b", "member", "ab_sync"),
        Step("wait", "smem_b", "member", "ab_sync"),
        Step("read", "smem_a", "member", "ab_sync"),
        Step("read", "smem_b", "member", "ab_sync"),
        Step("store", "gmem_d", "bare", None, (("val_a", "smem_a"), ("val_b", "smem_b"))),
        Step("release", "ab_sync", "group", "ab_sync"),
    )),))
    assert (task.src_resources, task.dst_resources) == (("smem_a", "smem_b"), ("gmem_d",))


def test_fork_producer_captures():
    gemm, act = tma_umma("smem_gemm"), tma_async("smem_act", aliases="smem_gemm")
    fork = PipelineGroup(name="a_fork", members=[gemm, act], mode=PipelineGroupMode.Fork)
    task = Task("load", 0, 1, src_resources=[GmemTensor("gmem_a")], dst_resources=[gemm, act],
                schedule=load_schedule(fork))
    assert [str(s) for s in task.schedule.steps()] == [
        "a_fork.smem_gemm.try_acquire()", "a_fork.smem_gemm.acquire()",
        "a_fork.smem_act.try_acquire()", "a_fork.smem_act.acquire()",
        "a_fork.smem_gemm.load()", "a_fork.commit()"]
    assert task.schedule.loop == Loop(0, 16, 1, task.schedule.body)


def test_fused_merge_consumer_captures():
    smem_a, smem_b = tma_umma("smem_a"), tma_umma("smem_b")
    tmem = TmemAccumulator("tmem_c")  # the schedule drives no accumulator stage, so no pipeline here
    ab = PipelineGroup(name="ab_group", members=[smem_a, smem_b], mode=PipelineGroupMode.FusedMerge)
    task = Task("mma", 0, 1, [smem_a, smem_b], [tmem], mma_schedule(smem_a, smem_b, tmem, ab))
    assert task.schedule.body == (
        Step("try_wait", "ab_group", "group", "ab_group"),
        Step("wait", "ab_group", "group", "ab_group"),
        Step("mma", "tmem_c", "bare", None, (("arg0", "ellipsis"),)),
        Step("release", "ab_group", "group", "ab_group"),
    )


# -- capture mechanics ------------------------------------------------------------------------------

def test_read_returns_a_value_naming_its_resource_and_work_args_record_it():
    src, out = tma_async("smem_a"), GmemTensor("gmem_d")
    seen = []

    @schedule
    def s(src, out):
        with domain_loop(4):
            src.wait()
            v = src.read()
            seen.append(v)
            out.store(v, 2, scale=1.5)
            src.release()

    t = Task("t", 0, 4, [src], [out], s(src, out))
    assert seen == [Value("smem_a")]
    assert t.schedule.loop.start == 0 and t.schedule.loop.stop == 4 and t.schedule.loop.step == 1
    assert t.schedule.body[2].args == (("arg0", "smem_a"), ("arg1", "2"), ("scale", "1.5"))


def test_nested_loops_and_symbolic_bounds():
    src, acc = tma_umma("smem_a"), TmemAccumulator("tmem_c")

    @schedule
    def s(src, acc):
        with domain_loop(0, "num_tiles", 1):
            with domain_loop(0, "num_k_tiles", 2):
                src.wait()
                acc.mma(src.read())
                src.release()

    sched = Task("t", 0, 1, [src], [acc], s(src, acc)).schedule
    outer = sched.loop
    assert (outer.start, outer.stop, outer.step) == (0, "num_tiles", 1)
    inner = outer.body[0]
    assert isinstance(inner, Loop) and (inner.stop, inner.step) == ("num_k_tiles", 2)
    assert [s.op for s in sched.body] == ["wait", "read", "mma", "release"]
    assert sched.text().splitlines() == [
        "@schedule  # s", "    with domain_loop(0, num_tiles, 1):", "        with domain_loop(0, num_k_tiles, 2):",
        "            smem_a.wait()", "            smem_a.read()", "            tmem_c.mma(arg0=smem_a)",
        "            smem_a.release()"]


def test_segments_split_loops_from_steps_outside_them():
    a = Step("acquire", "x")
    loop = Loop(0, 2, 1, (Step("wait", "y"), Loop(0, 3, 1, (Step("read", "y"),)), Step("release", "y")))
    sched = CapturedSchedule("s", (a, Step("commit", "x"), loop, Step("load", "x")))
    assert list(sched.segments()) == [(a, Step("commit", "x")),
                                      (Step("wait", "y"), Step("read", "y"), Step("release", "y")),
                                      (Step("load", "x"),)]


def test_calls_outside_a_capture_raise():
    r = tma_async("smem_a")
    with pytest.raises(ScheduleError, match=r"smem_a.acquire\(\) was called outside a schedule capture") as err:
        r.acquire()
    assert err.value.code == "schedule.outside"
    with pytest.raises(ScheduleError, match="outside a schedule capture"):
        with domain_loop(3):
            pass


def test_an_exception_in_the_schedule_becomes_a_schedule_error():
    @schedule
    def broken(src):
        with domain_loop(2):
            src.wait()
            raise KeyError("oops")

    with pytest.raises(ScheduleError, match="schedule 'broken' raised KeyError: 'oops'") as err:
        Task("t", 0, 4, [tma_async("smem_a")], [], broken(tma_async("smem_a")))
    assert err.value.code == "schedule.user_error"


def test_an_unbound_schedule_binds_parameters_by_resource_and_group_name():
    smem_a, smem_b, gmem_d = tma_async("smem_a"), tma_async("smem_b"), GmemTensor("gmem_d")
    PipelineGroup("ab", [smem_a, smem_b], PipelineGroupMode.Merge)

    @schedule
    def consume(gmem_d, ab):
        with domain_loop(2):
            ab.smem_a.wait()
            ab.smem_b.wait()
            gmem_d.store(ab.smem_a.read(), ab.smem_b.read())
            ab.release()

    t = Task("t", 0, 4, [smem_a, smem_b], [gmem_d], consume)
    assert [str(s) for s in t.schedule.body][-1] == "ab.release()"

    @schedule
    def wrong(nothing_by_this_name):
        pass

    with pytest.raises(ScheduleError, match="parameter\\(s\\) 'nothing_by_this_name' name no resource or group"):
        Task("u", 0, 4, [smem_a, smem_b], [gmem_d], wrong)


def test_a_captured_schedule_is_kept_as_is():
    sched = CapturedSchedule("s", (Loop(0, 2, 1, (Step("acquire", "x"), Step("load", "x"), Step("commit", "x"))),))
    assert Task("t", 0, 1, [], ["x"], sched).schedule is sched

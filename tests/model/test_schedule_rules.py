"""The schedule hard rules (semantics.md section 6): each rejects at ``Task(...)``
with a ``ScheduleError`` naming the task, the step, the group and the fix."""

import pytest

from pgstudio import (Agent, CooperativeGroup, GmemTensor, MemoryResource, PipelineGroup, PipelineGroupMode,
                      ScheduleError, Task, create_tma_async_pipeline_cfg, domain_loop, schedule)

Merge, Fork, FusedMerge = PipelineGroupMode.Merge, PipelineGroupMode.Fork, PipelineGroupMode.FusedMerge
WG = CooperativeGroup(Agent.Warp, 4)


def tile(name):
    return MemoryResource(name=name, pipeline_config=create_tma_async_pipeline_cfg(num_stages=2, num_bytes=1024,
                                                                                     consumer_group=WG))


def consumer_task(mode, body, src=("smem_a", "smem_b"), check=True):
    """The one task consuming a Merge / FusedMerge group ab = {smem_a, smem_b} into gmem_d."""
    a, b, d = tile("smem_a"), tile("smem_b"), GmemTensor("gmem_d")
    g = PipelineGroup("ab", [a, b], mode)

    @schedule
    def consume(g, a, b, d):
        with domain_loop(4):
            body(g, a, b, d)

    objs = {"smem_a": a, "smem_b": b}
    make = Task if check else Task.unchecked
    return make("store", 4, 4, [objs[s] for s in src], [d], consume(g, a, b, d))


def producer_task(body, dst=("smem_x", "smem_y"), check=True):
    """The one task producing a Fork group xy = {smem_x, smem_y} from gmem_a."""
    x, y, src = tile("smem_x"), tile("smem_y"), GmemTensor("gmem_a")
    g = PipelineGroup("xy", [x, y], Fork)

    @schedule
    def produce(g, x, y, src):
        with domain_loop(4):
            body(g, x, y, src)

    objs = {"smem_x": x, "smem_y": y}
    make = Task if check else Task.unchecked
    return make("load", 0, 1, [src], [objs[s] for s in dst], produce(g, x, y, src))


def reject(code, build, *quoted):
    with pytest.raises(ScheduleError) as err:
        build()
    assert err.value.code == code, str(err.value)
    for q in quoted:
        assert q in str(err.value), str(err.value)
    assert isinstance(err.value, ValueError)
    return str(err.value)


# -- correct schedules (the accepted side of every rule below) -------------------------------------

def merge_ok(g, a, b, d):
    g.smem_a.try_wait()
    g.smem_a.wait()
    g.smem_b.try_wait()
    g.smem_b.wait()
    d.store(g.smem_a.read(), g.smem_b.read())
    g.release()


def fused_ok(g, a, b, d):
    g.try_wait()
    g.wait()
    d.store(g.smem_a.read(), g.smem_b.read())
    g.release()


def fork_ok(g, x, y, src):
    g.smem_x.try_acquire()
    g.smem_x.acquire()
    g.smem_y.acquire()
    g.smem_x.load(src)
    g.smem_y.load(src)
    g.commit()


def test_correct_schedules_are_accepted():
    assert [s.op for s in consumer_task(Merge, merge_ok).schedule.body][-1] == "release"
    assert consumer_task(FusedMerge, fused_ok).schedule.body[1].via == "group"
    assert str(producer_task(fork_ok).schedule.body[-1]) == "xy.commit()"


# -- collapsed stage on a member --------------------------------------------------------------------

def merge_member_release(g, a, b, d):
    g.smem_a.wait()
    g.smem_b.wait()
    d.store(g.smem_a.read(), g.smem_b.read())
    g.smem_a.release()
    g.smem_b.release()


def test_merge_consumer_member_release_is_rejected():
    reject("schedule.collapsed_member", lambda: consumer_task(Merge, merge_member_release),
           "task 'store': ab.smem_a.release() is on the collapsed consumer side of Merge group 'ab'",
           "call ab.release() instead")


def fork_member_commit(g, x, y, src):
    g.smem_x.acquire()
    g.smem_y.acquire()
    g.smem_x.load(src)
    g.smem_x.commit()
    g.smem_y.commit()


def test_fork_producer_member_commit_is_rejected():
    reject("schedule.collapsed_member", lambda: producer_task(fork_member_commit),
           "task 'load': xy.smem_x.commit() is on the collapsed producer side of Fork group 'xy'",
           "call xy.commit() instead")


@pytest.mark.parametrize("op", ["try_wait", "wait", "release"])
def test_fused_merge_consumer_member_wait_and_release_are_rejected(op):
    def body(g, a, b, d):
        if op == "try_wait":
            g.smem_a.try_wait()
            g.smem_a.wait()
        elif op == "wait":
            g.smem_a.wait()
        else:
            g.wait()
        d.store(g.smem_a.read())
        if op == "release":
            g.smem_a.release()
        else:
            g.release()

    reject("schedule.collapsed_member", lambda: consumer_task(FusedMerge, body),
           f"ab.smem_a.{op}() is on the collapsed consumer side of FusedMerge group 'ab'",
           f"call ab.{op}() instead")


# -- other stages on the group object ----------------------------------------------------------------

@pytest.mark.parametrize("mode,op,allowed", [
    (Merge, "wait", "group.release()"),
    (Merge, "acquire", "group.release()"),
    (FusedMerge, "commit", "group.try_wait(), group.wait(), group.release()"),
    (FusedMerge, "try_acquire", "group.try_wait(), group.wait(), group.release()"),
])
def test_other_stages_on_a_consumer_group_object_are_rejected(mode, op, allowed):
    def body(g, a, b, d):
        getattr(g, op)()
        fused_ok(g, a, b, d) if mode is FusedMerge else merge_ok(g, a, b, d)

    reject("schedule.group_op", lambda: consumer_task(mode, body),
           f"ab.{op}() is not the collapsed stage of {mode} group 'ab'; the group object only takes {allowed}",
           f"as ab.<member>.{op}()")


@pytest.mark.parametrize("op", ["acquire", "release", "wait"])
def test_other_stages_on_a_fork_group_object_are_rejected(op):
    def body(g, x, y, src):
        getattr(g, op)()
        fork_ok(g, x, y, src)

    reject("schedule.group_op", lambda: producer_task(body),
           f"xy.{op}() is not the collapsed stage of Fork group 'xy'; the group object only takes group.commit()")


# -- a grouped resource used bare --------------------------------------------------------------------

def merge_bare_member(g, a, b, d):
    a.wait()
    g.smem_b.wait()
    d.store(a.read(), g.smem_b.read())
    g.release()


def test_a_grouped_resource_used_bare_is_rejected():
    reject("schedule.bare_member", lambda: consumer_task(Merge, merge_bare_member),
           "'smem_a' is a member of group 'ab' but smem_a.wait() uses it bare", "use ab.smem_a.wait()")


def test_a_grouped_resource_used_bare_is_found_through_its_group_claim():
    # the group is not a schedule argument, but smem_a belongs to a live group
    a, b, d = tile("smem_a"), tile("smem_b"), GmemTensor("gmem_d")
    ab = PipelineGroup("ab", [a, b], Merge)

    @schedule
    def bare(a, d):
        with domain_loop(2):
            a.wait()
            d.store(a.read())
            a.release()

    reject("schedule.bare_member", lambda: Task("t", 0, 4, [a], [d], bare(a, d)), "member of group 'ab'")
    assert ab.member_names == ("smem_a", "smem_b")


# -- brackets -----------------------------------------------------------------------------------------

def read_before_wait(g, a, b, d):
    v = g.smem_a.read()
    g.smem_a.wait()
    g.smem_b.wait()
    d.store(v, g.smem_b.read())
    g.release()


def load_before_acquire(g, x, y, src):
    g.smem_x.load(src)
    g.smem_x.acquire()
    g.smem_y.acquire()
    g.commit()


def value_after_release(g, a, b, d):
    g.smem_a.wait()
    g.smem_b.wait()
    va, vb = g.smem_a.read(), g.smem_b.read()
    g.release()
    d.store(va, vb)


def wait_without_release(g, a, b, d):
    g.smem_a.wait()
    g.smem_b.wait()
    d.store(g.smem_a.read(), g.smem_b.read())


def release_without_wait(g, a, b, d):
    g.smem_a.wait()
    d.store(g.smem_a.read())
    g.release()


def acquire_without_commit(g, x, y, src):
    g.smem_x.acquire()
    g.smem_y.acquire()
    g.smem_x.load(src)


def commit_without_acquire(g, x, y, src):
    g.smem_x.acquire()
    g.smem_x.load(src)
    g.commit()


def acquire_twice(g, x, y, src):
    g.smem_x.acquire()
    g.smem_x.acquire()
    g.smem_y.acquire()
    g.smem_x.load(src)
    g.commit()


def wait_twice(g, a, b, d):
    g.smem_a.wait()
    g.smem_a.wait()
    g.smem_b.wait()
    d.store(g.smem_a.read(), g.smem_b.read())
    g.release()


BRACKET_CASES = [
    (lambda: consumer_task(Merge, read_before_wait),
     "ab.smem_a.read() is consumer work outside its wait()..release() bracket on 'smem_a'"),
    (lambda: producer_task(load_before_acquire),
     "xy.smem_x.load(arg0=gmem_a) is producer work outside its acquire()..commit() bracket on 'smem_x'"),
    (lambda: consumer_task(Merge, value_after_release), "gmem_d.store(arg0=smem_a, arg1=smem_b) uses a value of "
                                                        "'smem_a' after releasing it"),
    (lambda: consumer_task(Merge, wait_without_release), "'smem_a' is waited on but never released in the loop body"),
    (lambda: consumer_task(Merge, release_without_wait), "ab.release() releases 'smem_b', which was not waited on"),
    (lambda: producer_task(acquire_without_commit), "'smem_x' is acquired but never committed in the loop body"),
    (lambda: producer_task(commit_without_acquire), "xy.commit() commits 'smem_y', which was not acquired"),
    (lambda: producer_task(acquire_twice), "xy.smem_x.acquire() acquires 'smem_x' again before committing it"),
    (lambda: consumer_task(Merge, wait_twice), "ab.smem_a.wait() waits on 'smem_a' again before releasing it"),
]


@pytest.mark.parametrize("build,quoted", BRACKET_CASES)
def test_bracket_rules_reject(build, quoted):
    reject("schedule.bracket", build, quoted)


def test_work_outside_the_loop_is_checked_too():
    a, d = tile("smem_a"), GmemTensor("gmem_d")

    @schedule
    def prologue_read(a, d):
        d.store(a.read())  # before the loop: outside any wait..release
        with domain_loop(2):
            a.wait()
            d.store(a.read())
            a.release()

    reject("schedule.bracket", lambda: Task("t", 0, 4, [a], [d], prologue_read(a, d)),
           "smem_a.read() is consumer work outside its wait()..release() bracket")


# -- try_ ops ------------------------------------------------------------------------------------------

def try_wait_then_other(g, a, b, d):
    g.smem_a.try_wait()
    g.smem_b.wait()
    g.smem_a.wait()
    d.store(g.smem_a.read(), g.smem_b.read())
    g.release()


def try_acquire_last(g, x, y, src):
    fork_ok(g, x, y, src)
    g.smem_x.try_acquire()


def test_try_wait_not_directly_before_its_wait_is_rejected():
    reject("schedule.try_order", lambda: consumer_task(Merge, try_wait_then_other),
           "ab.smem_a.try_wait() must be directly followed by its blocking wait() on the same target, got "
           "ab.smem_b.wait()", "put smem_a.wait() right after try_wait()")


def test_try_acquire_at_the_end_is_rejected():
    reject("schedule.try_order", lambda: producer_task(try_acquire_last), "got the end of the schedule")


# -- roles -----------------------------------------------------------------------------------------------

def test_consumer_work_on_a_resource_not_in_src_resources_is_rejected():
    def body(g, a, b, d):
        merge_ok(g, a, b, d)
        d.read()

    reject("schedule.role", lambda: consumer_task(Merge, body),
           "gmem_d.read() is consumer work on 'gmem_d', which is not in its src_resources (smem_a, smem_b)")


def test_producer_work_on_a_resource_not_in_dst_resources_is_rejected():
    a, d = tile("smem_a"), GmemTensor("gmem_d")

    @schedule
    def writes_its_source(a, d):
        with domain_loop(2):
            a.acquire()
            a.load(d)
            a.commit()

    reject("schedule.role", lambda: Task("t", 0, 1, [a], [d], writes_its_source(a, d)),
           "smem_a.acquire() is producer work on 'smem_a', which is not in its dst_resources (gmem_d)",
           "add 'smem_a' to dst_resources")


def test_a_collapsed_step_for_members_the_task_did_not_declare_is_rejected():
    reject("schedule.role", lambda: consumer_task(Merge, release_without_wait, src=("smem_a",)),
           "ab.release() acts for members 'smem_b' that are not in its src_resources")


def test_barrier_steps_on_an_unpipelined_resource_are_rejected():
    a, d = tile("smem_a"), GmemTensor("gmem_d")

    @schedule
    def waits_on_gmem(a, d):
        with domain_loop(2):
            a.wait()
            d.acquire()
            d.store(a.read())
            d.commit()
            a.release()

    reject("schedule.unpipelined", lambda: Task("t", 0, 4, [a], [d], waits_on_gmem(a, d)),
           "gmem_d.acquire() synchronises on 'gmem_d', which has no pipeline_config")


def test_unchecked_tasks_keep_wrong_schedules():
    t = consumer_task(Merge, merge_member_release, check=False)
    assert [str(s) for s in t.schedule.body][-2:] == ["ab.smem_a.release()", "ab.smem_b.release()"]

"""One test per rule: every diagnostic code of the rule table (``analysis/rules.py``) and of the
model's construction rules (``group_rules``, ``schedule_rules``, ``config``) rejects a wrong
design through ``Design.validate()``, with a message naming the elements, the values and the
expected value; the valid design it was made from is accepted."""

import dataclasses
import re
import sys
from pathlib import Path

import pytest

import pgstudio
from pgstudio import (Agent, CooperativeGroup, DesignError, GmemTensor, MemoryResource, PipelineGroup,
                      PipelineGroupMode, ScheduleError, Task, create_tma_async_pipeline_cfg)
from pgstudio.analysis.rules import RULES
from pgstudio.render.display import report_html
from reported import assert_reported
from pgstudio import examples
from pgstudio.model import CapturedSchedule, Compute, Loop, Step

Merge, Fork, FusedMerge = PipelineGroupMode.Merge, PipelineGroupMode.Fork, PipelineGroupMode.FusedMerge


# The canonical designs with their sizes spelled out, so the figures quoted below stay true.
def merge_copy(**kw):
    return examples.merge_copy(**{"num_stages": 4, "tile_bytes": 8192, "num_elements": 1 << 24, **kw})


def merge_gemm():
    return examples.merge_gemm(num_stages=4, bm=128, bn=128, bk=64)


def fork_copy():
    return examples.fork_copy(num_stages=4, tile_bytes=8192)


def sched(*calls, groups=("ab",), stop="num_tiles"):
    """A captured schedule from text: 'ab.smem_a.wait', 'ab.release', 'tmem_c.mma(smem_a, smem_b)'."""
    steps = []
    for call in calls:
        head, _, args = call.partition("(")
        parts = head.split(".")
        argv = tuple((f"arg{i}", a.strip()) for i, a in enumerate(args.rstrip(")").split(",")) if a.strip())
        if len(parts) == 3:
            steps.append(Step(parts[2], parts[1], "member", parts[0], argv))
        elif parts[0] in groups:
            steps.append(Step(parts[1], parts[0], "group", parts[0]))
        else:
            steps.append(Step(parts[1], parts[0], "bare", None, argv))
    return CapturedSchedule("s", (Loop(0, stop, 1, tuple(steps)),))


def retask(design, name, schedule=None, **changes):
    """The design with task ``name`` changed (schedule and/or fields), unchecked."""
    t = design.task(name)
    fields = dict(warp_idx=t.warp_idx, num_warps=t.num_warps, src_resources=t.src_resources,
                  dst_resources=t.dst_resources, schedule=schedule or t.schedule)
    fields.update(changes)
    return design.with_task(Task.unchecked(name, **fields))


def regroup(design, name, members=None, mode=None, pipeline_config=None):
    g = design.group(name)
    ms = [design.resource(m) for m in members] if members is not None else g.members
    return design.with_group(PipelineGroup.unchecked(name, ms, mode or g.mode, pipeline_config))


def reconfig(design, name, **changes):
    r = design.resource(name)
    return design.with_resource(dataclasses.replace(r, pipeline_config=dataclasses.replace(r.pipeline_config, **changes)))


def rename(resource, new):
    """A resource whose name bypassed the constructor's check (as a hand-edited object could)."""
    object.__setattr__(resource, "name", new)
    return resource


MERGE_STORE_OK = ("ab.smem_a.wait", "ab.smem_b.wait", "ab.smem_a.read", "ab.smem_b.read",
                  "gmem_d.store(smem_a, smem_b)", "ab.release")


# (id, valid base, wrong design from the base, code, phrases the message must hold)
CASES = [
    # -- names --------------------------------------------------------------------------------------
    ("name", merge_copy, lambda d: d.with_resource(rename(GmemTensor("gmem_x"), "gmem x")),
     "name.identifier", ["resource name 'gmem x' is not an identifier"]),
    ("duplicate", merge_copy, lambda d: d.with_task(Task.unchecked("smem_a", 12, 1)),
     "design.duplicate_name", ["task 'smem_a' has the same name as a resource", "names must be unique"]),
    ("no_target", merge_copy, lambda d: d.with_targets(),
     "design.targets", ["design 'merge_copy' names no target architecture, expected one or more of sm_90a, sm_100a"]),
    ("unknown_target", merge_copy, lambda d: d.with_targets("sm_90a", "sm_80"),
     "design.targets", ["target 'sm_80' is unknown, expected one of sm_90a, sm_100a"]),
    ("twice_target", merge_copy, lambda d: d.with_targets("sm_90a", "sm_90a"),
     "design.targets", ["names target 'sm_90a' 2 times"]),
    ("cpp_word_name", merge_copy, lambda d: d.with_resource(rename(GmemTensor("gmem_x"), "bitand")),
     "name.identifier", ["resource name 'bitand' is a reserved word", "alternative token (it means '&')",
                         "rename it, e.g. to 'bitand_1'"]),
    ("float_count", merge_copy, lambda d: d.replace(problem=[(k, float(v) if k == "num_tiles" else v)
                                                             for k, v in d.problem]),
     "problem.integer", ["problem num_tiles is 8192.0, a float", "must be an integer", "set num_tiles=8192"]),
    # -- resources and configs ----------------------------------------------------------------------
    ("compute", merge_copy, lambda d: d.with_resource(dataclasses.replace(d.resource("gmem_d"), compute=Compute("conv"))),
     "resource.compute", ["resource 'gmem_d': compute op 'conv' is unknown, expected one of input, copy"]),
    ("dtype", merge_copy, lambda d: d.with_resource(dataclasses.replace(d.resource("gmem_a"), dtype="int8")),
     "resource.dtype", ["resource 'gmem_a': dtype 'int8' is unknown, expected one of float32, float16, bfloat16"]),
    ("gmem_pipeline", merge_copy, lambda d: d.with_resource(
        dataclasses.replace(d.resource("gmem_a"), pipeline_config=d.resource("smem_a").pipeline_config)),
     "resource.gmem_pipeline", ["gmem tensor 'gmem_a' has a pipeline_config"]),
    ("aliases", merge_copy, lambda d: d.with_resource(dataclasses.replace(d.resource("smem_a"), aliases="smem_q")),
     "resource.aliases", ["resource 'smem_a' aliases 'smem_q', which is not in the design"]),
    ("tma_bytes", merge_copy, lambda d: reconfig(d, "smem_b", num_bytes=8200),
     "config.tma_bytes", ["resource 'smem_b' (TmaAsync): num_bytes is 8200, expected a positive multiple of 16"]),
    # -- groups -------------------------------------------------------------------------------------
    ("one_member", merge_copy, lambda d: regroup(d, "ab", ["smem_a"]),
     "group.members", ["group 'ab' (Merge) has 1 member(s), expected at least 2"]),
    ("foreign_member", merge_copy, lambda d: d.with_group(PipelineGroup.unchecked(
        "ab", [d.resource("smem_a"), MemoryResource("smem_z", d.resource("smem_b").pipeline_config)], Merge)),
     "group.members", ["group 'ab': member 'smem_z' is not a resource of the design"]),
    ("stale_member", merge_copy, lambda d: d.replace(resources=[
        dataclasses.replace(r, tile=(7,)) if r.name == "smem_b" else r for r in d.resources]),
     "group.members", ["group 'ab': member 'smem_b' differs from the design's resource of that name"]),
    ("two_groups", merge_copy, lambda d: d.with_group(PipelineGroup.unchecked(
        "ba", [d.resource("smem_b"), d.resource("smem_a")], Merge)),
     "group.membership", ["resource 'smem_b' is in groups 'ab' and 'ba'"]),
    ("group_stages", merge_copy, lambda d: reconfig(d, "smem_b", num_stages=3),
     "group.num_stages", ["'smem_a'=4, 'smem_b'=3", "expected num_stages 4 for every member (as 'smem_a')"]),
    ("collapsed_kind", merge_gemm, lambda d: d.with_resource(dataclasses.replace(
        d.resource("smem_b"), pipeline_config=create_tma_async_pipeline_cfg(num_stages=4, num_bytes=16384))),
     "group.collapsed_kind", ["'smem_a'=TmaUmma (consumer umma), 'smem_b'=TmaAsync (consumer async)",
                              "expected consumer kind umma for every member (as 'smem_a')"]),
    ("collapsed_size", merge_copy, lambda d: reconfig(d, "smem_b", consumer_group=CooperativeGroup(Agent.Warp, 2)),
     "group.collapsed_size", ["'smem_a'=128 threads, 'smem_b'=64 threads", "expected 128 threads for every member"]),
    ("alias_bytes", fork_copy, lambda d: reconfig(d, "smem_y", num_bytes=4096),
     "group.alias_bytes", ["'smem_x', 'smem_y' view one buffer 'smem_x'", "'smem_x'=8192, 'smem_y'=4096",
                           "expected 8192 for each"]),
    ("explicit_config", merge_copy, lambda d: regroup(
        d, "ab", pipeline_config=create_tma_async_pipeline_cfg(num_stages=4, num_bytes=8192)),
     "group.explicit_config", ["explicit pipeline_config has num_bytes 8192, expected 16384",
                               "members 'smem_a', 'smem_b'"]),
    ("collapsed_task", merge_copy, lambda d: d.without_task("store")
     .with_task(Task.unchecked("store_a", 24, 4, ["smem_a"], ["gmem_d"]))
     .with_task(Task.unchecked("store_b", 28, 4, ["smem_b"], ["gmem_d"])),
     "group.collapsed_task", ["group 'ab' (Merge) shares its consumer barrier",
                              "consumers are tasks 'store_a', 'store_b'; one task must drive the collapsed side"]),
    # -- tasks and pipelines -------------------------------------------------------------------------
    ("warp_overlap", merge_copy, lambda d: retask(retask(d, "load_a", warp_idx=31), "load_b", warp_idx=31),
     "task.warps", ["tasks 'load_a' and 'load_b' both use warp 31"]),
    ("too_many_warps", merge_copy, lambda d: retask(d, "store", warp_idx=30, num_warps=3),
     "task.warps", ["tasks span 33 warps, expected at most 32"]),
    ("task_resource", merge_copy, lambda d: retask(d, "store", dst_resources=("gmem_d", "gmem_q")),
     "task.resource", ["task 'store' names resource 'gmem_q', which is not in the design"]),
    ("no_producer", merge_copy, lambda d: d.without_task("load_b"),
     "pipeline.endpoints", ["pipelined resource 'smem_b' has 0 producer task(s) (no task), expected exactly 1"]),
    ("two_consumers", merge_gemm, lambda d: d.with_task(Task.unchecked("peek", 31, 1, ["tmem_c"], [])),
     "pipeline.endpoints", ["pipelined resource 'tmem_c' has 2 consumer task(s) ('epilogue', 'peek'), expected exactly 1"]),
    ("consumer_count", merge_copy, lambda d: retask(d, "store", num_warps=2),
     "config.arrive_count", ["resource 'smem_a' (TmaAsync): consumer_group is 4 Warps (128 threads), expected 2 Warps (64 threads)",
                             "set consumer_group to 2 Warps (64 threads)",
                             "task 'store' has 2 warps and every async consumer thread arrives"]),
    ("producer_count", merge_gemm, lambda d: reconfig(d, "tmem_c", producer_group=CooperativeGroup(Agent.Warp, 1)),
     "config.arrive_count", ["resource 'tmem_c' (UmmaAsync): producer_group is 1 Warp (32 threads), expected 1 thread",
                             "one elected thread commit-arrives once the MMA has completed"]),
    # -- the dependency graph -------------------------------------------------------------------------
    ("graph_unknown", merge_copy, lambda d: d.replace(graph=[*d.graph, ("gmem_q", ("smem_a",))]),
     "graph.unknown", ["the dependency graph names 'gmem_q', which is not a resource of the design"]),
    ("graph_unused", merge_copy, lambda d: d.with_resource(GmemTensor("gmem_c"), deps=["smem_a"]),
     "graph.unused", ["resource 'gmem_c' is in the dependency graph but no task uses it"]),
    ("graph_missing", merge_copy, lambda d: d.replace(graph=[(k, v) for k, v in d.graph if k != "smem_a"]),
     "graph.missing", ["resource 'gmem_a' is used by a task but missing from the dependency graph"]),
    # -- compute expressions --------------------------------------------------------------------------
    ("expr", merge_copy, lambda d: d.with_resource(dataclasses.replace(
        d.resource("gmem_d"), compute=Compute("store", "smem_a + open(smem_b)"))),
     "compute.expr", ["resource 'gmem_d': expression 'smem_a + open(smem_b)': calls 'open', which is not an allowed "
                      "function"]),
    ("expr_operand", merge_copy, lambda d: d.with_resource(dataclasses.replace(
        d.resource("gmem_d"), compute=Compute("store", "smem_a + gmem_a"))),
     "compute.expr", ["expression 'smem_a + gmem_a': names 'gmem_a', which is not an operand"]),
    ("expr_missing", merge_copy, lambda d: d.with_resource(dataclasses.replace(
        d.resource("gmem_d"), compute=Compute("store"))),
     "compute.expr", ["resource 'gmem_d' computes store with no expression but depends on 2 resources"]),
    ("edge_unrealised", merge_copy, lambda d: d.replace(graph=[*d.graph[:-1], ("gmem_d", ("smem_a", "smem_b", "gmem_a"))]),
     "graph.edge_unrealised", ["edge 'gmem_a' -> 'gmem_d': no task consumes 'gmem_a' and produces 'gmem_d'"]),
    # -- schedules ------------------------------------------------------------------------------------
    ("unknown_group", merge_copy, lambda d: d.without_group("ab"),
     "schedule.unknown_group", ["task 'load_a': ab.smem_a.try_acquire() names group 'ab', which is not in the design"]),
    ("wrong_group", merge_copy, lambda d: retask(
        d.with_group(PipelineGroup.unchecked("cd", [], Merge)), "load_a",
        sched("cd.smem_a.acquire", "cd.smem_a.load(gmem_a)", "cd.smem_a.commit")),
     "schedule.unknown_group", ["cd.smem_a.acquire() reaches 'smem_a' through group 'cd', but it is a member of 'ab'"]),
    ("collapsed_member", merge_copy, lambda d: retask(d, "store", sched(*MERGE_STORE_OK[:-1], "ab.smem_a.release",
                                                                        "ab.smem_b.release")),
     "schedule.collapsed_member", ["task 'store': ab.smem_a.release() is on the collapsed consumer side of Merge group 'ab'"]),
    ("group_op", merge_copy, lambda d: retask(d, "store", sched("ab.wait", *MERGE_STORE_OK)),
     "schedule.group_op", ["ab.wait() is not the collapsed stage of Merge group 'ab'"]),
    ("bare_member", merge_copy, lambda d: retask(d, "store", sched("smem_a.wait", *MERGE_STORE_OK[1:])),
     "schedule.bare_member", ["'smem_a' is a member of group 'ab' but smem_a.wait() uses it bare"]),
    ("bracket", merge_copy, lambda d: retask(d, "load_a", sched("ab.smem_a.load(gmem_a)", "ab.smem_a.acquire",
                                                                 "ab.smem_a.commit")),
     "schedule.bracket", ["ab.smem_a.load(arg0=gmem_a) is producer work outside its acquire()..commit() bracket"]),
    ("try_order", merge_copy, lambda d: retask(d, "store", sched("ab.smem_a.try_wait", "ab.smem_b.wait",
                                                                  "ab.smem_a.wait", *MERGE_STORE_OK[2:])),
     "schedule.try_order", ["ab.smem_a.try_wait() must be directly followed by its blocking wait() on the same "
                            "target, got ab.smem_b.wait()", "put smem_a.wait() right after try_wait()"]),
    ("role", merge_copy, lambda d: retask(d, "load_a", sched("ab.smem_a.acquire", "gmem_a.read",
                                                             "ab.smem_a.load(gmem_a)", "ab.smem_a.commit"),
                                          src_resources=()),
     "schedule.role", ["task 'load_a': gmem_a.read() is consumer work on 'gmem_a', which is not in its "
                       "src_resources (none)"]),
    ("unpipelined", merge_copy, lambda d: retask(d, "store", sched(*MERGE_STORE_OK[:-2], "gmem_d.acquire",
                                                                    "gmem_d.store(smem_a, smem_b)", "ab.release")),
     "schedule.unpipelined", ["gmem_d.acquire() synchronises on 'gmem_d', which has no pipeline_config"]),
    ("release_before_use", merge_gemm, lambda d: retask(d, "mma", sched(
        "tmem_c.acquire", "ab.smem_a.wait", "ab.smem_b.wait", "ab.smem_a.read", "ab.smem_b.read", "ab.release",
        "tmem_c.mma", "tmem_c.commit")),
     "schedule.release_before_use", ["task 'mma': ab.release() releases 'smem_a', 'smem_b' before tmem_c.mma(), "
                                     "which reads it", "move ab.release() after tmem_c.mma()"]),
    ("loop_bound", merge_copy, lambda d: d.replace(problem=[(k, v) for k, v in d.problem if k != "num_tiles"]),
     "schedule.loop", ["task 'load_a': domain_loop(0, num_tiles, 1) has a bound that is not an integer or a problem "
                       "symbol (problem: num_elements, tile_elems, dtype)"]),
    ("iterations", merge_copy, lambda d: retask(d, "load_a", sched(
        "ab.smem_a.acquire", "ab.smem_a.load(gmem_a)", "ab.smem_a.commit", stop=3)),
     "schedule.iterations", ["resource 'smem_a': its tasks run different numbers of iterations ('load_a'=3, 'store'=8192)"]),
    # a zero trip count is named as the cause of the mismatch it makes
    ("iterations_zero_trip", lambda: merge_copy(num_elements=8192), lambda d: retask(d, "load_b", sched(
        "ab.smem_b.acquire", "ab.smem_b.load(gmem_b)", "ab.smem_b.commit", stop=0)),
     "schedule.iterations", ["its tasks run different numbers of iterations ('load_b'=0, 'store'=4)",
                             "the cause is a zero trip count: task load_b: domain_loop(0, 0, 1) runs 0 times",
                             "give the loop that runs 0 times the bounds of the other side's loop"]),
    # a producer that never waits on empty, a consumer that frees the shared stage once per member
    ("phase_lead_producer", merge_copy, lambda d: retask(d, "load_b", sched("ab.smem_b.load(gmem_b)",
                                                                             "ab.smem_b.commit")),
     "schedule.phase_lead", ["task 'load_b': ab.smem_b.load(arg0=gmem_b) signals ab.full_1 in a pass that has not "
                             "waited on 'smem_b''s empty barrier since its last commit",
                             "can run more than 4 stages ahead of 'store' and commit twice into a stage",
                             "phase r + 2 looks like phase r", "acquire 'smem_b' once before each commit"]),
    ("phase_lead_consumer", merge_copy, lambda d: retask(d, "store", sched(*MERGE_STORE_OK[:-1], "ab.smem_a.release",
                                                                           "ab.smem_b.release")),
     "schedule.phase_lead", ["task 'store': ab.smem_b.release() signals ab.shared_empty in a pass that has not "
                             "waited on 'ab''s full barrier", "'load_a' and 'load_b' can run two phases ahead",
                             "wait 'ab' once before each release"]),
    ("alias_unordered", merge_copy, lambda d: d.with_resource(dataclasses.replace(d.resource("smem_b"), aliases="smem_a")),
     "resource.alias_unordered", ["resource 'smem_b' aliases 'smem_a' but they are not members of one Fork group"]),
    ("smem", lambda: merge_copy(tile_bytes=16384), lambda d: merge_copy(tile_bytes=32768),
     "smem.capacity", ["shared memory exceeded: data 262144 B + barriers 96 B = 262240 B, expected at most 232448 B"]),
    # the GEMM kernel's accumulator staging counts: the residual's epilogue reads more than the accumulator,
    # so its staging holds the whole 128 x 256 fp16 tile beside 3 stages of 48 KiB and the 64 KiB residual
    ("smem_staging", merge_gemm, lambda d: examples.merge_gemm_resadd(num_stages=3, bm=128, bn=256, bk=64, compact=True),
     "smem.capacity", ["shared memory exceeded: data 212992 B + accumulator staging 65536 B (float16) + barriers "
                       "96 B = 278624 B, expected at most 232448 B"]),
    # merge_gemm's staging may take each tile in turns (a quarter of it at a time), but 5 stages of 48 KiB are too many
    ("smem_staging_turns", merge_gemm, lambda d: examples.merge_gemm(num_stages=5, bm=128, bn=256, bk=64),
     "smem.capacity", ["shared memory exceeded: data 245760 B + accumulator staging 16384 B (float16, each tile in "
                       "4 turns) + barriers 136 B = 262280 B"]),
    # sm_100a drains tensor memory through a whole-tile staging buffer; sm_90a takes the tile in turns
    ("smem_target", merge_gemm, lambda d: examples.merge_gemm(num_stages=3, bm=128, bn=256, bk=128).with_targets(
        "sm_90a", "sm_100a"),
     "smem.capacity", ["sm_90a: shared memory exceeded: data 294912 B + accumulator staging 16384 B (float16, each "
                       "tile in 4 turns) + barriers 88 B = 311384 B", "sm_100a: shared memory exceeded",
                       "accumulator staging 65536 B (float16) + barriers 88 B + tensor-memory slot and mma_done barriers "
                       "16 B = 360552 B"]),
    # -- what the generators build (every codegen.* code: tests/analysis/buildable/test_codegen_rules.py) ---
    ("codegen", merge_gemm, lambda d: d.replace(problem=[(k, v) for k, v in d.problem if k != "BK"]),
     "codegen.problem_shape", ["the GEMM problem needs positive integers M, N, K, BM, BN, BK; BK missing"]),
]

#: Rules that warn: (id, valid design, mutation, code, phrases of the warning).
WARNING_CASES = [
    ("trip_count_one", merge_copy, lambda d: d.replace(problem={**d.problem_dict, "num_tiles": 1}),
     "schedule.trip_count", ["pipeline 'ab' (smem_a, smem_b): every task brackets it once over its whole schedule",
                             "task load_a: domain_loop(0, num_tiles, 1) runs once (num_tiles=1)",
                             "its 4-stage ring never wraps", "a problem of at least 9 iterations"]),
    ("trip_count_zero", merge_copy, lambda d: d.replace(problem={**d.problem_dict, "num_tiles": 0}),
     "schedule.trip_count", ["pipeline 'ab' (smem_a, smem_b): no task ever brackets it",
                             "task store: domain_loop(0, num_tiles, 1) runs 0 times (num_tiles=0)",
                             "the pipeline never runs"]),
    ("trip_count_accumulator", merge_gemm, lambda d: d.replace(problem={**d.problem_dict, "num_tiles": 1}),
     "schedule.trip_count", ["pipeline 'tmem_c': every task brackets it once",
                             "task mma: domain_loop(0, num_tiles, 1) runs once (num_tiles=1)"]),
]


@pytest.mark.parametrize("case_id,base,mutate,code,phrases", WARNING_CASES, ids=[c[0] for c in WARNING_CASES])
def test_warning(case_id, base, mutate, code, phrases):
    good = base()
    assert code not in good.validate().codes()
    report = mutate(good).validate()
    hits = [d for d in report.warnings if d.code == code]
    assert report.ok and len(hits) == 1, str(report)  # one warning per pipeline, never an error
    text = f"{hits[0].message} (fix: {hits[0].hint})"
    for phrase in phrases:
        assert phrase in text, f"{phrase!r} not in:\n{text}"


def test_a_ring_that_turns_in_an_inner_loop_is_no_trip_count_warning():
    """One output tile of 64 k tiles: the A/B ring wraps in the k loop; only the accumulator's does not."""
    d = merge_gemm()
    report = d.replace(problem={**d.problem_dict, "num_tiles": 1}).validate()
    assert [w.where[0] for w in report.warnings] == ["tmem_c"]


@pytest.mark.parametrize("case_id,base,mutate,code,phrases", CASES, ids=[c[0] for c in CASES])
def test_rule(case_id, base, mutate, code, phrases):
    good = base()
    good_report = good.validate()
    assert good_report.ok and code not in good_report.codes(), str(good_report)
    assert_reported(mutate(good), code, phrases)


def _emitted_codes():
    """Every diagnostic code the rule functions can produce, read from their source."""
    root = Path(pgstudio.__file__).parent
    files = ["analysis/rules.py", "model/group_rules.py", "model/schedule_rules.py", "model/config.py"]
    codes = set()
    for f in files:
        codes |= set(re.findall(r'(?:error|warning)\(\s*"([a-z_.]+)"', (root / f).read_text()))
    return codes


def test_every_rule_code_has_a_case():
    emitted = _emitted_codes()
    assert len(emitted) > 30
    cases = CASES + WARNING_CASES
    assert emitted <= {c[3] for c in cases}, sorted(emitted - {c[3] for c in cases})
    for spec in RULES:  # and every entry of the ordered table is exercised
        assert any(c[3] == spec.code or c[3].startswith(spec.code + ".") for c in cases), spec.code


def test_validate_reports_all_problems_at_once_in_rule_table_order():
    d = merge_copy()
    wrong = retask(reconfig(d, "smem_b", num_stages=3), "store",
                   sched("ab.smem_a.try_wait", "ab.smem_b.wait", "ab.smem_a.wait", *MERGE_STORE_OK[2:-1],
                         "ab.smem_a.release", "ab.smem_b.release"),
                   num_warps=2)
    report = wrong.validate()
    codes = report.codes()
    for code in ("group.num_stages", "schedule.try_order", "schedule.collapsed_member", "config.arrive_count"):
        assert code in codes, str(report)
    order = [spec.code for spec in RULES]
    ranks = [order.index(code) if code in order else next(i for i, c in enumerate(order) if code.startswith(c + "."))
             for code in codes]
    assert ranks == sorted(ranks)
    assert len(codes) == len(set(report.diagnostics))  # no duplicates


def test_raise_if_errors_raises_the_first_error_with_the_right_type():
    d = merge_copy()
    with pytest.raises(ScheduleError, match="try_wait"):
        retask(d, "store", sched("ab.smem_a.try_wait", "ab.smem_b.wait", "ab.smem_a.wait",
                                 *MERGE_STORE_OK[2:])).validate().raise_if_errors()
    with pytest.raises(DesignError, match="num_stages") as err:
        reconfig(d, "smem_b", num_stages=3).validate().raise_if_errors()
    assert not isinstance(err.value, ScheduleError)
    d.validate().raise_if_errors()  # a valid design raises nothing


def test_a_design_error_inside_a_rule_becomes_a_diagnostic(monkeypatch):
    from pgstudio.analysis.rules import RuleSpec

    def tripping(design):
        design.resource("nope")
        yield from ()

    monkeypatch.setattr(sys.modules["pgstudio.analysis.validate"], "RULES", (RuleSpec("trip", tripping, "test"),))
    report = merge_copy().validate()
    assert report.codes() == ["design.lookup"] and "has no resource 'nope'" in report.errors[0].message


def test_report_rendering():
    report = merge_copy(tile_bytes=32768).validate()
    text = str(report)
    assert text.startswith("design 'merge_copy': 1 error(s), 0 warning(s)")
    assert "error [smem.capacity]" in text and "(fix: use fewer stages or smaller tiles)" in text
    html = report_html(report)
    assert "<table>" in html and "smem.capacity" in html and "1 error(s)" in html
    assert "no problems found" in report_html(merge_copy().validate())
    assert not report and merge_copy().validate()

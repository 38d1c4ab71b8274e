"""One case per ``codegen.*`` code: a valid design, one edit that the generator cannot build, and
the diagnostic ``validate()`` reports for it (names, values, the expected value, a fix) before
anyone asks for a kernel; ``emit`` then raises one ``DesignError`` listing the same errors."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest

import pgstudio
from pgstudio import (Agent, AsyncProducerOp, Compute, CooperativeGroup, Design, DesignError, GmemTensor,
                      Task, create_async_async_pipeline_cfg,
                      create_tma_async_pipeline_cfg, create_tma_umma_pipeline_cfg, create_umma_umma_pipeline_cfg,
                      domain_loop, examples, schedule)
from pgstudio.analysis.buildable import plan_stream
from pgstudio.codegen import emit
from reported import assert_reported
from pgstudio.model.schedule import CapturedSchedule, Loop, Step

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "codegen"))
import stream_designs  # noqa: E402  (the shared streaming test designs)

WG = CooperativeGroup(Agent.Warp, 4)


def reconfig(d: Design, name: str, cfg=None, **changes) -> Design:
    r = d.resource(name)
    cfg = cfg or dataclasses.replace(r.pipeline_config, **changes)
    return d.with_resource(dataclasses.replace(r, pipeline_config=cfg))


def recompute(d: Design, name: str, op: str, expr: str = "") -> Design:
    return d.with_resource(dataclasses.replace(d.resource(name), compute=Compute(op, expr)))


def retask(d: Design, name: str, **changes) -> Design:
    t = d.task(name)
    fields = dict(warp_idx=t.warp_idx, num_warps=t.num_warps, src_resources=t.src_resources,
                  dst_resources=t.dst_resources, schedule=t.schedule)
    return d.with_task(Task.unchecked(name, **{**fields, **changes}))


def reloop(d: Design, task: str, change) -> Design:
    """Task ``task`` with ``change(nodes of its tile loop) -> new top-level nodes``."""
    s = d.task(task).schedule
    return retask(d, task, schedule=CapturedSchedule(s.name, change(s.nodes[0])))


def without_steps(d: Design, task: str, drop) -> Design:
    """Task ``task`` without the steps ``drop(step)`` selects (at any depth)."""
    def keep(nodes):
        return tuple(Loop(n.start, n.stop, n.step, keep(n.body)) if isinstance(n, Loop) else n
                     for n in nodes if isinstance(n, Loop) or not drop(n))
    s = d.task(task).schedule
    return retask(d, task, schedule=CapturedSchedule(s.name, keep(s.nodes)))


def problem(d: Design, **changes) -> Design:
    return d.replace(problem={**d.problem_dict, **changes})


def repeated(d: Design, times: int) -> Design:
    """Every task runs its tile loop's body ``times`` times per tile: a valid protocol, a long kernel."""
    for t in d.tasks:
        d = reloop(d, t.name, lambda lp: (Loop(lp.start, lp.stop, lp.step, lp.body * times),))
    return d


#: The setmaxnreg layout of ``gemm()`` that uses the block's 384 x 168 registers exactly.
LAYOUT = {"SETMAXNREG_load_a": 40, "SETMAXNREG_load_b": 40, "SETMAXNREG_epilogue": 40, "SETMAXNREG_mma": 232}


def stream(**kw) -> Design:
    return examples.merge_copy(**{"num_stages": 4, "tile_bytes": 8192, **kw})


def gemm(**kw) -> Design:
    return examples.merge_gemm(**{"num_stages": 3, "bm": 128, "bn": 128, "bk": 64, **kw})


def async_fork(op_y=AsyncProducerOp.AsyncLoad) -> Design:
    """fork_copy whose one loader warp copies with threads: an AsyncAsync Fork of one buffer."""
    d = examples.fork_copy(num_stages=4, tile_bytes=8192)
    for name, op in (("smem_x", AsyncProducerOp.AsyncLoad), ("smem_y", op_y)):
        d = reconfig(d, name, create_async_async_pipeline_cfg(
            num_stages=4, num_bytes=8192, producer_group=CooperativeGroup(Agent.Warp, 1), consumer_group=WG,
            async_producer_op=op))
    return d


@schedule
def _copy_all(src, dst):
    with domain_loop(0, "num_tiles", 1):
        dst.store(val=src)


def unstaged() -> Design:
    a, d = GmemTensor("gmem_a"), GmemTensor("gmem_d", compute=Compute("store", "gmem_a"))
    return Design("unstaged", [a, d], {d: [a]}, [], [Task("copy", 0, 4, [a], [d], _copy_all(a, d))],
                  {"num_tiles": 4})


def add_output(d: Design, task: str, name: str = "gmem_e", expr: str = "smem_a") -> Design:
    out = GmemTensor(name, compute=Compute("store", expr), dtype=d.resource("smem_a").dtype)
    d = d.with_resource(out, deps=[expr])
    return retask(d, task, dst_resources=(*d.task(task).dst_resources, name))


# (id, valid base, the edit, code, phrases the message (with its fix) must hold)
CASES = [
    # -- both generators --------------------------------------------------------------------------------
    ("no_tasks", stream, lambda d: d.replace(resources=(), graph={}, groups=(), tasks=()),
     "codegen.no_tasks", ["design 'merge_copy' has no tasks", "fix: add a task"]),
    ("schedule", stream, lambda d: d.with_task(Task.unchecked("idle", 12, 1)),
     "codegen.schedule", ["task 'idle' has no schedule", "attach a @schedule to 'idle', or remove the task"]),
    ("load_target", stream, lambda d: reloop(d, "store", lambda lp: (Loop(0, "num_tiles", 1, (
        *lp.body[:-2], Step("load", "gmem_d", "bare", None, ()), *lp.body[-1:])),)),
     "codegen.load_target", ["gmem_d.load() loads into 'gmem_d', which is not a staged resource"]),
    ("store_target", stream, lambda d: reloop(retask(d, "load_a", dst_resources=("smem_a", "gmem_a")), "load_a",
                                              lambda lp: (Loop(0, "num_tiles", 1, (
                                                  *lp.body, Step("store", "gmem_a", "bare", None, ()))),)),
     "codegen.store_target", ["gmem_a.store() stores to 'gmem_a', an input tensor"]),
    ("async_producer_op", async_fork, lambda d: async_fork(AsyncProducerOp.AsyncThread),
     "codegen.async_producer_op", ["group 'xy' (Fork) commits members whose async producers arrive differently",
                                   "'smem_x'=AsyncLoad, 'smem_y'=AsyncThread", "the same async_producer_op"]),
    ("unstored_output", stream, lambda d: add_output(d, "store"),
     "codegen.unstored_output", ["global tensor 'gmem_e' computes 'store' but no task stores it"]),
    ("unstored_gemm", lambda: examples.fork_gemm_act(num_stages=2), lambda d: add_output(d, "act", expr="smem_act"),
     "codegen.unstored_output", ["global tensor 'gmem_e' computes 'store' but no task stores it"]),
    # -- streaming ----------------------------------------------------------------------------------------
    ("stream_loop", stream, lambda d: reloop(reloop(reloop(d, "load_a", lambda lp: (Loop(0, "num_tiles", 1, (
        Loop(0, 1, 1, lp.body),)),)), "load_b", lambda lp: (lp,)), "store", lambda lp: (lp,)),
     "codegen.stream_loop", ["task 'load_a' nests a domain_loop inside its tile loop"]),
    ("dtype_mix", stream, lambda d: d.with_resource(GmemTensor("gmem_b", dtype="float16")),
     "codegen.dtype_mix", ["resources mix element types ('float16', 'float32')", "give every resource dtype"]),
    ("no_pipeline", stream, lambda d: unstaged(),
     "codegen.no_pipeline", ["design 'unstaged' has no pipelined resource"]),
    ("tile_uniform", stream, lambda d: reconfig(d, "smem_b", num_bytes=4096),
     "codegen.tile_uniform", ["stages differ in size ('smem_a'=8192, 'smem_b'=4096 bytes)", "e.g. 8192"]),
    ("tile_bytes", lambda: stream_designs.async_compute(tile_bytes=4096),
     lambda d: stream_designs.async_compute(tile_bytes=100),
     "codegen.tile_bytes", ["a stage of 100 bytes is not a positive multiple of 16", "use num_bytes=112"]),
    ("tile_elems", stream, lambda d: problem(d, tile_elems=1000),
     "codegen.tile_elems", ["problem says tile_elems=1000 but stages of 8192 B hold 2048 float32 elements"]),
    ("num_elements", stream, lambda d: problem(d, num_elements="lots"),
     "codegen.problem_shape", ["problem value num_elements is 'lots', expected a positive integer"]),
    ("stage_input", stream, lambda d: recompute(d, "smem_a", "input"),
     "codegen.stage_input", ["staged resource 'smem_a' computes 'input'"]),
    ("copy_source", stream, lambda d: recompute(d, "smem_a", "elementwise", "gmem_a * 2"),
     "codegen.copy_source", ["resource 'smem_a' is filled by a bulk copy (tma), which copies one input tensor, "
                             "but it computes 'gmem_a * 2'", "use an AsyncThread producer"]),
    ("read_without_wait", lambda: examples.ungrouped(stream()),
     lambda d: without_steps(d, "store", lambda s: s.target == "smem_b"),
     "codegen.read_without_wait", ["task 'store': gmem_d.store(val_a=smem_a, val_b=smem_b) reads 'smem_b' without "
                                   "waiting on it", "add smem_b.wait() before and smem_b.release() after"]),
    # -- GEMM ---------------------------------------------------------------------------------------------
    ("accumulator", gemm, lambda d: recompute(d, "tmem_c", "elementwise", "smem_a + smem_b"),
     "codegen.accumulator", ["a GEMM kernel has exactly one accumulator, a pipelined tensor-memory resource computing "
                             "mma; found 'tmem_c'"]),
    ("acc_type", gemm, lambda d: reconfig(d, "tmem_c", create_umma_umma_pipeline_cfg(num_stages=1, num_bytes=65536)),
     "codegen.pipeline_type", ["accumulator 'tmem_c' is UmmaUmma", "create_umma_async_pipeline_cfg"]),
    ("operand_type", lambda: examples.fork_gemm_act(num_stages=2), lambda d: reconfig(
        d, "smem_b", create_tma_async_pipeline_cfg(num_stages=2, num_bytes=16384, consumer_group=CooperativeGroup(
            Agent.Warp, 8))),
     "codegen.pipeline_type", ["operand 'smem_b' is TmaAsync, but the MMA reads it: its consumer is umma"]),
    ("umma_tile", lambda: examples.fork_gemm_act(num_stages=2), lambda d: reconfig(
        d, "smem_act", create_tma_umma_pipeline_cfg(num_stages=2, num_bytes=16384)),
     "codegen.pipeline_type", ["staged tile 'smem_act' has an umma consumer but is not an operand"]),
    ("problem_shape", gemm, lambda d: problem(d, M=0, BN="wide"),
     "codegen.problem_shape", ["the GEMM problem needs positive integers M, N, K, BM, BN, BK; M=0, BN='wide'"]),
    ("problem_stride", gemm, lambda d: problem(d, N=1001),
     "codegen.problem_stride", ["N=1001 is not a multiple of 8", "round N up to a multiple of 8"]),
    ("bk_swizzle", gemm, lambda d: gemm(bk=48),
     "codegen.bk_swizzle", ["BK is 48: a float16 row of 96 B is no swizzled panel (32, 64 or a multiple of 128 bytes)",
                            "use BK=32 or 64"]),
    ("bn_tile", gemm, lambda d: gemm(bn=96),
     "codegen.bn_tile", ["BN is 96, expected a multiple of 64 up to 256"]),
    ("bm_rows", gemm, lambda d: gemm(bm=64, bn=64),
     "codegen.bm_rows", ["BM x BN is 64 x 64 with 2 MMA warpgroup(s): each warpgroup covers 64 or 128 rows and a "
                         "multiple of 64 columns", "give 'mma' 4 warps"]),
    ("bm_sm100", gemm, lambda d: gemm(bm=256, bn=64).with_targets("sm_90a", "sm_100a"),
     "codegen.bm_rows", ["sm_100a: BM is 256; the sm_100a path issues M=128 tcgen05.mma"]),
    ("tmem_columns", lambda: gemm(bn=256, num_stages=2).with_targets("sm_100a"),
     lambda d: reconfig(d, "tmem_c", num_stages=3),
     "codegen.tmem_columns", ["3 accumulator stage(s) of 256 fp32 columns need 768 tensor-memory columns, more than "
                              "the 512"]),
    ("mma_task", gemm, lambda d: without_steps(d, "mma", lambda s: s.op == "mma"),
     "codegen.mma_task", ["design 'merge_gemm' has 0 tasks issuing mma (none), expected one"]),
    ("mma_target", gemm, lambda d: retask(reloop(d, "mma", lambda lp: (Loop(0, "num_tiles", 1, (
        *lp.body, Step("mma", "gmem_d", "bare", None, ()))),)), "mma", dst_resources=("tmem_c", "gmem_d")),
     "codegen.mma_target", ["gmem_d.mma() accumulates into 'gmem_d', but the accumulator is 'tmem_c'"]),
    ("mma_warpgroup", gemm, lambda d: retask(d, "mma", warp_idx=14),
     "codegen.mma_warpgroup", ["task 'mma' runs the tensor cores on warps 14..21",
                                "give 'mma' warps 4..11 (warp_idx=4, num_warps=8)"]),  # what its button does
    ("accumulator_registers", gemm, lambda d: gemm(bm=256, bn=256, num_stages=1),
     "codegen.accumulator_registers", ["each MMA thread of 'mma' would hold 256 fp32 accumulators (256x256 over 2 "
                                       "warpgroup(s)); at most 128 fit"]),
    ("launch_registers", lambda: examples.merge_gemm(b_producer="async", num_stages=2),
     lambda d: examples.merge_gemm(b_producer="async", num_stages=2, bn=192),
     "codegen.accumulator_registers", ["a block of 640 threads leaves 96 registers per thread, but each thread of "
                                       "'mma' holds 96 fp32 accumulators"]),
    ("mma_operands", gemm, lambda d: d.replace(graph={**dict(d.graph), "tmem_c": ("smem_a",)}),
     "codegen.mma_operands", ["accumulator 'tmem_c' depends on ['smem_a'], expected two staged shared-memory tiles"]),
    ("operand_dtype", gemm, lambda d: d.with_resource(dataclasses.replace(d.resource("smem_b"), dtype="bfloat16"),
                                                      d.deps("smem_b")),
     "codegen.operand_dtype", ["operands 'smem_a' / 'smem_b' are 'float16' / 'bfloat16'; the tensor-core path takes "
                               "float16, bfloat16, float32 (read as tf32) for both"]),
    ("b_major", lambda: gemm(dtype="float32", bn=128, bk=32, num_stages=2),
     lambda d: gemm(dtype="float32", bn=128, bk=32, num_stages=2, b_major="mn"),
     "codegen.b_major", ["the tensor cores read tf32 B only K-major", "set the problem's b_major='k'"]),
    ("b_major_value", gemm, lambda d: problem(d, b_major="nk"),
     "codegen.b_major", ["problem b_major is 'nk', expected 'mn' or 'k'"]),
    ("split_k_value", gemm, lambda d: problem(d, SPLIT_K=0),
     "codegen.split_k", ["SPLIT_K is 0, expected an integer from 1 to 16"]),
    ("split_k_store", lambda: gemm(split_k=2), lambda d: reloop(d, "epilogue", lambda lp: (Loop(
        0, "num_tiles", 1, (*lp.body[:-1], *[n for n in lp.body if getattr(n, "op", "") == "store"], lp.body[-1])),)),
     "codegen.split_k", ["splits K 2 ways, but 2 store steps read the accumulator 'tmem_c'", "or set SPLIT_K=1"]),
    ("cluster_value", gemm, lambda d: problem(d, CLUSTER_M=1, CLUSTER_N=4),
     "codegen.cluster", ["cluster (CLUSTER_M, CLUSTER_N) = (1, 4); the generator builds (1, 1), (1, 2), (2, 1)",
                         "set CLUSTER_N=2 (pairs share A)"]),
    ("cluster_split_k", lambda: gemm(split_k=2), lambda d: problem(d, CLUSTER_M=1, CLUSTER_N=2),
     "codegen.cluster", ["splits K 2 ways and clusters blocks (1, 2)", "set SPLIT_K=1, or remove CLUSTER_M"]),
    ("cluster_arch", gemm, lambda d: problem(d, CLUSTER_M=1, CLUSTER_N=2).with_targets("sm_90a", "sm_100a"),
     "codegen.cluster", ["built for sm_90a, not sm_100a"]),
    ("cluster_multicast", lambda: examples.merge_gemm(b_producer="async", num_stages=2),
     lambda d: problem(d, CLUSTER_M=2, CLUSTER_N=1),
     "codegen.cluster", ["'smem_b' is shared by the blocks of a cluster, so it is multicast by TMA, but its pipeline is"]),
    ("stream_k_value", gemm, lambda d: problem(d, STREAM_K=2),
     "codegen.stream_k", ["STREAM_K is 2, expected 0 or 1", "set STREAM_K=1"]),
    ("stream_k_split_k", lambda: gemm(split_k=2), lambda d: problem(d, STREAM_K=1),
     "codegen.stream_k", ["splits K 2 ways and asks for stream-K", "remove STREAM_K, or set SPLIT_K=1"]),
    ("stream_k_arch", gemm, lambda d: problem(d, STREAM_K=1).with_targets("sm_90a", "sm_100a"),
     "codegen.stream_k", ["stream-K is built for sm_90a, not sm_100a"]),
    ("tile_source", gemm, lambda d: recompute(d, "smem_a", "elementwise", "gmem_a * 2"),
     "codegen.tile_source", ["staged tile 'smem_a' computes 'elementwise' of ['gmem_a']; a GEMM stage is a copy of one "
                             "input tensor"]),
    ("tile_shape", lambda: examples.merge_gemm_resadd(num_stages=2),
     lambda d: d.with_resource(dataclasses.replace(d.resource("smem_r"), tile=(64, 64))),
     "codegen.tile_shape", ["tile 'smem_r' has shape (64, 64); expected (128, 128) (a residual, M x N) or (128, 64)"]),
    ("tile_dtype", lambda: examples.merge_gemm_resadd(num_stages=2),
     lambda d: d.with_resource(dataclasses.replace(d.resource("smem_r"), dtype="bfloat16")),
     "codegen.tile_dtype", ["tile 'smem_r' is 'bfloat16', expected 'float16' like the operands"]),
    ("tma_box", lambda: gemm(bn=64, num_stages=1), lambda d: gemm(bn=64, bk=320, num_stages=1),
     "codegen.tma_box", ["tile 'smem_b' has 320 rows; a TMA box has at most 256"]),
    ("stage_bytes", gemm, lambda d: reconfig(reconfig(d, "smem_a", num_bytes=8192), "smem_b", num_bytes=16384),
     "codegen.stage_bytes", ["tile 'smem_a': num_bytes is 8192, but a 128x64 float16 tile is 16384 B",
                             "set num_bytes=16384"]),
    # B = smem_a (forked with smem_act), A = smem_b: D1 = relu(smem_act) is a K x N tile
    ("store_space", lambda: examples.fork_gemm_act(num_stages=2),
     lambda d: d.replace(graph={**dict(d.graph), "tmem_c": ("smem_b", "smem_a")}),
     "codegen.store_space", ["output 'gmem_d1' is computed from ['smem_act'], whose tiles do not share one M x N or "
                             "M x K space"]),
    ("output_dtype", gemm, lambda d: d.with_resource(dataclasses.replace(d.resource("gmem_d"), dtype="bfloat16")),
     "codegen.output_dtype", ["output 'gmem_d' is 'bfloat16'; with float16 operands the epilogue writes 'float16' or "
                              "'float32'"]),
    ("task_warpgroup", lambda: examples.merge_gemm_resadd(num_stages=2), lambda d: retask(d, "epilogue", warp_idx=14),
     "codegen.task_warpgroup", ["task 'epilogue' spans warps 14..17, across warpgroups", "starting at 16"]),
    ("gemm_read_without_wait", lambda: examples.ungrouped(examples.merge_gemm_resadd(num_stages=2)),
     lambda d: without_steps(d, "epilogue", lambda s: s.target == "smem_r"),
     "codegen.read_without_wait", ["task 'epilogue' never waits on 'smem_r', but gmem_d.store(val_c=tmem_c, "
                                   "val_r=smem_r) reads it"]),
    # one flat loop of as many iterations as num_tiles x num_k_tiles: the counts agree, the store is outside the k loop
    ("k_loop", lambda: examples.fork_gemm_act(num_stages=2), lambda d: reloop(d, "act", lambda lp: (Loop(
        0, d.problem_dict["num_tiles"] * d.problem_dict["num_k_tiles"], 1, lp.body[0].body),)),
     "codegen.k_loop", ["task 'act': gmem_d1.store(val=smem_act) is outside domain_loop(0, num_k_tiles, 1), but "
                        "'gmem_d1' is a MK tile"]),
    # a one-iteration loop inside the tile loop: the counts agree, but the generator has no such loop
    ("gemm_loop", gemm, lambda d: reloop(d, "epilogue", lambda lp: (Loop(0, "num_tiles", 1, (
        Loop(0, 1, 1, lp.body),)),)),
     "codegen.gemm_loop", ["task 'epilogue' runs domain_loop(0, 1, 1)", "inside its tile loop"]),
    # a setmaxnreg layout (SETMAXNREG_<task>): setmaxnreg's values, one per warpgroup, within the block's registers
    ("setmaxnreg_value", gemm, lambda d: problem(d, **{**LAYOUT, "SETMAXNREG_mma": 230}),
     "codegen.setmaxnreg", ["task 'mma': SETMAXNREG_mma is 230, expected a whole multiple of 8 from 24 to 256",
                            "set SETMAXNREG_mma to 224"]),
    ("setmaxnreg_warpgroup", gemm, lambda d: problem(d, **{**LAYOUT, "SETMAXNREG_load_b": 48}),
     "codegen.setmaxnreg", ["warpgroup 0 (warps 0..3) runs tasks that ask for different registers (load_a 40, "
                            "load_b 48, epilogue 40); one setmaxnreg sets all four warps",
                            "give every task of warpgroup 0 the same SETMAXNREG value"]),
    ("setmaxnreg_stream", stream, lambda d: problem(d, SETMAXNREG_store=64),
     "codegen.setmaxnreg", ["problem key SETMAXNREG_store asks for a setmaxnreg layout, which the streaming "
                            "generator does not build", "drop SETMAXNREG_store"]),
    ("register_budget", gemm, lambda d: problem(d, **{**LAYOUT, "SETMAXNREG_mma": 240}),
     "codegen.register_budget", ["setmaxnreg layout warpgroup 0 (load_a, load_b, epilogue) 40 x 128 threads, "
                                 "warpgroups 1..2 (mma) 240 x 256 threads: 66560 registers, but a block of 384 "
                                 "threads launches with 168 per thread, 64512 of the SM's 65536",
                                 "the warpgroups that increase would wait for registers forever",
                                 "lower SETMAXNREG_mma to 232"]),
    # the kernel's CUDA stays within what NVRTC compiles in about a minute (loops stay loops; written steps add up)
    ("source_size", stream, lambda d: repeated(d, 512),
     "codegen.source_size", ["the kernel of design 'merge_copy' would be about", "KB of CUDA, more than the 1,024 KB",
                             "8,192 schedule steps", "task 'store' has 4,608", "loops stay loops",
                             "write each pass once in its domain_loop instead of repeating it"]),
    ("chunk_split", gemm, lambda d: reconfig(retask(d, "epilogue", warp_idx=12, num_warps=3), "tmem_c",
                                             consumer_group=CooperativeGroup(Agent.Warp, 3)),
     "codegen.chunk_split", ["task 'epilogue': gmem_d.store(val=tmem_c) moves 2048 8-element chunks (128x128), which "
                             "do not split evenly over its 96 threads", "give 'epilogue' 4 warps"]),
]


@pytest.mark.parametrize("case_id,base,edit,code,phrases", CASES, ids=[c[0] for c in CASES])
def test_codegen_rule(case_id, base, edit, code, phrases):
    good = base()
    assert good.validate().ok, str(good.validate())
    bad = edit(good)
    assert_reported(bad, code, phrases)
    for arch in bad.targets:  # emit refuses with the arch's errors, listed in one exception
        errors = bad.with_targets(arch).validate().errors
        if not errors:
            assert emit(bad, arch=arch).code  # the problem belongs to another target
            continue
        with pytest.raises(DesignError) as info:
            emit(bad, arch=arch)
        assert info.value.diagnostics == errors


def _codes_in_source() -> set[str]:
    root = Path(pgstudio.__file__).parent / "analysis" / "buildable"
    return {c for f in root.glob("*.py") for c in re.findall(r'error\(\s*"(codegen\.[a-z_]+)"', f.read_text())}


def test_every_codegen_code_has_a_case():
    codes = _codes_in_source()
    assert len(codes) > 30
    assert codes - {c[3] for c in CASES} <= {"codegen.barrier_count"}, sorted(codes - {c[3] for c in CASES})


def test_a_barrier_nobody_arrives_on_is_refused_even_unvalidated():
    """A cooperative group of 0 threads is refused when it is built (the value domain); one that
    got past that check anyway (a mutated object) is still refused by the rules and the generator."""
    with pytest.raises(DesignError, match="cooperative group size"):
        CooperativeGroup(Agent.Thread, 0)
    nobody = CooperativeGroup(Agent.Thread, 1)
    object.__setattr__(nobody, "size", 0)
    d = reconfig(stream(), "smem_a", producer_group=nobody)
    assert "config.group_size" in d.validate().codes()
    planned = plan_stream(d)
    assert [p.code for p in planned.problems] == ["codegen.barrier_count"]
    with pytest.raises(DesignError, match="would be initialised with arrive count 0") as info:
        emit(d, validate=False)
    assert info.value.code == "codegen.barrier_count"

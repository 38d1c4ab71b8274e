"""Instrumented builds: off by default, a stamp for every step that generates code when on, and
nothing of the plain kernel changed (its lines stay, in order)."""

import re

import pytest
import stream_designs as S

from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.codegen.instrument import RECORD_BYTES, Instrument, recorded, step_table
from pgstudio.analysis.buildable.stream_plan import plan_stream
from pgstudio.errors import CompileError

STREAMING = {"merge_copy": examples.merge_copy, "fork_copy": examples.fork_copy,
             "fused_merge_copy": examples.fused_merge_copy, "async_compute": S.async_compute,
             "cp_async_copy": S.cp_async_copy, "mixed_merge": S.mixed_merge}


@pytest.mark.parametrize("name", STREAMING)
def test_the_default_build_has_no_instrumentation(name):
    src = emit(STREAMING[name]())
    assert "pg_ins" not in src.code and "pg_trace" not in src.code and "PG_INS" not in src.code
    assert "instrument" not in src.info
    assert [p.kind for p in src.params][-3:] == ["i64", "watchdog", "u64"]


@pytest.mark.parametrize("name", STREAMING)
def test_every_plain_line_survives_in_order(name):
    """Instrumentation only adds lines: the plain kernel is a subsequence of the instrumented
    one, apart from the parameter list's last line (which gains a comma)."""
    design = STREAMING[name]()
    plain = emit(design).code.splitlines()
    inst = emit(design, instrument=Instrument()).code.splitlines()
    missing, pos = [], 0
    for ln in plain:
        try:
            pos = inst.index(ln, pos) + 1
        except ValueError:
            missing.append(ln)
    assert missing == ["    const u64 pg_budget_ns) {"]


def _role(code: str, task: str) -> str:
    start = code.index(f"// task {task}:")
    nxt = code.find("// task ", start + 10)
    return code[start:nxt if nxt > 0 else len(code)]


def test_merge_copy_stamps_each_step_that_generates_code():
    design = examples.merge_copy()
    src = emit(design, instrument=Instrument(blocks=3, capacity=100))
    plan = plan_stream(design).plan
    for tc in plan.tasks:
        body = _role(src.code, tc.task.name)
        steps = list(tc.plan.steps())
        want = [k for k, rs in enumerate(steps) if recorded(rs)]
        sites = [int(m) for m in re.findall(r"pg_ins_put\(pg_ins, pg_ins_cap, pg_ins_n, pg_ins_g, pg_ins_c, (\d+)u", body)]
        assert sites == want, tc.task.name
        waits = sum(1 for rs in steps for a in rs.actions if a.verb == "wait")
        assert body.count("pg_ins_bk = pg_ins_ready(") == waits
        assert body.count("pg_ins[0] = make_uint4(") == 1  # the lane header, after the loop
    # load tasks stamp acquire and the copy issue; the store task its two waits, the store, the release
    ops = {t.task.name: [s.step.op for s in t.plan.steps() if recorded(s)] for t in plan.tasks}
    assert ops == {"load_a": ["acquire", "load"], "load_b": ["acquire", "load"],
                   "store": ["wait", "wait", "store", "release"]}
    assert "pg_tt == 0" in _role(src.code, "store")  # one elected lane of the 128-thread task records
    assert src.params[-1].kind == "trace" and src.params[-1].name == "pg_trace"
    info = dict(src.info["instrument"])
    assert info["blocks"] == 3 and info["capacity"] == 100
    assert info["buffer_bytes"] == 3 * 3 * 101 * RECORD_BYTES
    assert [t[0] for t in info["tasks"]] == ["load_a", "load_b", "store"]


def test_the_step_table_walks_the_cursors():
    plan = plan_stream(examples.merge_copy(num_stages=3)).plan
    store = step_table(plan)[2]
    wait_a = store[1]
    assert wait_a[1:3] == ("wait", "smem_a") and wait_a[5] == "consumer:ab"
    assert wait_a[6:10] == (3, 0, 1, 0)  # 3 stages, consumers start at phase 0, one advance per iteration
    assert wait_a[10] == (("wait", "ab.full_0", 0),)
    release = store[7]
    assert release[1] == "release" and release[10][0][0] == "arrive"


def test_instrument_limits_are_checked():
    with pytest.raises(CompileError, match="blocks=0"):
        Instrument(blocks=0)
    with pytest.raises(CompileError, match="capacity"):
        Instrument(capacity=1 << 20)


def test_mma_designs_are_not_instrumented():
    with pytest.raises(CompileError, match="streaming designs"):
        emit(examples.merge_gemm(), instrument=Instrument())


@pytest.mark.nvrtc
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("name", ["merge_copy", "fork_copy", "cp_async_copy"])
def test_instrumented_kernels_compile(name, arch):
    from pgstudio.runtime.compile import compile_cubin
    cub = compile_cubin(emit(STREAMING[name](), arch=arch, instrument=Instrument()))
    assert len(cub) > 0 and cub.arch == arch

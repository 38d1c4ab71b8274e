"""Instrumented builds, streaming and GEMM: off by default, a stamp for every step that generates
code when on, and nothing of the plain kernel changed (its lines stay, in order)."""

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
    missing = _not_in_order(emit(design).code, emit(design, instrument=Instrument()).code)
    assert missing == ["    const u64 pg_budget_ns) {"]


def _not_in_order(plain: str, inst: str) -> list[str]:
    """The lines of ``plain`` that are not, in order, lines of ``inst``."""
    inst_lines = inst.splitlines()
    missing, pos = [], 0
    for ln in plain.splitlines():
        try:
            pos = inst_lines.index(ln, pos) + 1
        except ValueError:
            missing.append(ln)
    return missing


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
        sites = [int(m) for m in re.findall(r"pg_ins_put\(pg_ins, pg_ins_cap, pg_ins_n, pg_ins_c, (\d+)u", body)]
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
    store = step_table([t.plan for t in plan.tasks], plan.layout.sets)[2]
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
    with pytest.raises(CompileError, match=r"Instrument\(tiles=0\) is out of range.*or None: every pass"):
        Instrument(tiles=0)
    with pytest.raises(CompileError, match="k_tiles=True"):
        Instrument(k_tiles=True)
    assert Instrument(tiles=None, k_tiles=None).window() == (None, None)


GEMM = ("merge_gemm", "fused_merge_gemm", "merge_gemm_resadd", "fork_gemm_act")


@pytest.mark.parametrize("name", GEMM)
def test_the_default_gemm_build_has_no_instrumentation(name):
    src = emit(examples.example(name))
    assert "pg_ins" not in src.code and "pg_trace" not in src.code and "PG_INS" not in src.code
    assert "instrument" not in src.info and src.params[-1].kind == "u64"


def _gemm_role(code: str, task: str, label: str = "") -> str:
    """A task's role branch: the stamped one (label ``done_<task>_stamped``) by default in an
    instrumented build, whose blocks outside the sample run the plain one (``done_<task>``)."""
    label = label or (f"done_{task}_stamped" if "pg_ins_sampled" in code else f"done_{task}")
    start = code.index(f"// task '{task}':")
    while code.find(f"{label}: ;", start) > code.find(f"// task '{task}':", start + 1) > 0:
        start = code.index(f"// task '{task}':", start + 1)
    return code[start:code.index(f"{label}: ;", start)]


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines()]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("name", GEMM)
def test_blocks_outside_the_sample_run_the_plain_role_branches(name, arch):
    """Each task branches once on whether its block is sampled: the plain build's role branch,
    line for line, in every other block (the stamps' code costs them nothing: an instrumented
    branch in every block once cost the 128 x 128 designs 1.2x), and the stamped branch (with no
    loop peeled at a window) holds every plain line in order."""
    design = examples.example(name)
    plain = emit(design, arch=arch).code
    stamped = emit(design, arch=arch, instrument=Instrument()).code
    every = emit(design, arch=arch, instrument=Instrument(tiles=None, k_tiles=None)).code  # no loop peeled
    assert "const bool pg_ins_sampled = blockIdx.x + PG_INS_BLOCKS - gridDim.x < PG_INS_BLOCKS;" in stamped
    for t in design.tasks:
        mine = _gemm_role(plain, t.name)
        assert _lines(_gemm_role(stamped, t.name, f"done_{t.name}")) == _lines(mine), t.name
        rec = _gemm_role(every, t.name).replace(f"done_{t.name}_stamped", f"done_{t.name}")
        assert _not_in_order("\n".join(_lines(mine)), "\n".join(_lines(rec))) == [], t.name
    assert stamped.count("if (pg_ins_sampled) {") == len(design.tasks)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("name", GEMM)
def test_gemm_tasks_stamp_each_step_that_generates_code(name, arch):
    from pgstudio.analysis.resolve import ResolvedLoop, resolve
    from pgstudio.codegen.gemm.stamps import recorded as gemm_recorded
    design = examples.example(name)
    src = emit(design, arch=arch, instrument=Instrument(blocks=2, capacity=64))
    plans = resolve(design)
    for t in design.tasks:
        body = _gemm_role(src.code, t.name)
        steps = list(plans[t.name].steps())
        want = [k for k, rs in enumerate(steps) if gemm_recorded(rs)]
        puts = re.findall(r"pg_ins_put\(pg_ins, pg_ins_cap, pg_ins_n, pg_ins_c, (\d+)u .*\(\(u32\)(\w+) <<", body)
        assert [int(site) for site, _ in puts] == want, t.name
        assert "pg_ins_cap = (pg_ins_b < PG_INS_BLOCKS && tt == 0)" in body  # one thread per task records

        def depth_of(nodes, depth=0, out=None):  # each step's loop depth, in plan order
            out = [] if out is None else out
            for n in nodes:
                if isinstance(n, ResolvedLoop):
                    depth_of(n.body, depth + 1, out)
                else:
                    out.append(depth)
            return out
        depths = depth_of(plans[t.name].nodes)
        # a step in the k loop carries the k loop's pass count, one in the tile loop the tile loop's
        assert [var for _, var in puts] == [{1: "pg_ins_ti", 2: "pg_ins_ki"}[depths[k]] for k in want], t.name
        waits = sum(1 for k in want for a in steps[k].actions if a.verb == "wait")
        copy_out = arch == "sm_100a" and any(rs.step.op == "mma" for rs in steps)  # tcgen05's mma_done wait
        assert body.count("pg_ins_bk = pg_ins_ready(") == waits + copy_out, t.name  # a probe before every wait
    assert src.params[-1].kind == "trace"
    info = dict(src.info["instrument"])
    assert [t[0] for t in info["tasks"]] == [t.name for t in design.tasks]
    assert info["buffer_bytes"] == 2 * len(design.tasks) * 65 * RECORD_BYTES
    assert "pg_ins[0] = make_uint4(" in src.code.split("done_mma_stamped: ;")[1].split("\n")[1]  # the lane header, after the loops


@pytest.mark.parametrize("name", GEMM)
def test_a_gemm_build_records_a_window_of_its_loops(name):
    """By default a sampled block stamps its first 2 work units, of each the first 16 k tiles: its
    loops are peeled there, the window's passes running the stamped body and the rest the plain
    one (which still counts k tiles, the iterations the next window's records carry)."""
    design = examples.example(name)
    src = emit(design, instrument=Instrument())
    assert dict(src.info["instrument"])["window"] == (2, 16)
    for t in design.tasks:
        body = _gemm_role(src.code, t.name)
        window = body.index("for (tile = blockIdx.x; tile < num_tiles && pg_ins_ti < 2u; tile += gridDim.x) {")
        rest = body.index("for (; tile < num_tiles; tile += gridDim.x) {")
        assert window < rest and "pg_ins_put(" not in body[rest:] and "pg_ins_ki" not in body[rest:]
        plain_tiles = _lines(body[rest:].replace(f"done_{t.name}_stamped", f"done_{t.name}"))
        plain_side = _lines(_gemm_role(emit(design).code, t.name).split(
            "for (tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {")[1])[1:]
        assert plain_tiles[1:] == plain_side[:len(plain_tiles) - 1]  # past the window: the plain loop
        if "for (kt = 0;" in body:  # the tasks of the k loop: loads and MMAs
            k_window = body.index("for (kt = 0; kt < num_k_tiles && kt < 16; ++kt) {")
            k_rest = body.index("for (; kt < num_k_tiles; ++kt) {")
            assert window < k_window < k_rest < rest
            assert "pg_ins_put(" in body[k_window:k_rest] and "pg_ins_put(" not in body[k_rest:body.index("}", k_rest)]
            assert body[k_rest:rest].count("++pg_ins_ki;") == 1  # the plain k tiles are counted
    every = emit(design, instrument=Instrument(tiles=None, k_tiles=None))
    assert "pg_ins_ti < 2u" not in every.code and "kt < 16" not in every.code and "for (; " not in every.code
    assert dict(every.info["instrument"])["window"] == (None, None)
    only_k = emit(design, instrument=Instrument(tiles=None, k_tiles=4)).code
    assert "kt < num_k_tiles && kt < 4;" in only_k and "for (; tile" not in only_k


def test_a_streaming_build_records_every_step():
    src = emit(examples.merge_copy(), instrument=Instrument(tiles=1, k_tiles=1))
    assert dict(src.info["instrument"])["window"] is None and "kt <" not in src.code


def test_the_gemm_step_table_counts_each_cursor_in_its_own_loop():
    from pgstudio.codegen.gemm.stamps import recorded as gemm_recorded
    from pgstudio.analysis.resolve import resolve
    from pgstudio.analysis.layout import barrier_layout
    design = examples.merge_gemm(num_stages=3)
    plans = resolve(design)
    table = step_table([plans[t.name] for t in design.tasks], barrier_layout(design).sets, gemm_recorded)
    mma = {row[1] + ":" + row[2]: row for row in table[0]}
    # the A wait sits in the k loop (depth 2) and walks the ab cursor, advanced in the k loop
    assert mma["wait:smem_a"][5:10] == ("consumer:ab", 3, 0, 1, 0) and mma["wait:smem_a"][11:] == (2, 2)
    # the MMA sits in the k loop but touches the accumulator, whose cursor the tile loop advances
    assert mma["mma:tmem_c"][5:10] == ("producer:tmem_c", 1, 1, 1, 0) and mma["mma:tmem_c"][11:] == (2, 1)
    assert mma["acquire:tmem_c"][11:] == (1, 1) and mma["commit:tmem_c"][11:] == (1, 1)
    assert mma["acquire:tmem_c"][10] == (("wait", "tmem_c.empty", 10),)


@pytest.mark.nvrtc
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("name", ["merge_copy", "fork_copy", "cp_async_copy", *GEMM])
def test_instrumented_kernels_compile(name, arch):
    from pgstudio.runtime.compile import compile_cubin
    design = STREAMING[name]() if name in STREAMING else examples.example(name)
    cub = compile_cubin(emit(design, arch=arch, instrument=Instrument()))
    assert len(cub) > 0 and cub.arch == arch

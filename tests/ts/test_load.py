"""``pgstudio.ts.load`` runs a TS script (its own TS imports resolve to pgstudio.ts), the
``import-ts`` / ``export-ts`` commands, the tutorial script and its pictures, and what export refuses."""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pgstudio import DesignError, examples
from pgstudio.cli import main
from pgstudio.model.schedule import CapturedSchedule, Loop, Step
from pgstudio.ts import load, to_ts

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "examples" / "ts" / "gemm_mainloop.py"
IMPORTS = "from cutlass.pipeline import Agent, CooperativeGroup"


def _write(tmp_path, text, name="script.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_tutorial_runs_unmodified_and_gives_its_design():
    design = load(TUTORIAL)
    assert design.name == "gemm_mainloop" and [g.name for g in design.groups] == ["ab"]
    assert dict(design.problem) == {"num_k_tiles": 8}  # the loop bound kept its name
    mma = design.task("mma").schedule
    assert isinstance(mma.nodes[0], Loop) and mma.nodes[0].stop == 1  # one tile per CTA: head and tail close in it
    # the design rules and the checker accept it; the code generators need a problem shape and
    # tile loops a TS mainloop does not have, so validate() names those (codegen.*) and stops there
    report = design.validate()
    assert report.errors and all(e.code.startswith("codegen.") for e in report.errors), str(report)
    from pgstudio.analysis.check import check
    assert check(design).safe


def test_the_tutorial_runs_with_its_import_block_replaced_and_draws_its_pictures(tmp_path):
    pytest.importorskip("matplotlib", reason="the pictures need matplotlib, which the ts and dev extras do not install")
    text = TUTORIAL.read_text()
    start, end = text.index(IMPORTS), text.index("\n\n", text.index(IMPORTS))
    changed = text[:start] + "from pgstudio.ts import *" + text[end:]
    script = _write(tmp_path, changed + "\ndesign = task_manager.design\n", "gemm_mainloop.py")
    assert not [line for line in changed.splitlines() if line.startswith(("from cutlass", "import cutlass"))]
    out = tmp_path / "pictures"
    code = (f"import runpy, sys; g = runpy.run_path({str(script)!r}); d = g['design']\n"
            "import matplotlib; matplotlib.rcParams['svg.fonttype'] = 'none'  # keep the text as text\n"
            "from pgstudio.render.graph import graph_svg\nfrom pgstudio.render.barriers import layout_svg\n"
            "from pgstudio import barrier_layout\n"
            f"import pathlib; p = pathlib.Path({str(out)!r}); p.mkdir()\n"
            "(p / 'graph.svg').write_text(graph_svg(d))\n"
            "(p / 'barriers.svg').write_text(layout_svg(barrier_layout(d)))\n"
            "print(d.summary())")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert "design 'gemm_mainloop': 5 resources (3 pipelined), ab:Merge, 4 tasks" in run.stdout
    graph, barriers = (out / "graph.svg").read_text(), (out / "barriers.svg").read_text()
    assert all(name in graph for name in ("gmem_ab", "smem_a", "smem_b", "tmem_c", "gmem_d", "load_a", "mma"))
    assert all(label in barriers for label in ("Merge group", "full_0 x4", "arrive: load_a", "wait: mma", "tx 16 KiB"))


def test_load_says_where_a_script_went_wrong(tmp_path):
    with pytest.raises(DesignError, match=r"script.py, line 2: invalid syntax"):
        load(_write(tmp_path, "x = 1\nx = = 2\n"))
    with pytest.raises(DesignError, match=r"raised NameError, line 2: name 'nope' is not defined"):
        load(_write(tmp_path, "x = 1\nnope()\n"))
    with pytest.raises(DesignError, match=r"built 0 TaskManager\(s\), expected exactly one"):
        load(_write(tmp_path, "from cutlass.experimental.task_scheduling import schedule\n"))
    with pytest.raises(DesignError, match="cutlass.cute is not available under pgstudio.ts"):
        load(_write(tmp_path, "import cutlass.cute as cute\n"))
    with pytest.raises(DesignError, match="cannot be modelled yet"):
        load(_write(tmp_path, "from cutlass.experimental.task_scheduling.resources import PipelineConfig\n"
                              "from cutlass.pipeline import CooperativeGroup, Agent\n"
                              "one = CooperativeGroup(Agent.Thread, 1)\n"
                              "PipelineConfig.create_tma_umma_pipeline_cfg(2, 1024, one, one, None, "
                              "advance_on_wait=True)\n"))


def test_load_leaves_the_real_cutlass_modules_as_it_found_them(tmp_path):
    before = {k: v for k, v in sys.modules.items() if k == "cutlass" or k.startswith("cutlass.")}
    load(TUTORIAL)
    after = {k: v for k, v in sys.modules.items() if k == "cutlass" or k.startswith("cutlass.")}
    assert after == before


def test_import_ts_and_export_ts_round_trip_on_the_command_line(tmp_path, capsys):
    design = examples.fork_copy()
    src = _write(tmp_path, design.to_json(), "fork_copy.json")
    assert main(["export-ts", str(src), "--out", str(tmp_path / "fork_copy_ts.py")]) == 0
    capsys.readouterr()
    assert main(["import-ts", str(tmp_path / "fork_copy_ts.py")]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == json.loads(design.to_json())  # stdout is the JSON alone
    assert "TaskManager accepted fork_copy" in out.err  # what the script prints goes to stderr
    assert main(["export-ts", str(src)]) == 0
    assert capsys.readouterr().out == to_ts(design)
    assert main(["import-ts", str(tmp_path / "missing.py")]) == 2
    assert "cannot read TS script" in capsys.readouterr().err


def test_import_ts_help_warns_that_the_script_runs(capsys):
    with pytest.raises(SystemExit):
        main(["import-ts", "--help"])
    assert "SECURITY" in capsys.readouterr().out


# -- what TS cannot express --------------------------------------------------------------------

def test_export_refuses_a_fork_of_distinct_buffers():
    design = examples.fork_copy()
    y = design.resource("smem_y")
    unaliased = design.with_resource(y.__class__(y.name, y.pipeline_config, y.compute, y.dtype, y.tile, None))
    with pytest.raises(DesignError, match="Fork 'xy' has members in distinct buffers; TS forks one buffer"):
        to_ts(unaliased)


def test_export_refuses_two_loops_side_by_side_and_an_invalid_design():
    design = examples.merge_copy()
    task = design.task("store")
    half = dataclasses.replace(task.schedule.nodes[0], stop=design.problem_dict["num_tiles"] // 2)
    two = CapturedSchedule("two", (half, half))  # as many iterations as the loaders, in two loops
    from pgstudio.model.task import Task
    with pytest.raises(DesignError, match="has 2 loops side by side; TS allows one domain_loop per schedule"):
        to_ts(design.with_task(Task.unchecked("store", 4, 4, task.src_resources, task.dst_resources, two)))
    read_only = CapturedSchedule("s", (Loop(0, "num_tiles", 1, (Step("read", "smem_a", "member", "ab"),)),))
    broken = design.with_task(Task.unchecked("store", 4, 4, task.src_resources, task.dst_resources, read_only))
    with pytest.raises(DesignError, match="export writes designs TS accepts"):
        to_ts(broken)


def test_a_failure_inside_pgstudio_ts_is_not_blamed_on_the_script(tmp_path):
    script = _write(tmp_path, IMPORTS + "\nfrom cutlass.experimental.task_scheduling.resources import PipelineConfig\n"
                    "one = CooperativeGroup(Agent.Thread, 1)\n"
                    "PipelineConfig.create_tma_umma_pipeline_cfg(2, 1024, one, one, (1, 1, 1, 1), mcast_mode_mn=5)\n")
    with pytest.raises(DesignError, match="pgstudio cannot build this yet: running .*line 4") as err:
        load(script)
    assert err.value.code == "ts.unsupported" and "fix the script" not in str(err.value)
    # Without the cta_layout_vmnk TS's factory requires, TS refuses the call by its form: that is the script's.
    script.write_text(script.read_text().replace(", (1, 1, 1, 1), ", ", "))
    with pytest.raises(DesignError, match="TS refuses this call too .missing a required argument: 'cta_layout_vmnk'"):
        load(script)
    bad = _write(tmp_path, IMPORTS + "\nx = 1 / 0\n", "bad.py")  # the script's own error says so
    with pytest.raises(DesignError, match="ZeroDivisionError, line 2") as err:
        load(bad)
    assert err.value.code == "ts.script" and "fix the script" in str(err.value)


def _reloop(design, task, nodes):
    tasks = [dataclasses.replace(t, schedule=CapturedSchedule(t.schedule.name, nodes(t.schedule.nodes[0])))
             if t.name == task else t for t in design.tasks]
    return design.replace(tasks=tasks)


@pytest.mark.parametrize("task", ["epilogue", "load_r"])
def test_a_one_iteration_loop_inside_the_tile_loop_comes_back(task, tmp_path):
    base = examples.merge_gemm_resadd(m=256, n=256, k=64)
    design = _reloop(base, task, lambda lp: (Loop(0, "num_tiles", 1, (Loop(0, 1, 1, lp.body),)),))
    script = _write(tmp_path, to_ts(design))
    assert "with domain_loop(0, 1):" in script.read_text()  # the spelling import keeps as a loop
    assert load(script).to_json() == design.to_json() != base.to_json()
    # The tile's steps alone (TS's domain_loop(0, 1, 1) idiom) come back without a loop of their own.
    plain = _write(tmp_path, to_ts(base), "plain.py")
    assert "with domain_loop(0, 1):" not in plain.read_text() and load(plain).to_json() == base.to_json()


def test_warp_groups_keep_pgstudios_agent_and_are_checked(tmp_path):
    design = examples.merge_copy(num_elements=4 * 2048)
    text = to_ts(design)
    assert 'warp_groups = {"smem_a": ["consumer"], "smem_b": ["consumer"]}' in text
    assert "consumer_group=CooperativeGroup(Agent.Thread, 128)" in text
    assert load(_write(tmp_path, text)).resources[2].pipeline_config.consumer_group.agent.value == "Warp"
    gone = load(_write(tmp_path, text.replace('warp_groups = {"smem_a": ["consumer"], "smem_b": ["consumer"]}', ""),
                       "threads.py"))
    assert str(gone.resources[2].pipeline_config.consumer_group) == "128 threads"  # the same arrivals
    bad = text.replace('"smem_b": ["consumer"]', '"smem_b": ["producer"]')  # a TMA producer of one thread
    with pytest.raises(DesignError, match="counts 'smem_b''s producer group in warps, but it has 1 threads"):
        load(_write(tmp_path, bad, "bad.py"))

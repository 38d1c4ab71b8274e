"""Exported scripts build the barriers pgstudio lays out, as TS builds them: for every canonical
design and ``PGSTUDIO_TS_RANDOM_DESIGNS`` random ones (500 by default), the export runs under TS,
TS's kernel set-up initialises every mbarrier array (``ts_barriers.py``: read on a CPU through the
CuTe DSL's dry run), and each array's arrive count, stages and transaction bytes equal
``barrier_layout(design)``'s; the export imported again is the same design (``to_json``).

TS's exhaustive interleaving checker runs on the canonical designs and on every
``CHECKED_EVERY``-th random one (it is most of TS's time); the others get TS's structural checks."""

from __future__ import annotations

import os

import pytest

from pgstudio import barrier_layout, examples
from pgstudio.ts import load, to_ts
from random_designs import random_designs
from ts_barriers import by_owner, pg_barrier_inits, ts_barrier_inits
from ts_side import SMALL

pytestmark = pytest.mark.ts

N_RANDOM = int(os.environ.get("PGSTUDIO_TS_RANDOM_DESIGNS", "500"))
CHECKED_EVERY = 25


def _compare(design, path, exhaustive: bool = True) -> list[str]:
    """What differs between TS's initialised barriers (and the re-import) and pgstudio's design."""
    path.write_text(to_ts(design))
    ts_globals, inits = ts_barrier_inits(str(path), exhaustive)
    problems = []
    if type(ts_globals["task_manager"]).__module__ != "cutlass.experimental.task_scheduling.task_manager":
        problems.append("the script did not build TS's TaskManager")
    ts, pg = by_owner(inits), by_owner(pg_barrier_inits(barrier_layout(design)))
    if ts != pg:
        problems.append(f"{design.name}: barriers (stages, arrive count, bytes) per owner: TS {ts}, pgstudio {pg}")
    if load(path).to_json() != design.to_json():
        problems.append(f"{design.name}: the export imported again is another design")
    return problems


@pytest.mark.parametrize("name", list(SMALL))
def test_ts_initialises_each_canonical_designs_barriers_as_pgstudio_lays_them_out(name, tmp_path):
    design = examples.example(name, **SMALL[name])
    assert _compare(design, tmp_path / f"{name}.py") == []
    script = (tmp_path / f"{name}.py").read_text()
    # Every group as Thread and its thread count, every factory with a one-CTA layout.
    assert "Agent.Warp" not in script
    assert ("warp_groups = {" in script) == any(r.pipeline_config is not None and "Warp" in (
        r.pipeline_config.producer_group.agent.value, r.pipeline_config.consumer_group.agent.value)
        for r in design.resources)
    assert script.count("cta_layout_vmnk=(1, 1, 1, 1)") == script.count("_pipeline_cfg(") > 0


@pytest.mark.parametrize("variant", ["ungrouped", "derived"])
def test_the_canonical_twins_barriers_too(variant, tmp_path):
    from pgstudio.model.derive import derive_design
    problems = []
    for name in SMALL:
        design = examples.example(name, **SMALL[name])
        design = examples.ungrouped(design) if variant == "ungrouped" else derive_design(design, replace_attached=True)
        problems += _compare(design, tmp_path / f"{name}_{variant}.py", exhaustive=False)
    assert problems == []


def test_ts_initialises_random_designs_barriers_as_pgstudio_lays_them_out(tmp_path):
    problems, checked, warps = [], 0, 0
    for i, design in enumerate(random_designs(N_RANDOM)):
        problems += _compare(design, tmp_path / f"random_{i}.py", exhaustive=i % CHECKED_EVERY == 0)
        checked += 1
        warps += any(r.pipeline_config is not None and "Warp" in (r.pipeline_config.producer_group.agent.value,
                                                                   r.pipeline_config.consumer_group.agent.value)
                     for r in design.resources)
    print(f"{checked} random designs exported and run under TS ({warps} with a Warp group, "
          f"{len(range(0, checked, CHECKED_EVERY))} through TS's exhaustive checker): {len(problems)} differ from TS's "
          f"initialised barriers or from their re-import")
    assert checked == N_RANDOM
    assert warps >= N_RANDOM // 10, f"only {warps} of {checked} random designs have a Warp group"
    assert not problems, f"{len(problems)} of {checked} designs differ from TS, e.g.\n" + "\n".join(problems[:5])


def test_cutlass_one_arrival_per_warp_tma_async_consumer_is_read_as_its_warps(tmp_path):
    """docs/ts.md, known differences: CUTLASS's TmaAsync consumer of 4 warps may count one arrival
    per warp (``Thread(4)``).  TS accepts it and initialises the shared empty barrier with 4;
    pgstudio.ts reads the 4 warps (every thread releases in pgstudio: 128 arrivals), and its
    export writes the 128 threads, which TS initialises as 128."""
    design = examples.merge_copy(num_elements=4 * 2048)
    text = to_ts(design)
    line = 'warp_groups = {"smem_a": ["consumer"], "smem_b": ["consumer"]}'
    assert line in text and text.count("consumer_group=CooperativeGroup(Agent.Thread, 128)") == 2
    script = tmp_path / "per_warp.py"
    script.write_text(text.replace(line, "").replace("consumer_group=CooperativeGroup(Agent.Thread, 128)",
                                                     "consumer_group=CooperativeGroup(Agent.Thread, 4)"))
    _, inits = ts_barrier_inits(str(script), exhaustive=False)
    assert by_owner(inits)["ab"] == [(4, 1, 8192), (4, 1, 8192), (4, 4, 0)]
    mine = load(script)
    assert str(mine.resources[2].pipeline_config.consumer_group) == "4 warps"
    assert by_owner(pg_barrier_inits(barrier_layout(mine)))["ab"] == [(4, 1, 8192), (4, 1, 8192), (4, 128, 0)]
    assert _compare(mine, tmp_path / "again.py") == []  # its export: TS's count is pgstudio's again


def test_the_tutorial_builds_the_barriers_pgstudio_lays_out():
    from pathlib import Path
    tutorial = Path(__file__).resolve().parents[2] / "examples" / "ts" / "gemm_mainloop.py"
    _, inits = ts_barrier_inits(str(tutorial), exhaustive=False)
    assert by_owner(inits) == by_owner(pg_barrier_inits(barrier_layout(load(tutorial))))

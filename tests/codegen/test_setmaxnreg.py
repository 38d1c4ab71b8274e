"""The GEMM generator builds a design's setmaxnreg layout: one setmaxnreg at the top of each
warpgroup's branch (all four warps run it), dec below the launch count, inc above it; ptxas then
allocates the whole kernel at the launch count and every role within its own value."""

from __future__ import annotations

import re

import pytest

from pgstudio import examples
from pgstudio.codegen import emit

LAYOUT = {"SETMAXNREG_load_a": 40, "SETMAXNREG_load_b": 40, "SETMAXNREG_epilogue": 40, "SETMAXNREG_mma": 232}


def with_layout(d, layout=LAYOUT):
    return d.replace(problem={**d.problem_dict, **layout})


def branch_heads(code: str) -> dict[str, str]:
    """Warpgroup condition -> the first line inside its branch."""
    lines = code.splitlines()
    return {m.group(1): lines[i + 1].strip() for i, line in enumerate(lines)
            if (m := re.match(r"\s*(?:else )?if \((wg [^)]*)\) \{", line))}


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_each_warpgroup_branch_starts_with_its_setmaxnreg(arch):
    code = emit(with_layout(examples.merge_gemm()), arch=arch).code
    heads = branch_heads(code)
    assert heads == {"wg == 0": "setmaxnreg_dec<40>();  // 168 -> 40 registers per thread (give back to the pool)",
                     "wg >= 1 && wg <= 2": "setmaxnreg_inc<232>();  // 168 -> 232 registers per thread (take from the pool)"}
    assert code.count("setmaxnreg.inc.sync.aligned.u32") == code.count("setmaxnreg.dec.sync.aligned.u32") == 1


def test_no_layout_no_setmaxnreg_and_the_launch_count_is_no_change():
    assert "setmaxnreg" not in emit(examples.merge_gemm()).code
    code = emit(with_layout(examples.merge_gemm(), {"SETMAXNREG_mma": 168})).code
    assert "setmaxnreg" not in code  # the value it launched with: nothing to do


def test_a_layout_the_rules_refuse_is_not_emitted():
    from pgstudio.errors import DesignError
    with pytest.raises(DesignError, match="codegen.register_budget"):
        emit(with_layout(examples.merge_gemm(), {**LAYOUT, "SETMAXNREG_mma": 248}))


@pytest.mark.nvrtc
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("name", ["merge_gemm", "merge_gemm_resadd"])
def test_ptxas_allocates_the_launch_count_and_each_role_within_its_value(name, arch):
    from pgstudio.runtime.compile import compile_cubin
    base = examples.example(name)
    low = {f"SETMAXNREG_{t.name}": 40 for t in base.tasks}
    src = emit(with_layout(base, {**low, "SETMAXNREG_mma": 232 if name == "merge_gemm" else 216}), arch=arch)
    log = compile_cubin(src, options=("-Xptxas=-v",)).log
    used = int(re.search(r"Used (\d+) registers", log).group(1))
    assert used == src.info["launch_regs"], log  # the kernel launches with its launch bound's count
    plain = compile_cubin(emit(base, arch=arch), options=("-Xptxas=-v",)).log
    spills = [int(x) for x in re.findall(r"(\d+) bytes spill stores", log)]
    if name == "merge_gemm_resadd":  # its elementwise epilogue does not fit 40 registers: ptxas spills that role
        assert max(spills) > 0 and "0 bytes spill stores" in plain

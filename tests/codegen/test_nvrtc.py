"""Every streaming design and its ungrouped twin compile for sm_90a and sm_100a through NVRTC,
with no GPU: broken code generation fails CI here (tests/conftest.py: with CI set, a missing NVRTC
fails these tests instead of skipping them)."""

import pytest

from pgstudio import examples
from pgstudio.codegen import emit
from pgstudio.runtime.compile import check_target, compile_cubin
from pgstudio.errors import CompileError
from stream_designs import async_compute, cp_async_copy, mixed_merge

pytestmark = pytest.mark.nvrtc


def _designs():
    for name in examples.STREAMING:
        for dtype in ("float32", "bfloat16", "float16"):
            d = examples.example(name, dtype=dtype)
            yield d
            yield examples.ungrouped(d)
    for build in (async_compute, cp_async_copy, mixed_merge):
        yield build()
        yield build(dtype="bfloat16")
    for mode in ("Merge", "Fork", "FusedMerge"):
        yield examples.chain(4, mode)
        yield examples.chain(3, mode, dtype="float16")


DESIGNS = list(_designs())


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("design", DESIGNS, ids=lambda d: f"{d.name}-{d.resources[0].dtype}")
def test_compiles_for_both_targets(design, arch):
    src = emit(design, arch=arch)
    cub = compile_cubin(src)
    assert cub.arch == arch and len(cub) > 1000
    assert cub.data[:4] == b"\x7fELF"
    assert "error" not in cub.log.lower()


def test_the_deepest_chain_compiles():
    """31 groups of two stages each: linear source (about 190 kB), a few seconds of NVRTC."""
    src = emit(examples.chain(examples.MAX_CHAIN_GROUPS, "FusedMerge", dtype="bfloat16"))
    assert len(src.code) < 1 << 20
    cub = compile_cubin(src)
    assert cub.data[:4] == b"\x7fELF" and "error" not in cub.log.lower()


def test_no_spills_in_the_merge_kernel():
    cub = compile_cubin(emit(examples.merge_copy(dtype="bfloat16")), options=("--ptxas-options=-v",))
    assert "0 bytes spill stores" in cub.log


def test_a_compile_error_names_the_design_element():
    src = emit(examples.merge_copy())
    broken = src.code.replace("pg_mbar_arrive(pg_bar + PG_BAR_2", "pg_mbar_arrive(undeclared + PG_BAR_2")
    from dataclasses import replace
    with pytest.raises(CompileError) as info:
        compile_cubin(replace(src, code=broken))
    assert "undeclared" in str(info.value) and "store: ab.release()" in str(info.value)
    assert "undeclared" in info.value.log


def test_target_check_refuses_a_plain_sm90_image():
    with pytest.raises(CompileError, match="expected sm_90a"):
        check_target(".version 9.0\n.target sm_90\n", b"sm_90", "sm_90a")
    with pytest.raises(CompileError, match="does not name sm_90a"):
        check_target(".target sm_90a\n", b"\x7fELF sm_90 only", "sm_90a")

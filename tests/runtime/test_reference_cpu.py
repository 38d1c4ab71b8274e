"""Host references on a CPU: an output that is a constant is that constant at every element, in
the element type (the kernel stores it everywhere); GEMM epilogue expressions negate, take
``.f`` literals and the min of two values; a watchdog record whose site the kernel does not list
still reads in words."""

from __future__ import annotations

import numpy as np
import pytest

from pgstudio.codegen import emit
from pgstudio.codegen.ptx import RECORD, RECORD_INTS
from pgstudio.errors import DesignError, KernelHangError
from pgstudio.runtime import watchdog
from pgstudio.runtime.data import to_float32
from pgstudio.runtime.gemm_run import evaluate
from pgstudio.runtime.reference import reference
from stream_designs import async_compute


@pytest.mark.parametrize("dtype, want", [("float32", np.float32(0.1)), ("bfloat16", 0.10009765625),
                                         ("float16", np.float32(np.float16(0.1)))])
def test_a_constant_output_is_the_constant_everywhere_in_its_element_type(dtype, want):
    d = async_compute(dtype=dtype, store="0.1")
    ins = {"gmem_a": np.zeros(5, np.float32), "gmem_b": np.ones(5, np.float32)}
    if dtype != "float32":
        from pgstudio.runtime.data import from_float32
        ins = {k: from_float32(np, v, dtype) for k, v in ins.items()}
    out = reference(d, ins, np, dtype)["gmem_d"]
    assert out.shape == (5,) and out.dtype == np.float32 and np.all(out == np.float32(want))


def test_a_gemm_epilogue_negates_and_takes_float_literals():
    acc, r = np.array([1.0, -2.0, 3.0]), np.array([0.5, 4.0, -1.0])
    assert evaluate("-tmem_c", {"tmem_c": acc}, np).tolist() == [-1.0, 2.0, -3.0]
    assert evaluate("min(tmem_c, 0.5f) - -smem_r", {"tmem_c": acc, "smem_r": r}, np).tolist() == [1.0, 2.0, -0.5]
    assert evaluate("2.f * tmem_c / 4", {"tmem_c": acc}, np).tolist() == [0.5, -1.0, 1.5]
    with pytest.raises(DesignError, match="store expression 'not tmem_c'"):
        evaluate("not tmem_c", {"tmem_c": acc}, np)


def test_a_record_at_an_unknown_site_still_names_where_the_kernel_stopped():
    from pgstudio import examples
    src = emit(examples.merge_copy())
    rec = [0] * RECORD_INTS
    rec[RECORD["aborted"]], rec[RECORD["site"]] = 1, 10_000  # no such wait site
    rec[RECORD["block"]], rec[RECORD["thread"]], rec[RECORD["iteration"]] = 3, 128, 9
    r = watchdog.decode(src, rec, 50.0)
    assert "task" not in r and r["budget_ms"] == 50.0
    with pytest.raises(KernelHangError) as info:
        watchdog.raise_if_hung(src, rec)
    assert str(info.value) == (f"kernel {src.entry} stopped by its watchdog (block 3, thread 128, iteration 9); "
                               "the record names no known wait site")


def test_host_bits_read_back_as_the_values_they_store():
    bits = np.array([0x3F80, 0xC000, 0x7FC0], dtype=np.uint16)  # bfloat16 1, -2, NaN
    got = to_float32(np, bits, "bfloat16")
    assert got[:2].tolist() == [1.0, -2.0] and np.isnan(got[2])

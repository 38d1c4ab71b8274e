"""Generic-proxy writes that the async proxy reads are fenced in every emitted kernel.

Threads write shared memory through the generic proxy (``st.shared``, ``cp.async``); the TMA
engine and the tensor cores read it through the async proxy.  Without
``fence.proxy.async.shared::cta`` between the two, a TMA store may send stale bytes to global
memory, an MMA may read a stale operand.  ``proxy_fences`` checks the emitted text of every
canonical design on each target the generators build, and the lifted GEMM variants; the same
check finds each fence taken out again.
"""

from __future__ import annotations

import pytest

from pgstudio.errors import DesignError
from gemm_designs import BUILDERS, LIFTED, LIFTED_TF32
from proxy_fences import events, fenced_pairs, missing_fences

from pgstudio import examples
from pgstudio.analysis.buildable import plan_for
from pgstudio.codegen import emit
from pgstudio.model.targets import ARCHES

FENCE_CALL = "fence_proxy_async();"


def built(design, arch):
    """The kernel text of ``design`` on ``arch``, or None where the generators do not build it."""
    if plan_for(design, arch).problems:
        return None
    try:
        return emit(design, arch=arch).code
    except DesignError as exc:  # e.g. staging in turns on sm_90a, a whole tile's on sm_100a: too much smem
        if "smem.capacity" in str(exc):
            return None
        raise


def without(code: str, words: str = FENCE_CALL) -> str:
    return "\n".join(line for line in code.splitlines() if words not in line)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", list(examples.CANONICAL))
def test_every_canonical_design_fences_what_the_async_proxy_reads(name, arch):
    code = built(examples.example(name), arch)
    if code is None:
        pytest.skip(f"{name} is not built for {arch}")
    assert missing_fences(code) == []
    if FENCE_CALL in code:  # every fence the generator writes orders a pair the check sees
        assert fenced_pairs(code), "the kernel fences, but the check found no generic write the async proxy reads"
        assert missing_fences(without(code))


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", ["merge_gemm", "fused_merge_gemm", "fork_gemm_act"])
def test_the_staged_accumulator_is_fenced_before_its_tma_store(name, arch):
    """The MMA warpgroups write the accumulator to the staging buffer with st.shared; the
    epilogue's TMA store reads it: the MMA task fences before its commit arrive."""
    code = emit(examples.example(name), arch=arch).code
    pairs = fenced_pairs(code)
    assert any(w.text.startswith("st_shared_") and r.text.startswith("tma_store_2d(") and w.task == "mma"
               and r.task == "epilogue" for w, r in pairs), pairs
    found = missing_fences(without(code, "the staging writes -> the TMA engine"))
    assert len(found) == 1
    assert "(mma): st_shared_" in found[0] and "(epilogue): tma_store_2d(" in found[0]
    assert "no fence.proxy.async orders them" in found[0]


@pytest.mark.parametrize("arch", ARCHES)
def test_cp_async_operands_are_fenced_by_the_reader(arch):
    """cp.async writes land after the loader moved on: only the MMA task, after its wait, can
    fence them; a fence on the loader's side would not count."""
    code = emit(BUILDERS["merge_gemm_async_b"](), arch=arch).code
    assert missing_fences(code) == []
    assert any(w.kind == "cp.async" and r.task == "mma" for w, r in fenced_pairs(code))
    reader = "thread-written operand stage -> async-proxy"
    found = missing_fences(without(code, reader))
    assert len(found) == 1 and "(load_b): cp_async_16(" in found[0] and "(mma): " in found[0]
    moved = code.replace("cp_async_16(d, src, ok ? 16u : 0u);", "cp_async_16(d, src, ok ? 16u : 0u); fence_proxy_async();")
    (early,) = missing_fences(without(moved, reader))  # the loader's fence is too early
    assert early.split(":", 1)[0] == found[0].split(":", 1)[0] and "(load_b): cp_async_16(" in early


LIFTED_ALL = {**LIFTED, **LIFTED_TF32, "merge_gemm_async_b": BUILDERS["merge_gemm_async_b"]}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(LIFTED_ALL))
def test_every_lifted_gemm_fences_what_the_async_proxy_reads(name, arch):
    code = built(LIFTED_ALL[name](), arch)
    if code is None:
        pytest.skip(f"{name} is not built for {arch}")
    assert missing_fences(code) == []
    if fenced_pairs(code):
        assert missing_fences(without(code))


# -- the check itself, on small texts --------------------------------------------------------

STAGED = """\
  if (warp < 4) {  // task 'writer': warps 0..3
      const u32 stg = base + 4096u + (u32)s * 1024u, other = (base + 0u);
      st_shared_u32(stg + 4u * tt, v);
      {fence}
      named_bar_sync(1, 128);
      if (tt == 0) pg_mbar_arrive(bar0 + 8u);
  }
  if (warp >= 4) {  // task 'reader': warps 4..7
      if (!wd_wait(bar0 + 8u, ph, wd_abort, wd_diag, wd_budget_ns, 1, 0, tile, kt, 1)) goto done;
      {reader_fence}
      const u32 stg = base + 4096u + (u32)s * 1024u;
      tma_store_2d(&tm_d, stg + 0u, n0, m0);
  }
"""


def staged(fence: str = "", reader_fence: str = "") -> str:
    return STAGED.replace("{fence}", fence).replace("{reader_fence}", reader_fence)


def test_the_check_reads_buffers_through_locals_and_both_fence_places():
    evs = events(staged(FENCE_CALL))
    assert [(e.task, e.kind, e.buffer) for e in evs if e.buffer] == [("writer", "store", "smem+4096"),
                                                                     ("reader", "read", "smem+4096")]
    assert missing_fences(staged(FENCE_CALL)) == []
    assert missing_fences(staged(reader_fence=FENCE_CALL)) == []  # after the reader's wait
    (said,) = missing_fences(staged())
    assert said.startswith("line 3 (writer): st_shared_u32(stg + 4u * tt, v); writes smem+4096")
    assert "line 12 (reader): tma_store_2d(&tm_d, stg + 0u, n0, m0); reads it" in said


def test_a_fence_after_the_signal_or_before_the_wait_is_too_late_or_too_early():
    late = staged().replace("if (tt == 0) pg_mbar_arrive(bar0 + 8u);", f"if (tt == 0) pg_mbar_arrive(bar0 + 8u); {FENCE_CALL}")
    assert len(missing_fences(late)) == 1
    early = staged().replace("      if (!wd_wait", f"      {FENCE_CALL}\n      if (!wd_wait")
    assert len(missing_fences(early)) == 1


def test_a_buffer_only_threads_read_needs_no_fence():
    generic = staged().replace("tma_store_2d(&tm_d, stg + 0u, n0, m0);", "const uint4 x = ld_shared_v4(stg);")
    assert missing_fences(generic) == [] and fenced_pairs(generic) == []
    elsewhere = staged().replace("tma_store_2d(&tm_d, stg + 0u", "tma_store_2d(&tm_d, (base + 0u)")
    assert missing_fences(elsewhere) == []  # the TMA store reads another buffer

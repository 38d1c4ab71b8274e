"""The GEMM kernel initialises exactly the barriers of ``barrier_layout(design, arch)`` with the
layout's counts -- a cluster's shared tile counting both blocks' releases, sm_100a's mma_done
slots after the tensor-memory slot, on sm_90a each MMA warpgroup's share of an umma release
(``gemm_designs.kernel_counts``) -- and takes them from the layout, not from a rule of its own."""

import dataclasses
import re

import pytest

from gemm_designs import ALL, LIFTED, LIFTED_TF32, gemm_design, kernel_counts
from pgstudio import barrier_layout
from pgstudio.analysis.buildable import gemm_checks
from pgstudio.codegen.gemm import emit_gemm
from pgstudio.errors import DesignError
from pgstudio.examples import merge_gemm

BUILDERS = {**{f"{n}{'_twin' if t else ''}": (lambda n=n, t=t: gemm_design(n, t)) for n, t in ALL},
            **LIFTED, **LIFTED_TF32}
INIT = re.compile(r"pg_mbar_init\((bar0|xbar) \+ (\d+)u, (\d+)u\);")


def inits(code: str, layout) -> dict[int, int]:
    """Byte offset from the start of barrier storage -> the count the kernel initialises it with."""
    out = {}
    for base, off, count in INIT.findall(code):
        out[int(off) + (layout.num_bytes if base == "xbar" else 0)] = int(count)
    return out


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("name", list(BUILDERS))
def test_every_initialised_barrier_is_a_layout_slot_with_its_count(name, arch):
    design = BUILDERS[name]()
    try:
        code = emit_gemm(design, arch=arch).code
    except DesignError:
        pytest.skip(f"{name} is not built for {arch}")
    layout = barrier_layout(design, arch)
    assert inits(code, layout) == kernel_counts(design, arch)
    peers = [s for s in layout.sets if s.peers > 1]
    assert ("pg_mbar_arrive_cluster(peer_addr(" in code) == bool(peers)
    assert bool(layout.internal) == (arch == "sm_100a")


def test_the_generator_reads_the_counts_from_the_layout(monkeypatch):
    design = merge_gemm(bn=128, num_stages=4, cluster=(1, 2))
    real = gemm_checks.barrier_layout

    def planted(d, arch=None):  # a layout that says three blocks release the shared tile
        lay = real(d, arch)
        sets = tuple(dataclasses.replace(s, init_count=3, peers=3) if s.peers > 1 else s for s in lay.sets)
        slots = tuple(dataclasses.replace(sl, arrive_count=3) if sl.set == "ab.shared_empty" else sl for sl in lay.slots)
        return dataclasses.replace(lay, sets=sets, slots=slots)
    monkeypatch.setattr(gemm_checks, "barrier_layout", planted)
    code = emit_gemm(design).code
    # three blocks' releases, each carried out by both MMA warpgroups of its block
    assert set(re.findall(r"pg_mbar_init\(bar0 \+ \d+u, (\d+)u\);  // ab\.shared_empty", code)) == {"6"}
    assert "x3: both blocks release" in code

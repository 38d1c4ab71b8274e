"""The GEMM designs the tensor-core generator covers, by name (shared by codegen and runtime tests)."""

from pgstudio.examples import fork_gemm_act, fused_merge_gemm, merge_gemm, merge_gemm_resadd, ungrouped

BUILDERS = {
    "merge_gemm": merge_gemm,
    "fused_merge_gemm": fused_merge_gemm,
    "merge_gemm_resadd": merge_gemm_resadd,
    "fork_gemm_act": fork_gemm_act,
    "merge_gemm_async_b": lambda **kw: merge_gemm(b_producer="async", **kw),
}


def gemm_design(name: str, twin: bool = False, **kw):
    d = BUILDERS[name](**kw)
    return ungrouped(d) if twin else d


#: (name, twin) for every design and its ungrouped twin.
ALL = [(n, t) for n in BUILDERS for t in (False, True)]

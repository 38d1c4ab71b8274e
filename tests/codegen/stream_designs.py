"""Streaming designs beyond the canonical ones, for code generator and runtime tests: async
producers (plain threads computing an expression, cp.async copies) and a heterogeneous Merge."""

from __future__ import annotations

from pgstudio import (AsyncProducerOp, Compute, CooperativeGroup, Design, GmemTensor, MemoryResource,
                      PipelineGroup, PipelineGroupMode, Task, create_async_async_pipeline_cfg,
                      create_tma_async_pipeline_cfg, domain_loop, schedule)
from pgstudio.examples import consume_store_schedule, merge_copy, merge_store_schedule
from pgstudio.model.targets import DTYPE_BYTES
from pgstudio.model.kinds import Agent

WG = CooperativeGroup(Agent.Warp, 4)


@schedule
def fill(dst, *srcs):
    with domain_loop(0, "num_tiles", 1):
        dst.try_acquire()
        dst.acquire()
        dst.load(*srcs)
        dst.commit()


def _problem(n, tile_bytes, dtype):
    te = tile_bytes // DTYPE_BYTES[dtype]
    return {"num_elements": n, "tile_elems": te, "num_tiles": -(-n // te), "dtype": dtype}


def async_compute(dtype="float32", tile_bytes=4096, num_stages=3, n=1 << 20, op=AsyncProducerOp.AsyncThread,
                  expr="max(gmem_a, 0.f) * gmem_b", store="sigmoid(smem_s) - 0.5"):
    """An AsyncThread producer computes ``expr`` into smem_s; a consumer stores ``store`` of it."""
    a, b = GmemTensor("gmem_a", dtype=dtype), GmemTensor("gmem_b", dtype=dtype)
    cfg = create_async_async_pipeline_cfg(num_stages=num_stages, num_bytes=tile_bytes, producer_group=WG,
                                          consumer_group=WG, async_producer_op=op)
    s = MemoryResource("smem_s", cfg, Compute("elementwise", expr), dtype, (tile_bytes // DTYPE_BYTES[dtype],))
    d = GmemTensor("gmem_d", compute=Compute("store", store), dtype=dtype)
    tasks = [Task("compute_s", 0, 4, [a, b], [s], fill(s, a, b)),
             Task("store", 4, 4, [s], [d], consume_store_schedule(s, d))]
    return Design("async_compute", [a, b, s, d], {s: [a, b], d: [s]}, [], tasks, _problem(n, tile_bytes, dtype))


def cp_async_copy(dtype="float32", tile_bytes=4096, num_stages=4, n=1 << 20):
    """An AsyncLoad (cp.async) producer copies gmem_a; the consumer stores exp(x / 4)."""
    a = GmemTensor("gmem_a", dtype=dtype)
    cfg = create_async_async_pipeline_cfg(num_stages=num_stages, num_bytes=tile_bytes, producer_group=WG,
                                          consumer_group=WG, async_producer_op=AsyncProducerOp.AsyncLoad)
    c = MemoryResource("smem_c", cfg, Compute("copy"), dtype, (tile_bytes // DTYPE_BYTES[dtype],))
    d = GmemTensor("gmem_d", compute=Compute("store", "exp(smem_c * 0.25)"), dtype=dtype)
    tasks = [Task("load", 0, 4, [a], [c], fill(c, a)), Task("store", 4, 4, [c], [d], consume_store_schedule(c, d))]
    return Design("cp_async_copy", [a, c, d], {c: [a], d: [c]}, [], tasks, _problem(n, tile_bytes, dtype))


def mixed_merge(dtype="float32", tile_bytes=4096, num_stages=4, n=1 << 20):
    """Merge of a TmaAsync and an AsyncAsync (cp.async) member: D = max(A, 0) * B."""
    a, b = GmemTensor("gmem_a", dtype=dtype), GmemTensor("gmem_b", dtype=dtype)
    te = tile_bytes // DTYPE_BYTES[dtype]
    sa = MemoryResource("smem_a", create_tma_async_pipeline_cfg(num_stages=num_stages, num_bytes=tile_bytes,
                                                                consumer_group=WG), Compute("copy"), dtype, (te,))
    sb = MemoryResource("smem_b", create_async_async_pipeline_cfg(
        num_stages=num_stages, num_bytes=tile_bytes, producer_group=WG, consumer_group=WG,
        async_producer_op=AsyncProducerOp.AsyncLoad), Compute("copy"), dtype, (te,))
    d = GmemTensor("gmem_d", compute=Compute("store", "max(smem_a, 0.f) * smem_b"), dtype=dtype)
    g = PipelineGroup(name="ab", members=[sa, sb], mode=PipelineGroupMode.Merge)
    tasks = [Task("load_a", 0, 1, [a], [sa], fill(g.smem_a, a)),
             Task("load_b", 4, 4, [b], [sb], fill(g.smem_b, b)),
             Task("store", 8, 4, [sa, sb], [d], merge_store_schedule(d, g))]
    return Design("mixed_merge", [a, b, sa, sb, d], {sa: [a], sb: [b], d: [sa, sb]}, [g], tasks,
                  _problem(n, tile_bytes, dtype))


def wrong_count(which="empty", n=None):
    """merge_copy with one arrive count one too high: the consumers' empty barrier expects 129
    arrivals from a 128-thread task (``which="empty"``), or each loader's full barrier expects 2
    arrivals from its one elected thread (``which="full"``).  Validation rejects it."""
    good = merge_copy()
    tile_bytes = good.resource("smem_a").pipeline_config.num_bytes
    extra = dict(consumer_group=CooperativeGroup(Agent.Thread, 129)) if which == "empty" else \
        dict(producer_group=CooperativeGroup(Agent.Thread, 2), consumer_group=WG)
    sa, sb = (MemoryResource(nm, create_tma_async_pipeline_cfg(num_stages=4, num_bytes=tile_bytes, **extra),
                             Compute("copy"), "float32", (tile_bytes // 4,)) for nm in ("smem_a", "smem_b"))
    a, b = GmemTensor("gmem_a"), GmemTensor("gmem_b")
    d = GmemTensor("gmem_d", compute=Compute("store", "smem_a + smem_b"))
    g = PipelineGroup(name="ab", members=[sa, sb], mode=PipelineGroupMode.Merge)
    tasks = [Task("load_a", 0, 1, [a], [sa], fill(g.smem_a, a)),
             Task("load_b", 1, 1, [b], [sb], fill(g.smem_b, b)),
             Task("store", 4, 4, [sa, sb], [d], merge_store_schedule(d, g))]
    return Design(f"wrong_{which}_count", [a, b, sa, sb, d], {sa: [a], sb: [b], d: [sa, sb]}, [g], tasks,
                  dict(good.problem))

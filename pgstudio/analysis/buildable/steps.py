"""What both code generators need of tasks and schedule steps, checked once.

Each generator turns a task into one role branch by walking its schedule: a task without a
schedule has nothing to walk; a ``load`` fills a stage, so it targets a staged (pipelined)
resource; a ``store`` writes global memory, so it targets a global tensor that computes
something; the threads of one commit arrive one way, so the members a group commits at once
share their ``async_producer_op``.
"""

from __future__ import annotations

from ...model.design import Design
from ...model.diagnostic import Diagnostic, error
from ...model.kinds import OpKind
from ...model.resource import Memory


def is_mma_design(design: Design) -> bool:
    """A design with tensor memory, an MMA step or an umma side: the GEMM generator's job."""
    if any(r.memory is Memory.TMEM or r.compute.op == "mma" for r in design.resources):
        return True
    if any(r.pipeline_config is not None and OpKind.UMMA in (r.pipeline_config.producer_kind,
                                                            r.pipeline_config.consumer_kind)
           for r in design.resources):
        return True
    return any(s.op == "mma" for t in design.tasks if t.schedule for s in t.schedule.steps())


def check_tasks_scheduled(design: Design) -> list[Diagnostic]:
    return [error("codegen.schedule", f"task {t.name!r} has no schedule, so its role branch would do nothing while "
                  "its pipelines wait for it", (t.name,), f"attach a @schedule to {t.name!r}, or remove the task")
            for t in design.tasks if t.schedule is None]


def check_step_targets(design: Design) -> list[Diagnostic]:
    """``load`` fills a staged resource; ``store`` writes a global tensor that computes something."""
    out = []
    for t in design.tasks:
        if t.schedule is None:
            continue
        for s in t.schedule.steps():
            if s.op not in ("load", "store") or s.via == "group" or not design.has_resource(s.target):
                continue
            r = design.resource(s.target)
            if s.op == "load" and (r.pipeline_config is None or r.memory is Memory.GMEM):
                out.append(error("codegen.load_target", f"task {t.name!r}: {s} loads into {r.name!r}, which is not a "
                                 "staged resource; a load fills the stage its task acquired", (t.name, r.name),
                                 f"load into a pipelined MemoryResource, or store {r.name!r} with .store(...)"))
            if s.op == "store" and (r.memory is not Memory.GMEM or r.compute.op == "input"):
                what = "an input tensor" if r.memory is Memory.GMEM else f"a {r.memory.value} resource"
                out.append(error("codegen.store_target", f"task {t.name!r}: {s} stores to {r.name!r}, {what}; a store "
                                 "writes a computed global tensor", (t.name, r.name),
                                 f"store to a GmemTensor with Compute('store', ...), or load {r.name!r} instead"))
    return out


def check_async_ops(design: Design) -> list[Diagnostic]:
    """A group commit is one arrive protocol: its async members use one ``async_producer_op``."""
    out = []
    for g in design.groups:
        ms = [m for m in g.members if design.has_resource(m.name) and design.resource(m.name).pipeline_config]
        cfgs = {m.name: design.resource(m.name).pipeline_config for m in ms}
        if g.mode.collapsed_side != "producer" or any(c.producer_kind is not OpKind.ASYNC for c in cfgs.values()):
            continue
        ops = {c.async_producer_op for c in cfgs.values()}
        if len(ops) > 1:
            per = ", ".join(f"{n!r}={c.async_producer_op.value}" for n, c in cfgs.items())
            out.append(error("codegen.async_producer_op", f"group {g.name!r} ({g.mode}) commits members whose async "
                             f"producers arrive differently ({per}); one commit arrives one way", (g.name, *cfgs),
                             f"give every member of {g.name!r} the same async_producer_op"))
    return out


__all__ = ["check_async_ops", "check_step_targets", "check_tasks_scheduled", "is_mma_design"]

"""Whole random designs around the random groups of ``test_random_groups``: each group spec pgstudio
accepts gets global-memory inputs, a producer task per filling side, consumer tasks that store the
result, and derived schedules; the designs that validate are kept.

A task's warps follow its async side's group (threads / 32), so the group sizes and agents the
random specs draw (``Thread`` 32 / 64 / 128, ``Warp`` 1 / 2 / 4) reach whole designs.  Specs with an
MMA side are left out: their accumulators need a GEMM around them (the canonical designs cover
those).  Standard library and pgstudio only; TS is not needed to build them."""

from __future__ import annotations

import random
from typing import Iterator

from pgstudio import Compute, Design, DesignError, GmemTensor, MemoryResource, PipelineGroup, PipelineGroupMode, Task
from pgstudio.model.config import FACTORIES
from pgstudio.model.config import CooperativeGroup as Model
from pgstudio.model.derive import derive_design
from pgstudio.model.kinds import Agent, OpKind
from test_random_groups import Member, Spec, random_spec

#: Loop count of every derived schedule: short, so TS's exhaustive checker finishes quickly.
NUM_TILES = 2


def _threads(group: tuple[str, int]) -> int:
    return group[1] * 32 if group[0] == "Warp" else group[1]


def _warps(m: Member, side: str) -> int | None:
    """Warps of the task on ``side`` of ``m``: its async group's threads / 32; one for TMA."""
    kind = m.ptype.kind(side)
    if kind is OpKind.TMA:
        return 1
    threads = _threads(getattr(m, side))
    return threads // 32 if threads % 32 == 0 and threads else None


def _config(m: Member, rng: random.Random):
    nbytes = m.nbytes if m.ptype.producer_kind is OpKind.TMA else 16 * rng.randint(1, 64)

    def cg(g: tuple[str, int]) -> Model:  # whole warps are spelled Warp half the time: the same arrivals
        if g[0] == "Thread" and g[1] % 32 == 0 and rng.random() < 0.5:
            return Model(Agent.Warp, g[1] // 32)
        return Model(Agent(g[0]), g[1])
    return FACTORIES[m.ptype](num_stages=m.stages, num_bytes=nbytes, producer_group=cg(m.producer),
                              consumer_group=cg(m.consumer))


def design_of(spec: Spec, tag: str, rng: random.Random) -> Design | None:
    """The design around ``spec`` (module docstring), or None where it cannot be one."""
    if spec.explicit is not None or len(spec.members) < 2:
        return None
    if any(OpKind.UMMA in (m.ptype.producer_kind, m.ptype.consumer_kind) for m in spec.members):
        return None
    fork = spec.mode == "Fork"
    try:
        cfgs = [_config(m, rng) for m in spec.members]
    except DesignError:
        return None
    names = [f"smem_{i}" for i in range(len(cfgs))]
    members = [MemoryResource(n, c, Compute("copy"), "float32", (max(1, c.num_bytes // 4),),
                              names[0] if fork and i else None) for i, (n, c) in enumerate(zip(names, cfgs))]
    try:
        group = PipelineGroup(f"g_{tag}", members, PipelineGroupMode(spec.mode))
    except DesignError:
        return None
    inputs = [GmemTensor("gmem_in")] if fork else [GmemTensor(f"gmem_in{i}") for i in range(len(members))]
    graph: dict = {}
    tasks: list[Task] = []
    warp = 0

    def task(name: str, warps: int | None, src: list, dst: list) -> bool:
        nonlocal warp
        if warps is None or warp + warps > 32:
            return False
        tasks.append(Task(name, warp, warps, src, dst, None))
        warp += warps
        return True

    if fork:
        for m in members:
            graph[m] = [inputs[0]]
        ok = task("load", _warps(spec.members[0], "producer"), inputs, members)
        outputs = [GmemTensor(f"gmem_out{i}", compute=Compute("store", m.name)) for i, m in enumerate(members)]
        for i, (m, out) in enumerate(zip(members, outputs)):
            graph[out] = [m]
            ok = ok and task(f"store{i}", _warps(spec.members[i], "consumer"), [m], [out])
    else:
        ok = True
        for i, (m, src) in enumerate(zip(members, inputs)):
            graph[m] = [src]
            ok = ok and task(f"load{i}", _warps(spec.members[i], "producer"), [src], [m])
        outputs = [GmemTensor("gmem_out", compute=Compute("store", " + ".join(names)))]
        graph[outputs[0]] = list(members)
        ok = ok and task("store", _warps(spec.members[0], "consumer"), list(members), outputs)
    if not ok:
        group.release_members()
        return None
    try:
        design = Design(f"random_{tag}", [*inputs, *members, *outputs], graph, [group], tasks,
                        {"num_tiles": NUM_TILES})
        design = derive_design(design)
    except DesignError:
        return None
    finally:
        group.release_members()
    errors = [d for d in design.validate().errors if not d.code.startswith("codegen.")]
    return None if errors else design


def random_designs(count: int, seed: int = 24) -> Iterator[Design]:
    """``count`` valid random designs (module docstring), the same ones for one seed."""
    rng = random.Random(seed)
    made = 0
    tries = 0
    while made < count:
        tries += 1
        assert tries < 100 * count + 1000, f"only {made} of {count} random specs made valid designs"
        design = design_of(random_spec(rng), str(tries), rng)
        if design is not None:
            made += 1
            yield design

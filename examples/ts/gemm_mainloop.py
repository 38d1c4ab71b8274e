"""A GEMM mainloop in CUTLASS Task Scheduling (TS), written the way TS's documentation teaches it.

D = A @ B on one CTA: a LoadA and a LoadB task fill smem_a / smem_b with TMA copies, one MMA task
consumes both into a tensor-memory accumulator and releases them together (a Merge group), and
an epilogue drains the accumulator to global memory.  Only the design is written here: resources
with their work methods (stubs), a Merge group, schedules, tasks, the dependency graph and the
SMEM allocator; TaskManager checks it on a CPU.  The work bodies are left for CuTe DSL code.

    python gemm_mainloop.py                        # with TS installed: TS checks it
    pgstudio import-ts gemm_mainloop.py --out gemm_mainloop.json   # pgstudio reads it (runs it!)

Under pgstudio the same file runs unmodified (its TS imports resolve to pgstudio.ts while
``pgstudio.ts.load`` runs it), or with the import block replaced by ``from pgstudio.ts import *``.
"""

from dataclasses import dataclass

from cutlass.pipeline import Agent, CooperativeGroup
from cutlass.experimental.task_scheduling import consumer_work, domain_loop, producer_work, schedule
from cutlass.experimental.task_scheduling.enums import PipelineGroupMode
from cutlass.experimental.task_scheduling.memory import SmemAllocation, SmemAllocator
from cutlass.experimental.task_scheduling.pipeline_group import PipelineGroup
from cutlass.experimental.task_scheduling.resources import MemoryResource, PipelineConfig, TaskLocalVariable
from cutlass.experimental.task_scheduling.task import Task
from cutlass.experimental.task_scheduling.task_manager import TaskManager

# The tile: 128 x 256 outputs, 64-deep k slices of fp16, 8 of them along K.
TILE_M, TILE_N, TILE_K = 128, 256, 64
num_k_tiles = 8
num_stages = 4
one_thread = CooperativeGroup(Agent.Thread, 1)
epilogue_threads = CooperativeGroup(Agent.Thread, 128)  # four warps; TS checks and initialises 128 arrivals


def task_local(docs):
    """A task-local value a consumer work call hands to a producer work call (the schedule
    check needs no DSL type; a kernel would say cutlass.Int32 here)."""
    return TaskLocalVariable(dtype=int, default=0, docs=docs)


# -- resources: where data lives, and the work that enters and leaves it -----------------------

@dataclass(kw_only=True)
class GmemOperands(MemoryResource):
    """A and B in global memory; consumer work gives the coordinates of the next k slice."""

    coord_a: TaskLocalVariable = TaskLocalVariable.uninitialized()
    coord_b: TaskLocalVariable = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.coord_a = task_local("k-slice coordinate of A")
        self.coord_b = task_local("k-slice coordinate of B")

    @consumer_work(returns=coord_a)
    def coord_of_a(self, stage_info):
        ...

    @consumer_work(returns=coord_b)
    def coord_of_b(self, stage_info):
        ...


@dataclass(kw_only=True)
class SmemOperand(MemoryResource):
    """One operand's staged k slices in shared memory: TMA writes a stage, the MMA reads it."""

    desc: TaskLocalVariable = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.desc = task_local("shared-memory descriptor of the stage for the MMA")
        cfg = self.pipeline_config
        self.data = [SmemAllocation(self.name, size_bytes=cfg.num_bytes * cfg.num_stages, alignment=1024)]

    def get_smem_requirements(self):
        return self.data

    @producer_work
    def tma_load(self, stage_info, coord):
        ...

    @consumer_work(returns=desc)
    def make_desc(self, stage_info):
        ...


@dataclass(kw_only=True)
class TmemAccumulator(MemoryResource):
    """The fp32 accumulator in tensor memory: the MMA writes it, the epilogue reads it."""

    fragment: TaskLocalVariable = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.fragment = task_local("the accumulator fragment a thread drains")

    @producer_work
    def mma(self, stage_info, *, desc_a, desc_b):
        ...

    @consumer_work(returns=fragment)
    def load_fragment(self, stage_info):
        ...


@dataclass(kw_only=True)
class GmemOutput(MemoryResource):
    """D in global memory."""

    @producer_work
    def store(self, stage_info, fragment):
        ...


def operand_pipeline(rows):
    return PipelineConfig.create_tma_umma_pipeline_cfg(
        num_stages=num_stages, num_bytes=rows * TILE_K * 2, producer_group=one_thread, consumer_group=one_thread,
        cta_layout_vmnk=(1, 1, 1, 1))  # one CTA: TS's resource set-up reads a shape


gmem_ab = GmemOperands(name="gmem_ab")
smem_a = SmemOperand(name="smem_a", pipeline_config=operand_pipeline(TILE_M))
smem_b = SmemOperand(name="smem_b", pipeline_config=operand_pipeline(TILE_N))
tmem_c = TmemAccumulator(name="tmem_c", pipeline_config=PipelineConfig.create_umma_async_pipeline_cfg(
    num_stages=1, producer_group=one_thread, consumer_group=epilogue_threads, cta_layout_vmnk=(1, 1, 1, 1)))
gmem_d = GmemOutput(name="gmem_d")

# The MMA waits for A and B at the same point and tmem_c depends on both: they share the
# consumer barrier, released once per k slice (Merge).
ab = PipelineGroup(name="ab", members=[smem_a, smem_b], mode=PipelineGroupMode.Merge)

resource_dependency_graph = {
    smem_a: [gmem_ab],
    smem_b: [gmem_ab],
    tmem_c: [smem_a, smem_b],
    gmem_d: [tmem_c],
}


# -- schedules: the order of acquire / work / commit and wait / work / release ----------------

@schedule
def load_a_schedule(gmem, smem):
    with domain_loop(0, num_k_tiles, 1):
        coord = gmem.coord_of_a()
        smem.try_acquire()
        smem.acquire()
        smem.tma_load(coord=coord)
        smem.commit()


@schedule
def load_b_schedule(gmem, smem):
    with domain_loop(0, num_k_tiles, 1):
        coord = gmem.coord_of_b()
        smem.try_acquire()
        smem.acquire()
        smem.tma_load(coord=coord)
        smem.commit()


@schedule
def mma_schedule(a, b, group, acc):
    acc.acquire()                        # head: once, before the k loop
    with domain_loop(0, num_k_tiles, 1):
        a.try_wait()
        a.wait()
        b.try_wait()
        b.wait()
        desc_a = a.make_desc()
        desc_b = b.make_desc()
        acc.mma(desc_a=desc_a, desc_b=desc_b)
        group.release()                  # one collapsed release for both members
    acc.commit()                         # tail: the accumulator is complete


@schedule
def epilogue_schedule(acc, out):
    with domain_loop(0, 1, 1):
        acc.wait()
        fragment = acc.load_fragment()
        out.store(fragment)
        acc.release()


tasks = [
    Task(name="load_a", src_resources=[gmem_ab], dst_resources=[smem_a], warp_idx=0, num_warps=1,
         schedule=load_a_schedule(gmem_ab, ab.smem_a)),
    Task(name="load_b", src_resources=[gmem_ab], dst_resources=[smem_b], warp_idx=1, num_warps=1,
         schedule=load_b_schedule(gmem_ab, ab.smem_b)),
    Task(name="mma", src_resources=[smem_a, smem_b], dst_resources=[tmem_c], warp_idx=2, num_warps=1,
         schedule=mma_schedule(ab.smem_a, ab.smem_b, ab, tmem_c)),
    Task(name="epilogue", src_resources=[tmem_c], dst_resources=[gmem_d], warp_idx=4, num_warps=4,
         schedule=epilogue_schedule(tmem_c, gmem_d)),
]

smem_allocator = SmemAllocator()
for resource in (smem_a, smem_b, tmem_c):
    smem_allocator.add_resource(resource)
smem_allocator.add_pipeline_group(ab)
smem_allocator.compute_layout()

task_manager = TaskManager(tasks=tasks, resource_dependency_graph=resource_dependency_graph,
                           smem_allocator=smem_allocator, verbose=False)
print(f"gemm_mainloop: {len(tasks)} tasks checked, SMEM data {smem_allocator.total_smem_bytes} B")

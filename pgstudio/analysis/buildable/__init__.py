"""What the code generators can build, and the plans they render.

``stream_plan`` (1-D tiles through tma / async pipelines) and ``gemm_plan`` (tensor-core GEMMs
on sm_90a and sm_100a) check a design and return its plan or the ``codegen.*`` diagnostics that
say why there is none; ``rules`` registers those checks in the rule table for every target of
the design, so "valid" means "the generators build it".  ``codegen`` only renders text from a
plan it gets here.
"""

from .gemm_plan import GemmPlan, plan_gemm
from .planned import Planned, design_error
from .rules import plan_for, rule_codegen
from .steps import is_mma_design
from .stream_plan import StreamPlan, TaskCode, plan_stream

__all__ = ["GemmPlan", "Planned", "StreamPlan", "TaskCode", "design_error", "is_mma_design", "plan_for",
           "plan_gemm", "plan_stream", "rule_codegen"]

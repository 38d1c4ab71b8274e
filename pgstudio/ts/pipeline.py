"""The names a TS script takes from ``cutlass.pipeline``: ``CooperativeGroup``, ``Agent``,
``PipelineOp``.  ``pgstudio.ts.load`` runs a script's ``import cutlass.pipeline`` against this
module; TS's own GPU pipeline classes are CuTe DSL objects pgstudio does not model."""

from ._cooperative import Agent, CooperativeGroup, PipelineOp

__all__ = ["Agent", "CooperativeGroup", "PipelineOp"]

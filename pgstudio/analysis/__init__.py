"""What a design MEANS: pure functions of a Design.  Standard library only."""

from .allocator import BarrierAllocator, SmemAllocator
from .diagnostics import Diagnostic, Report, Severity
from ..model.targets import SMEM_CAPACITY
from .layout import BarrierLayout, BarrierSet, SmemLayout, Slot, barrier_layout, smem_layout
from .machine import H200_DATASHEET, Machine
from .predict import Prediction, predict, prediction
from .rules import RULES
from .validate import validate

__all__ = ["BarrierAllocator", "BarrierLayout", "BarrierSet", "Diagnostic", "H200_DATASHEET", "Machine", "Prediction",
           "RULES", "Report", "predict", "prediction",
           "SMEM_CAPACITY", "Severity", "Slot", "SmemAllocator", "SmemLayout", "barrier_layout", "smem_layout",
           "validate"]

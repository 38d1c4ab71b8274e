"""TS's ``Task``: a warp range that runs one captured schedule, with TS's signature and checks."""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import DesignError
from ._schedule import Schedule
from ._unmodelled import TSAttributes


class Task(TSAttributes):
    """A warp range that runs one captured schedule (TS's signature)."""

    def __init__(self, src_resources: Sequence[Any], dst_resources: Sequence[Any], warp_idx: int, num_warps: int, *,
                 schedule: Schedule, num_registers: int | None = None, name: str = "", debug_print: bool = False,
                 iket_enable_profiling: bool = False, iket_profiling_stages: Any = None,
                 iket_profiling_resources: Any = None, run_only_on_cta_id: int | None = None) -> None:
        label = name or getattr(schedule, "name", "?")
        if not isinstance(schedule, Schedule):
            raise DesignError(f"ts: task {label!r}: schedule is {type(schedule).__name__}, expected what calling a "
                              f"@schedule function returns", code="task.schedule",
                              hint="pass schedule=my_schedule(resources...)")
        if num_registers is not None and (not isinstance(num_registers, int) or not 8 <= num_registers <= 256
                                          or num_registers % 8):
            raise DesignError(f"ts: task {label!r}: num_registers is {num_registers!r}, expected 8..256 in steps of 8",
                              code="task.registers", hint="give a multiple of 8 between 8 and 256, or None")
        if run_only_on_cta_id is not None:
            raise DesignError(f"ts: task {label!r}: run_only_on_cta_id={run_only_on_cta_id} cannot be modelled yet: "
                              f"pgstudio models one CTA", code="ts.unsupported", hint="drop run_only_on_cta_id")
        for what, items in (("src_resources", src_resources), ("dst_resources", dst_resources)):
            if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
                raise DesignError(f"ts: task {label!r}: {what} is {items!r}, expected a list of resources",
                                  code="task.resource", hint=f"pass {what}=[smem_a, ...]")
        self.src_resources = list(src_resources)
        self.dst_resources = list(dst_resources)
        self.warp_idx = warp_idx
        self.num_warps = num_warps
        self.schedule = schedule
        self.num_registers = num_registers
        self.name = name
        self.debug_print = debug_print
        self.iket_enable_profiling = iket_enable_profiling
        self.iket_profiling_stages = iket_profiling_stages
        self.iket_profiling_resources = iket_profiling_resources
        self.run_only_on_cta_id = run_only_on_cta_id

    @property
    def warp_start(self) -> int:
        """The task's first warp (TS's name)."""
        return self.warp_idx

    @property
    def warp_end(self) -> int:
        """One past the task's last warp (TS's name)."""
        return self.warp_idx + self.num_warps

    @property
    def resources(self) -> list[Any]:
        """Every resource of the task, sources then destinations, each once (TS's ``resources``)."""
        out: list[Any] = []
        for r in (*self.src_resources, *self.dst_resources):
            if not any(r is seen for seen in out):
                out.append(r)
        return out

    def __repr__(self) -> str:
        return f"Task(name={self.name!r}, warp_idx={self.warp_idx}, num_warps={self.num_warps})"


__all__ = ["Task"]

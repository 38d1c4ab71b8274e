"""TS's ``TaskManager``: where a TS script's design becomes a pgstudio ``Design``.

``TaskManager(tasks=..., resource_dependency_graph=...,
smem_allocator=...)`` builds the design (``_design.py``) and checks it the way TS's constructor
does: every design rule of pgstudio (schedule rules, dependency graph, barrier counts, shared
memory) and, by default, the exhaustive deadlock / race checker; the first error raises
``DesignError`` (a ``ValueError``, as TS raises).  ``skip_validation=True`` turns errors into
warnings, as in TS.  Rules about what pgstudio's own code generators can build (``codegen.*``) and about what a store
computes (``compute.*``) are not TS's business and do not raise here; ``design.validate()`` lists them.

``task_manager.design`` is the captured design: draw it, check it, open it in the studio.
Kernel entry points (``setup_resources_and_tasks``, ``run``) belong to the CuTe DSL and raise.
"""

from __future__ import annotations

import warnings
from contextvars import ContextVar
from typing import Any, Sequence

from ..analysis.validate import validate
from ..errors import DesignError
from ..model.design import Design
from ._design import build_design
from ._task import Task
from ._unmodelled import TSAttributes

#: Registers for the TaskManagers a script builds while ``load()`` runs it.
_CAPTURE: ContextVar[list | None] = ContextVar("pgstudio_ts_managers", default=None)
#: Diagnostic codes that are about pgstudio's generators, not about the design's synchronisation.
#: Rules a TS script cannot break because TS has no word for what they read: what pgstudio's
#: generators build (``codegen.*``) and what a store computes from its inputs (``compute.*``: TS
#: stores have no expression).  ``design.validate()`` lists them, worded for pgstudio's fields.
_BUILD_ONLY = ("codegen.", "compute.")


class TaskManager(TSAttributes):
    """Builds the design of its tasks and checks it (module docstring)."""

    def __init__(self, tasks: Sequence[Task], resource_dependency_graph: dict, dma_consumer_release_labels: Any = None,
                 iket_enable_profiling: bool = False, iket_profiling_stages: Any = None,
                 iket_profiling_resources: Any = None, skip_validation: bool = False, smem_allocator: Any = None,
                 tmem_allocator: Any = None, tmem_ptr_i32: Any = None, verbose: bool = True,
                 smem_capacity_bytes: int | None = None, tmem_capacity_columns: int | None = None,
                 exhaustive_deadlock_race_check: bool = True, assume_pdl_wait_completed: bool = False) -> None:
        self.tasks = list(tasks)
        self.resource_dependency_graph = resource_dependency_graph
        self.smem_allocator = smem_allocator
        self.tmem_allocator = tmem_allocator
        self.verbose = verbose
        self.skip_validation = skip_validation
        self.exhaustive_deadlock_race_check = exhaustive_deadlock_race_check
        self.smem_capacity_bytes = smem_capacity_bytes
        self.design: Design = build_design(self.tasks, resource_dependency_graph)
        managers = _CAPTURE.get()
        if managers is not None:
            managers.append(self)
        self.report = None
        self.print_and_verify()

    def print_and_verify(self) -> None:
        """Check the design (module docstring); print what was checked when ``verbose``."""
        self.report = validate(self.design, checker=self.exhaustive_deadlock_race_check)
        problems = [d for d in self.report.errors if not d.code.startswith(_BUILD_ONLY)]
        if self.smem_allocator is not None and hasattr(self.smem_allocator, "verify"):
            self.smem_allocator.verify(self.design, self.smem_capacity_bytes)
        if self.verbose:
            print(self.design.summary())
            print(self.report)
        for d in problems:
            if self.skip_validation:
                warnings.warn(f"{d.code}: {d.message}", stacklevel=2)
            else:
                raise DesignError(d.message, code=d.code, hint=d.hint)

    def setup_resources_and_tasks(self) -> None:
        raise _kernel_only("setup_resources_and_tasks()")

    def run(self) -> None:
        raise _kernel_only("run()")


def _kernel_only(what: str) -> DesignError:
    return DesignError(f"ts: TaskManager.{what} builds GPU code through the CuTe DSL; pgstudio.ts captures the design",
                       code="ts.unsupported",
                       hint="run the script under TS for the kernel, or use pgstudio.codegen / pgstudio.runtime")


def capture_managers() -> tuple[Any, list]:
    """Start collecting the TaskManagers built from now on; returns (token, list)."""
    found: list = []
    return _CAPTURE.set(found), found


def stop_capture(token: Any) -> None:
    _CAPTURE.reset(token)


__all__ = ["TaskManager", "capture_managers", "stop_capture"]

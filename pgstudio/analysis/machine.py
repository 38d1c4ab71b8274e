"""The device a kernel-time prediction is made for: every constant named, documented, overridable.

``predict.py`` explains a kernel's time with a handful of physical limits; each limit reads the
constants below.  ``H200_DATASHEET`` holds the published figures of an H200 SXM (and first
guesses where nothing is published); ``fitted.py`` keeps the constants fitted to measured runs
on a device (``calibrate.fit_machine``), and ``default_machine()`` there is what a user without
a GPU gets.  Change any of them with ``machine.replace(load_latency_hbm_ns=900)``.

==============================  ==========================================================
``sms``                         streaming multiprocessors (H200 SXM: 132)
``smem_per_sm``                 shared memory of one SM, bytes (228 KiB; a block may use 227)
``threads_per_sm``              resident threads per SM (2048)
``registers_per_sm``            32-bit registers per SM (65536)
``hbm_bytes_per_ns``            HBM3e bandwidth of the datasheet (4.8 TB/s = 4800 B/ns)
``hbm_efficiency``              fraction of it a streaming kernel sustains (a device-to-device
                                copy reaches ~3.9 TB/s on an H200: ~0.82)
``hbm_write_cost``              what a stored byte costs the HBM against a loaded one (writes turn
                                the bus around: an H200 streams 2 loads + 1 store faster than
                                1 load + 2 stores)
``l2_bytes``                    L2 cache (50 MiB): a GEMM operand that fits is read from HBM once
``l2_bytes_per_ns``             L2 to SM bandwidth shared by all SMs (not published; GEMM
                                mainloops measured here pull > 8.9 TB/s of operands)
``load_latency_hbm_ns``         a TMA load's issue-to-landing time when its bytes come from HBM,
                                under load (queueing included, bandwidth excluded)
``load_latency_l2_ns``          the same when they hit in L2
``release_lag``                 how long, in pipeline periods, a GEMM consumer keeps a stage after
                                its data arrived, per k step of lag: the stage is given back
                                ``gemm_limits.wgmma_in_flight`` k steps later, once
                                ``wgmma.wait_group`` retired its MMAs (about one period each)
``tensor_flops_per_ns``         dense tensor-core peak of the whole device per operand type
                                (fp16 / bf16 989.4 TFLOP/s, tf32 494.7)
``tensor_efficiency``           fraction of that peak a mainloop's MMAs run at (clock under load)
``k_tile_overhead_ns``          a GEMM consumer's cost per k tile that the tensor cores do not hide:
                                the full-barrier wait, ``wgmma`` fence / commit / wait, each
                                MMA warpgroup's release
``issue_ns``                    one thread issuing one TMA copy
``barrier_ns``                  one barrier operation that does not block (arrive, passing wait)
``sm_copy_ns``                  what one bulk / TMA copy occupies the SM's shared asynchronous
                                unit, which every block on the SM takes turns at: with small
                                stages and several blocks per SM, their copies and barrier
                                operations queue there, whatever the stage count
``sm_barrier_ns``               the same for one barrier operation (wait, arrive, expect_tx)
``sm_thread_step_ns``           the same for one task's thread load or store of a stage (its
                                warps' shared and global memory instructions)
``smem_bytes_per_ns``           shared-memory bandwidth of one SM (128 B per clock at 1.98 GHz)
``thread_bytes_per_ns``         bytes one thread moves per ns in a copy loop (~1 per clock)
``launch_ns``                   a kernel's start and drain that no block's loop covers
``knee``                        how sharply a pipeline turns from latency-bound to bandwidth-bound
                                (the exponent of a smooth maximum; large = a hard corner)
==============================  ==========================================================

Standard library only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

#: The constants ``calibrate.fit_machine`` may adjust (the counts and capacities stay as built).
#: ``release_lag`` is not among them: the generated sm_90a kernel gives a stage back a whole number
#: of k steps late (``gemm_limits.wgmma_in_flight``), which the simulator replays step by step; a
#: fractional fit would part the two models.
FITTABLE = ("hbm_efficiency", "hbm_write_cost", "l2_bytes_per_ns", "load_latency_hbm_ns", "load_latency_l2_ns",
            "tensor_efficiency", "k_tile_overhead_ns", "issue_ns", "barrier_ns", "sm_copy_ns", "sm_barrier_ns",
            "sm_thread_step_ns", "thread_bytes_per_ns", "launch_ns")


def _tensor_peaks() -> dict[str, float]:
    return {"float16": 989_400.0, "bfloat16": 989_400.0, "float32": 494_700.0}


@dataclass(frozen=True)
class Machine:
    """One device's constants (module docstring); ``fitted_on`` says where a fit came from."""

    name: str = "NVIDIA H200"
    fitted_on: str = ""  # "" for datasheet values, else "<device>, <date>, <what was measured>"
    sms: int = 132
    smem_per_sm: int = 228 * 1024
    threads_per_sm: int = 2048
    registers_per_sm: int = 65536
    hbm_bytes_per_ns: float = 4800.0
    hbm_efficiency: float = 0.82
    hbm_write_cost: float = 1.0
    l2_bytes: int = 50 * 1024 * 1024
    l2_bytes_per_ns: float = 12000.0
    load_latency_hbm_ns: float = 1500.0
    load_latency_l2_ns: float = 1000.0
    release_lag: float = 1.0
    tensor_flops_per_ns: dict = field(default_factory=_tensor_peaks)
    tensor_efficiency: float = 1.0
    k_tile_overhead_ns: float = 150.0
    issue_ns: float = 20.0
    barrier_ns: float = 10.0
    sm_copy_ns: float = 15.0
    sm_barrier_ns: float = 5.0
    sm_thread_step_ns: float = 20.0
    smem_bytes_per_ns: float = 128 * 1.98
    thread_bytes_per_ns: float = 1.98
    launch_ns: float = 1000.0
    knee: float = 4.0

    def replace(self, **changes) -> "Machine":
        """A copy with ``changes``; an unknown name is refused with the known ones."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"unknown machine constant(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return dataclasses.replace(self, **changes)

    @property
    def hbm_sustained(self) -> float:
        """Bytes per ns the device's HBM delivers to a kernel (datasheet x efficiency)."""
        return self.hbm_bytes_per_ns * self.hbm_efficiency

    def tensor_rate(self, dtype: str) -> float:
        """Sustained dense tensor-core flops per ns of ONE SM for operands of ``dtype``."""
        peak = self.tensor_flops_per_ns.get(dtype) or self.tensor_flops_per_ns["float16"]
        return peak * self.tensor_efficiency / self.sms

    def constants(self) -> dict[str, float]:
        """The fittable constants by name (what a fitted file keeps)."""
        return {k: getattr(self, k) for k in FITTABLE}

    def label(self) -> str:
        """'NVIDIA H200 (datasheet)' or 'NVIDIA H200 (fitted on ...)'."""
        return f"{self.name} ({'fitted on ' + self.fitted_on if self.fitted_on else 'datasheet constants'})"


#: The published H200 SXM figures (and first guesses for what is not published).
H200_DATASHEET = Machine()

__all__ = ["FITTABLE", "H200_DATASHEET", "Machine"]

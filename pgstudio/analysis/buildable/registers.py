"""A design's setmaxnreg layout: the registers each warpgroup asks for once its role starts.

A block launches with one register count per thread for all its warps (the launch bound's:
``launch_registers``); ``setmaxnreg.dec`` gives a warpgroup's surplus back to the block's pool and
``setmaxnreg.inc`` takes more from it, so a producer warpgroup that only issues copies can hand
its registers to the MMA warpgroups.  The pool is what the block launched with: an ``inc`` that
asks for more than the ``dec``s gave back waits for registers that never come, and the kernel hangs.

A design asks for a layout with one problem key per task, ``SETMAXNREG_<task>`` = the registers
per thread of the task's warpgroups (TS's ``Task(num_registers=...)``).  The GEMM generator
builds it on sm_90a and sm_100a (one ``setmaxnreg`` at the top of each warpgroup's branch); the
checks here are its ``codegen.setmaxnreg`` / ``codegen.register_budget`` diagnostics:

* a value is a whole multiple of 8 from 24 to 256 (setmaxnreg's operand), for a task that exists;
* the tasks of a warpgroup ask for the same (the instruction is ``.sync.aligned`` over the
  warpgroup: the generator issues it where all four warps run, warps of no task included);
* the warpgroups' values times their 128 threads fit the registers the block launched with;
* the sm_90a MMA warpgroups keep room for their fp32 accumulators.

>>> from pgstudio import examples
>>> d = examples.merge_gemm()
>>> lay = register_layout(d.replace(problem={**d.problem_dict, "SETMAXNREG_load_a": 40, "SETMAXNREG_load_b": 40,
...                                          "SETMAXNREG_epilogue": 40, "SETMAXNREG_mma": 232}))
>>> lay.launch, lay.per_warpgroup, lay.used, lay.budget
(168, (40, 232, 232), 64512, 64512)
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model.design import Design
from ...model.diagnostic import Diagnostic, Fix, error, fix
from . import fixes
from .gemm_limits import REGS_PER_SM, launch_registers

#: The problem key of a task's setmaxnreg value: ``SETMAXNREG_<task name>``.
KEY_PREFIX = "SETMAXNREG_"
#: setmaxnreg's operand: a multiple of 8 from 24 to 256.
MIN_REGS, MAX_REGS, REG_STEP = 24, 256, 8
WARPGROUP_THREADS = 128


def key(task: str) -> str:
    return KEY_PREFIX + task


def drop(*keys: str) -> Fix:
    """The fix that removes problem keys (an empty value removes a symbol)."""
    return fix(f"set the problem without {' and '.join(keys)}", "update_problem", **{k: "" for k in keys})


def requested(design: Design) -> dict[str, object]:
    """Task name -> the value its ``SETMAXNREG_<task>`` key holds (as given, checked elsewhere)."""
    return {k[len(KEY_PREFIX):]: v for k, v in design.problem if k.startswith(KEY_PREFIX)}


def valid_value(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool) and MIN_REGS <= value <= MAX_REGS
            and value % REG_STEP == 0)


def nearest_value(value: float) -> int:
    """The setmaxnreg operand nearest below ``value`` (within 24..256)."""
    return max(MIN_REGS, min(MAX_REGS, int(value) // REG_STEP * REG_STEP))


@dataclass(frozen=True)
class RegisterLayout:
    """What each warpgroup of the block runs with: ``per_warpgroup[w]`` registers per thread
    (``launch`` where no task asks), out of ``budget`` = ``launch`` x ``threads`` the block launched with."""

    launch: int
    threads: int
    per_warpgroup: tuple[int, ...]
    owners: tuple[tuple[str, ...], ...]  # the tasks of each warpgroup

    @property
    def budget(self) -> int:
        return self.launch * self.threads

    @property
    def used(self) -> int:
        return sum(v * WARPGROUP_THREADS for v in self.per_warpgroup)

    def changes(self) -> dict[int, int]:
        """Warpgroup -> its setmaxnreg value, where it differs from the launch count."""
        return {w: v for w, v in enumerate(self.per_warpgroup) if v != self.launch}

    def text(self) -> str:
        """``warpgroup 0 (load_a, load_b, epilogue) 40, warpgroups 1..2 (mma) 232``."""
        runs: list[list[int]] = []
        for w in range(len(self.per_warpgroup)):
            if runs and self.owners[w] == self.owners[runs[-1][-1]] and self.per_warpgroup[w] == self.per_warpgroup[runs[-1][-1]]:
                runs[-1].append(w)
            else:
                runs.append([w])
        parts = []
        for run in runs:
            where = f"warpgroup {run[0]}" if len(run) == 1 else f"warpgroups {run[0]}..{run[-1]}"
            who = ", ".join(self.owners[run[0]]) or "no task"
            parts.append(f"{where} ({who}) {self.per_warpgroup[run[0]]} x {WARPGROUP_THREADS * len(run)} threads")
        return ", ".join(parts)


def _warpgroup_tasks(design: Design, n_wg: int) -> list[list]:
    out: list[list] = [[] for _ in range(n_wg)]
    for t in sorted(design.tasks, key=lambda t: t.warp_idx):
        for w in range(t.warp_idx // 4, min(n_wg, (t.warp_idx + t.num_warps - 1) // 4 + 1)):
            out[w].append(t)
    return out


def register_layout(design: Design) -> RegisterLayout | None:
    """The layout the design asks for, or None when it asks for none or asks for one the checks
    refuse (``check_registers`` says why)."""
    asked = requested(design)
    if not asked or _value_problems(design, asked) or _warpgroup_problems(design, asked):
        return None
    threads, launch = launch_registers(design.num_warps)
    groups = _warpgroup_tasks(design, threads // WARPGROUP_THREADS)
    per = tuple(asked[ts[0].name] if ts and ts[0].name in asked else launch for ts in groups)  # type: ignore[misc]
    return RegisterLayout(launch, threads, per, tuple(tuple(t.name for t in ts) for ts in groups))


def _value_problems(design: Design, asked: dict[str, object]) -> list[Diagnostic]:
    out = []
    tasks = [t.name for t in design.tasks]
    for name, value in asked.items():
        k = key(name)
        if name not in tasks:
            out.append(error("codegen.setmaxnreg", f"problem key {k} asks registers for task {name!r}, which is not in the "
                             f"design (tasks: {', '.join(tasks) or 'none'})", (design.name,),
                             f"name a task in the key (SETMAXNREG_<task>), or drop {k}",
                             [drop(k)]))
        elif not valid_value(value):
            number = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
            near = nearest_value(value) if number and abs(value) < 1e9 else None  # type: ignore[arg-type]
            out.append(error("codegen.setmaxnreg", f"task {name!r}: {k} is {value!r}, expected a whole multiple of "
                             f"{REG_STEP} from {MIN_REGS} to {MAX_REGS} (the registers per thread setmaxnreg sets)",
                             (name,), f"set {k} to {near}" if near else f"give {k} a multiple of {REG_STEP} from "
                             f"{MIN_REGS} to {MAX_REGS}", [fixes.problem({k: near}, "setmaxnreg's nearest value")]
                             if near else []))
    return out


def _warpgroup_problems(design: Design, asked: dict[str, object]) -> list[Diagnostic]:
    threads, _ = launch_registers(design.num_warps)
    out = []
    for w, ts in enumerate(_warpgroup_tasks(design, threads // WARPGROUP_THREADS)):
        values = {t.name: asked.get(t.name) for t in ts}
        if not any(v is not None for v in values.values()):
            continue
        said = ", ".join(f"{n} {v if v is not None else 'none'}" for n, v in values.items())
        if len(set(values.values())) > 1:
            first = next(v for v in values.values() if v is not None)
            others = [n for n, v in values.items() if v != first]
            out.append(error("codegen.setmaxnreg", f"warpgroup {w} (warps {4 * w}..{4 * w + 3}) runs tasks that ask "
                             f"for different registers ({said}); one setmaxnreg sets all four warps "
                             f"(.sync.aligned)", tuple(values),
                             f"give every task of warpgroup {w} the same SETMAXNREG value",
                             [fixes.problem({key(n): first for n in others}, f"warpgroup {w}'s first value")]
                             if valid_value(first) else []))
    return out


def check_registers(design: Design, mma: str | None = None, accumulators: int = 0,
                    bookkeeping: int = 0) -> list[Diagnostic]:
    """The ``codegen.*`` findings of the design's setmaxnreg layout (none when it asks for none).
    ``mma``: the task whose threads hold ``accumulators`` fp32 registers (sm_90a), which its value
    must keep room for, with ``bookkeeping`` more."""
    asked = requested(design)
    if not asked:
        return []
    out = _value_problems(design, asked) + _warpgroup_problems(design, asked)
    lay = None if out else register_layout(design)
    if lay is None:
        return out
    if lay.used > lay.budget:
        out.append(_over_budget(design, lay))
    need = accumulators + bookkeeping
    have = asked.get(mma) if mma else None
    if have is not None and accumulators and have < need:  # type: ignore[operator]
        k = key(mma)  # type: ignore[arg-type]
        up = min(MAX_REGS, -(-need // REG_STEP) * REG_STEP)
        out.append(error("codegen.setmaxnreg", f"task {mma!r}: {k} is {have}, but each of its threads holds "
                         f"{accumulators} fp32 accumulators (plus about {bookkeeping} for addresses and loop state)",
                         (mma,), f"set {k} to at least {up}, taking the registers from the other warpgroups",  # type: ignore[arg-type]
                         [fixes.problem({k: up}, "room for the accumulators")]))
    return out


def _over_budget(design: Design, lay: RegisterLayout) -> Diagnostic:
    asked = requested(design)
    top = max(v for v in lay.per_warpgroup)
    wgs = [w for w, v in enumerate(lay.per_warpgroup) if v == top]
    tasks = list(dict.fromkeys(n for w in wgs for n in lay.owners[w] if n in asked))
    rest = lay.used - top * WARPGROUP_THREADS * len(wgs)
    most = (lay.budget - rest) // (WARPGROUP_THREADS * len(wgs)) // REG_STEP * REG_STEP
    keys = " and ".join(key(n) for n in tasks)
    offered = ([fixes.problem({key(n): most for n in tasks}, f"the most the block's {lay.budget} registers leave them")]
               if tasks and MIN_REGS <= most < top else [])
    hint = (f"lower {keys} to {most}" if offered else "lower the SETMAXNREG values") + \
        " (or give the other warpgroups less with setmaxnreg.dec)"
    return error("codegen.register_budget",
                 f"setmaxnreg layout {lay.text()}: {lay.used} registers, but a block of {lay.threads} threads launches "
                 f"with {lay.launch} per thread, {lay.budget} of the SM's {REGS_PER_SM}; setmaxnreg.inc only takes what "
                 f"setmaxnreg.dec gave back, so the warpgroups that increase would wait for registers forever",
                 tuple(tasks) or (design.name,), hint, offered)


__all__ = ["KEY_PREFIX", "drop", "MAX_REGS", "MIN_REGS", "REG_STEP", "RegisterLayout", "check_registers", "key", "register_layout",
           "requested", "valid_value"]

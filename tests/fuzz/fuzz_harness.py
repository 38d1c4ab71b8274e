"""The fuzz harness: feed one input (the bytes of a would-be design file) through every stage and
classify what each stage did.

Outcomes per stage:
  ok       the stage returned (for the command line: exit 0 or 1, i.e. a result or findings)
  refused  a clear error: a ``PgStudioError`` with a one-line message (command line: exit 2 and one
           line on stderr naming the problem)
  crash    anything else: an exception of another type, a traceback on stderr, exit 70 (a bug report)
  hang     the stage ran past the per-input time limit

Only ``ok`` and ``refused`` are allowed.  ``OUTCOMES`` counts every (source, stage, outcome);
``conftest.py`` prints the table at the end of the run.
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import random
import re
import signal
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any, Callable

from pgstudio import cli, examples
from pgstudio.analysis.check import check
from pgstudio.analysis.layout import barrier_layout, smem_layout
from pgstudio.analysis.simulate import simulate
from pgstudio.codegen.kernel import emit
from pgstudio.errors import PgStudioError
from pgstudio.model.design import Design
from pgstudio.model.group import PipelineGroupMode
from pgstudio.model.kinds import Agent, AsyncProducerOp, PipelineType
from pgstudio.model.schedule import ALL_OPS, VIAS
from pgstudio.model.targets import ARCHES, DTYPES

#: Seconds one stage may take on one input before it counts as a hang.
STAGE_LIMIT_S = 20
#: (source, stage, outcome) -> inputs.
OUTCOMES: Counter = Counter()
#: source -> inputs tried.
INPUTS: Counter = Counter()
#: Injection corpus (``test_injection``): outcome -> planted files.
INJECTION: Counter = Counter()
#: The first few failures, for the assertion message.
FAILURES: list[str] = []


class Hang(BaseException):
    """Raised by the alarm inside a stage that ran past ``STAGE_LIMIT_S`` (BaseException: no
    ``except Exception`` in pgstudio can swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    def fire(signum, frame):
        raise Hang()
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _clear(exc: BaseException) -> bool:
    """A PgStudioError with a message: one line, or a head line and one indented ``[code] ...``
    line per error when it lists several (``emit`` on a design with errors)."""
    text = str(exc).strip()
    lines = text.splitlines()
    return (isinstance(exc, PgStudioError) and bool(text) and "Traceback" not in text
            and all(line.startswith("  [") for line in lines[1:]))


def run_stage(source: str, stage: str, fn: Callable[[], Any], label: str) -> tuple[str, Any]:
    """Run ``fn`` under the time limit; count and return (outcome, result)."""
    result = None
    try:
        with time_limit(STAGE_LIMIT_S):
            result = fn()
        outcome = "ok"
    except Hang:
        outcome = "hang"
    except Exception as exc:  # noqa: BLE001 - classifying is the point
        outcome = "refused" if _clear(exc) else "crash"
        if outcome == "crash":
            FAILURES.append(f"{label} {stage}: {type(exc).__name__}: {str(exc)[:300]}")
    if outcome == "hang":
        FAILURES.append(f"{label} {stage}: ran past {STAGE_LIMIT_S} s")
    OUTCOMES[(source, stage, outcome)] += 1
    return outcome, result


def api_stages(source: str, data: bytes, label: str, *, render: bool = False) -> None:
    """load -> validate -> layout -> simulate -> check -> emit (both targets, with and without
    validation) -> render (when asked: matplotlib is the slow part)."""
    INPUTS[source] += 1
    with _dump_on_failure(data):
        _api_stages(source, data, label, render)


def _api_stages(source: str, data: bytes, label: str, render: bool) -> None:
    outcome, design = run_stage(source, "load", lambda: Design.from_json(data), label)
    if outcome != "ok":
        return
    run_stage(source, "validate", lambda: (design.validate(), str(design.validate())), label)
    run_stage(source, "layout", lambda: (barrier_layout(design).table(), smem_layout(design).report()), label)
    run_stage(source, "simulate", lambda: simulate(design, iterations=3, inner=2).summary(), label)
    run_stage(source, "check", lambda: check(design, 2, inner=1, max_states=3000).summary(), label)
    for arch in ARCHES:
        run_stage(source, "emit", partial(emit, design, arch=arch), label)
        run_stage(source, "emit --no-validate", partial(emit, design, arch=arch, validate=False), label)
    if render:
        run_stage(source, "render", lambda: _pictures(design), label)


@contextlib.contextmanager
def _dump_on_failure(data: bytes):
    """With PGSTUDIO_FUZZ_DUMP=<folder>, keep every input that made a stage fail (to replay it)."""
    start = len(FAILURES)
    yield
    folder = os.environ.get("PGSTUDIO_FUZZ_DUMP")
    if folder and len(FAILURES) > start:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"failure-{len(FAILURES):05d}.json").write_bytes(data)


def _pictures(design: Design) -> None:
    from pgstudio.render import barrier_figure, comparison_figure, dependency_graph, timeline_figure, to_svg
    assert dependency_graph(design).source
    for make in (barrier_figure, comparison_figure):
        try:
            to_svg(make(design))
        except PgStudioError:  # a group that cannot be laid out: the picture says so elsewhere
            pass
    try:
        tl = simulate(design, iterations=3, inner=2)
    except PgStudioError:
        return
    to_svg(timeline_figure(tl))


#: The command lines the CLI fuzz runs on each input ({d}: the design file, {o}: an output folder).
COMMANDS = {
    "cli check": ["check", "{d}", "--exhaustive", "--iterations", "2", "--inner", "1", "--max-states", "3000"],
    "cli emit": ["emit", "{d}", "-o", "{o}/k.cu"],
    "cli emit --no-validate": ["emit", "{d}", "-o", "{o}/k.cu", "--no-validate", "--arch", "sm_100a"],
    "cli trace --simulate": ["trace", "{d}", "--simulate", "--iterations", "3", "--out", "{o}/t.json"],
    "cli render": ["render", "{d}", "--out", "{o}/pics", "--no-png", "--iterations", "3", "--inner", "2"],
}


def cli_stage(source: str, stage: str, argv: list[str], label: str) -> str:
    """Run ``pgstudio.cli.main(argv)``: ok = exit 0 / 1, refused = exit 2 with one line on
    stderr, crash = anything else or a traceback."""
    out, err = io.StringIO(), io.StringIO()
    status = None
    try:
        with time_limit(STAGE_LIMIT_S), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(argv)
        outcome = {0: "ok", 1: "ok", 2: "refused"}.get(status, "crash")
    except Hang:
        outcome = "hang"
    except SystemExit as exc:  # argparse
        status = exc.code
        outcome = "refused" if exc.code == 2 else "crash"
    except Exception as exc:  # noqa: BLE001
        outcome = "crash"
        err.write(f"{type(exc).__name__}: {exc}")
    text = err.getvalue()
    if outcome == "refused" and (len(text.strip().splitlines()) != 1 or "Traceback" in text):
        outcome = "crash"
    if "Traceback" in text or "Traceback" in out.getvalue():
        outcome = "crash"
    if outcome in ("crash", "hang"):
        FAILURES.append(f"{label} {stage}: exit {status}: {text.strip()[:300]}")
    OUTCOMES[(source, stage, outcome)] += 1
    return outcome


def cli_stages(source: str, data: bytes, folder: Path, label: str, stages=tuple(COMMANDS)) -> None:
    INPUTS[source] += 1
    folder.mkdir(parents=True, exist_ok=True)
    design_file = folder / "d.json"
    design_file.write_bytes(data)
    with _dump_on_failure(data):
        for stage in stages:
            argv = [a.format(d=design_file, o=folder) for a in COMMANDS[stage]]
            cli_stage(source, stage, argv, label)


# -- inputs ---------------------------------------------------------------------------------------

def seed_files() -> dict[str, bytes]:
    """What ``pgstudio example NAME`` writes for every canonical design, and its ungrouped twin."""
    files = {}
    for name in examples.CANONICAL:
        d = examples.example(name)
        files[name] = d.to_json().encode()
        files[f"{name}_ungrouped"] = examples.ungrouped(d).to_json().encode()
    return files


#: Values planted in numbers: edges of every range, and what JSON allows beyond them.
NUMBERS = [b"0", b"-1", b"1", b"65", b"4294967296", b"1e308", b"1e999", b"-1e999", b"NaN", b"Infinity", b"2.5",
           b"99999999999999999999999999", b"true", b"null", b'"7"', b"[]", b"{}"]
#: Bytes inserted or substituted: structure, quotes, escapes, and text that must never reach CUDA.
SNIPPETS = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b"\x00", b"\xff\xfe", b"\\u0000", b"\\ud800",
            b'asm volatile(\\"trap;\\");', b"*/", b"#include", b"\\n", b"__global__", b"\xd0\xb0"]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three byte-level edits of a real design file."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        # most edits keep the JSON well formed, so that the stages after loading see odd designs
        kind = rng.choice(["number"] * 5 + ["swap"] * 4 + ["flip", "delete", "duplicate", "insert", "truncate"])
        if kind == "number":
            spans = [m.span() for m in re.finditer(rb"-?\d+", bytes(b))]
            if spans:
                lo, hi = rng.choice(spans)
                b[lo:hi] = rng.choice(NUMBERS)
        elif kind == "flip" and b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif kind == "delete" and b:
            i = rng.randrange(len(b))
            del b[i:i + rng.randint(1, 40)]
        elif kind == "duplicate" and b:
            i = rng.randrange(len(b))
            b[i:i] = b[i:i + rng.randint(1, 400)]
        elif kind == "insert":
            i = rng.randrange(len(b) + 1)
            b[i:i] = rng.choice(SNIPPETS)
        elif kind == "truncate" and b:
            del b[rng.randrange(len(b)):]
        elif kind == "swap":
            strings = [m.span() for m in re.finditer(rb'"[A-Za-z_][A-Za-z0-9_]*"', bytes(b))]
            if len(strings) >= 2:
                (a0, a1), (b0, b1) = sorted(rng.sample(strings, 2))
                b[b0:b1], b[a0:a1] = b[a0:a1], b[b0:b1]
    return bytes(b)


def failures_text(failures: list[str], limit: int = 15) -> str:
    return "\n".join(failures[:limit]) + (f"\n... and {len(failures) - limit} more" if len(failures) > limit else "")


@contextlib.contextmanager
def no_new_failures():
    """Fail the surrounding test if the stages inside add a failure (for hypothesis to shrink)."""
    start = len(FAILURES)
    yield
    new = FAILURES[start:]
    assert not new, failures_text(new)


# -- edits over the schema (hypothesis draws them) -------------------------------------------------

#: Strings planted in text fields: quotes, comment ends, preprocessor lines, escapes, newlines,
#: inline assembly, kernel qualifiers, unicode look-alikes (Cyrillic 'а', fullwidth ';').
INJECTIONS = ['asm volatile("trap;");', '"; asm("trap;"); //', "*/ asm(\"trap;\"); /*", "#include <cstdio>",
              "a\\", "x\ny", "__global__", "sm\u0430em_a", "x\uff1by", "num_tiles); __trap(); (", "", " ", "a" * 300,
              "pg_bar", "\x1b[31mred", "1e999", "-1"]


def paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indices) into a JSON value, containers included."""
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += paths(v, prefix + (i,))
    return out


def names_in(obj: Any) -> list[str]:
    """The strings of a design file (names, symbols, ops): planting them elsewhere makes
    references that exist but point at the wrong thing."""
    if isinstance(obj, dict):
        return sorted({s for k, v in obj.items() for s in (k, *names_in(v)) if isinstance(s, str) and len(s) < 40})
    if isinstance(obj, list):
        return sorted({s for v in obj for s in names_in(v)})
    return [obj] if isinstance(obj, str) and len(obj) < 40 else []


def value_at(obj: Any, path: tuple) -> Any:
    """The value at ``path``, or None when the path no longer exists."""
    for key in path:
        try:
            obj = obj[key]
        except (KeyError, IndexError, TypeError):
            return None
    return obj


def apply_edit(obj: Any, path: tuple, action: str, value: Any) -> None:
    """Change ``obj`` in place at ``path`` (a path that no longer exists is skipped)."""
    if not path:
        return
    parent = obj
    for key in path[:-1]:
        try:
            parent = parent[key]
        except (KeyError, IndexError, TypeError):
            return
    key = path[-1]
    if not isinstance(parent, (dict, list)):
        return
    try:
        current = parent[key]
    except (KeyError, IndexError, TypeError):
        return
    if action == "delete":
        del parent[key]
    elif action == "duplicate":
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(current))
    elif action == "empty":
        if isinstance(current, (list, dict)):
            current.clear()
    else:
        parent[key] = copy.deepcopy(value)


def _pick(rng: random.Random, good: list, bad: list) -> Any:
    """Mostly a value the field may hold, one in five times one it may not."""
    return rng.choice(bad if bad and rng.random() < 0.2 else good)


#: Per field of the schema (by its key): values it may hold, its edges, and values it may not.
FIELDS: dict[str, tuple[list, list]] = {
    "op": (list(ALL_OPS), ["spin", "", "asm"]),
    "via": (list(VIAS), ["magic"]),
    "memory": (["gmem", "smem", "tmem"], ["disk"]),
    "mode": ([m.value for m in PipelineGroupMode], ["Zip"]),
    "pipeline_type": ([t.value for t in PipelineType], ["TmaTma"]),
    "agent": ([a.value for a in Agent], ["Block"]),
    "async_producer_op": ([o.value for o in AsyncProducerOp], ["Later"]),
    "dtype": (list(DTYPES), ["int8", "float64"]),
    "num_stages": (list(range(1, 9)) + [64], [0, 65, -1]),
    "num_bytes": ([0, 16, 24, 1024, 4096, 8192, 16384, 65536, (1 << 20) - 1], [1 << 20, -16]),
    "size": (list(range(1, 9)) + [32, 128, 1024], [0, 33, 1025]),
    "warp_idx": (list(range(0, 17)) + [31], [32, -1]),
    "num_warps": (list(range(1, 9)) + [32], [0, 33]),
}
#: Values for leaves of other fields, by their JSON type.
LIKE = {
    int: [0, 1, 2, 3, 7, 64, 1000, 1 << 24, 1 << 40, (1 << 40) + 1, -1],
    float: [0.5, float("nan"), float("inf"), -1.5, 1e300],
    bool: [True, False],
}
#: Any JSON value, for the edits that ignore the field's type.
ANY = [0, -1, 1 << 63, 2.5, float("nan"), True, None, "", "x", [], {}, ["smem_a"], {"op": "acquire"}]


def schema_edit(obj: Any, rng: random.Random, names: list[str]) -> None:
    """One edit of a design file at a path of its schema: a field set to a value for that field
    (valid, an edge or invalid), a name of something else, planted text, an edge number; a field
    or element deleted, an element duplicated, a container emptied."""
    every = paths(obj)
    leaves = [p for p in every if not isinstance(value_at(obj, p), (dict, list))]
    path = rng.choice(leaves if leaves and rng.random() < 0.85 else every)  # most edits change a value
    action = rng.choices(["set", "delete", "duplicate", "empty"], weights=[12, 1, 1, 1])[0]
    current = value_at(obj, path)
    key = next((k for k in reversed(path) if isinstance(k, str)), None)
    if rng.random() < 0.1:
        value = rng.choice(ANY)
    elif key in FIELDS and not isinstance(current, (dict, list)):
        value = _pick(rng, *FIELDS[key])
    elif key == "expr" or (isinstance(current, str) and rng.random() < 0.15):
        value = rng.choice(INJECTIONS + names + ["max(smem_a, 0.f) * smem_b", "smem_x + smem_y", "tmem_c"])
    elif isinstance(current, str) or (current is None and key in ("group", "aliases")):
        value = rng.choice(names)
    elif current is None:
        value = None if rng.random() < 0.8 else rng.choice(ANY)
    elif isinstance(current, list):
        value = rng.sample(names, rng.randint(0, 3)) if rng.random() < 0.7 else [rng.choice(LIKE[int])]
    else:
        value = rng.choice(LIKE.get(type(current), ANY))
    apply_edit(obj, path, action, value)

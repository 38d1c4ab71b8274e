"""No design text becomes code in an exported TS script.

Hostile text -- quotes, newlines, triple quotes, backslashes, ``#``, U+2028 / U+0085, NUL, a lone
surrogate, format braces, each around a payload that runs ``os.system`` -- is planted into every
string field and every object key of canonical designs' JSON, one field at a time.  Each planted
file must end one of three ways: refused at load (``DesignError``), refused at export with one
line (``DesignError`` code ``ts.export``), or exported to a script that ``ast.parse`` reads and
that runs -- under pgstudio.ts, and under TS when it is installed -- in a subprocess whose audit
hook sees no process start, no file written, no foreign code compiled, and after which no
sentinel file exists.  The test prints the counts per field (``pytest -s``).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from pgstudio import examples
from pgstudio.errors import DesignError
from pgstudio.model.design import Design
from ts_side import SMALL

#: Designs planted into: a copy, a fork, a GEMM with a residual (inputs, expressions, three groups).
PLANTED = ("merge_copy", "fork_copy", "merge_gemm_resadd")
MARKER = "PGSTUDIO_PWNED"
#: TS's own checker takes seconds on a GEMM script, so under TS a GEMM runs this many scripts per field.
TS_GEMM_SCRIPTS_PER_FIELD = 3


def payloads(sentinel: Path) -> list[str]:
    call = f"__import__('os').system('touch {sentinel}')"
    return [
        f'"); {call}; ("', f"'); {call}; ('", f"\n{call}\n", f'"""\n{call}\n"""', f"'''\n{call}\n'''",
        f'x\\"); {call}  #', f"\u2028{call}\u2028", f"\x85{call}", f"\x00{call}", f"\ud800{call}",
        f"{{0.__class__}}{{queue}}{call}", f"# {MARKER}\r{call}", f"\\\n{call}", call, f"a\"; {call}; #",
    ]


def _leaves(obj, path=""):
    """(path, setter) for every string value and every object key of a JSON tree."""
    if isinstance(obj, dict):
        for key in list(obj):
            yield f"{path}.<key>", ("key", obj, key)
            yield from _leaves(obj[key], f"{path}.{key}")
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            if isinstance(item, str):
                yield f"{path}[*]", ("item", obj, i)
            else:
                yield from _leaves(item, f"{path}[*]")
    elif isinstance(obj, str):
        yield path, None  # set by the parent: strings are immutable


def _string_fields(obj):
    """Every place a string sits: (field path, container, key-or-index, is_key)."""
    out = []

    def walk(node, path):
        if isinstance(node, dict):
            for key in list(node):
                out.append((f"{path}.<key>", node, key, True))
                if isinstance(node[key], str):
                    out.append((f"{path}.{key}", node, key, False))
                else:
                    walk(node[key], f"{path}.{key}")
        elif isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    out.append((f"{path}[*]", node, i, False))
                else:
                    walk(item, f"{path}[*]")
    walk(obj, "")
    return out


def _planted(text: str, payload: str):
    """Each planted JSON text of ``text``: (field path, json text)."""
    base = json.loads(text)
    count = len(_string_fields(base))
    for n in range(count):
        obj = json.loads(text)
        path, node, key, is_key = _string_fields(obj)[n]
        if is_key:
            node[payload] = node.pop(key)
        else:
            node[key] = payload
        yield path, json.dumps(obj)


RUNNER = r'''
import json, os, sys, runpy, contextlib, io, tempfile, warnings
scripts, use_ts, marker = json.loads(sys.argv[1]), sys.argv[2] == "ts", sys.argv[3]
# TS's own compile cache: the one folder the run may write into (the test names it; see _run)
ts_cache = os.path.realpath(os.environ["CUTE_DSL_CACHE_DIR"]) + os.sep if use_ts else None
import pgstudio.ts
if use_ts:
    import cutlass.pipeline, cutlass.experimental.task_scheduling.task_manager  # noqa: F401 (before the hook)
seen = []
current = [None]
BAD = ("os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.kill",
       "socket.connect", "os.remove", "os.rename", "shutil.rmtree", "ctypes.dlopen", "pty.spawn")

def in_ts_cache(event, args):
    """A write by TS into its own compile cache (a path under ts_cache), not by the script."""
    paths = [a for a in args[:2 if event == "os.rename" else 1] if isinstance(a, (str, bytes, os.PathLike))]
    return ts_cache is not None and bool(paths) and all(
        os.path.realpath(os.fsdecode(a)).startswith(ts_cache) for a in paths)

def hook(event, args):
    if event in ("open", "os.rename", "os.remove") and in_ts_cache(event, args):
        return
    if event.startswith(BAD):
        seen.append((event, repr(args)[:200]))
    elif event == "open" and len(args) > 2 and isinstance(args[1], str) and any(c in args[1] for c in "wax+") \
            and args[0] != tempfile.gettempdir():
        # (opening the temp folder itself is tempfile's anonymous file, which names no file)
        seen.append((event, repr(args)[:200]))
    elif event == "compile" and len(args) > 1 and args[1] != current[0] and marker in repr(args[0]):
        seen.append((event, repr(args)[:200]))
    elif event == "exec" and marker in repr(getattr(args[0], "co_consts", ())) and \
            getattr(args[0], "co_filename", None) != current[0]:
        seen.append((event, repr(args)[:200]))

sys.addaudithook(hook)
errors = []
for path in scripts:
    current[0] = path
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            if use_ts:
                runpy.run_path(path, run_name="__main__")
            else:
                pgstudio.ts.load(path)
    except Exception as exc:  # a script that fails is not an escape; the audit events decide
        errors.append(f"{path}: {type(exc).__name__}: {str(exc)[:120]}")
print(json.dumps({"events": seen, "errors": errors}))
'''


def _run(scripts: list[str], use_ts: bool, cache: Path) -> dict:
    """Run ``scripts`` in a fresh interpreter under the audit hook.  TS caches what it compiles;
    its cache is pointed at ``cache`` (TS's ``CUTE_DSL_CACHE_DIR``), the only place a write is
    allowed, so a planted write anywhere else still counts as an escape."""
    cache.mkdir(exist_ok=True)
    env = dict(os.environ, CUTE_DSL_CACHE_DIR=str(cache))
    proc = subprocess.run([sys.executable, "-c", RUNNER, json.dumps(scripts), "ts" if use_ts else "pgstudio", MARKER],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _ts_installed() -> bool:
    try:
        import cutlass.experimental.task_scheduling  # noqa: F401
    except Exception:
        return False
    return True


@pytest.mark.parametrize("use_ts", [False, pytest.param(True, marks=pytest.mark.ts)], ids=["pgstudio", "ts"])
def test_planted_text_never_runs_from_an_exported_script(use_ts, tmp_path):
    if use_ts and not _ts_installed():
        pytest.skip("TS is not installed")
    sentinel = tmp_path / "sentinel"
    outcome: dict[str, Counter] = {}
    scripts: dict[str, str] = {}  # script text -> path (one run per distinct script)
    ran: Counter = Counter()  # (design, field) -> scripts run
    runs: Counter = Counter()  # field -> exported scripts run
    for design_name in PLANTED:
        text = examples.example(design_name, **SMALL[design_name]).to_json()
        for payload in payloads(sentinel):
            for field, planted in _planted(text, payload):
                tally = outcome.setdefault(field, Counter())
                try:
                    design = Design.from_json(planted)
                except DesignError:
                    tally["refused at load"] += 1
                    continue
                try:
                    script = design.to_ts()
                except DesignError as exc:
                    assert exc.code == "ts.export" or exc.code, f"{field}: export refused without a code: {exc}"
                    assert "\n" not in str(exc), f"{field}: a refusal of more than one line: {exc!r}"
                    tally["refused at export"] += 1
                    continue
                ast.parse(script)
                assert MARKER not in script or "touch" not in script.split(MARKER)[0][-3:], field
                tally["exported"] += 1
                if use_ts and "gemm" in design_name and ran[design_name, field] >= TS_GEMM_SCRIPTS_PER_FIELD:
                    continue
                if script not in scripts:
                    ran[design_name, field] += 1
                    path = tmp_path / f"planted_{len(scripts)}.py"
                    path.write_text(script, encoding="utf-8")
                    scripts[script] = str(path)
                runs[field] += 1
    result = _run(list(scripts.values()), use_ts, tmp_path / "ts_cache")
    assert len(scripts) > 20
    print(f"\nplanted cases per field ({len(PLANTED)} designs x {len(payloads(sentinel))} payloads; "
          f"{len(scripts)} distinct scripts run under {'TS' if use_ts else 'pgstudio.ts'}):")
    for field, tally in sorted(outcome.items()):
        print(f"  {field}: {sum(tally.values())} planted -- " + ", ".join(f"{v} {k}" for k, v in sorted(tally.items()))
              + (f" ({runs[field]} of them run)" if field in runs else ""))
    assert result["events"] == [], result["events"][:5]
    assert not sentinel.exists(), "a planted payload ran"
    total = sum(sum(t.values()) for t in outcome.values())
    assert total > 1000 and len(outcome) > 30  # the corpus really covers the fields

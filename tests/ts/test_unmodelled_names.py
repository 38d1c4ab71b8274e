"""Every TS name a script may touch either works in pgstudio.ts or fails with one line saying
pgstudio does not model it yet."""

import importlib
import pkgutil

import pytest

import pgstudio.ts as pg
from pgstudio.errors import DesignError
from pgstudio.ts._unmodelled import UNMODELLED


@pytest.mark.parametrize("name", sorted(UNMODELLED))
def test_an_unmodelled_ts_name_says_so_in_one_line(name):
    with pytest.raises(DesignError) as info:
        exec(f"from pgstudio.ts import {name}", {})
    assert info.value.code == "ts.unsupported"
    assert f"{name} " in str(info.value) and "pgstudio does not model yet" in str(info.value)
    assert "\n" not in str(info.value)


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError):
        pg.no_such_ts_name  # noqa: B018


def _ts_public_names() -> set[str]:
    ts = importlib.import_module("cutlass.experimental.task_scheduling")
    pipeline = importlib.import_module("cutlass.pipeline")
    names = {n for n in getattr(pipeline, "__all__", ()) if not n.startswith("_")}
    mods = [ts]
    for info in pkgutil.walk_packages(ts.__path__, ts.__name__ + "."):
        try:
            mods.append(importlib.import_module(info.name))
        except Exception:  # a TS module that needs a GPU toolchain to import: its names are not reachable either
            continue
    for mod in mods:
        for n in dir(mod):
            obj = getattr(mod, n)
            if not n.startswith("_") and callable(obj) and \
                    str(getattr(obj, "__module__", "")).startswith("cutlass.experimental.task_scheduling"):
                names.add(n)
    return names


@pytest.mark.ts
def test_every_public_ts_name_is_modelled_or_listed_as_not_yet():
    names = _ts_public_names()
    assert len(names) > 50
    missing = sorted(n for n in names if n not in UNMODELLED and not hasattr(pg, n))
    assert missing == []


# -- one level down: the attributes of TS's objects ------------------------------------------------

def _answer(obj, attr: str) -> str | None:
    """None where ``obj.attr`` works or fails with the one line (under ``load()`` for an enum's,
    which no mixin reaches); else what it did."""
    from pgstudio.ts._unmodelled import missing_attribute
    try:
        getattr(obj, attr)
        return None
    except DesignError as exc:
        said = str(exc)
    except AttributeError as exc:
        found = missing_attribute(exc)
        if found is None:
            return f"AttributeError: {exc}"
        said = str(found)
    if "pgstudio does not model yet" in said and "\n" not in said and f"{attr} " in said:
        return None
    return said


def test_an_unmodelled_attribute_of_a_modelled_class_says_so_and_is_still_missing(tmp_path):
    from pgstudio.ts import MemoryResource, PipelineGroup, SmemAllocator, load
    r = MemoryResource(name="r")
    with pytest.raises(DesignError, match=r"^ts: MemoryResource.create_pipeline is a TS name pgstudio does not model"):
        r.create_pipeline  # noqa: B018
    with pytest.raises(DesignError, match="MemoryResource.get_consumer_var is a TS name"):
        MemoryResource.get_consumer_var  # noqa: B018 -- the class answers as its objects
    assert not hasattr(r, "create_pipeline") and getattr(SmemAllocator(), "get_typed_ptr", 7) == 7
    with pytest.raises(AttributeError, match="has no attribute 'no_such'") as info:
        r.no_such  # noqa: B018
    assert not isinstance(info.value, DesignError)
    assert PipelineGroup.__getattr__  # the group keeps its member spelling: see test_membership_ts
    script = tmp_path / "clc.py"
    script.write_text("from cutlass.experimental.task_scheduling.enums import PipelineType\nPipelineType.ClcFetchAsync\n")
    with pytest.raises(DesignError, match=r"clc.py, line 2: ts: PipelineType.ClcFetchAsync is a TS name pgstudio") as e:
        load(script)
    assert e.value.code == "ts.unsupported" and "fix the script" not in str(e.value)


def _ts_twin(name: str):
    ts = importlib.import_module("cutlass.experimental.task_scheduling")
    mods = [importlib.import_module("cutlass.pipeline"), ts]
    mods += [importlib.import_module(f"{ts.__name__}.{m}") for m in ("enums", "memory", "pipeline_group", "resources",
                                                                    "schedule_builder", "task", "task_manager")]
    return next((getattr(m, name) for m in mods if hasattr(m, name)), None)


@pytest.mark.ts
def test_every_public_attribute_of_ts_objects_works_or_says_not_modelled_yet(tmp_path):
    """The objects a script builds (canonical exports and the tutorial, run under TS and under
    pgstudio.ts), and the classes and enums pgstudio.ts models: each public attribute of TS's
    object either works on pgstudio's twin or fails with the one line."""
    import inspect
    import runpy
    from pathlib import Path

    from pgstudio import examples
    from pgstudio.ts import to_ts
    from pgstudio.ts._load import ts_imports
    from ts_side import SMALL, run_ts_script
    failures: dict[tuple[str, str], str] = {}
    for name in pg.__all__:  # class-level: methods and enum members
        mine, theirs = getattr(pg, name), _ts_twin(name)
        if not (inspect.isclass(mine) and inspect.isclass(theirs)):
            continue
        for attr in dir(theirs):
            static = inspect.getattr_static(theirs, attr, None)
            if attr.startswith("_") or not (callable(static) or isinstance(static, (staticmethod, classmethod))
                                            or isinstance(getattr(theirs, attr), theirs)):
                continue  # a field's default or a property: asked of the objects below
            if (said := _answer(mine, attr)) is not None:
                failures[(name, attr)] = said
    scripts = [Path(__file__).resolve().parents[2] / "examples" / "ts" / "gemm_mainloop.py"]
    for name in ("merge_gemm", "fork_gemm_act", "fused_merge_copy"):
        scripts.append(tmp_path / f"{name}.py")
        scripts[-1].write_text(to_ts(examples.example(name, **SMALL[name])))
    objects = 0
    for script in scripts:
        ts_globals = run_ts_script(str(script), exhaustive=False)
        with ts_imports():
            pg_globals = runpy.run_path(str(script), run_name="__main__")
        pairs = [(ts_globals[k], pg_globals[k]) for k in ts_globals if not k.startswith("_") and k in pg_globals]
        pairs += list(zip(ts_globals["task_manager"].tasks, pg_globals["task_manager"].tasks))
        for theirs, mine in pairs:
            if inspect.isclass(theirs) or inspect.ismodule(theirs) or inspect.isfunction(theirs) or \
                    not type(theirs).__module__.startswith("cutlass"):
                continue
            objects += 1
            for attr in dir(theirs):
                if not attr.startswith("_") and (said := _answer(mine, attr)) is not None:
                    failures[(type(theirs).__name__, attr)] = said
    assert objects >= 30, objects
    assert not failures, f"{len(failures)} TS attribute(s) neither work nor say so: " + "; ".join(
        f"{k[0]}.{k[1]}: {v}" for k, v in sorted(failures.items())[:8])

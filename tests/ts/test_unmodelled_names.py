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

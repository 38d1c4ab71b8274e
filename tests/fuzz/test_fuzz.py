"""The fuzz suite: design files from hypothesis edits over the schema and from byte-level
mutations of real design files (``pgstudio example NAME``) go through load, validate, layout,
simulate, check, emit (sm_90a and sm_100a), render and the command line (``pgstudio.cli.main``).
Every stage must end in a result or a clear error -- never a traceback, never past its time limit
(``fuzz_harness``).  The outcome counts are printed at the end of the run."""

from __future__ import annotations

import copy
import json
import random
import zlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuzz_harness as H

SEEDS = H.seed_files()
SEED_OBJECTS = {name: json.loads(data) for name, data in SEEDS.items()}
NAMES = sorted({n for obj in SEED_OBJECTS.values() for n in H.names_in(obj)})

#: Inputs per source (CI: over 2,000 inputs through the stages, about a minute and a half on 2 cores).
SCHEMA_INPUTS = 820
BYTE_INPUTS = 920
CLI_SCHEMA_INPUTS = 120
CLI_BYTE_INPUTS = 120

FUZZ = settings(max_examples=SCHEMA_INPUTS, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def schema_files(draw) -> tuple[str, bytes]:
    """A canonical design file with one to four edits at paths of its schema (``fuzz_harness.
    schema_edit``).  Hypothesis draws the seed of the edits: its own choices favour the first of
    every list, which would edit the same few fields again and again."""
    name = draw(st.sampled_from(sorted(SEED_OBJECTS)))
    rng = random.Random(draw(st.integers(0, 2 ** 32 - 1)))
    obj = copy.deepcopy(SEED_OBJECTS[name])
    for _ in range(rng.randint(1, 4)):
        H.schema_edit(obj, rng, NAMES)
    return name, json.dumps(obj).encode()


@FUZZ
@given(schema_files())
def test_schema_edits_never_crash_or_hang(case):
    name, data = case
    with H.no_new_failures():
        H.api_stages("schema", data, f"schema edit of {name}", render=zlib.crc32(data) % 12 == 0)


def test_byte_mutations_never_crash_or_hang():
    rng = random.Random(20261201)
    names = sorted(SEEDS)
    with H.no_new_failures():
        for i in range(BYTE_INPUTS):
            name = names[i % len(names)]
            H.api_stages("bytes", H.mutate(SEEDS[name], rng), f"byte mutation #{i} of {name}", render=i % 12 == 0)


@settings(FUZZ, max_examples=CLI_SCHEMA_INPUTS)
@given(schema_files())
def test_the_command_line_on_schema_edits_says_one_line_or_succeeds(tmp_path_factory, case):
    name, data = case
    stages = list(H.COMMANDS) if zlib.crc32(data) % 6 == 0 else [s for s in H.COMMANDS if s != "cli render"]
    with H.no_new_failures():
        H.cli_stages("cli schema", data, tmp_path_factory.mktemp("cli"), f"schema edit of {name}", stages)


def test_the_command_line_on_byte_mutations_says_one_line_or_succeeds(tmp_path):
    rng = random.Random(7)
    names = sorted(SEEDS)
    with H.no_new_failures():
        for i in range(CLI_BYTE_INPUTS):
            name = names[i % len(names)]
            stages = list(H.COMMANDS) if i % 6 == 0 else [s for s in H.COMMANDS if s != "cli render"]
            H.cli_stages("cli bytes", H.mutate(SEEDS[name], rng), tmp_path / str(i), f"byte mutation #{i} of {name}",
                         stages)


def test_the_unmutated_files_succeed_everywhere(tmp_path):
    """The harness itself: real files pass every stage (a harness that refuses everything would
    find nothing)."""
    before = dict(H.OUTCOMES)
    with H.no_new_failures():
        for name, data in SEEDS.items():
            H.api_stages("seed", data, name, render=name.startswith("merge_copy"))
            H.cli_stages("cli seed", data, tmp_path / name, name, ["cli check", "cli emit", "cli trace --simulate"])
    new = {k: v - before.get(k, 0) for k, v in H.OUTCOMES.items() if v != before.get(k, 0)}
    assert all(o == "ok" for (src, stage, o) in new if stage in ("load", "validate", "layout", "simulate", "check", "render",
                                                                "cli check", "cli trace --simulate")), new
    assert new[("seed", "emit", "ok")] >= 2 * len([n for n in SEEDS if "copy" in n])  # streaming designs build

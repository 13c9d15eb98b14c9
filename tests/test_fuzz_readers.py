"""Every registered reader on mutated copies of valid files: it opens what is valid, or raises RunError with
the file named in one line; never another exception, never a hang, never a jump in memory.

The sources come from the registry, so a new reader is fuzzed as soon as it registers; a reader that no
seed file exercises fails here (add a seed to tests/fuzz/seeds.py), with or without the real runs: every reader
of files has seeds the project makes itself (its sample runs and TRL corpus, files written by the libraries).
CI runs GRPOSCOPE_FUZZ_CASES cases per reader (300 by default) with records of 2,000 keys instead of 20,000
(the diagnosis of a 20,000-column run takes seconds); `make fuzz` runs 10,000 with the full width.
"""

from __future__ import annotations

import os

import pytest
from fuzz import mutators
from fuzz.harness import fuzz_source, report
from fuzz.mutators import DEEP, MUTATORS, mutate
from fuzz.seeds import NO_FILES, SAMPLE_RUNS, TRL_CORPUS, default_roots, find_seeds, make_generated

from collectors import sources

CASES = int(os.environ.get("GRPOSCOPE_FUZZ_CASES", "300"))
mutators.WIDE_KEYS = 2_000
sources._load_readers()
SOURCE_NAMES = sorted(sources.SOURCES)


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return find_seeds(default_roots(tmp_path_factory.mktemp("generated")))


@pytest.mark.timeout(600)
@pytest.mark.parametrize("source", SOURCE_NAMES)
def test_reader_survives_mutated_files(source, seeds, tmp_path):
    if source in NO_FILES:
        pytest.skip(NO_FILES[source])
    if not seeds.get(source):
        pytest.fail(f"no seed file is recognised by {source!r}: add one the project makes to tests/fuzz/seeds.py")
    tally = fuzz_source(source, seeds[source], CASES, tmp_path)
    assert tally.failures == 0, report(tally)
    assert tally.counts["opened"] + tally.counts["refused"] == CASES


def test_readers_load_for_fuzzing():
    assert sources.reader_problems() == []


def test_every_reader_of_files_has_a_seed_the_project_makes(tmp_path):
    """Without ../shared (the real runs), the sample runs, the TRL corpus and the files made by the libraries seed
    every reader that reads a file."""
    made = find_seeds([SAMPLE_RUNS, TRL_CORPUS, make_generated(tmp_path)])
    assert [s for s in SOURCE_NAMES if s not in NO_FILES and not made.get(s)] == []


def test_mutations_are_reproducible_and_each_changes_the_file():
    import random

    data = b'{"step": 1, "data": {"loss": 0.5, "reward": [1, 2]}}\n{"step": 2, "data": {"loss": 0.25}}\n'
    assert mutate(data, random.Random("x")) == mutate(data, random.Random("x"))
    for name, fn in MUTATORS.items():
        changed = sum(fn(data, random.Random(i)) != data for i in range(20))
        assert changed >= 15, name
    deep = MUTATORS["deep_nesting"](data, random.Random(0))
    assert deep.count(b"[") >= DEEP


def test_a_case_that_kills_its_process_costs_that_case_not_the_run():
    """harness.run_isolated with a worker that really aborts (SIGABRT) at case 2 of cases 0-4: the slice is halved
    in fresh processes until case 2 stands alone; it is counted as an abort and named, the four others open."""
    from functools import partial

    from fuzz.aborting import slice_aborting_at
    from fuzz.harness import run_isolated

    seeds = ["a", "b", "c"]
    t = run_isolated(partial(slice_aborting_at, 2), ("jsonl", seeds, 0, 5, 1.0))
    assert dict(t.counts) == {"opened": 4, "abort": 1}
    assert dict(t.where) == {"the process died (case 2)": 1}
    assert t.examples["the process died (case 2)"] == "seed c, case 2"  # seeds cycle: case 2 -> seeds[2 % 3]
    assert dict(run_isolated(partial(slice_aborting_at, 99), ("jsonl", seeds, 0, 5, 1.0)).counts) == {"opened": 5}

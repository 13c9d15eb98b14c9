"""A slice worker that kills its own process at one case, as a C++ abort inside a reader does: what
tests/collectors/test_fuzz_readers.py gives harness.run_isolated to show that such a case costs itself, not the run."""

from __future__ import annotations

import os
import resource

from helpers.fuzz.harness import Tally


def slice_aborting_at(case: int, job: tuple) -> Tally:
    """Cases first..first+n-1 of job all open, unless `case` is among them: then SIGABRT, no core file."""
    source, _seeds, first, n, _limit_s = job
    if first <= case < first + n:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.abort()
    t = Tally(source)
    t.counts["opened"] += n
    return t

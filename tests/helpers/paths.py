"""The repository's folders as every test finds them: one definition instead of `parents[N]` in each file, which
broke each time a test moved."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # tests/helpers/paths.py -> the repository
SHARED = REPO.parent / "shared"  # ../shared: data kept beside the project, never in it
REAL_RUNS = SHARED / "fixtures" / "real-runs"
SAMPLE_RUNS = REPO / "sample_runs"
FIXTURES = REPO / "tests" / "fixtures"

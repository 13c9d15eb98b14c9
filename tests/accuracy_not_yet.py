"""What the diagnosis does not get right yet on the real runs (../shared/fixtures/real-runs), and why.

Each entry marks a test of tests/test_diagnosis_accuracy.py xfail(strict=True): a fix shows as an XPASS, and the
entry goes in the same change. The lead keeps this file (measured 2026-12-04 with scripts/score_diagnosis.py).
"""

# Real runs the diagnosis misses, by run name.
NOT_YET: dict[str, str] = {}

# Goals over the whole real corpus not met yet (issue 24: recall and precision >= 0.9, no false critical).
GOALS_NOT_YET: dict[str, str] = {}

"""The "as others name it" shapes (benchmarks/as_others_name_it.py): each writes a hand-made run in its shape, and
the readers read back the same reward, eval and steps (the benchmark's table rests on this)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from benchmarks.as_others_name_it import SHAPES, baseline, findings
from collectors.sources import open_runs

FRAME = pd.DataFrame({"step": [1, 2, 3, 4], "reward/mean": [0.1, 0.2, 0.3, 0.4], "reward/std": [0.3, 0.3, 0.2, 0.1],
                      "loss/total": [1.0, 0.9, 0.8, 0.7], "eval/reward_mean": [math.nan, 0.5, math.nan, 0.6]})


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_reads_back_the_same_numbers(shape, tmp_path):
    runs = open_runs(str(SHAPES[shape](FRAME, tmp_path)))
    assert len(runs) == 1
    m = runs[0].metrics
    assert m["step"].tolist() == [1, 2, 3, 4]
    assert m["reward/mean"].tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4])
    if shape != "markdown":  # the console shape writes the reward's std under no TRL key: left as logged
        assert m["reward/std"].tolist() == pytest.approx([0.3, 0.3, 0.2, 0.1])
    assert m["eval/reward_mean"].dropna().tolist() == pytest.approx([0.5, 0.6])


def test_findings_of_the_baseline_are_a_set_of_rules_and_severities(tmp_path):
    got = findings(baseline(FRAME, tmp_path))
    assert all(sev in ("warning", "critical") for _, sev in got)

"""Generic JSONL / CSV reader: one row per step, --map overrides, family keys, bad lines named."""

from __future__ import annotations

import json
import math

from collectors.readers.generic import GenericRun
from collectors.sources import detect_source, open_run


def test_csv_with_map_and_family_keys(tmp_path):
    f = tmp_path / "log.csv"
    f.write_text("global_step,my_reward,train/kl,junk\n1,0.5,0.1,a\n2,0.7,,3\n")
    assert detect_source(f) == "generic"
    run = GenericRun(f, {"my_reward": "reward/mean"})
    m = run.metrics
    assert list(m["step"]) == [1, 2] and list(m["reward/mean"]) == [0.5, 0.7]
    assert m["policy/kl_ref"].iloc[0] == 0.1 and math.isnan(m["policy/kl_ref"].iloc[1])
    assert any("line 2: non-numeric junk" in str(p) for p in run.problems)
    with f.open("a") as fh:
        fh.write("3,0.9,0.2,4\n")
    assert run.refresh() == 1 and run.last_step == 3


def test_jsonl_duplicates_truncated_and_no_step(tmp_path):
    f = tmp_path / "log.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in [{"step": 1, "reward": 1.0}, {"step": 2, "reward": 2.0},
                                                         {"step": 2, "reward": 3.0}, {"loss": 1}])
                 + '{"step": 3, "rew\n')
    run = open_run(f)
    m = run.metrics
    assert list(m["step"]) == [1, 2] and m["reward/mean"].iloc[1] == 3.0  # the last write of a step wins
    msgs = " ".join(map(str, run.problems))
    assert "log.jsonl: 1 step(s) logged more than once (2); the last write is kept" in msgs
    assert "line 4: no integer step" in msgs and "line 5: not JSON" in msgs and "log.jsonl" in msgs

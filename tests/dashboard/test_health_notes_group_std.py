"""Issue 39's smaller items (10): a healthy run with warnings is no "ok: 2 warning(s)"; reader notes are notes, not
problems; the Samples page's group std is the sample std its advantages divide by."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard import samples_view
from dashboard.data import Health
from dashboard.diagnosis.i18n import label
from dashboard.text import health_label


def test_a_healthy_run_with_warnings_says_they_are_to_read():
    assert health_label(Health("healthy", warning=2)) == "🟡 healthy, to read: 2 warning(s)"
    assert health_label(Health("healthy", warning=2), lang="zh").startswith("🟡 健康，值得一读")
    assert health_label(Health("healthy")) == "✅ ok"


def test_reader_notes_are_notes():
    assert label("read_problems", "en", n=1).startswith("1 note(s) from reading this run")
    assert "问题" not in label("read_problems", "zh", n=1)


def test_the_group_std_is_the_sample_std_the_advantage_uses():
    # rewards 0, 1, 0, 1: mean 0.5; squared deviations 4 x 0.25 = 1; population std sqrt(1/4) = 0.5, sample std
    # sqrt(1/3) = 0.577 (grpo_core's group advantage divides by it: (1 - 0.5) / 0.577 = 0.866)
    s = pd.DataFrame({"step": [1] * 5, "group": [0, 0, 0, 0, 1], "sample": [0, 1, 2, 3, 0],
                      "reward": [0.0, 1.0, 0.0, 1.0, 1.0], "completion": ["a"] * 5})
    out = samples_view.with_group_stats(s)
    assert np.allclose(out["group_reward_std"][:4], np.sqrt(1 / 3))
    assert out["group_reward_std"].iloc[4] == 0.0  # one response: no spread

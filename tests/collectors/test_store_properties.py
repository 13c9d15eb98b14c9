"""Property: whatever finite/NaN/inf floats, ints, bools and late-appearing keys are logged, they read back."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors import RunWriter, load_run

KEYS = ["reward/mean", "policy/kl_ref", "custom/a", "custom/b_x", "eval/pass_rate"]
values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**53), max_value=2**53),  # exact in float64
    st.booleans(),
)
step_dicts = st.lists(st.dictionaries(st.sampled_from(KEYS), values, max_size=len(KEYS)), min_size=1, max_size=40)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=step_dicts, flush_every=st.integers(min_value=1, max_value=9))
def test_any_metric_dicts_round_trip(rows, flush_every):
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "r"
        with RunWriter(run_dir, flush_every=flush_every, handle_signals=False) as w:
            for step, row in enumerate(rows):
                w.log_step(step, row)
        m = load_run(run_dir).metrics
    assert m["step"].tolist() == list(range(len(rows)))
    for step, row in enumerate(rows):
        for key in KEYS:
            if key in row:
                assert _same(float(m.loc[step, key]), float(row[key])), (step, key)
            elif key in m.columns:
                assert math.isnan(m.loc[step, key])  # absent is null, never a made-up zero

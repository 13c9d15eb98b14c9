"""verifier_suspect's matching (dashboard/diagnosis/rules/samples.py): a hand-worked case, and the fast code equal to
the plain per-row loop it replaced on every sample run and on awkward frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from collectors import open_run
from dashboard.diagnosis.rules.policy import same_text_share
from dashboard.diagnosis.rules.samples import (
    SAME_ANSWER,
    arithmetic_answer,
    last_number,
    normalise,
    suspects,
)

SAMPLE_RUNS = sorted(p for p in (Path(__file__).resolve().parents[1] / "sample_runs").iterdir() if p.is_dir())


def loop_suspects(s: pd.DataFrame) -> pd.DataFrame:
    """The rule as first written: one row at a time."""
    s = s.assign(norm=s["completion"].map(normalise))
    paid = s[s["reward"] > 0].groupby("prompt")["norm"].agg(set)
    zero = s[s["reward"] == 0]
    why = []
    for p, c, n in zip(zero["prompt"], zero["completion"], zero["norm"]):
        if n and n in paid.get(p, ()):
            why.append(SAME_ANSWER)
            continue
        want = arithmetic_answer(p)
        why.append(f"the prompt's arithmetic gives {want}, which the response answers"
                   if want is not None and last_number(c) == want else "")
    zero = zero.assign(why=pd.Series(why, index=zero.index, dtype="str"))  # str even when empty
    return zero[zero["why"] != ""].drop(columns="norm")


def frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["step", "group", "prompt", "completion", "reward"])


def test_suspects_by_hand():
    s = frame([
        (0, 0, "3+4=", "7", 1.0),          # paid
        (0, 0, "3+4=", " 7. ", 0.0),       # same answer once normalised: suspect (consistency)
        (0, 0, "3+4=", "8", 0.0),          # wrong, and not the arithmetic: not suspect
        (0, 1, "6 x 7 =", "so 42", 0.0),   # arithmetic: suspect
        (0, 1, "6 x 7 =", "42 or 41", 0.0),  # last number 41: not suspect
        (0, 2, "name a colour", "", 0.0),  # empty answer never matches
        (0, 2, "name a colour", "", 1.0),
        (0, 3, "1-5=", "-4", np.nan),      # no reward: neither paid nor zero
    ])
    got = suspects(s)
    assert list(got.index) == [1, 3]
    assert list(got["why"]) == [SAME_ANSWER, "the prompt's arithmetic gives 42, which the response answers"]
    assert "norm" not in got


def awkward_frames() -> list[pd.DataFrame]:
    rng = np.random.default_rng(0)
    texts = ["7", " 7 ", "7.", "SEVEN", "seven!", "7\u3000", "\xa07", "x = 7", "8", None, np.nan, 7, "1.5", "-3"]
    prompts = ["3+4=", "3 + 4 =", "10-13=", "2×3=", "what?", None, np.nan, 12]
    out = []
    for n in (0, 1, 40, 400):
        out.append(pd.DataFrame({
            "step": rng.integers(0, 4, n), "group": rng.choice([0, 1, 2, 3, np.nan], n),
            "prompt": rng.choice(np.array(prompts, dtype=object), n),
            "completion": rng.choice(np.array(texts, dtype=object), n),
            "reward": rng.choice([0.0, 1.0, 0.5, -0.0, np.nan], n)}))
    return out


@pytest.mark.parametrize("i", range(4))
def test_suspects_equal_the_loop_on_awkward_frames(i):
    s = awkward_frames()[i]
    pd.testing.assert_frame_equal(suspects(s), loop_suspects(s))


@pytest.mark.parametrize("run", SAMPLE_RUNS, ids=[p.name for p in SAMPLE_RUNS])
def test_fast_code_equals_the_loop_on_every_sample_run(run):
    s = open_run(run).samples()
    if s is None:
        pytest.skip("no samples")
    # a broken verifier: the same samples with every reward zeroed, so the arithmetic match has work to do
    for frame_ in (s, s.assign(reward=0.0), s.assign(reward=np.where(s["reward"] > 0, 0.0, 1.0))):
        pd.testing.assert_frame_equal(suspects(frame_), loop_suspects(frame_))


def groupby_same_text_share(s: pd.DataFrame) -> tuple[float, int] | None:
    """The plain pandas reading of identical_group_frac: groupby (step, group), nunique of the texts."""
    s = s[s["step"].notna() & s["group"].notna()]
    if not len(s):
        return None
    s = s[s["step"].isin(sorted(s["step"].unique())[-20:])]
    per = s.groupby(["step", "group"])["completion"].nunique(dropna=False)
    return float((per == 1).mean()), len(per)


def test_same_text_share_by_hand():
    # step 0: group 0 all "a" (one text), group 1 "a"/"b"; step 1: group 0 None/None (one text: missing)
    s = pd.DataFrame({"step": [0, 0, 0, 0, 1, 1], "group": [0, 0, 1, 1, 0, 0],
                      "completion": ["a", "a", "a", "b", None, None]})
    assert same_text_share(s) == (2 / 3, 3)


@pytest.mark.parametrize("i", range(1, 4))
def test_same_text_share_equals_the_groupby_on_awkward_frames(i):
    s = awkward_frames()[i]
    assert same_text_share(s) == groupby_same_text_share(s)


@pytest.mark.parametrize("run", SAMPLE_RUNS, ids=[p.name for p in SAMPLE_RUNS])
def test_same_text_share_equals_the_groupby_on_every_sample_run(run):
    s = open_run(run).samples()
    if s is None:
        pytest.skip("no samples")
    assert same_text_share(s) == pytest.approx(groupby_same_text_share(s))


def groupby_zero_variance_examples(s: pd.DataFrame, step: int, k: int = 3) -> list[dict]:
    """The plain pandas reading: groupby group at the last step <= `step`, nunique of the rewards."""
    s = s[s["step"] <= step]
    s = s[s["step"] == s["step"].max()]
    out = []
    for g, rows in s.groupby("group", sort=True):
        if rows["reward"].nunique(dropna=False) == 1:
            ex = {"step": int(rows["step"].iloc[0]), "group": int(g), "reward": float(rows["reward"].iloc[0]),
                  "responses": len(rows)}
            for col in ("prompt", "completion"):
                if col in rows and rows[col].notna().any():
                    ex[col] = str(rows[col].dropna().iloc[0])[:200]
            out.append(ex)
        if len(out) >= k:
            break
    return out


def _examples(s: pd.DataFrame, step: int) -> list[dict]:
    from types import SimpleNamespace

    from dashboard.diagnosis.rules.reward import zero_variance_examples

    return zero_variance_examples(SimpleNamespace(samples=lambda: s), step)


def test_zero_variance_examples_by_hand():
    s = pd.DataFrame({"step": [3, 3, 3, 3, 3, 3, 5], "group": [2, 2, 0, 0, 1, 1, 0],
                      "reward": [1.0, 1.0, 0.0, 1.0, np.nan, np.nan, 0.0],
                      "prompt": ["p2", "p2", "p0", "p0", "p1", "p1", "q"], "completion": [None, "b", "c", "d", "e", "f", "g"]})
    # at step 4 the last step is 3: group 0 has spread; group 1 (both rewards missing) and group 2 (1, 1) have none
    got = _examples(s, 4)
    assert [(e["group"], e["responses"]) for e in got] == [(1, 2), (2, 2)]
    assert got[1]["completion"] == "b" and got[1]["reward"] == 1.0  # the first text there is, not None


@pytest.mark.parametrize("run", SAMPLE_RUNS, ids=[p.name for p in SAMPLE_RUNS])
def test_zero_variance_examples_equal_the_groupby_on_every_sample_run(run):
    s = open_run(run).samples()
    if s is None or not len(s):
        pytest.skip("no samples")
    for step in (int(s["step"].min()), int(s["step"].median()), int(s["step"].max())):
        for frame_ in (s, s.assign(reward=0.0)):
            got, want = _examples(frame_, step), groupby_zero_variance_examples(frame_, step)
            assert got == want

"""The rules that read the samples frame (verifier_suspect, low_diversity's same_text_share, zero_variance_groups'
examples): hand-worked cases, and the array code equal to the plain pandas reading (per-row loop, groupby, filtered
frame) on every sample run and on awkward frames: missing columns, missing steps, groups, rewards and texts,
texts that are not strings, object / float / int / str step and group columns, empty frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers.paths import REPO

from collectors import open_run
from dashboard.diagnosis import checks as C
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.rules.policy import identical_group_frac, same_text_share
from dashboard.diagnosis.rules.reward import zero_variance_examples
from dashboard.diagnosis.rules.samples import (
    LAST_STEPS,
    MIN_EXAMPLES,
    SAME_ANSWER,
    SUSPECT_CRIT,
    SUSPECT_WARN,
    arithmetic_answer,
    last_number,
    normalise,
    suspects,
    verifier_suspect,
)

SAMPLE_RUNS = sorted(p for p in (REPO / "sample_runs").iterdir() if p.is_dir())


def loop_suspects(s: pd.DataFrame) -> pd.DataFrame:
    """The rule as first written: one row at a time (a reward that is not a number is none)."""
    s = s.assign(norm=s["completion"].map(normalise))
    reward = pd.to_numeric(s["reward"], errors="coerce")
    paid = s[reward > 0].groupby("prompt")["norm"].agg(set)
    zero = s[reward == 0]
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


def test_normalise_equals_the_regex_reading_on_every_whitespace_character():
    import re

    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace() or re.fullmatch(r"\s", chr(c))]
    assert len(spaces) > 20  # tab, newline, ..., no-break space, ideographic space
    for ch in spaces + ["a", ".", "。", "!"]:
        for t in (f"a{ch}b", f"{ch}A{ch}{ch}b{ch}", ch, f"x .{ch}", f"7{ch}.", f"{ch}{ch}"):
            assert normalise(t) == re.sub(r"\s+", " ", t).strip().lower().rstrip(".!。")


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


def _with_missing(x: np.ndarray, rng: np.random.Generator, missing, share: float = 0.1) -> np.ndarray:
    x = x.astype(object if missing is None else x.dtype if x.dtype.kind == "f" else np.float64)
    x[rng.random(len(x)) < share] = missing
    return x


def awkward_kinds() -> dict[str, pd.DataFrame]:
    """Frames of every column kind a source may hand over, each with enough reward-0 responses that look right
    for verifier_suspect to fire and enough same-reward and same-text groups for the other two to find some."""
    rng = np.random.default_rng(1)
    n = 400
    # groups of about 3 responses, half of the texts one answer: some groups with one text and some with one reward
    base = awkward_frames()[3].assign(
        group=rng.choice(np.r_[np.arange(40.0), np.nan], n), completion=np.where(
            rng.random(n) < 0.5, "7", rng.choice(np.array(["7.", "8", None, np.nan, 7, "x = 7"], dtype=object), n)))
    many_steps = base.assign(step=rng.integers(0, 60, n), group=rng.integers(0, 3, n))  # > 50 and > 20 steps
    out = {
        "empty": awkward_frames()[0], "one row": awkward_frames()[1], "small": awkward_frames()[2], "base": base,
        "many steps": many_steps,
        "many steps, NaN steps": many_steps.assign(step=_with_missing(many_steps["step"].to_numpy(), rng, np.nan)),
        "float steps with NaN": base.assign(step=_with_missing(base["step"].to_numpy(), rng, np.nan)),
        "half steps": base.assign(step=base["step"] / 2),
        "object steps": base.assign(step=base["step"].astype(object)),
        "object steps with None": base.assign(step=_with_missing(base["step"].to_numpy(), rng, None)),
        "int groups": base.assign(group=rng.integers(0, 40, n)),
        "object groups with None": base.assign(group=_with_missing(rng.integers(0, 40, n), rng, None)),
        "str groups": base.assign(group=pd.Series(rng.choice(np.r_[np.arange(40).astype(str), None], n), dtype="str")),
        "int rewards": base.assign(reward=rng.integers(0, 2, n)),
        "bool rewards": base.assign(reward=rng.random(n) < 0.3),
        "object rewards with None": base.assign(reward=_with_missing(rng.integers(0, 2, n).astype(float), rng, None)),
        "str texts": base.assign(prompt=base["prompt"].astype("str"), completion=base["completion"].astype("str")),
        "numbers and bools as texts": base.assign(
            completion=rng.choice(np.array([1, 1.0, True, "1", 0, False, 7, "7"], dtype=object), n)),
        "no texts": base.assign(completion=None),
        "all rewards missing": base.assign(reward=np.nan),
        "all groups missing": base.assign(group=np.nan),
        "one step, all zero": base.assign(step=3, reward=0.0),
    }
    return out


KINDS = awkward_kinds()


class D:
    """The one thing these rules read of a RunData."""

    def __init__(self, s: pd.DataFrame | None):
        self.s = s

    def samples(self) -> pd.DataFrame | None:
        return self.s

    def latest_samples(self, step: int, columns: tuple[str, ...] | None = None) -> pd.DataFrame | None:
        from dashboard.diagnosis.context import latest_rows

        return latest_rows(self.s, step, columns)

    def sample_columns(self, *names: str) -> dict[str, np.ndarray] | None:
        from dashboard.diagnosis.context import frame_columns

        return frame_columns(self.s, names)


def outcome(fn, *args):
    """repr of what fn returns (types and NaN included). An exception is not an outcome: it propagates and fails the
    test, so two readings that raise alike never count as agreeing."""
    return repr(fn(*args))


@pytest.mark.parametrize("i", range(4))
def test_suspects_equal_the_loop_on_awkward_frames(i):
    s = awkward_frames()[i]
    pd.testing.assert_frame_equal(suspects(s), loop_suspects(s))


@pytest.mark.parametrize("kind", list(KINDS))
def test_suspects_equal_the_loop_on_every_column_kind(kind):
    s = KINDS[kind]
    pd.testing.assert_frame_equal(suspects(s), loop_suspects(s))


@pytest.mark.parametrize("run", SAMPLE_RUNS, ids=[p.name for p in SAMPLE_RUNS])
def test_fast_code_equals_the_loop_on_every_sample_run(run):
    s = open_run(run).samples()
    assert s is not None and len(s), "every sample run keeps samples (test_sample_runs)"
    # a broken verifier: the same samples with every reward zeroed, so the arithmetic match has work to do
    for frame_ in (s, s.assign(reward=0.0), s.assign(reward=np.where(s["reward"] > 0, 0.0, 1.0))):
        pd.testing.assert_frame_equal(suspects(frame_), loop_suspects(frame_))


def frame_verifier_suspect(s: pd.DataFrame | None):
    """verifier_suspect as the plain pandas reading: filter the frame, the per-row loop, examples from to_dict."""
    if s is None or not {"prompt", "completion", "reward", "step"} <= set(s.columns) or s["completion"].isna().all():
        return NotJudged("verifier_suspect", "the run has no sample texts (prompt, completion, reward)")
    steps = np.sort(s["step"].dropna().unique())[-LAST_STEPS:]
    s = s[(s["step"].isin(steps) | s["step"].isna()) & s["completion"].notna() & s["prompt"].notna()]
    zero = int((s["reward"] == 0).sum())
    if zero == 0:
        return []
    bad = loop_suspects(s)
    share = len(bad) / zero
    if len(bad) < MIN_EXAMPLES or share < SUSPECT_WARN:
        return []
    severity = "critical" if share >= SUSPECT_CRIT else "warning"
    where = f"of the last {len(steps)} steps" if len(steps) else "(none carries a step)"
    ev = [evidence("samples", share, SUSPECT_WARN, f"over {zero} reward-0 responses {where}",
                   f"{len(bad)} of {zero} reward-0 responses ({fmt(100 * share)}%) look correct by a looser match")]
    cols = [c for c in ("step", "group", "prompt", "completion", "reward", "why") if c in bad]
    # one example per (prompt, response), compared as text
    distinct = ~pd.DataFrame({"p": bad["prompt"].map(str), "c": bad["completion"].map(str)}).duplicated()
    examples = [{k: (str(v)[:200] if isinstance(v, str) else v) for k, v in row.items()}
                for row in bad[cols][distinct.to_numpy()].head(5).to_dict("records")]
    examples = [{k: (int(v) if isinstance(v, (np.integer,)) else float(v) if isinstance(v, np.floating) else v)
                 for k, v in e.items()} for e in examples]
    return [finding("verifier_suspect", severity, "Reward-0 responses look correct: the verifier may reject right "
                    "answers", (int(steps[0]), int(steps[-1])) if len(steps) else None, ev, (C.VERIFIER,),
                    metrics=("reward/mean",), examples=examples)]


def test_verifier_suspect_by_hand():
    # five reward-0 answers to "3+4=" that say 7, one paid: 5 of 6 reward-0 responses look right (critical)
    s = frame([(1, 0, "3+4=", "7", 1.0)] + [(1, 0, "3+4=", t, 0.0) for t in ("7.", " 7", "so 7", "x = 7", "7!")]
              + [(2, 1, "2+2=", "5", 0.0)])
    (f,) = verifier_suspect(D(s))
    assert f.severity == "critical" and f.step_range == (1, 2) and f.evidence[0].value == 5 / 6
    assert [(e["step"], e["group"], e["completion"], e["reward"], e["why"]) for e in f.examples] == [
        (1, 0, "7.", 0.0, SAME_ANSWER), (1, 0, " 7", 0.0, SAME_ANSWER),
        (1, 0, "so 7", 0.0, "the prompt's arithmetic gives 7, which the response answers"),
        (1, 0, "x = 7", 0.0, "the prompt's arithmetic gives 7, which the response answers"),
        (1, 0, "7!", 0.0, SAME_ANSWER)]
    assert type(f.examples[0]["step"]) is int and type(f.examples[0]["reward"]) is float


def test_verifier_suspect_fires_on_samples_with_missing_steps():
    """Responses without a step count with the recent ones, and the finding's range is that of the steps there
    are (a missing step once made the rule fail: int(NaN)); with no step at all, the finding has no range."""
    rows = [(1, 0, "3+4=", "7", 1.0)] + [(s, 0, "3+4=", t, 0.0) for s, t in
                                         ((np.nan, "7."), (2, " 7"), (np.nan, "so 7"), (3, "x = 7"), (None, "7!"))]
    for steps in (None, object):
        s = frame(rows)
        if steps is object:
            s["step"] = pd.Series([r[0] for r in rows], dtype=object).where(s["step"].notna(), None)
        (f,) = verifier_suspect(D(s))
        assert f.severity == "critical" and f.step_range == (1, 3) and f.evidence[0].value == 1.0
        assert "of the last 3 steps" in f.evidence[0].statistic
    (f,) = verifier_suspect(D(frame(rows).assign(step=np.nan)))
    assert f.step_range is None and "(none carries a step)" in f.evidence[0].statistic


@pytest.mark.parametrize("kind", list(KINDS))
def test_verifier_suspect_equals_the_frame_reading_on_every_column_kind(kind):
    s = KINDS[kind]
    for frame_ in (s, s.drop(columns="group"), s.drop(columns="step"), s.drop(columns="prompt")):
        assert outcome(verifier_suspect, D(frame_)) == outcome(frame_verifier_suspect, frame_)


def test_the_awkward_kinds_make_verifier_suspect_fire():
    fired = [k for k, s in KINDS.items() if outcome(frame_verifier_suspect, s).startswith("[Finding")]
    assert len(fired) >= 12  # the comparison above is about findings and their examples, not only "nothing"


@pytest.mark.parametrize("run", SAMPLE_RUNS, ids=[p.name for p in SAMPLE_RUNS])
def test_verifier_suspect_equals_the_frame_reading_on_every_sample_run(run):
    s = open_run(run).samples()
    for frame_ in (s,) if s is None else (s, s.assign(reward=0.0), s.assign(reward=np.where(s["reward"] > 0, 0.0, 1.0))):
        assert outcome(verifier_suspect, D(frame_)) == outcome(frame_verifier_suspect, frame_)


def groupby_same_text_share(s: pd.DataFrame, last_steps: int = 20) -> tuple[float, int] | None:
    """The plain pandas reading of identical_group_frac: groupby (step, group), nunique of the texts."""
    s = s[s["step"].notna() & s["group"].notna()]
    if not len(s):
        return None
    s = s[s["step"].isin(sorted(s["step"].unique())[-last_steps:])]
    per = s.groupby(["step", "group"])["completion"].nunique(dropna=False)
    return float((per == 1).mean()), len(per)


def share(s: pd.DataFrame, last_steps: int = 20) -> tuple[float, int] | None:
    text_code = pd.factorize(s["completion"].to_numpy(dtype=object), use_na_sentinel=False)[0]
    return same_text_share(s["step"].to_numpy(), s["group"].to_numpy(), text_code, last_steps)


def test_same_text_share_by_hand():
    # step 0: group 0 all "a" (one text), group 1 "a"/"b"; step 1: group 0 None/None (one text: missing)
    s = pd.DataFrame({"step": [0, 0, 0, 0, 1, 1], "group": [0, 0, 1, 1, 0, 0],
                      "completion": ["a", "a", "a", "b", None, None]})
    assert share(s) == (2 / 3, 3)
    assert share(s, last_steps=1) == (1.0, 1)  # step 1 only
    assert share(s.assign(group=[0, 0, 1, 1, np.nan, np.nan])) == (0.5, 2)  # no group: not counted
    assert share(s.assign(step=np.nan)) is None


@pytest.mark.parametrize("i", range(1, 4))
def test_same_text_share_equals_the_groupby_on_awkward_frames(i):
    s = awkward_frames()[i]
    assert share(s) == groupby_same_text_share(s)


@pytest.mark.parametrize("kind", list(KINDS))
def test_same_text_share_equals_the_groupby_on_every_column_kind(kind):
    s = KINDS[kind]
    for last_steps in (1, 3, 20):
        assert outcome(share, s, last_steps) == outcome(groupby_same_text_share, s, last_steps)


@pytest.mark.parametrize("kind", list(KINDS))
def test_identical_group_frac_reads_the_columns_it_needs(kind):
    s = KINDS[kind]
    want = None if s["completion"].isna().all() else groupby_same_text_share(s)
    assert outcome(identical_group_frac, D(s)) == outcome(lambda: want)
    for c in ("step", "group", "completion"):
        assert identical_group_frac(D(s.drop(columns=c))) is None
    assert identical_group_frac(D(None)) is None


AWKWARD_LISTS = {
    "ints": [3, 1, 2], "ints and floats": [1, 2.5, 0], "ints and None": [1, None, 3], "floats and None": [0.5, None],
    "NaN and inf": [float("nan"), float("inf"), 1.0], "all None": [None, None], "bools": [True, False],
    "bools and None": [True, None], "bools and ints": [True, 0], "texts": ["a", "b "], "texts and None": ["a", None],
    "texts and NaN": ["a", float("nan")], "ints and texts": [1, "a"], "past int64": [2 ** 63, 1],
    "past uint64": [2 ** 70, 1], "numpy ints": [np.int64(1), 2], "numpy floats": [np.float32(0.5), 1.0],
    "chat messages": [[{"role": "assistant", "content": "7"}], [{"role": "assistant", "content": "8"}]],
    "lists of two": [[1, 2], [3, 4]], "dicts": [{"a": 1}, {"b": 2}],
}


@pytest.mark.parametrize("kind", list(AWKWARD_LISTS))
def test_column_array_holds_what_a_frame_of_the_rows_holds(kind):
    """context.column_array (the guard's columns from its buffered rows) against the column of a DataFrame built
    from the same rows, read with to_numpy(): same kind of dtype, same missing cells, same values."""
    from dashboard.diagnosis.context import column_array

    values = AWKWARD_LISTS[kind]
    got = column_array(list(values))
    want = pd.DataFrame.from_records([{"c": v} for v in values])["c"].to_numpy()
    assert got.shape == want.shape == (len(values),)
    assert got.dtype.kind == want.dtype.kind, (got.dtype, want.dtype)
    assert all(_same(a, b) for a, b in zip(got.tolist(), want.tolist(), strict=True)), (got, want)


def _same(a, b) -> bool:
    """Equal cells, a None and a NaN both missing (a list or dict cell is compared as it is)."""
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return a == b
    return bool(pd.isna(a) and pd.isna(b)) or a == b


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_guard_reads_its_buffered_rows_as_the_frame_of_them(kind):
    """The guard's view gives the sample rules the columns of its buffered rows without a DataFrame
    (RunData.sample_columns): verifier_suspect and identical_group_frac on it equal the same rules on the frame
    the guard built of those rows before, on every column kind (raising alike where the frame reading raised)."""
    from types import SimpleNamespace

    from dashboard.diagnosis.context import RunData
    from dashboard.diagnosis.guard.watch import Watcher

    w = Watcher()
    w.add(0, {"reward/mean": 0.5})
    w.add_samples(KINDS[kind].to_dict("records"))  # rows of any steps, as TRL's completion files give them
    view = w.view()

    def frame_data():
        return RunData(SimpleNamespace(metrics=view.metrics, meta=view.meta, samples=view.samples))

    for rule in (verifier_suspect, identical_group_frac):
        assert outcome(rule, RunData(view)) == outcome(rule, frame_data()), rule.__name__


@pytest.mark.parametrize("run", SAMPLE_RUNS, ids=[p.name for p in SAMPLE_RUNS])
def test_same_text_share_equals_the_groupby_on_every_sample_run(run):
    s = open_run(run).samples()
    assert s is not None and len(s), "every sample run keeps samples (test_sample_runs)"
    assert share(s) == pytest.approx(groupby_same_text_share(s))
    assert share(s, last_steps=3) == pytest.approx(groupby_same_text_share(s, last_steps=3))


def groupby_zero_variance_examples(s: pd.DataFrame, step: int, k: int = 3) -> list[dict]:
    """The plain pandas reading: groupby group at the last step <= `step`, nunique of the rewards."""
    s = s[pd.to_numeric(s["step"], errors="coerce") <= step]
    s = s[pd.to_numeric(s["step"], errors="coerce") == pd.to_numeric(s["step"], errors="coerce").max()]
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
    return zero_variance_examples(D(s), step)


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
    assert s is not None and len(s), "every sample run keeps samples (test_sample_runs)"
    for step in (int(s["step"].min()), int(s["step"].median()), int(s["step"].max())):
        for frame_ in (s, s.assign(reward=0.0)):
            got, want = _examples(frame_, step), groupby_zero_variance_examples(frame_, step)
            assert got == want


@pytest.mark.parametrize("kind", list(KINDS))
def test_zero_variance_examples_equal_the_groupby_on_every_column_kind(kind):
    s = KINDS[kind]
    for frame_ in (s, s.assign(reward=0.0), s.drop(columns="prompt"), s.drop(columns=["prompt", "completion"])):
        for step in (-1, 0, 2, 3, 100):
            assert outcome(_examples, frame_, step) == outcome(groupby_zero_variance_examples, frame_, step)
    for c in ("step", "group", "reward"):
        assert _examples(s.drop(columns=c), 3) == []
    assert _examples(None, 3) == []

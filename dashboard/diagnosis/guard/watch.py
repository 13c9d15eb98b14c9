"""Incremental diagnosis: feed a run as it grows, get back only what changed (new findings, cleared ones).

    w = Watcher(config=flat_config, source="grpo_core", stop_on="critical")
    for step, metrics in training:
        w.add(step, metrics)
        if (u := w.check()) and u.stop:
            break   # u.stop is the confirmed finding that asks the run to stop

The rules (dashboard.diagnosis.diagnose) run on a bounded view of the run (history.BoundedHistory), so one
check costs the same at any run length. A finding is known by (rule id, severity): its title may change
as numbers move. It is *confirmed* when it has held `hold` judgements of its rule in a row, each on new steps,
or two in a row at least `hold_steps` steps apart (what `hold` checks 10 steps apart span: judgements further
apart, because the pacer spaced the checks or the rule is one of a long window judged every 30+ rows, need not
wait for a third). Only a confirmed finding is reported or may stop a run; it clears the same way, once absent.
That is how a transient (one bad stretch the rules flag once) neither alarms nor stops a run. A rule that
raises is reported once as an error and never counts for stopping: the guard must not stop a run on its
own bug.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from dashboard.diagnosis.context import (
    JUDGED_SAMPLE_COLUMNS,
    RunData,
    column_array,
    frame_columns,
    latest_rows,
)
from dashboard.diagnosis.engine import collect, judge
from dashboard.diagnosis.findings import SEVERITY_ORDER, Finding, NotJudged
from dashboard.diagnosis.guard.history import BoundedHistory
from dashboard.diagnosis.registry import RECHECK_LONG, RECHECK_MIN_ROWS, RULES

HOLD_CHECKS = 3  # checks in a row a finding must hold to count (with checks every 10 steps: >= 20 steps)
CHECK_EVERY = 10  # the trainers' default cadence; `hold` checks at it span (hold - 1) * 10 steps
SAMPLE_STEPS = 5  # the recent steps whose samples the sample rules see (their cost grows with the rows)
RULE_FAILED = "the rule failed"  # how engine.diagnose words a rule that raised (NotJudged.reason)
STOP_SEVERITIES = ("critical", "warning")
# facts.py memo keys: the trends and the reward's spread over the whole view, slow to move
CARRIED_FACTS = ("reward_trend", "eval_trend", "reward_scale")


def severity_at_least(severity: str, bar: str | None) -> bool:
    return bar is not None and SEVERITY_ORDER[severity] <= SEVERITY_ORDER[bar]


@dataclass
class Update:
    """What one check changed. `step`: the last step it saw."""

    step: int | None
    new: list[Finding] = field(default_factory=list)  # confirmed at this check
    cleared: list[Finding] = field(default_factory=list)  # confirmed before, now gone for `hold` checks
    errors: list[NotJudged] = field(default_factory=list)  # rules that raised (each rule reported once)
    stop: Finding | None = None  # set once: the first confirmed finding at or above stop_on
    seconds: float = 0.0  # what the check cost

    def __bool__(self) -> bool:
        return bool(self.new or self.cleared or self.errors or self.stop)


@dataclass
class _State:
    finding: Finding
    streak: int = 0  # judgements in a row it held
    absent: int = 0  # judgements in a row it did not
    confirmed: bool = False
    since: int | None = None  # the last step seen at the first judgement of the current streak (or absence)


class _View:
    """What the rules need of a run (context.RunData): the metrics as a matrix (steps, values, names), meta,
    nan_at, samples() and its columns. `metrics` (a DataFrame) is built only for a caller that asks for it."""

    nan_known = True

    def __init__(self, matrix: tuple[np.ndarray, np.ndarray, list[str]], nan_at: dict, meta: Any, samples,
                 latest, columns) -> None:
        self.matrix, self.nan_at, self.meta = matrix, nan_at, meta
        self._samples, self._latest, self._columns = samples, latest, columns

    @property
    def metrics(self) -> pd.DataFrame:
        steps, values, names = self.matrix
        frame = pd.DataFrame(values, columns=names, copy=False)
        frame.insert(0, "step", steps)
        return frame

    def samples(self) -> pd.DataFrame | None:
        return self._samples()

    def latest_samples(self, step: int, columns: tuple[str, ...] | None = None) -> pd.DataFrame | None:
        return self._latest(step, columns)

    def sample_columns(self, names: tuple[str, ...]) -> dict[str, np.ndarray] | None:
        return self._columns(names)


class Watcher:
    """A growing run -> Updates (see the module docstring). Not thread-safe; one per run."""

    def __init__(self, config: Mapping[str, Any] | None = None, source: str = "", stop_on: str | None = None,
                 hold: int = HOLD_CHECKS, rules: list[str] | None = None,
                 history: BoundedHistory | None = None, hold_steps: int | None = None) -> None:
        """hold_steps: the span two judgements in a row must cover to confirm (or clear) a finding without
        waiting for `hold` of them; default (hold - 1) * CHECK_EVERY."""
        if stop_on is not None and stop_on not in STOP_SEVERITIES:
            raise ValueError(f"stop_on must be one of {', '.join(STOP_SEVERITIES)} or None, got {stop_on!r}")
        self.meta = SimpleNamespace(config=dict(config or {}), source=source)
        self.stop_on, self.hold, self.rules = stop_on, max(1, int(hold)), rules
        self.hold_steps = (self.hold - 1) * CHECK_EVERY if hold_steps is None else max(0, int(hold_steps))
        self.history = history or BoundedHistory()
        self.states: dict[tuple[str, str], _State] = {}
        self.failed_rules: set[str] = set()
        self.stop_reason: Finding | None = None
        self.checks = 0
        self._checked_step: int | None = None
        # (the step they were given with, or None for add_samples' lists of any steps; the rows)
        self._samples: deque[tuple[int | None, list[dict]]] = deque(maxlen=SAMPLE_STEPS)
        self._run_samples = None  # follow(): the run's own samples, read on demand
        self._rows_read = 0
        self._resumes = 0  # follow(): the run's resume count; a new resume may rewrite steps already read
        self._outputs: dict[str, list[Finding] | NotJudged] = {}  # each rule's last output
        self._judged_at: dict[str, int] = {}  # rule id -> history.steps_seen when it was last judged
        self._carried: dict[str, Any] = {}  # the slow facts (trends) of the last check that computed them
        self._carried_at = 0  # history.steps_seen then
        self._shown: frozenset[str] = frozenset()  # rules told at this check that their examples were shown

    # -- feeding ----------------------------------------------------------------------------
    def add(self, step: int, metrics: Mapping[str, Any], samples: list[dict] | None = None) -> None:
        """One logged step: canonical metric names -> numbers (absent or None: not logged); `samples`: this
        step's sample rows (collectors.schema.SAMPLES columns)."""
        self.history.add(step, metrics)
        if samples:
            self._samples.append((int(step), list(samples)))

    def add_samples(self, rows: list[dict]) -> None:
        """Sample rows (collectors.schema.SAMPLES columns) of a recent step, when they arrive apart from the
        metrics (TRL writes its completions files on its own schedule)."""
        if rows:
            self._samples.append((None, list(rows)))

    def follow(self, run: Any) -> int:
        """Take the rows `run` (a collectors Run, already refreshed) holds beyond those read before;
        returns how many. After a resume (run.meta.resumes grew) or rows that moved, the run is read
        again from the start: a resumed run re-logs steps already read."""
        self.meta = run.meta
        self._run_samples = run
        frame = run.metrics
        resumes = len(getattr(run.meta, "resumes", None) or ())
        known = self._rows_read and self._rows_read <= len(frame) and resumes == self._resumes and \
            int(frame["step"].iloc[self._rows_read - 1]) == self.history.last_step
        self._resumes = resumes
        if self._rows_read and not known:
            self.history, self._rows_read = BoundedHistory(self.history.head_size, self.history.tail_size,
                                                           self.history.max_bins), 0
            self._judged_at.clear()  # every rule is judged afresh on the rows read again
            self._carried, self._carried_at = {}, 0
        chunk = frame.iloc[self._rows_read:]
        nan_at = run.nan_at if getattr(run, "nan_known", False) else None
        for row in _records(chunk, nan_at):
            self.history.add(row.pop("step"), row)
        self._rows_read = len(frame)
        return len(chunk)

    # -- judging ----------------------------------------------------------------------------
    def check(self, final: bool = False) -> Update | None:
        """Run the rules on the bounded view; None when no step arrived since the last check.
        final=True (the run has ended): whatever the rules find now is confirmed, nothing is left to wait for."""
        last = self.history.last_step
        if last is None or (last == self._checked_step and not final):
            return None
        t0 = time.perf_counter()
        self._checked_step, self.checks = last, self.checks + 1
        update = Update(last)
        try:
            judged, steps = self._judge(final)
            found, not_judged = collect(self._outputs.values(), steps)
        except Exception as e:  # noqa: BLE001 - the guard's own bug is reported, never a reason to stop
            judged, found, not_judged = None, [], [NotJudged("diagnosis", f"{RULE_FAILED}: {type(e).__name__}: {e}")]
        for nj in not_judged:
            if nj.reason.startswith(RULE_FAILED) and nj.rule_id not in self.failed_rules:
                self.failed_rules.add(nj.rule_id)
                update.errors.append(nj)
        self._track(found, update, final, judged)
        update.seconds = time.perf_counter() - t0
        return update

    def _judge(self, final: bool) -> tuple[set[str], np.ndarray]:
        """Judge the rules that are due (registry.RECHECK_LONG); keep each rule's output. Returns (the rule ids
        judged now, the view's steps). The slow facts (the reward and eval trends) behind the fast rules' "is the
        run improving?" are carried from the last check that computed them while the rows since are under a tenth
        of the view (the cadence of the long rules without their 30-row floor); early in a run that is never, and
        they are computed afresh."""
        rows, view_rows = self.history.steps_seen, len(self.history)
        # a rule whose finding waits to be confirmed is judged at every check: the cadence saves re-finding
        # nothing, never delays confirming (or dropping) what was just seen
        pending = {rid for (rid, _), st in self.states.items() if not st.confirmed}
        due = {rid for rid, r in RULES.items() if (self.rules is None or rid in self.rules) and
               (final or not r.recheck_rows or rid not in self._judged_at or rid in pending or
                rows - self._judged_at[rid] >= max(view_rows // r.recheck_rows, RECHECK_MIN_ROWS))}
        slow = any(RULES[rid].recheck_rows for rid in due)
        fresh = slow or rows - self._carried_at >= view_rows // RECHECK_LONG
        # a confirmed finding keeps the examples it was reported with (see _track); its rule need not rebuild them
        self._shown = frozenset(rid for (rid, _), st in self.states.items() if st.confirmed and not final)
        d = RunData(self.view(), memo=None if fresh else self._carried, shown=self._shown)
        self._outputs.update(judge(d, due))
        for rid in due:
            self._judged_at[rid] = rows
        if fresh:
            self._carried = {k: v for k, v in d.memos().items() if k in CARRIED_FACTS}
            self._carried_at = rows
        return due, d.steps

    def _track(self, found: list[Finding], update: Update, final: bool, judged: set[str] | None) -> None:
        """Streaks move only for the rules judged at this check (None: all); a rule not due keeps its state."""
        now = {(f.rule_id, f.severity): f for f in found}
        step = update.step if update.step is not None else 0
        # the examples a rule left out because its finding was already reported (RunData.wants_examples): the
        # ones it was reported with, whatever its severity now
        kept = {rid: st.finding.examples for (rid, _), st in self.states.items() if st.finding.examples}
        for key, f in now.items():
            if not f.examples and f.rule_id in self._shown and f.rule_id in kept:
                f = replace(f, examples=kept[f.rule_id])
            st = self.states.setdefault(key, _State(f))
            st.finding = f
            if judged is not None and key[0] not in judged and st.streak:
                continue
            st.streak, st.absent = st.streak + 1, 0
            if st.streak == 1:
                st.since = step
            if not st.confirmed and self._held(st.streak, st.since, step, final):
                st.confirmed = True
                update.new.append(f)
        found_rules = {rid for rid, _ in now}
        for key, st in list(self.states.items()):
            if key in now or (judged is not None and key[0] not in judged):
                continue
            if key[0] in found_rules:
                # the same finding at another severity (a warning grown critical): superseded, not cleared; a
                # "cleared" here told a sink the finding was gone while it had just grown worse
                del self.states[key]
                continue
            st.streak, st.absent = 0, st.absent + 1
            if st.absent == 1:
                st.since = step
            if not st.confirmed:
                del self.states[key]
            elif self._held(st.absent, st.since, step, final):
                update.cleared.append(st.finding)
                del self.states[key]
        if self.stop_reason is None and not final:  # a run that has ended is not stopped
            stoppers = [f for f in update.new if severity_at_least(f.severity, self.stop_on)]
            if stoppers:
                self.stop_reason = update.stop = stoppers[0]  # diagnose sorts most severe first

    def _held(self, count: int, since: int | None, step: int, final: bool) -> bool:
        """Whether `count` judgements in a row, the first at step `since`, are enough (see the module docstring)."""
        if final or count >= self.hold:
            return True
        return count >= 2 and since is not None and step - since >= self.hold_steps

    @property
    def active(self) -> list[Finding]:
        """The confirmed findings that hold now."""
        return [st.finding for st in self.states.values() if st.confirmed]

    def view(self) -> _View:
        steps, values, names, nan_at = self.history.matrix()
        return _View((steps, values, names), nan_at, self.meta, self._view_samples, self._latest_samples,
                     self._sample_columns)

    def _view_samples(self) -> pd.DataFrame | None:
        if self._run_samples is not None:
            return self._run_samples.samples(step_min=self.history.first_recent_step())
        rows = [r for _, step_rows in self._samples for r in step_rows]
        if not rows:
            return None
        # only the columns the rules read: the frame of the buffered rows, built right after a training step, was
        # the largest single cost of a check that judges the sample rules
        present = set().union(*rows)
        return pd.DataFrame.from_records(rows, columns=[c for c in JUDGED_SAMPLE_COLUMNS if c in present])

    def _sample_columns(self, names: tuple[str, ...]) -> dict[str, np.ndarray] | None:
        """context.RunData.sample_columns of the buffered rows: each column one list and one array, no DataFrame.
        Only JUDGED_SAMPLE_COLUMNS, as the frame; a column no row has is absent, a row without it holds None."""
        if self._run_samples is not None:
            return frame_columns(self._view_samples(), names)
        rows = [r for _, step_rows in self._samples for r in step_rows]
        if not rows:
            return None
        return {c: column_array([r.get(c) for r in rows]) for c in names
                if c in JUDGED_SAMPLE_COLUMNS and any(c in r for r in rows)}

    def _latest_samples(self, step: int, columns: tuple[str, ...] | None = None) -> pd.DataFrame | None:
        """The rows of the latest buffered step at or before `step` (context.RunData.latest_samples). A list
        given with add(step, ...) holds that step's rows and is judged by its step alone; add_samples' lists
        are read row by row."""
        if self._run_samples is not None:
            return latest_rows(self._view_samples(), step, columns)  # a followed run: its own reader's samples
        best, rows = None, []
        for tag, step_rows in self._samples:
            for s, part in ((tag, step_rows),) if tag is not None else _by_step(step_rows):
                if s <= step and (best is None or s >= best):
                    best, rows = s, (rows if s == best else []) + part
        if not rows:
            return None
        if columns is not None:
            present = set().union(*rows)
            return pd.DataFrame.from_records(rows, columns=[c for c in columns if c in present])
        return pd.DataFrame.from_records(rows)


def _by_step(rows: list[dict]) -> list[tuple[float, list[dict]]]:
    """Rows of any steps -> (step, its rows) in order of first appearance; rows without a number step dropped."""
    out: dict[float, list[dict]] = {}
    for r in rows:
        s = r.get("step")
        if isinstance(s, (int, float, np.integer, np.floating)) and not isinstance(s, bool) \
                and not (isinstance(s, (float, np.floating)) and math.isnan(s)):
            out.setdefault(s, []).append(r)
    return list(out.items())


def _records(chunk: pd.DataFrame, nan_at: dict | None) -> list[dict]:
    """Frame rows -> dicts without the nulls. A NaN cell is a logged NaN only where the reader says so
    (nan_at); without that bookkeeping it is taken as a null, as the diagnosis does for gaps."""
    steps = chunk["step"].to_numpy(dtype=np.int64)
    cols = {c: chunk[c].to_numpy(dtype=np.float64, na_value=np.nan) for c in chunk.columns if c != "step"}
    logged = {c: np.isin(steps, np.fromiter(nan_at.get(c, ()), dtype=np.int64)) for c in cols} if nan_at else {}
    out = []
    for i, step in enumerate(steps):
        row: dict[str, Any] = {"step": int(step)}
        for c, x in cols.items():
            v = x[i]
            if not math.isnan(v) or (c in logged and logged[c][i]):
                row[c] = float(v)
        out.append(row)
    return out


def alert_line(f: Finding, step: int | None, event: str = "new", lang: str = "en") -> str:
    """One readable console line: severity, step, title, rule, and the checks to make first, in `lang`."""
    from dashboard.diagnosis.i18n import label, localise_finding

    f = localise_finding(f, lang)
    values = {"sev": label(f.severity, lang).upper(), "step": step, "title": f.title, "rule": f.rule_id}
    if event == "cleared":
        return label("alert_cleared", lang, **values)
    checks = label("list_sep", lang).join(c.what for c in f.checks)
    head = label("alert_new", lang, **values)
    return label("alert_checks", lang, head=head, checks=checks) if checks else head


class Pacer:
    """When to check: every `every` steps, and only while the checks have cost at most `budget` of the
    time since the first step (so a slow check on a fast loop spaces itself out instead of slowing the run).

    budget=None: every `every` steps, whatever it costs (deterministic, for tests and replays).
    """

    def __init__(self, every: int = 10, budget: float | None = 0.01) -> None:
        self.every, self.budget = max(1, int(every)), budget
        self.spent = 0.0
        self._t0: float | None = None
        self._last: int | None = None

    def due(self, step: int) -> bool:
        now = time.perf_counter()
        if self._t0 is None:
            self._t0 = now
        if self._last is not None and step - self._last < self.every:
            return False
        if self.budget is not None and self.spent > self.budget * (now - self._t0):
            return False
        self._last = step
        return True

"""Incremental diagnosis (dashboard/diagnosis/guard/watch.py, history.py, guard.py): a bounded view with
hand-worked bins, findings confirmed only after holding, transients and raising rules never stop a run,
the sample runs replayed step by step, and a run folder followed as its writer appends."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers.paths import REPO

from collectors import RunWriter, load_run, open_run
from dashboard.diagnosis import diagnose
from dashboard.diagnosis.build import finding
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.guard.guard import FINDINGS_FILE, Guard, console_sink, file_sink, read_findings
from dashboard.diagnosis.guard.history import BoundedHistory
from dashboard.diagnosis.guard.watch import Pacer, Watcher, alert_line
from dashboard.diagnosis.registry import RECHECK_LONG, RULES, rule

SAMPLES = REPO / "sample_runs"


def test_history_keeps_head_and_tail_and_bins_the_middle_by_hand():
    h = BoundedHistory(head=2, tail=2, bins=2)
    for s in range(10):
        h.add(s, {"x": float(s)})
    # head 0, 1; tail 8, 9; steps 2..7 went to bins: [2], [3] -> merged [2,3] (width 2), then [4,5],
    # then a third bin [6,7] made three -> merged pairwise: [2..5] (width 4) and [6, 7]
    assert [s for s, _ in h.rows()] == [0, 1, 5, 7, 8, 9]
    assert [r["x"] for _, r in h.rows()] == [0.0, 1.0, 3.5, 6.5, 8.0, 9.0]
    assert len(h) == 6 and h.width == 4


def test_history_stays_bounded_and_a_logged_nan_never_averages_away():
    h = BoundedHistory(head=5, tail=10, bins=8)
    for s in range(5000):
        h.add(s, {"loss": float("nan") if s == 100 else 1.0, "kl": 0.1})
    assert len(h) <= 5 + 8 + 10
    frame, nan_at = h.frame()
    assert list(frame.columns[:1]) == ["step"] and frame["step"].is_monotonic_increasing
    (bin_step,) = nan_at["loss"]
    assert math.isnan(frame.loc[frame["step"] == bin_step, "loss"].iloc[0])
    assert frame["kl"].to_numpy() == pytest.approx(0.1)  # a mean of equal values is that value
    h.add(10, {"loss": 2.0})  # an old step: ignored, not a second row
    assert h.last_step == 4999


@pytest.fixture
def flag_rules():
    """Two real rules in the real registry, removed afterwards: one fires while the last logged
    `test/flag` is 1, one raises whenever `test/boom` is logged."""

    @rule("test_flag", "test: a flag is up")
    def flag(d):
        x = d.col("test/flag")
        if x is None:
            return NotJudged("test_flag", "test/flag is not logged")
        if x[-1] not in (1, 2):  # 1: critical, 2: the same flag at warning
            return []
        return [finding("test_flag", "critical" if x[-1] == 1 else "warning", "Flag is up", d.step_range(d.n - 1, d.n - 1), [], ())]

    @rule("test_boom", "test: a rule with a bug")
    def boom(d):
        if d.col("test/boom") is not None:
            raise ZeroDivisionError("bug in the rule")
        return []

    yield ["test_flag", "test_boom"]
    RULES.pop("test_flag"), RULES.pop("test_boom")


def feed(w: Watcher, flags: list[int], extra: dict | None = None) -> list:
    """One check per step; returns the updates."""
    out = []
    for s, v in enumerate(flags):
        w.add(s, {"test/flag": v, **(extra or {})})
        out.append(w.check())
    return out


def test_a_finding_must_hold_before_it_counts_and_a_transient_never_stops(flag_rules):
    w = Watcher(stop_on="critical", hold=3, rules=flag_rules)
    ups = feed(w, [0, 1, 1, 0, 0, 1, 1, 1, 1])
    assert not any(u.new or u.stop for u in ups[:7])  # up twice, then down: a transient
    assert [f.rule_id for f in ups[7].new] == ["test_flag"] and ups[7].stop.rule_id == "test_flag"
    assert ups[7].step == 7 and ups[8].stop is None  # the stop is reported once
    assert w.check() is None  # nothing new since the last check: nothing to judge


def test_a_confirmed_finding_clears_after_holding_absent(flag_rules):
    w = Watcher(hold=2, rules=flag_rules)
    ups = feed(w, [1, 1, 0, 1, 0, 0])
    assert [f.rule_id for f in ups[1].new] == ["test_flag"]
    assert not ups[2].cleared and not ups[3].new  # one check without it is not enough to clear
    assert [f.rule_id for f in ups[5].cleared] == ["test_flag"] and w.active == []


def test_a_warning_grown_critical_is_superseded_not_cleared(flag_rules):
    """A finding confirmed at warning that grows critical is new at critical and never 'cleared' (a sink that
    keeps one entry per rule, as wandb's summary does, wrote 'cleared' over the critical)."""
    w = Watcher(hold=2, rules=flag_rules)
    ups = feed(w, [2, 2, 1, 1, 1, 1])
    assert [(f.rule_id, f.severity) for f in ups[1].new] == [("test_flag", "warning")]
    assert [(f.rule_id, f.severity) for f in ups[3].new] == [("test_flag", "critical")]
    assert not any(u.cleared for u in ups if u is not None)
    assert [(f.rule_id, f.severity) for f in w.active] == [("test_flag", "critical")]


def test_a_raising_rule_is_reported_once_and_never_stops(flag_rules):
    w = Watcher(stop_on="warning", hold=1, rules=flag_rules)
    ups = feed(w, [0, 0, 0], extra={"test/boom": 1.0})
    assert [e.rule_id for e in ups[0].errors] == ["test_boom"] and "ZeroDivisionError" in ups[0].errors[0].reason
    assert not ups[1].errors and w.stop_reason is None


def test_final_check_confirms_what_holds_now(flag_rules):
    w = Watcher(stop_on="critical", hold=3, rules=flag_rules)
    w.add(0, {"test/flag": 1})
    assert not w.check().new
    w.add(1, {"test/flag": 1})
    u = w.check(final=True)
    assert [f.rule_id for f in u.new] == ["test_flag"] and u.stop is None  # a run that ended is not stopped


@pytest.fixture
def slow_rule():
    """A real rule of a long window (registry.RECHECK_LONG) that records the view length at each call and fires
    while `test/slow` is 1."""
    calls = []

    @rule("test_slow", "test: a slow symptom", recheck_rows=RECHECK_LONG)
    def slow(d):
        calls.append(d.n)
        x = d.col("test/slow")
        return [finding("test_slow", "warning", "Slow", None, [], ())] if x is not None and x[-1] == 1 else []

    yield calls
    RULES.pop("test_slow")


def test_a_rule_of_a_long_window_is_judged_again_after_a_tenth_of_the_view(slow_rule):
    w = Watcher(rules=["test_slow"], history=BoundedHistory(head=60, tail=300, bins=120))
    judged_at = []
    for s in range(1000):
        w.add(s, {"test/slow": 0.0})
        if s % 10 == 9:
            n = len(slow_rule)
            w.check()
            if len(slow_rule) > n:
                judged_at.append(s + 1)  # rows seen
    # up to 300 rows a tenth of the view is at most 30 rows: the 30-row floor (every third check); then a tenth
    # (320 -> 32 rows, rounded up to the next check: 40) up to 48 rows once the view holds its 480 (60 + 120 + 300)
    assert judged_at[:10] == [10, 40, 70, 100, 130, 160, 190, 220, 250, 280]
    assert judged_at[10:14] == [320, 360, 400, 450]  # at 310 only 30 rows are new and a tenth of 310 is 31
    gaps = np.diff(judged_at)
    assert gaps.max() == 50 and all(g == 50 for g in gaps[-5:])  # 48 rows, rounded up to whole checks
    n = len(slow_rule)
    w.add(1000, {"test/slow": 0.0})
    w.check(final=True)  # the last check judges every rule
    assert len(slow_rule) == n + 1


def test_a_slow_rule_confirms_at_every_check_then_keeps_its_cadence(slow_rule):
    """A rule of a long window that finds something is judged at every check until its finding is confirmed (the
    cadence never delays a confirmation); a confirmed finding is judged at the cadence again, and checks that did
    not judge it neither clear it nor count for it."""
    w = Watcher(rules=["test_slow"], hold=3)
    judged, new, cleared = [], [], []
    for s in range(1000):
        w.add(s, {"test/slow": 1.0 if 300 <= s < 600 else 0.0})
        if s % 10 == 9:
            n = len(slow_rule)
            u = w.check()
            if len(slow_rule) > n:
                judged.append(s)
            new += [s for _ in (u.new if u else [])]
            cleared += [s for _ in (u.cleared if u else [])]
    # judged at 279, then 30+ rows later: 319 (a tenth of 320 rows is 32: 40 rounded up to whole checks) sees it
    # first; 329 and 339 confirm it (three in a row, 20 steps apart)
    assert [j for j in judged if 279 <= j <= 339] == [279, 319, 329, 339] and new == [339]
    confirmed_judgements = [j for j in judged if 339 < j < 600]
    assert len(confirmed_judgements) <= 6  # 26 checks, judged every 40-50 rows: 379, 419, 459, 509, 559
    # cleared at its second judgement without it (at least 20 steps after the first), not at a check between
    first_absent = min(j for j in judged if j >= 600)
    second_absent = min(j for j in judged if j > first_absent)
    assert cleared == [second_absent] and second_absent - first_absent >= 20


def test_two_checks_far_enough_apart_confirm_and_clear_a_finding(flag_rules):
    """hold_steps by hand: checks 25 steps apart (a paced guard) confirm at the second sighting and clear at the
    second absence; checks 10 steps apart still need three."""
    w = Watcher(rules=["test_flag"], hold=3)
    assert w.hold_steps == 20
    events = []
    for s in range(200):
        w.add(s, {"test/flag": 1.0 if s < 100 else 0.0})
        if s % 25 == 0 and (u := w.check()):
            events += [("new", s) for _ in u.new] + [("cleared", s) for _ in u.cleared]
    assert events == [("new", 25), ("cleared", 125)]
    w = Watcher(rules=["test_flag"], hold=3)
    for s in range(100):
        w.add(s, {"test/flag": 1.0})
        if s % 10 == 0 and (u := w.check()) and u.new:
            assert s == 20
            break


def test_pacer_without_budget_checks_every_n_steps():
    p = Pacer(every=10, budget=None)
    assert [s for s in range(35) if p.due(s)] == [0, 10, 20, 30]
    p = Pacer(every=1, budget=0.0)
    assert p.due(0)
    p.spent = 1.0  # the check cost time: with a zero budget the next one waits
    assert not p.due(1)


def replay(name: str, every: int = 10):
    """The sample run fed step by step (metrics and samples) as a trainer would, checked every `every`."""
    run = open_run(SAMPLES / name)
    samples = run.samples()
    by_step = {s: g.to_dict("records") for s, g in samples.groupby("step")} if len(samples) else {}
    w = Watcher(config=run.meta.config, source=run.meta.source, stop_on="critical")
    stop_step = None
    for i, row in enumerate(run.metrics.to_dict("records")):
        step = int(row.pop("step"))
        w.add(step, {k: v for k, v in row.items() if not math.isnan(v)}, by_step.get(step))
        if i % every == 0 and (u := w.check()) and u.stop and stop_step is None:
            stop_step = step
    return run, w, stop_step


@pytest.mark.parametrize("name", ["healthy"])
def test_healthy_sample_run_is_never_stopped(name):
    _, w, stop_step = replay(name)
    assert stop_step is None and w.stop_reason is None


def test_broken_verifier_stops_within_bounded_steps_of_the_onset():
    run, w, stop_step = replay("broken_verifier")
    # broken from step 0; checks every 10 steps, held 3 checks: 20 steps, plus the rules' own minimum
    # of 10 points for a constant reward and 5 in a row for a level: a stop by step 40
    assert stop_step is not None and stop_step <= 40
    assert w.stop_reason.severity == "critical"
    # the view is the whole run while the run is short: the final check agrees with the one-shot diagnosis
    w.check(final=True)
    assert {(f.rule_id, f.severity) for f in diagnose(run).findings} <= {(f.rule_id, f.severity) for f in w.active}


def test_follow_reads_only_new_rows_and_restarts_after_a_resume(tmp_path):
    out = tmp_path / "grow"
    with RunWriter(out, config={"algo.group_size": 8}) as wr:
        for s in range(30):
            wr.log_step(s, {"reward/mean": 0.0, "reward/std": 0.0})
        wr.flush()
        run = load_run(out)
        w = Watcher(stop_on="critical", hold=1)
        assert w.follow(run) == 30
        u = w.check()
        assert "reward_constant" in {f.rule_id for f in u.new} and u.stop is not None
        for s in range(30, 40):
            wr.log_step(s, {"reward/mean": 0.0, "reward/std": 0.0})
        wr.flush()
        run.refresh()
        assert w.follow(run) == 10 and w.history.last_step == 39
    with RunWriter(out) as wr:  # a resume that logs step 35 again: earlier rows changed
        wr.log_step(35, {"reward/mean": 1.0, "reward/std": 0.0})
    run.refresh()
    assert w.follow(run) == 40 and w.history.steps_seen == 40


def test_guard_writes_findings_file_and_console_line(tmp_path, flag_rules):
    lines: list[str] = []

    def broken_sink(update):
        raise OSError("disk full")

    g = Guard(Watcher(stop_on="critical", hold=2, rules=flag_rules), Pacer(every=1, budget=None),
              [console_sink(lines.append), file_sink(tmp_path), broken_sink])
    stops = [g.on_step(s, {"test/flag": 1}) for s in range(3)]
    assert stops[0] is None and stops[1].rule_id == "test_flag" and stops[2] is None
    assert broken_sink not in g.sinks  # dropped after its failure; the others kept going
    assert lines[0] == "grposcope CRITICAL at step 1: Flag is up (test_flag)"
    assert lines[1].startswith("grposcope: stopping the run after step 1: critical finding test_flag")
    ev = read_findings(tmp_path)
    assert [e["event"] for e in ev] == ["new", "stop"] and ev[0]["step"] == 1
    (tmp_path / FINDINGS_FILE).open("a").write('{"event": "new", "rule_')  # a torn last line
    assert len(read_findings(tmp_path)) == 2
    json.loads((tmp_path / FINDINGS_FILE).read_text().splitlines()[0])  # strict JSON


def test_alert_line_names_the_checks():
    run = open_run(SAMPLES / "broken_verifier")
    f = next(f for f in diagnose(run).findings if f.rule_id == "reward_flat")
    line = alert_line(f, 40)
    assert line.startswith("grposcope CRITICAL at step 40: Reward does not move") and "check first: " in line
    assert f.checks[0].what in line and "\n" not in line


def test_dashboard_shows_a_stopped_run_and_its_guard_events():
    from dashboard.data import Health
    from dashboard.text import STATUS_ICONS, guard_event_line, health_label

    assert health_label(Health("healthy"), "stopped") == "🛑 stopped by the guard" and STATUS_ICONS["stopped"] == "🛑"
    e = {"event": "stop", "step": 10, "severity": "critical", "title": "Reward is constant", "rule_id": "reward_constant"}
    assert guard_event_line(e) == "🛑 step 10: stopped the run: **Reward is constant** (reward\\_constant)"
    assert guard_event_line({**e, "event": "new"}).startswith("🔴 step 10: found: ")


class _FrameView:
    """The guard's view given as a DataFrame (the one-shot diagnosis's way in), to compare with its matrix."""

    nan_known = True

    def __init__(self, view) -> None:
        self.metrics, self.nan_at, self.meta, self.samples = view.metrics, view.nan_at, view.meta, view.samples


def _outputs(d) -> str:
    from dashboard.diagnosis.engine import judge

    out = {rid: (o.reason if isinstance(o, NotJudged) else [f.to_dict() for f in o]) for rid, o in judge(d).items()}
    return json.dumps(out, sort_keys=True, default=str)


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.iterdir() if (p / "run.json").exists()))
def test_rules_read_the_guard_matrix_as_they_read_a_frame(name):
    """Every rule's output on the guard's view read as a matrix (context.RunData without a DataFrame) equals its
    output on the same view as a DataFrame, at a few points of each sample run (short view, and whole run)."""
    from dashboard.diagnosis.context import RunData

    run = open_run(SAMPLES / name)
    w = Watcher(config=run.meta.config, source=run.meta.source)
    rows = run.metrics.to_dict("records")
    for i, row in enumerate(rows):
        step = int(row.pop("step"))
        w.add(step, {k: v for k, v in row.items() if not math.isnan(v)})
        if i in (25, len(rows) - 1):
            view = w.view()
            assert _outputs(RunData(view)) == _outputs(RunData(_FrameView(view)))


def test_latest_samples_from_the_buffer_equal_the_frame_filtered():
    """RunData.latest_samples(step) on the guard's view (read from its buffer of sample lists) gives the rows of
    the same step, in the same order, as filtering the frame of every buffered step; a step without samples
    falls back to the latest one before it, and a step before every buffered one gives None."""
    from dashboard.diagnosis.context import RunData, latest_rows

    w = Watcher()
    for s in range(8):
        rows = [{"step": s, "group": g, "reward": float((s + g) % 2), "completion": f"t{s}-{g}"} for g in range(3)]
        w.add(s, {"reward/mean": 0.5}, rows if s != 6 else None)  # step 6 logged no samples
    w.add_samples([{"step": 7, "group": 9, "reward": 1.0, "completion": "late"},
                   {"step": 5, "group": 8, "reward": 0.0, "completion": "older"}])  # TRL's files: mixed steps
    d, frame = RunData(w.view()), w.view().samples()
    for step in (7, 6, 5, 3):
        got, want = d.latest_samples(step), latest_rows(frame, step)
        assert got.to_dict("records") == want.to_dict("records")
    assert [r["completion"] for r in d.latest_samples(7).to_dict("records")] == ["t7-0", "t7-1", "t7-2", "late"]
    assert d.latest_samples(6)["step"].unique().tolist() == [5]  # step 6 has none: step 5's four rows
    assert len(d.latest_samples(6)) == 4
    assert d.latest_samples(2) is None  # the buffer keeps the last 5 steps (3..7)
    only = d.latest_samples(7, ("completion", "step", "absent"))  # the columns asked for that the rows have
    assert list(only.columns) == ["completion", "step"] and only["completion"].tolist()[-1] == "late"
    assert only.to_dict("records") == latest_rows(frame, 7, ("completion", "step", "absent")).to_dict("records")


@pytest.mark.parametrize("name", ["broken_verifier", "low_temperature", "too_easy", "small_group", "healthy"])
def test_every_rule_reads_only_the_judged_sample_columns(name):
    """The guard builds its samples frame of context.JUDGED_SAMPLE_COLUMNS alone: every rule's output on the last
    steps' samples cut to those columns equals its output on all of them (a rule that starts reading another
    column fails here). The runs are those where the sample rules find something."""
    from types import SimpleNamespace

    from dashboard.diagnosis.context import JUDGED_SAMPLE_COLUMNS, RunData

    run = open_run(SAMPLES / name)
    full = run.samples()
    full = full[full["step"] >= full["step"].max() - 4].reset_index(drop=True)
    assert set(JUDGED_SAMPLE_COLUMNS) < set(full.columns)
    cut = full[list(JUDGED_SAMPLE_COLUMNS)]

    def data(frame):
        return RunData(SimpleNamespace(metrics=run.metrics, meta=run.meta, samples=lambda: frame))

    assert _outputs(data(cut)) == _outputs(data(full))


def test_a_confirmed_finding_keeps_its_examples_and_its_rule_stops_rebuilding_them(monkeypatch):
    """too_hard's zero-variance finding holds from its confirmation to the end: its examples are built while it
    waits to be confirmed, reported with it, kept on the active finding afterwards without being rebuilt at every
    check, and built afresh by the final check."""
    from dashboard.diagnosis.rules import reward

    calls = []
    real = reward.zero_variance_examples
    monkeypatch.setattr(reward, "zero_variance_examples", lambda d, step, k=3: calls.append(step) or real(d, step, k))
    run = open_run(SAMPLES / "too_hard")
    samples = run.samples()
    by_step = {s: g.to_dict("records") for s, g in samples.groupby("step")}
    w = Watcher(config=run.meta.config, source=run.meta.source)
    reported, calls_at_report = None, None
    for i, row in enumerate(run.metrics.to_dict("records")):
        step = int(row.pop("step"))
        w.add(step, {k: v for k, v in row.items() if not math.isnan(v)}, by_step.get(step))
        if i % 10 == 0 and (u := w.check()):
            for f in u.new:
                if f.rule_id == "zero_variance_groups":
                    reported, calls_at_report = f, len(calls)
    assert reported is not None and reported.examples and calls_at_report >= 1
    assert len(calls) == calls_at_report  # held from then on: never rebuilt by a check
    active = [f for f in w.active if f.rule_id == "zero_variance_groups"]
    assert active and active[0].examples == reported.examples
    u = w.check(final=True)
    assert len(calls) == calls_at_report + 1  # the final check shows the last step's examples
    final = next(f for f in w.active if f.rule_id == "zero_variance_groups")
    assert final.examples and final.examples[0]["step"] > reported.examples[0]["step"]

"""Accuracy of the diagnosis against labelled runs: one scoring for every corpus.

A corpus is a list of `Case`s, each what a good diagnosis must say about one run: `expected` groups (one
label of each group must be reported), `allowed` labels (may be reported), `cap` (the highest severity a
label may get) and the labels that may be critical. Labels are rule ids for our manifests (sample_runs/,
the TRL-made corpus) and symptom ids for the real runs' labels.json; `observed_labels` maps findings into
the corpus's label space. An `Observation` is what the diagnosis reported on the run (or why the run did
not open). Pure: no I/O, no pandas, no streamlit; `corpora.py` builds cases and observations from files.

Scores (per corpus):
- recall: expected groups satisfied / all expected groups (a run that does not open misses all of its own);
- precision: correct alarms / all alarms, an alarm being a label reported at warning or above (or an
  expected label at the severity the case counts as a hit); correct = expected or allowed, within its cap;
- false criticals: critical labels the case does not let be critical.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

SEVERITY_RANK = {"info": 1, "warning": 2, "critical": 3}


@dataclass(frozen=True)
class Case:
    name: str
    path: str  # what the opener is given
    expected: tuple[tuple[str, ...], ...] = ()  # groups of alternatives; one of each group must be reported
    allowed: frozenset[str] = frozenset()
    cap: Mapping[str, str] = field(default_factory=dict)  # label -> highest severity it may get
    critical_ok: frozenset[str] = frozenset()  # labels that may be critical
    hit_at: str = "warning"  # lowest severity at which an expected label counts as reported
    healthy: bool = False  # a healthy run may raise nothing above info (outside its allowed labels)
    reader: Mapping[str, object] = field(default_factory=dict)  # facts opening the run must give


@dataclass(frozen=True)
class Observation:
    labels: Mapping[str, str]  # label -> worst severity reported
    error: str | None = None  # the run did not open (or the diagnosis failed): the message
    steps: int | None = None  # logged metric rows the diagnosis saw
    verdict: str | None = None  # the diagnosis's one-line verdict, when it gives one
    launches: int = 1  # separate runs the target held (each diagnosed on its own)


@dataclass
class CaseScore:
    case: Case
    obs: Observation
    hits: list[tuple[str, ...]] = field(default_factory=list)
    misses: list[tuple[str, ...]] = field(default_factory=list)
    correct: dict[str, str] = field(default_factory=dict)  # alarms that are expected or allowed
    false_alarms: dict[str, str] = field(default_factory=dict)  # label -> severity
    false_criticals: list[str] = field(default_factory=list)
    reader_failures: list[str] = field(default_factory=list)

    @property
    def unreadable(self) -> bool:
        return self.obs.error is not None

    def errors(self) -> list[str]:
        """Every broken promise of this run, one line each: unreadable, misses, false alarms (a warning or
        critical neither expected nor allowed, or over its cap), false criticals, reader failures."""
        name = self.case.name
        if self.unreadable:
            return [f"{name}: does not open: {self.obs.error}"]
        out = [f"{name}: expected {'|'.join(g)} not reported at {self.case.hit_at} or above" for g in self.misses]
        out += [f"{name}: false alarm {lab} ({sev})" for lab, sev in self.false_alarms.items()
                if lab not in self.false_criticals]
        out += [f"{name}: false critical {lab}" for lab in self.false_criticals]
        out += [f"{name}: reader: {r}" for r in self.reader_failures]
        return out


def worst_severity(pairs: Iterable[tuple[str, str]], to_label: Callable[[str], str | None]) -> dict[str, str]:
    """[(rule_id, severity)] -> {label: worst severity}; rules whose label is None are left out."""
    out: dict[str, str] = {}
    for rule_id, sev in pairs:
        label = to_label(rule_id)
        if label is not None and SEVERITY_RANK[sev] > SEVERITY_RANK.get(out.get(label, ""), 0):
            out[label] = sev
    return out


def _at_least(sev: str, bar: str) -> bool:
    return SEVERITY_RANK[sev] >= SEVERITY_RANK[bar]


def score_case(case: Case, obs: Observation) -> CaseScore:
    s = CaseScore(case, obs)
    if obs.error is not None:
        s.misses = list(case.expected)
        if case.reader.get("opens", True):
            s.reader_failures.append(f"does not open: {obs.error}")
        return s
    reported = obs.labels
    for group in case.expected:
        hit = any(lab in reported and _at_least(reported[lab], case.hit_at) for lab in group)
        (s.hits if hit else s.misses).append(group)
    expected = {lab for g in case.expected for lab in g}
    for lab, sev in reported.items():
        alarm = _at_least(sev, "warning") or (lab in expected and _at_least(sev, case.hit_at))
        within_cap = lab not in case.cap or SEVERITY_RANK[sev] <= SEVERITY_RANK[case.cap[lab]]
        false_critical = sev == "critical" and (lab not in case.critical_ok or not within_cap)
        if false_critical:
            s.false_criticals.append(lab)
        if not alarm:
            continue
        if (lab in expected or lab in case.allowed) and within_cap and not false_critical:
            s.correct[lab] = sev
        else:
            s.false_alarms[lab] = sev
    s.reader_failures += reader_failures(case.reader, obs)
    return s


def reader_failures(facts: Mapping[str, object], obs: Observation) -> list[str]:
    """What the labels say opening the run must give, against what it gave (checked where measurable)."""
    out = []
    steps = facts.get("steps")
    if isinstance(steps, int) and obs.steps is not None and obs.steps != steps:
        out.append(f"{obs.steps} steps read, {steps} expected")
    if facts.get("separate_launches") and obs.launches < 2:
        out.append("must open as separate launches: opened as one run")
    if facts.get("says_too_short") or facts.get("says_cannot_judge"):
        if obs.verdict is None:
            out.append("must say it cannot judge: the diagnosis gives no verdict")
        elif "judge" not in obs.verdict.lower():
            out.append(f"must say it cannot judge; verdict: {obs.verdict}")
    return out


@dataclass
class CorpusScore:
    name: str
    cases: list[CaseScore]

    def _count(self, fn) -> int:
        return sum(fn(c) for c in self.cases)

    @property
    def expected(self) -> int:
        return self._count(lambda c: len(c.case.expected))

    @property
    def hits(self) -> int:
        return self._count(lambda c: len(c.hits))

    @property
    def alarms(self) -> int:
        return self._count(lambda c: len(c.correct) + len(c.false_alarms))

    @property
    def recall(self) -> float | None:
        return self.hits / self.expected if self.expected else None

    @property
    def precision(self) -> float | None:
        return self._count(lambda c: len(c.correct)) / self.alarms if self.alarms else None

    @property
    def false_criticals(self) -> int:
        return self._count(lambda c: len(c.false_criticals))

    @property
    def unreadable(self) -> list[str]:
        return [c.case.name for c in self.cases if c.unreadable]

    def healthy_alarms(self) -> list[str]:
        """Healthy runs that raised a warning or critical not in their allowed labels."""
        return [f"{c.case.name}: {lab} ({sev})" for c in self.cases if c.case.healthy
                for lab, sev in c.false_alarms.items()]

    def errors(self) -> list[str]:
        """Every broken promise of every run (CaseScore.errors), healthy or failing."""
        return [line for c in self.cases for line in c.errors()]


def score_corpus(name: str, cases: list[Case], observations: Mapping[str, Observation]) -> CorpusScore:
    return CorpusScore(name, [score_case(c, observations[c.name]) for c in cases])


CONFUSION_COLUMNS = ("hit", "missed", "allowed", "false alarm", "false critical")


def confusion(score: CorpusScore) -> dict[str, dict[str, int]]:
    """Per label (or alternative group "a|b"): how often it was hit, missed, allowed, a false alarm or critical.

    A hit credits the group's reported labels; a miss is counted on the group (its alternatives joined by "|").
    """
    rows: dict[str, dict[str, int]] = {}

    def bump(label: str, col: str) -> None:
        rows.setdefault(label, dict.fromkeys(CONFUSION_COLUMNS, 0))[col] += 1

    for c in score.cases:
        expected = {lab for g in c.case.expected for lab in g}
        for g in c.hits:
            for lab in g:
                if lab in c.obs.labels and _at_least(c.obs.labels[lab], c.case.hit_at):
                    bump(lab, "hit")
        for g in c.misses:
            bump("|".join(g), "missed")
        for lab in c.correct:
            if lab not in expected:
                bump(lab, "allowed")
        for lab in c.false_alarms:
            bump(lab, "false alarm")
        for lab in c.false_criticals:
            bump(lab, "false critical")
    return dict(sorted(rows.items()))


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def summary_line(score: CorpusScore) -> str:
    return (f"{score.name}: {len(score.cases)} runs, recall {_fmt(score.recall)} ({score.hits}/{score.expected}), "
            f"precision {_fmt(score.precision)} ({score.alarms} alarms), false criticals {score.false_criticals}, "
            f"unreadable {len(score.unreadable)}")


def confusion_markdown(score: CorpusScore) -> str:
    rows = confusion(score)
    head = "| label | " + " | ".join(CONFUSION_COLUMNS) + " |"
    sep = "|---|" + "---:|" * len(CONFUSION_COLUMNS)
    body = [f"| `{lab}` | " + " | ".join(str(r[c] or "") for c in CONFUSION_COLUMNS) + " |" for lab, r in rows.items()]
    return "\n".join([head, sep, *body])


def run_lines(score: CorpusScore) -> list[str]:
    """One line per run: what it was expected to report and what went wrong."""
    out = []
    for c in score.cases:
        if c.unreadable:
            out.append(f"- `{c.case.name}`: does not open ({c.obs.error.splitlines()[0][:160]})")
            continue
        bits = [f"hit {', '.join('|'.join(g) for g in c.hits)}" if c.hits else ""]
        bits += [f"missed {', '.join('|'.join(g) for g in c.misses)}" if c.misses else ""]
        bits += [f"false alarm {', '.join(f'{k} ({v})' for k, v in c.false_alarms.items())}" if c.false_alarms else ""]
        bits += [f"false critical {', '.join(c.false_criticals)}" if c.false_criticals else ""]
        bits += [f"reader: {'; '.join(c.reader_failures)}" if c.reader_failures else ""]
        text = "; ".join(b for b in bits if b) or "nothing expected, nothing false"
        out.append(f"- `{c.case.name}`: {text}")
    return out


def report_markdown(scores: list[CorpusScore]) -> str:
    parts = []
    for s in scores:
        parts += [f"### {s.name}", "", summary_line(s), "", confusion_markdown(s), "", *run_lines(s), ""]
    return "\n".join(parts).rstrip() + "\n"

"""rldoctor (PyPI `rldoctor`, pinned in pyproject's `bench` extra) as a second diagnosis in our accuracy harness.

What rldoctor 0.2.0 is, read from its source (`rl_doctor/`): `load_run(path)` reads a `.jsonl` (one record per
line, an optional leading `{"config": ...}`), a `.csv`/`.tsv`, a `.json` (a HuggingFace `trainer_state.json`'s
`log_history`, or a list / `{"history": [...]}` of records), a folder of TensorBoard event files (tbparse, else
tensorboard's EventAccumulator), or a `wandb://` run over the network; `run_from_records(rows, config)` takes the
per-step dicts a loop already has. Keys resolve onto its canonical fields (`rl_doctor/aliases.py`). `diagnose(run)`
runs nine detectors, one `Finding` each, severity SKIPPED < OK < INFO < WARNING < CRITICAL. It reads no console
log, no wandb offline folder and no parquet.

Its detectors against the labels' symptom vocabulary (`../shared/fixtures/real-runs/README.md`; our rules name
theirs through `registry.symptom_of`). A detector that folds several checks into one finding is split into its
checks, each check's severity re-derived from the finding's `metrics` with rldoctor's own thresholds
(the module constants imported below), so one check's alarm is not charged to another's symptom:

| detector | check (rldoctor's words) | symptom | severity of the check |
|---|---|---|---|
| `advantage_collapse` | zero-variance groups, measured (`frac_reward_zero_std`) or estimated from the reward | `zero_variance` | the finding's |
| `entropy_collapse` | entropy at or heading for 10% of its start | `entropy_collapse` | the finding's |
| `reward_hacking` | training reward up, held-out score flat or down | `reward_up_eval_down` | the finding's |
| `length_pathology` | share of responses cut at the cap (last quarter) | `truncation` | >= 0.15 critical, >= 0.05 warning |
| `length_pathology` | length grew >= 50% with reward, not earned on a held-out score | `length_effect` | critical when it says "paid by the token", info for growth alone |
| `clip_saturation` | clip fraction (last quarter) | `kl_clip_explode` | >= 0.40 critical, >= 0.20 warning, >= 0.10 info |
| `clip_saturation` | lower-bound clipping >= 3x the upper ("starves exploration") | `entropy_collapse` | warning |
| `kl_drift` | KL high, extreme or accelerating | `kl_clip_explode` | the finding's |
| `kl_drift` | KL never above 1e-4: "the policy is pinned to the reference ... not training" | `no_learning` | warning |
| `gradient_pathology` | a non-finite gradient norm | `non_finite` | critical |
| `gradient_pathology` | exactly-zero gradient steps; the norm vanishing to 5% of its start | `no_learning` | zero steps >= 70% critical, >= 40% warning, >= 20% info; vanishing warning |
| `gradient_pathology` | gradient spikes | none in the vocabulary: not scored | |
| `reward_composition` | a task (non-format) reward component with < 2% of the reward variance | `reward_flat` | warning (info under 150 points) |
| `reward_composition` | an auxiliary term owning the reward variance | none in the vocabulary: not scored | |
| `plateau` | reward (or held-out score) stopped improving, or declining | `reward_flat` | the finding's |

Unscored checks are rldoctor's counterpart of our configuration audits (`symptom_of` None): neither counts as an
alarm. Where the re-derived checks do not reach the finding's own severity (not seen on any corpus), the finding's
severity goes to the detector's first symptom above, so no alarm is lost.

Which file it is given: the one a user would point it at (`target_candidates`): the newest checkpoint's
`trainer_state.json` (it holds the whole history), else a `.jsonl`, a `.csv`/`.tsv`, the folder when it holds
TensorBoard event files, another `.json`; the first that loads. A run of our own format (`run.json` and parquet
parts, which rldoctor cannot read) is handed over the way its README offers for a custom loop: the logged rows
as records to `run_from_records`, with the run's config; where its aliases do not know one of our names, the
key is named as `rl-doctor fields` lists it (NATIVE_KEYS, NATIVE_CONFIG), as a user reading its docs would do.
A run it cannot open is scored as unreadable, all its expected symptoms missed, as ours are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import rl_doctor
from rl_doctor import Severity
from rl_doctor.detectors import available
from rl_doctor.detectors import clip_saturation as _clip
from rl_doctor.detectors import grad_pathology as _grad
from rl_doctor.detectors import kl_drift as _kl
from rl_doctor.detectors import length_hacking as _len
from rl_doctor.detectors import reward_composition as _comp

from dashboard.diagnosis.accuracy.scoring import Case, Observation
from dashboard.diagnosis.registry import SYMPTOMS

# The labels' vocabulary: our registry's symptoms and `non_finite` (real-runs README, 7 row 3), which the labels use.
VOCABULARY = frozenset(SYMPTOMS) | {"non_finite"}
SEVERITY_NAME = {Severity.INFO: "info", Severity.WARNING: "warning", Severity.CRITICAL: "critical"}


def _at(x: float | None, levels: Iterable[tuple[float, Severity]]) -> Severity:
    """The severity of the first (threshold, severity) pair that x reaches; OK when none or x is None."""
    if x is None or not np.isfinite(x):
        return Severity.OK
    return next((sev for bar, sev in levels if x >= bar), Severity.OK)


def _truncation(f) -> Severity:
    return _at(f.metrics.get("truncation_rate"), ((_len._TRUNC_CRIT, Severity.CRITICAL), (_len._TRUNC_WARN, Severity.WARNING)))


def _length_growth(f) -> Severity:
    if "paid by the token" in f.summary:  # its hacking-and-unearned sentence, the only critical length check
        return Severity.CRITICAL
    return Severity.INFO if f.metrics.get("length_growth", 0.0) >= _len._GROWTH_WARN else Severity.OK


def _clip_level(f) -> Severity:
    return _at(f.metrics.get("clipfrac"), ((_clip._CLIP_CRIT, Severity.CRITICAL), (_clip._CLIP_WARN, Severity.WARNING),
                                           (_clip._CLIP_INFO, Severity.INFO)))


def _clip_asymmetry(f) -> Severity:
    m = f.metrics
    low_dominates = m.get("clip_asymmetry", 0.0) >= _clip._ASYM_RATIO and m.get("clipfrac_low", 0.0) >= 0.02
    return Severity.WARNING if low_dominates else Severity.OK


def _kl_pinned(f) -> bool:
    return f.metrics.get("kl_max", 1.0) <= _kl._KL_FLAT and not f.metrics.get("no_kl_term")


def _kl_high(f) -> Severity:
    return Severity.OK if _kl_pinned(f) else f.severity


def _kl_flat(f) -> Severity:
    return f.severity if _kl_pinned(f) else Severity.OK


def _grad_nonfinite(f) -> Severity:
    return Severity.CRITICAL if f.metrics.get("n_nonfinite", 0) else Severity.OK


def _grad_no_update(f) -> Severity:
    m = f.metrics
    zero = _at(m.get("zero_grad_step_frac"), ((_grad._ZERO_STEP_CRIT, Severity.CRITICAL),
                                              (_grad._ZERO_STEP_WARN, Severity.WARNING),
                                              (_grad._ZERO_STEP_INFO, Severity.INFO)))
    g0, g_now = m.get("grad_initial", 0.0), m.get("grad_current", 0.0)
    vanishing = Severity.WARNING if g0 > 0 and g_now / g0 <= _grad._VANISH_RATIO else Severity.OK
    return max(zero, vanishing)


def _grad_spikes(f) -> Severity:
    n = f.metrics.get("n_spikes", 0)
    return Severity.WARNING if n >= 3 else Severity.INFO if n else Severity.OK


def _dead_task_component(f) -> Severity:
    shares = f.metrics.get("variance_shares") or {}
    dead_task = [k for k, s in shares.items() if s < _comp._DEAD_SHARE
                 and not any(h in k.lower() for h in _comp._AUX_HINTS)]
    if not dead_task:
        return Severity.OK
    return Severity.WARNING if f.metrics.get("n_observations", 0) >= _comp._MIN_OBS_FOR_VERDICT else Severity.INFO


def _aux_dominates(f) -> Severity:
    return f.severity if _dead_task_component(f) < f.severity else Severity.OK


def _own(f) -> Severity:
    return f.severity


@dataclass(frozen=True)
class Check:
    detector: str
    check: str
    symptom: str | None  # None: no symptom of the vocabulary, not scored
    severity: Callable[[Any], Severity]  # Finding -> the severity of this check alone (OK: did not fire)


CHECKS = (
    Check("advantage_collapse", "zero-variance groups", "zero_variance", _own),
    Check("entropy_collapse", "entropy at or heading for its floor", "entropy_collapse", _own),
    Check("reward_hacking", "reward up, held-out score not", "reward_up_eval_down", _own),
    Check("length_pathology", "truncation at the length cap", "truncation", _truncation),
    Check("length_pathology", "length growth tracking reward", "length_effect", _length_growth),
    Check("clip_saturation", "clip fraction", "kl_clip_explode", _clip_level),
    Check("clip_saturation", "lower-bound clipping dominates", "entropy_collapse", _clip_asymmetry),
    Check("kl_drift", "KL high or accelerating", "kl_clip_explode", _kl_high),
    Check("kl_drift", "KL pinned near 0", "no_learning", _kl_flat),
    Check("gradient_pathology", "non-finite gradient norm", "non_finite", _grad_nonfinite),
    Check("gradient_pathology", "zero or vanishing gradient", "no_learning", _grad_no_update),
    Check("gradient_pathology", "gradient spikes", None, _grad_spikes),
    Check("reward_composition", "task component without variance", "reward_flat", _dead_task_component),
    Check("reward_composition", "auxiliary term dominates", None, _aux_dominates),
    Check("plateau", "reward or held-out score stopped improving", "reward_flat", _own),
)


def findings_to_symptoms(findings: Iterable[Any]) -> dict[str, str]:
    """rldoctor findings -> {symptom: worst severity} ("info", "warning", "critical"); OK and SKIPPED say nothing."""
    out: dict[str, Severity] = {}

    def put(symptom: str, sev: Severity) -> None:
        if sev >= Severity.INFO and sev > out.get(symptom, Severity.OK):
            out[symptom] = sev

    for f in findings:
        if f.severity < Severity.INFO:
            continue
        checks = [c for c in CHECKS if c.detector == f.detector]
        fired = [(c, c.severity(f)) for c in checks]
        for c, sev in fired:
            if c.symptom is not None:
                put(c.symptom, min(sev, f.severity))
        explained = max((sev for _, sev in fired), default=Severity.OK)
        primary = next((c.symptom for c in checks if c.symptom is not None), None)
        if explained < f.severity and primary is not None:
            put(primary, f.severity)
    return {k: SEVERITY_NAME[v] for k, v in out.items()}


# -- what rldoctor is pointed at -----------------------------------------------------------------------------


def _checkpoint_number(p: Path) -> int:
    m = re.search(r"checkpoint-(\d+)", p.parent.name)
    return int(m.group(1)) if m else -1


def target_candidates(folder: Path) -> list[Path]:
    """The files (or folder) a user would point rldoctor at, most likely first."""
    if folder.is_file():
        return [folder]
    states = [folder / "trainer_state.json"] if (folder / "trainer_state.json").is_file() else []
    states += sorted(folder.glob("checkpoint-*/trainer_state.json"), key=_checkpoint_number, reverse=True)
    tables = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jsonl", ".ndjson", ".csv", ".tsv"))
    events = [folder] if any(folder.rglob("events.out.tfevents.*")) else []
    others = sorted(p for p in folder.glob("*.json") if p.name != "trainer_state.json" and p.name != "run.json")
    return states + tables + events + others


# Our metric names rldoctor's aliases do not resolve, named as `rl-doctor fields` lists its own (the user of a custom
# loop reading its docs would); `loss/kl`, our KL loss term, which its suffix match takes for the KL, then goes.
NATIVE_KEYS = {"policy/kl_ref": "kl", "completions/len_mean": "response_len_mean",
               "completions/len_max": "response_len_max", "completions/truncated_frac": "response_len_clip_ratio",
               "policy/clipfrac_low": "pg_clipfrac_low", "policy/clipfrac_high": "pg_clipfrac_high",
               "perf/step_s": "time_per_step"}
# Our config keys (run.json) under the names rldoctor's config reader looks for (ingest/base.py _CONFIG_MAP; its
# plateau check reads `max_steps`).
NATIVE_CONFIG = {"rollout.group_size": "group_size", "rollout.max_new_tokens": "max_response_length",
                 "algo.kl_coef": "kl_coef", "algo.clip_eps_low": "clip_eps_low", "algo.clip_eps_high": "clip_eps_high",
                 "optim.lr": "learning_rate", "steps": "max_steps"}


def native_records(frame, config: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Our logged rows as records (unlogged NaN cells left out, names as NATIVE_KEYS) and the config facts."""
    frame = frame.drop(columns=[c for c in ("wall_time", "_seq") if c in frame.columns])
    if "policy/kl_ref" in frame.columns:
        frame = frame.drop(columns=[c for c in ("loss/kl",) if c in frame.columns])
    frame = frame.rename(columns=NATIVE_KEYS)
    rows = [{k: v for k, v in row.items() if not (isinstance(v, float) and np.isnan(v))}
            for row in frame.to_dict("records")]
    return rows, {theirs: config[ours] for ours, theirs in NATIVE_CONFIG.items() if ours in config}


def _from_native(folder: Path):
    """Our own run format, handed over as a custom loop's records with its config."""
    from collectors import sources

    (run,) = sources.open_runs(str(folder))
    rows, config = native_records(run.metrics, run.meta.config or {})
    return rl_doctor.run_from_records(rows, config=config, name=folder.name, source=f"records:{folder}")


def open_rldoctor(path: str | Path):
    """The rldoctor Run of a case's target; ValueError naming what was tried when nothing loads."""
    folder = Path(path)
    if (folder / "run.json").is_file() and (folder / "metrics").is_dir():
        return _from_native(folder)
    tried = []
    for cand in target_candidates(folder):
        try:
            run = rl_doctor.load_run(str(cand))
        except Exception as e:  # noqa: BLE001 - rldoctor's own error: try the next file a user would try
            tried.append(f"{cand.name}: {type(e).__name__}: {e}")
            continue
        if run.n_steps:
            return run
        tried.append(f"{cand.name}: no steps")
    raise ValueError(f"{folder}: no file rldoctor reads" + (f" ({'; '.join(tried)})" if tried else
                                                            " (no trainer_state.json, JSONL, CSV or event file)"))


def observe_rldoctor(case: Case, to_label: Callable[[str], str | None] | None = None) -> Observation:
    """rldoctor's diagnosis of the case's run as an Observation in symptom labels (or why it did not open)."""
    try:
        run = open_rldoctor(case.path)
        diagnosis = rl_doctor.diagnose(run)
    except Exception as e:  # noqa: BLE001 - a run rldoctor cannot open is a scored miss, as ours are
        return Observation({}, error=f"{type(e).__name__}: {e}")
    return Observation(findings_to_symptoms(diagnosis.findings), steps=run.n_steps)


def run_until(run, step: float):
    """An rldoctor Run cut after `step` (its records up to it), for replaying a run as it stood then."""
    keep = run.steps <= step
    return replace(run, steps=run.steps[keep], series={k: v[keep] for k, v in run.series.items()},
                   reward_components={k: v[keep] for k, v in run.reward_components.items()},
                   nonfinite_steps={k: [s for s in v if s <= step] for k, v in run.nonfinite_steps.items()})


# -- our rule-labelled manifests in the symptom vocabulary ---------------------------------------------------


def symptom_case(case: Case, to_symptom: Callable[[str], str | None]) -> Case:
    """A case labelled with rule ids (sample_runs, the TRL corpus) relabelled with their symptoms, so both tools are
    scored in one vocabulary. Expected rules without a symptom (configuration audits) drop out; two rules of one
    symptom are one group; an allowed symptom's cap is the highest of its rules' caps, none when it is expected."""
    groups = []
    for g in case.expected:
        sg = tuple(dict.fromkeys(s for r in g if (s := to_symptom(r)) is not None))
        if sg and sg not in groups:
            groups.append(sg)
    expected = {s for g in groups for s in g}
    rank = {"info": 1, "warning": 2, "critical": 3}
    cap: dict[str, str] = {}
    for rule_id, c in case.cap.items():
        s = to_symptom(rule_id)
        if s is not None and s not in expected and rank[c] > rank.get(cap.get(s, ""), 0):
            cap[s] = c
    allowed = frozenset(s for r in case.allowed if (s := to_symptom(r)) is not None)
    critical_ok = frozenset(s for r in case.critical_ok if (s := to_symptom(r)) is not None)
    return replace(case, expected=tuple(groups), allowed=allowed, cap=cap, critical_ok=critical_ok)


def check_table() -> list[str]:
    """Problems with CHECKS against the installed rldoctor and the vocabulary (empty: consistent)."""
    known = set(available())
    out = [f"{c.detector}: not an rldoctor detector" for c in CHECKS if c.detector not in known]
    out += [f"{d}: rldoctor detector with no row" for d in sorted(known - {c.detector for c in CHECKS})]
    out += [f"{c.detector}/{c.check}: {c.symptom} not in the vocabulary" for c in CHECKS
            if c.symptom is not None and c.symptom not in VOCABULARY]
    return out

"""How well the diagnosis holds when the same runs reach it as other people log them: every N steps, without
samples, without the config. A rule that is right only on the logs it was built on loses recall or gains false
alarms here; that is the gap a run nobody here has seen falls into.

    python benchmarks/diagnosis_robustness.py [--views NAME ...] [--real-runs PATH] [--runs] [--as-others]

Each labelled corpus (dashboard/diagnosis/accuracy/corpora.py: sample_runs/, the TRL corpus, the real runs when
../shared is beside the project) is opened as usual, then seen through a view and scored with the same scoring
as scripts/score_diagnosis.py. Views:
- `as_logged`: the run as it is (the figures score_diagnosis.py prints);
- `every_N`: only the steps a trainer logging every N steps keeps (step % N == 0: TRL's logging_steps = N gives
  N, 2N, ...; our trainer's step 0 stays), and only those steps' samples;
- `no_samples`: no response rows (most frameworks log none);
- `no_config`: no configuration (a metrics export without its config);
- `bare`: neither samples nor config.
With `--as-others`, instead, every labelled real run is written again as other people name and shape their logs
(benchmarks/as_others_name_it.py) and each shape's diagnosis compared with the plain one's.
Expected labels stay those of the full run, so a view that removes the evidence of a failure counts as a miss:
the figures say how much each kind of evidence carries, not only what the rules get wrong.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dashboard.diagnosis.accuracy import corpora as K
from dashboard.diagnosis.accuracy.scoring import CorpusScore, score_corpus
from dashboard.diagnosis.registry import symptom_of


class View:
    """A run as the diagnosis reads it (context.RunData): metrics, meta.config/source, samples(), nan_at."""

    def __init__(self, run: Any, metrics: pd.DataFrame, samples: pd.DataFrame | None, config: dict) -> None:
        self.metrics, self._samples = metrics, samples
        self.meta = SimpleNamespace(config=config, source=getattr(run.meta, "source", ""))
        self.nan_known = getattr(run, "nan_known", False)
        steps = set(metrics["step"].tolist())
        self.nan_at = {k: {s for s in v if s in steps} for k, v in (getattr(run, "nan_at", None) or {}).items()}

    def samples(self) -> pd.DataFrame | None:
        return self._samples


def _samples(run: Any) -> pd.DataFrame | None:
    try:
        return run.samples()
    except Exception:  # noqa: BLE001 - a reader without samples: the view has none either
        return None


def every(n: int) -> Callable[[Any], View]:
    """The view of a run logged every `n` steps: rows (and samples) of the steps with step % n == 0."""
    def view(run: Any) -> View:
        m = run.metrics
        m = m[m["step"] % n == 0].reset_index(drop=True)
        s = _samples(run)
        if s is not None and len(s):
            s = s[s["step"].isin(set(m["step"].tolist()))].reset_index(drop=True)
        return View(run, m, s, dict(run.meta.config or {}))
    return view


def without(samples: bool, config: bool) -> Callable[[Any], View]:
    def view(run: Any) -> View:
        return View(run, run.metrics, None if samples else _samples(run), {} if config else dict(run.meta.config or {}))
    return view


VIEWS: dict[str, Callable[[Any], Any] | None] = {
    "as_logged": None, "every_2": every(2), "every_5": every(5), "every_10": every(10),
    "no_samples": without(samples=True, config=False), "no_config": without(samples=False, config=True),
    "bare": without(samples=True, config=True),
}


def corpora(real_runs: Path) -> list[tuple[str, list, Callable[[str], str | None]]]:
    out = [(name, K.manifest_cases(folder), K.rule_label)
           for name, folder in (("sample_runs", K.SAMPLE_RUNS), ("trl_corpus", K.TRL_CORPUS))
           if (folder / "manifest.json").is_file()]
    if (real_runs / "labels.json").is_file():
        out.append(("real_runs", K.label_cases(real_runs), symptom_of))
    return out


def score_view(view: Callable[[Any], Any] | None, name: str, cases: list, to_label) -> CorpusScore:
    """One corpus scored through one view (None: as logged). Each run is opened once per view."""
    def opener(target: str) -> list:
        runs = K.open_all(target)
        return runs if view is None else [view(r) for r in runs]
    return score_corpus(name, cases, {c.name: K.observe(c, to_label, opener) for c in cases})


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--views", nargs="*", default=list(VIEWS), choices=list(VIEWS))
    ap.add_argument("--real-runs", type=Path, default=K.REAL_RUNS)
    ap.add_argument("--runs", action="store_true", help="also list each view's misses and false alarms")
    ap.add_argument("--as-others", action="store_true",
                    help="instead: each labelled real run re-written as others name it (benchmarks/as_others_name_it.py)")
    args = ap.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    if args.as_others:
        return as_others(args.real_runs, args.runs)
    print("| view | corpus | runs | recall | precision | alarms | false criticals |")
    print("|---|---|---:|---:|---:|---:|---:|")
    details = []
    for vname in args.views:
        for cname, cases, to_label in corpora(args.real_runs):
            s = score_view(VIEWS[vname], cname, cases, to_label)
            print(f"| {vname} | {cname} | {len(cases)} | {_pct(s.recall)} ({s.hits}/{s.expected}) | "
                  f"{_pct(s.precision)} | {s.alarms} | {s.false_criticals} |", flush=True)
            details += [f"- {vname} {cname}: {line}" for line in s.errors()]
    if args.runs and details:
        print("\n" + "\n".join(details))
    return 0


def as_others(real_runs: Path, runs: bool) -> int:
    """The "as others name it" table: per shape, the labelled real runs whose diagnosis is the baseline's."""
    from benchmarks.as_others_name_it import SHAPES, compare_run

    cases = K.label_cases(real_runs) if (real_runs / "labels.json").is_file() else []
    if not cases:
        print(f"no labelled real runs at {real_runs}")
        return 1
    results = {}
    for c in cases:
        try:
            results[c.name] = compare_run(c.path)
        except Exception as e:  # noqa: BLE001 - a run that does not open at all: every shape differs
            results[c.name] = {s: (False, f"the run does not open: {type(e).__name__}") for s in SHAPES}
    print("| shape | runs | same diagnosis | share |")
    print("|---|---:|---:|---:|")
    for shape in SHAPES:
        same = sum(r[shape][0] for r in results.values())
        print(f"| {shape} | {len(results)} | {same} | {_pct(same / len(results))} |")
    total = sum(all(ok for ok, _ in r.values()) for r in results.values())
    print(f"| every shape | {len(results)} | {total} | {_pct(total / len(results))} |")
    if runs:
        for name, r in results.items():
            for shape, (ok, why) in r.items():
                if not ok:
                    print(f"- {shape} {name}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

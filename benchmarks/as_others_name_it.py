""""As others name it": every labelled real run written again the way other people write their logs, opened by
the readers and diagnosed; the diagnosis must be the one of the same numbers written plainly (issue 36).

    python benchmarks/diagnosis_robustness.py --as-others [--real-runs PATH] [--runs]

Each launch of each run is opened as usual; its metrics frame (canonical names) is written as a plain JSONL
(`step` and canonical names: the baseline) and in each shape below, into a temporary folder, with neither
samples nor config (what reading can recover is the question, not what a config adds):
- `renamed`: the step as `optimizer_step`, the reward as `score`, the pass rate as `success_rate`;
- `no_step`: a CSV with no step column (one row per logged step, in order);
- `eval_rows`: eval metrics on rows of their own (`"split": "eval"`) between the train rows, at their steps;
- `per_response`: the reward's mean and spread as a list of per-response rewards (`"rewards": [[m - s], [m + s]]`,
  groups of one, so no tie is made up) in place of reward/mean and reward/std;
- `markdown`: Trainer-style console dicts (as transformers prints them, not TRL's own keys) (`{'loss': ..., 'reward': ...}` with tqdm bars) inside a Markdown file;
- `companions`: a CSV with `<metric>_available` and `<metric>_reason` beside every metric, a placeholder 0
  where the value was not logged.
A shape is "the same" for a run when every launch gives the same findings at warning or above (rule and
severity) as its baseline. `no_step` renumbers the steps 1, 2, ...: a run logged every N steps is then read as
logging every step, and rules that count steps may differ; the table says how often.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dashboard.diagnosis.engine import diagnose

KEEP = ("step",)
# canonical name -> how the shapes that rename write it (names the readers must recognise by guessing)
RENAMED = {"step": "optimizer_step", "reward/mean": "score", "reward/pass_rate": "success_rate"}
CONSOLE = {"reward/mean": "reward", "loss/total": "loss", "optim/lr": "learning_rate", "optim/grad_norm": "grad_norm"}


def _metric_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c not in ("step", "wall_time", "_seq") and frame[c].notna().any()]


def _rows(frame: pd.DataFrame, names: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The frame's rows as dicts of its given values, renamed by `names`."""
    names = names or {}
    cols = ["step", *_metric_columns(frame)]
    logged_nan = frame.attrs.get("logged_nan", {})
    out = []
    for rec in frame[cols].to_dict("records"):
        step = int(rec["step"])
        row = {names.get("step", "step"): step}
        for k, v in rec.items():
            if k == "step" or v is None:
                continue
            if isinstance(v, float) and math.isnan(v) and step not in logged_nan.get(k, ()):
                continue  # not logged at this step (a NaN the log wrote stays one)
            row[names.get(k, k)] = float(v)
        out.append(row)
    return out


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def baseline(frame: pd.DataFrame, folder: Path) -> Path:
    return _jsonl(folder / "metrics.jsonl", _rows(frame))


def renamed(frame: pd.DataFrame, folder: Path) -> Path:
    return _jsonl(folder / "metrics.jsonl", _rows(frame, RENAMED))


def _csv_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows as a table for a CSV, a logged NaN written `nan` (as Python's csv and pandas loggers print it) and
    a value not logged at a step left empty."""
    return pd.DataFrame([{k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
                         for r in _rows(frame)])


def no_step(frame: pd.DataFrame, folder: Path) -> Path:
    f = folder / "metrics.csv"
    _csv_rows(frame).drop(columns=["step"]).to_csv(f, index=False)
    return f


def eval_rows(frame: pd.DataFrame, folder: Path) -> Path:
    out = []
    for r in _rows(frame):
        train = {k: v for k, v in r.items() if not k.startswith("eval/")}
        ev = {k[len("eval/"):]: v for k, v in r.items() if k.startswith("eval/")}
        out.append({"split": "train", **train})
        if ev:
            names = {"reward_mean": "reward", "pass_rate": "accuracy"}
            out.append({"split": "eval", "step": r["step"], **{names.get(k, k): v for k, v in ev.items()}})
    return _jsonl(folder / "metrics.jsonl", out)


def per_response(frame: pd.DataFrame, folder: Path) -> Path:
    out = []
    for r in _rows(frame):
        m, s = r.pop("reward/mean", None), r.pop("reward/std", None)
        if m is not None and s is not None and math.isfinite(m) and math.isfinite(s):
            r["rewards"] = [[m - s], [m + s]]  # mean m, population std s
        elif m is not None and math.isfinite(m):
            r["rewards"] = [[m]]  # no spread logged: one value, whose spread the reader leaves unknown
            if s is not None:
                r["reward/std"] = s
        else:
            r.update({k: v for k, v in (("reward/mean", m), ("reward/std", s)) if v is not None})
        out.append(r)
    return _jsonl(folder / "metrics.jsonl", out)


def markdown(frame: pd.DataFrame, folder: Path) -> Path:
    rows = _rows(frame, CONSOLE)
    total = max(int(frame["step"].max()), 1)
    lines = ["# Training logs", "", "```text", "Loading checkpoint shards: 100%"]
    for r in rows:
        n = r.pop("step")
        items = ", ".join(f"'{k}': {_py(v)}" for k, v in r.items())
        bar = f"{100 * n // total:3d}%|#         | {n}/{total} [00:10<01:00,  1.00s/it]"
        lines.append(f"\r{bar}\r{' ' * 60}\r{{{items}}}\n\r{bar}")
    lines += ["```", ""]
    f = folder / "run_terminal.md"
    f.write_text("\n".join(lines))
    return f


def _py(v: float) -> str:
    return "nan" if math.isnan(v) else repr(float(v))


def companions(frame: pd.DataFrame, folder: Path) -> Path:
    table = _csv_rows(frame)
    parts = {"step": table["step"]}
    for c in [c for c in table.columns if c != "step"]:
        given = table[c].notna()
        parts[c] = table[c].where(given, 0.0)
        parts[f"{c}_available"] = given
        parts[f"{c}_reason"] = pd.Series(np.where(given, "", "not measured at this step"), index=table.index)
    table = pd.DataFrame(parts)
    f = folder / "metrics.csv"
    table.to_csv(f, index=False)
    return f


SHAPES: dict[str, Callable[[pd.DataFrame, Path], Path]] = {
    "renamed": renamed, "no_step": no_step, "eval_rows": eval_rows, "per_response": per_response,
    "markdown": markdown, "companions": companions,
}


def findings(path: Path) -> frozenset[tuple[str, str]]:
    """(rule, severity) of every finding at warning or above of each run the file opens as."""
    from collectors.sources import open_runs

    out = set()
    for run in open_runs(str(path)):
        out |= {(f.rule_id, f.severity) for f in diagnose(run).findings if f.severity in ("warning", "critical")}
    return frozenset(out)


def compare_run(target: str) -> dict[str, tuple[bool, str]]:
    """{shape: (same diagnosis as the baseline on every launch, what differed)} for one labelled run."""
    from collectors.sources import open_runs

    result: dict[str, tuple[bool, str]] = {s: (True, "") for s in SHAPES}
    for run in open_runs(target):
        frame = run.metrics.copy()
        frame.attrs["logged_nan"] = {k: set(v) for k, v in (getattr(run, "nan_at", None) or {}).items()}
        with tempfile.TemporaryDirectory() as tmp:
            base_dir = Path(tmp) / "baseline"
            base_dir.mkdir()
            want = findings(baseline(frame, base_dir))
            for name, shape in SHAPES.items():
                d = Path(tmp) / name
                d.mkdir()
                try:
                    got = findings(shape(frame, d))
                except Exception as e:  # noqa: BLE001 - a shape that does not open is a difference, reported
                    got, why = None, f"does not open: {type(e).__name__}: {str(e)[:120]}"
                else:
                    why = "" if got == want else (f"lost {sorted(want - got)}" if want - got else "") + \
                        (f" gained {sorted(got - want)}" if got - want else "")
                if got != want and result[name][0]:
                    result[name] = (False, why.strip())
    return result

"""Valid files to mutate, for every registered source, found by asking the registry itself.

Seeds come from the project's sample runs, its TRL corpus (tests/fixtures/trl_corpus: TRL's GRPOTrainer wrote
them), the real published runs in ../shared/fixtures/real-runs/ (when present; read in place, copied only into a
temporary folder per case), and files made here by the libraries that write them in practice: pandas' CSV, verl's
file-logger JSONL and rollout dumps (tests/fixtures/verl_logs.py, as verl's own code writes them), a TensorBoard
event file from torch's SummaryWriter, a wandb offline run written by wandb itself, a Trainer console from
transformers' ProgressCallback, an OpenRLHF console from Python's logging in OpenRLHF's format, and a custom
trainer's `name: value` log. So every reader that reads a file has seeds without ../shared. A new reader is held to the
fuzzing as soon as it registers: every candidate is offered to every source's `detect`.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
from fixtures.notebooks import write_notebook
from fixtures.swanlab_runs import have_swanlab, verl_rows, write_run
from fixtures.tb_scalar_csv import download_scalars
from fixtures.tracker_stores import stores_copy
from fixtures.verl_logs import file_logger_line, generations_jsonl  # tests/ is on sys.path
from fixtures.wandb_chart import write_chart

from collectors import sources
from collectors.readers.keymap import OPENRLHF, TRL, VERL
from helpers.paths import REPO

SAMPLE_RUNS = REPO / "sample_runs"
TRL_CORPUS = REPO / "tests" / "fixtures" / "trl_corpus"
REAL_RUNS = REPO.parent / "shared" / "fixtures" / "real-runs"
# Sources that read no file of their own; each says why it is not fuzzed here.
NO_FILES = {"wandb-online": "reads a wandb:// URI through the W&B API; no file to mutate"}
if not have_swanlab():  # its seeds are runs swanlab writes (the dev extra); the reader itself needs no swanlab
    NO_FILES["swanlab"] = "swanlab is not installed here to write its runs: pip install 'grposcope[dev]'"
_NOT_DATA = {"SOURCE.txt", "README.md", "labels.json", "manifest.json"}
SEEDS_PER_SOURCE = 4
MAX_SEED_BYTES = 2 << 20  # larger seeds make each case slow without finding more


def make_generated(folder: Path) -> Path:
    """Files the libraries users log with would write: a pandas CSV, verl's JSONL metrics and rollout dumps."""
    folder.mkdir(parents=True, exist_ok=True)
    metrics = pd.read_parquet(SAMPLE_RUNS / "healthy" / "metrics").drop(columns=["_seq"]).head(40)
    csv_dir = folder / "generic_csv"
    csv_dir.mkdir(exist_ok=True)
    metrics.to_csv(csv_dir / "metrics.csv", index=False)
    theirs = {ours: mine for mine, ours in VERL.items()}
    verl_dir = folder / "verl_jsonl"
    (verl_dir / "rollout").mkdir(parents=True, exist_ok=True)
    with (verl_dir / "metrics.jsonl").open("w") as f:  # verl's FileLogger: {"step": n, "data": {...}}
        for row in metrics.to_dict("records"):
            f.write(file_logger_line(int(row["step"]), {theirs.get(k, k): v for k, v in row.items() if k != "step"}))
    samples = pd.read_parquet(SAMPLE_RUNS / "healthy" / "samples")
    for step, rows in list(samples.groupby("step"))[:3]:  # verl's rollout dump: {step}.jsonl, one response a line
        (verl_dir / "rollout" / f"{int(step)}.jsonl").write_text(generations_jsonl(
            int(step), rows["prompt"].tolist(), rows["completion"].tolist(), rows["reward"].tolist()))
    theirs_trl = {ours: mine for mine, ours in TRL.items()}
    trl_rows = [{theirs_trl.get(k, k): v for k, v in row.items() if k != "step" and _finite(v)}
                for row in metrics.to_dict("records")]
    _tensorboard(folder / "tensorboard", trl_rows)
    download_scalars(folder / "tensorboard", folder / "tensorboard_csv")  # TensorBoard's own CSV of each tag
    _wandb_offline(folder / "wandb", trl_rows)
    _wandb_chart(folder / "wandb_chart", trl_rows)
    (folder / "notebook").mkdir(exist_ok=True)  # a notebook holding the Trainer's table (nbformat, transformers)
    write_notebook(folder / "notebook" / "grpo.ipynb", [[{"step": i + 1, "loss": 0.0, **r}
                                                         for i, r in enumerate(trl_rows[:20])]])
    _trainer_console(folder / "trl_console", trl_rows)
    _custom_log(folder / "custom_log", metrics)
    _openrlhf_console(folder / "openrlhf_console", metrics)
    _text_tables(folder / "text_tables", metrics)
    if have_swanlab():  # a swanlog/ written by swanlab in local mode, as verl's tracker logs
        write_run(folder / "swanlog", "local", rows=verl_rows(12))
    stores_copy(folder / "trackers")  # a trackio project, mlflow.db and mlruns/ written by trackio and MLflow
    trl_state = REAL_RUNS / "trl_trading_agent" / "trainer_state.json"
    if trl_state.is_file():  # TRL's output folder with log_completions: completions/*.parquet written by pandas
        trl_dir = folder / "trl_completions"
        (trl_dir / "completions").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(trl_state, trl_dir / "trainer_state.json")
        for step, rows in list(samples.groupby("step"))[:2]:
            pd.DataFrame({"step": rows["step"], "prompt": rows["prompt"], "completion": rows["completion"],
                          "accuracy_reward": rows["reward"], "advantage": rows["advantage"]}).to_parquet(
                trl_dir / "completions" / f"completions_{int(step) + 1:05d}.parquet")
    return folder


def _wandb_chart(folder: Path, rows: list[dict]) -> None:
    """Two charts of two runs as the W&B UI exports them (tests/fixtures/wandb_chart.py), the TRL keys."""
    folder.mkdir(parents=True, exist_ok=True)
    for key in ("reward", "kl"):
        runs = {name: {s + 1: {f"train/{key}": r[key] * scale} for s, r in enumerate(rows) if key in r}
                for name, scale in (("grpo-a", 1.0), ("grpo-b", 0.5))}
        write_chart(folder / f"{key}.csv", runs, [f"train/{key}"])


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def _run_script(script: str, *args: str, cwd: Path, out: Path | None = None) -> None:
    """`script` in a fresh interpreter (a library's own process, as a training script's), its stdout and stderr
    into `out` (a console redirected to a file) or discarded; a failure raises with the end of its output."""
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "HOME": str(cwd),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    sink = out.open("wb") if out else subprocess.DEVNULL
    try:
        proc = subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, env=env, stdout=sink,
                              stderr=subprocess.STDOUT if out else subprocess.PIPE, timeout=300, check=False)
    finally:
        if out:
            sink.close()
    tail = out.read_text(errors="replace")[-2000:] if out else proc.stderr.decode(errors="replace")[-2000:]
    assert proc.returncode == 0, f"seed script failed: {tail}"


def _tensorboard(folder: Path, rows: list[dict]) -> None:
    """An event file as transformers' TensorBoardCallback writes one: torch's SummaryWriter, `train/<key>` tags."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(log_dir=str(folder))
    for step, row in enumerate(rows, start=1):
        for k, v in row.items():
            w.add_scalar(f"train/{k}", v, step)
    w.close()


WANDB_SCRIPT = """
import json, sys, wandb
rows = json.loads(open(sys.argv[1]).read())
run = wandb.init(project="seed", name="seed", dir=sys.argv[2], config={"learning_rate": 5e-4, "num_generations": 8})
for step, row in enumerate(rows, start=1):
    wandb.log({f"train/{k}": v for k, v in row.items()}, step=step)
run.finish()
"""


def _wandb_offline(folder: Path, rows: list[dict]) -> None:
    """A wandb offline run (wandb/offline-run-*/run-*.wandb) written by wandb itself, as TRL's WandbCallback logs."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rows.json").write_text(json.dumps(rows))
    _run_script(WANDB_SCRIPT, str(folder / "rows.json"), str(folder), cwd=folder)
    (folder / "rows.json").unlink()
    (folder / "wandb" / "latest-run").unlink(missing_ok=True)  # a link to the run folder: seed the folder once


CONSOLE_SCRIPT = """
import json, sys
from transformers import TrainerControl, TrainerState, TrainingArguments
from transformers.trainer_callback import ProgressCallback
rows = json.loads(open(sys.argv[1]).read())
args = TrainingArguments(output_dir=sys.argv[2], logging_steps=1, report_to=[])
print(args, flush=True)  # scripts print their config; the reader can take logging_steps from it
state, control, bar = TrainerState(max_steps=len(rows)), TrainerControl(), ProgressCallback()
bar.on_train_begin(args, state, control)
for step, row in enumerate(rows, start=1):
    state.global_step = step
    bar.on_step_end(args, state, control)
    bar.on_log(args, state, control, logs=row)
bar.on_train_end(args, state, control)
"""


def _trainer_console(folder: Path, rows: list[dict]) -> None:
    """A Trainer's console (`python train.py > train.log 2>&1`): transformers' ProgressCallback draws the tqdm bar
    and writes each log dict with tqdm.write, as in a TRL run; the TrainerState is driven step by step."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rows.json").write_text(json.dumps(rows))
    _run_script(CONSOLE_SCRIPT, str(folder / "rows.json"), str(folder / "out"), cwd=folder, out=folder / "train.log")
    (folder / "rows.json").unlink()
    shutil.rmtree(folder / "out", ignore_errors=True)


def _custom_log(folder: Path, metrics: pd.DataFrame) -> None:
    """A custom trainer's console: one `Name: value` line a step, between other prints (the kvtext reader's form)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["loading model ...", "starting training"]
    for row in metrics.to_dict("records"):
        lines.append(f"Step {int(row['step'])}/{len(metrics)} | Reward: {row['reward/mean']:.4f}, "
                     f"KL_ref: {row['policy/kl_ref']:.4f}, Entropy: {row['policy/entropy']:.4f}, "
                     f"Avg Response Len: {row['completions/len_mean']:.2f}")
    (folder / "train.log").write_text("\n".join(lines) + "\n")


def _openrlhf_console(folder: Path, metrics: pd.DataFrame) -> None:
    """OpenRLHF's console: PPOTrainer.fit logs `✨ Global step N: {status}` after each step through its logger
    (openrlhf/utils/logging_utils.py: "%(levelname)s %(asctime)s %(filename)s:%(lineno)d] %(message)s", dates as
    "%m-%d %H:%M:%S"), written here by Python's logging with that format; Ray prefixes the actor."""
    import logging

    folder.mkdir(parents=True, exist_ok=True)
    theirs = {ours: mine for mine, ours in OPENRLHF.items()}
    handler = logging.FileHandler(folder / "train.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("(PPOTrainer pid=4242) %(levelname)s %(asctime)s %(filename)s:%(lineno)d]"
                                           " %(message)s", "%m-%d %H:%M:%S"))
    log = logging.getLogger("grposcope.fuzz.openrlhf_seed")
    log.propagate, log.level = False, logging.INFO
    log.addHandler(handler)
    try:
        for row in metrics.to_dict("records"):
            status = {theirs.get(k, k): float(v) for k, v in row.items() if k != "step" and _finite(v)}
            log.info(f"✨ Global step {int(row['step']) + 1}: {status}")
    finally:
        log.removeHandler(handler)
        handler.close()


def _text_tables(folder: Path, metrics: pd.DataFrame) -> None:
    """Metrics tables printed in text (the text-table reader's forms): pandas' aligned `to_string` columns in a
    console log, and a Markdown pipe table among prose, as a results note writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    table = metrics[["step", "reward/mean", "policy/kl_ref", "completions/len_mean"]].head(20)
    table = table.rename(columns={"reward/mean": "reward", "policy/kl_ref": "kl",
                                  "completions/len_mean": "completion_length"})
    (folder / "train.log").write_text("loading model ...\n" + table.to_string(index=False) + "\ndone\n")
    pipe = ["| " + " | ".join(table.columns) + " |", "|" + "---:|" * len(table.columns)]
    pipe += ["| " + " | ".join(f"{v:g}" for v in row) + " |" for row in table.itertuples(index=False)]
    (folder / "results.md").write_text("# Run\n\nThe reward per step:\n\n" + "\n".join(pipe) + "\n")


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _candidates(root: Path) -> list[Path]:
    out = []
    for p in sorted(root.rglob("*")):
        depth = len(p.relative_to(root).parts)
        if depth <= 3 and p.name not in _NOT_DATA and p.parent.name not in ("metrics", "samples"):
            out.append(p)
    return out


def find_seeds(roots: list[Path]) -> dict[str, list[Path]]:
    """{source name: up to SEEDS_PER_SOURCE smallest targets it detects}, over every registered source."""
    sources._load_readers()
    found: dict[str, list[Path]] = {name: [] for name in sources.SOURCES}
    for root in roots:
        if not root.is_dir():
            continue
        for p in _candidates(root):
            for name, src in sources.SOURCES.items():
                if name in NO_FILES:
                    continue
                try:
                    hit = src.detect(str(p))
                except Exception:  # noqa: BLE001, S112 - a detect that raises on a valid file is a fuzz finding too
                    continue
                if hit:
                    found[name].append(p)
    return {name: _varied(paths) for name, paths in found.items()}


def _varied(paths: list[Path]) -> list[Path]:
    """The smallest seed of each shape (folder or file suffix, per seed root), smallest shapes first."""
    paths = sorted([p for p in paths if _size(p) <= MAX_SEED_BYTES] or paths, key=lambda p: (_size(p), str(p)))
    shapes: dict[tuple, Path] = {}
    for p in paths:
        root = next((r for r in (SAMPLE_RUNS, TRL_CORPUS, REAL_RUNS) if p.is_relative_to(r)), None)
        shapes.setdefault((root, p.is_dir(), p.suffix), p)
    return list(shapes.values())[:SEEDS_PER_SOURCE]


HEAD_BYTES = 256 << 10
_TEXT = (".log", ".txt", ".jsonl", ".csv")


def make_heads(folder: Path, roots: list[Path]) -> Path:
    """The first 256 KiB (to a line end) of each large text log: the same log as it stood earlier in its run,
    small enough that ten thousand cases read it in minutes."""
    for root in roots:
        if not root.is_dir():
            continue
        for p in root.rglob("*"):
            if p.suffix in _TEXT and p.is_file() and p.stat().st_size > MAX_SEED_BYTES:
                with p.open("rb") as f:
                    head = f.read(HEAD_BYTES)
                dest = folder / p.parent.relative_to(root) / p.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(head[: head.rfind(b"\n") + 1])
    return folder


def default_roots(generated: Path) -> list[Path]:
    return [SAMPLE_RUNS, TRL_CORPUS, REAL_RUNS, make_generated(generated), make_heads(generated / "heads", [REAL_RUNS])]


def copy_seed(seed: Path, dest: Path) -> Path:
    """A fresh copy of `seed` under `dest` (a file keeps its name); return the copied target."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    target = dest / seed.name
    if seed.is_dir():
        shutil.copytree(seed, target, ignore=shutil.ignore_patterns(*_NOT_DATA))
    else:
        shutil.copyfile(seed, target)
    for p in [target, *target.rglob("*")] if target.is_dir() else [target]:
        p.chmod(0o755 if p.is_dir() else 0o644)  # the shared fixtures are read-only
    return target

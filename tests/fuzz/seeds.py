"""Valid files to mutate, for every registered source, found by asking the registry itself.

Seeds come from the project's sample runs, from the real published runs in ../shared/fixtures/real-runs/
(when present; read in place, copied only into a temporary folder per case), and from a few files made here
by the libraries that write them in practice (pandas' CSV, verl's file-logger JSONL written with json, as
verl does). A new reader is held to the fuzzing as soon as it registers: every candidate is offered to every
source's `detect`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from collectors import sources
from collectors.readers.keymap import VERL

REPO = Path(__file__).resolve().parents[2]
SAMPLE_RUNS = REPO / "sample_runs"
REAL_RUNS = REPO.parent / "shared" / "fixtures" / "real-runs"
# Sources that read no file of their own; each says why it is not fuzzed here.
NO_FILES = {"wandb-online": "reads a wandb:// URI through the W&B API; no file to mutate"}
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
            data = {theirs.get(k, k): v for k, v in row.items() if k != "step"}
            f.write(json.dumps({"step": int(row["step"]), "data": data}) + "\n")
    samples = pd.read_parquet(SAMPLE_RUNS / "healthy" / "samples")
    for step, rows in list(samples.groupby("step"))[:3]:  # verl's rollout dump: {step}.jsonl, one response a line
        with (verl_dir / "rollout" / f"{int(step)}.jsonl").open("w") as f:
            for r in rows.to_dict("records"):
                f.write(json.dumps({"input": r["prompt"], "output": r["completion"], "score": r["reward"],
                                    "step": int(step)}) + "\n")
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
        root = next((r for r in (SAMPLE_RUNS, REAL_RUNS) if p.is_relative_to(r)), None)
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
    return [SAMPLE_RUNS, REAL_RUNS, make_generated(generated), make_heads(generated / "heads", [REAL_RUNS])]


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

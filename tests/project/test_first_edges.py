"""The edges a new user meets first, met as a user meets them: the installed commands (.venv/bin), real files,
a subprocess each.

- `--map` takes one syntax in grpo-import and grpo-diagnose (collectors.readers.synonyms.parse_map): one
  THEIRS=OURS per --map, repeated; the forms it does not take get the same one-line answer from both.
- `grpo-diagnose --help` lists its exit statuses, and each is what the command returns.
- `grpo-train --list-scenarios` answers without torch; the message asking for the `train` extra says how to get
  the CPU build of torch (a wheel has no scripts/install_torch.sh).
The same without torch in a fresh install from the wheel: tests/project/test_install.py (slow_install).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from helpers.paths import REPO

from collectors import load_run

BIN = Path(sys.executable).parent  # the environment's console scripts, as pip installed them


def command(name: str, *args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    exe = BIN / name
    assert exe.is_file(), f"{exe} is not installed: make test installs it (pip install -e .)"
    return subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def custom_log(folder: Path, steps: int = 60) -> Path:
    """A custom trainer's JSONL whose names no table knows and no reader guesses (`score` is a reward fallback,
    collectors.readers.text.guess.REWARD_FALLBACKS): `pts` (0 at every step: a reward that never moves) and
    `toks`."""
    f = folder / "custom.jsonl"
    f.write_text("".join(json.dumps({"step": s, "pts": 0.0, "toks": 100 + s, "kl": 0.01 * s}) + "\n"
                         for s in range(1, steps + 1)))
    return f


# -- --map ---------------------------------------------------------------------------------------------------
def test_map_takes_one_syntax_in_grpo_import_and_grpo_diagnose(tmp_path):
    log = custom_log(tmp_path)
    maps = ["--map", "pts=reward/mean", "--map", "toks=completions/len_mean"]
    imported = command("grpo-import", str(log), "--to", str(tmp_path / "run"), *maps, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert {"reward/mean", "completions/len_mean"} <= set(load_run(tmp_path / "run").metrics.columns)
    mapped = command("grpo-diagnose", str(log), *maps, "--format", "json", cwd=tmp_path)
    plain = command("grpo-diagnose", str(log), "--format", "json", cwd=tmp_path)
    (m, p) = (next(iter(json.loads(out.stdout).values())) for out in (mapped, plain))
    # the map reached the diagnosis: a reward of 0 at every step is the constant reward's (the verifier first);
    # without it no reward is logged, and the run cannot be judged (exit 3)
    assert {f["rule_id"] for f in m["findings"] if f["severity"] == "critical"} >= {"reward_constant"}
    assert (mapped.returncode, m["verdict"]["kind"]) == (0, "not_learning"), mapped.stderr
    assert (plain.returncode, p["findings"], p["verdict"]["kind"]) == (3, [], "cant_judge"), plain.stderr


@pytest.mark.parametrize("maps, says", [
    (["--map", "score"], "--map 'score': expected THEIRS=OURS (e.g. --map acc=reward/pass_rate)"),
    (["--map", "score=reward/mean,len=completions/len_mean"],
     "--map 'score=reward/mean,len=completions/len_mean': one THEIRS=OURS per --map; repeat --map for several"),
    (["--map", "score=reward/mean", "len=completions/len_mean"],  # grpo-import took pairs after one --map once
     ("'len=completions/len_mean' looks like a --map pair: one THEIRS=OURS per --map, repeated for several "
      "(--map len=completions/len_mean)")),
])
def test_both_commands_answer_a_map_they_do_not_take_with_the_same_line(tmp_path, maps, says):
    log = custom_log(tmp_path, steps=3)
    for name, args in (("grpo-import", [str(log), "--to", str(tmp_path / "run")]), ("grpo-diagnose", [str(log)])):
        out = command(name, *args, *maps, cwd=tmp_path)
        assert (out.returncode, out.stdout, out.stderr) == (2, "", f"{name}: {says}\n"), name
    assert not (tmp_path / "run").exists()


def test_both_commands_show_the_same_map_help(tmp_path):
    helps = [command(name, "--help", cwd=tmp_path).stdout for name in ("grpo-import", "grpo-diagnose")]
    texts = [" ".join(h.split("--map THEIRS=OURS", 2)[2].split("--version")[0].split()) for h in helps]
    assert texts[0] == texts[1] and "one pair per --map, repeated for several" in texts[0]


# -- grpo-diagnose's exit statuses ------------------------------------------------------------------------------
def test_diagnose_help_lists_each_exit_status_and_each_is_what_it_returns(tmp_path):
    help_text = command("grpo-diagnose", "--help", cwd=tmp_path).stdout
    listed = dict(re.findall(r"^  ([0-3])  (.+)$", help_text.split("exit status:", 1)[1], re.MULTILINE))
    assert sorted(listed) == ["0", "1", "2", "3"], help_text
    sample = REPO / "sample_runs" / "broken_verifier"
    short = tmp_path / "short.jsonl"  # two steps: read, but too few to judge
    short.write_text('{"step": 1, "reward": 0.1}\n{"step": 2, "reward": 0.2}\n')
    cases = {"0": [str(sample)], "1": [str(sample), "--fail-on", "warning"], "2": [str(tmp_path / "missing")],
             "3": [str(short)]}
    for code, args in cases.items():
        out = command("grpo-diagnose", *args, cwd=tmp_path)
        assert out.returncode == int(code), (code, listed[code], out.stderr[-500:])
    assert "could not be read" in listed["2"] and "cannot be judged" in listed["3"] and "--fail-on" in listed["1"]


# -- grpo-train without torch ------------------------------------------------------------------------------------
def without_torch(tmp_path: Path) -> dict[str, str]:
    """An environment in which `import torch` fails as it does where torch is not installed (ModuleNotFoundError,
    and importlib.util.find_spec says it is absent)."""
    site = tmp_path / "no_torch"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\n")
    return {**os.environ, "PYTHONPATH": str(site)}


def test_list_scenarios_answers_without_torch(tmp_path):
    env = without_torch(tmp_path)
    check = subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True, text=True,
                           check=False)
    assert check.returncode == 1 and "ModuleNotFoundError" in check.stderr  # torch is really out of reach
    out = command("grpo-train", "--list-scenarios", cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("scenarios (grpo-train --scenario NAME):\n") and "  healthy " in out.stdout


def test_the_train_extra_message_says_how_to_get_the_cpu_build_of_torch(tmp_path):
    out = command("grpo-train", "--preset", "grpo", "--out", str(tmp_path / "run"), cwd=tmp_path,
                  env=without_torch(tmp_path))
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == ("grpo-train: training needs torch, which the base install leaves out: pip install "
                          "'grposcope[train]' (on a machine without a GPU, first the CPU build of torch: pip install "
                          "'torch>=2.2,<3' --index-url https://download.pytorch.org/whl/cpu)\n")
    assert not (tmp_path / "run").exists()


def test_the_cpu_torch_hint_asks_for_the_torch_the_train_extra_takes():
    from packaging.requirements import Requirement

    from collectors.extras import CPU_TORCH

    (train,) = [Requirement(r) for r in metadata.requires("grposcope") if r.startswith("torch") and "train" in r]
    hinted = Requirement(re.search(r"'(torch[^']*)'", CPU_TORCH)[1])
    assert hinted.specifier == train.specifier, (CPU_TORCH, str(train))


# -- a reader named with --source on a folder of several launches ----------------------------------------------
def test_a_reader_named_for_a_logdir_of_several_launches_reads_each(tmp_path):
    """Each launch is TARGET#LAUNCH, a path that does not exist as written: with --source the reader was asked to
    detect that path, found nothing, and every launch was "cannot read"."""
    logdir = REPO.parent / "shared" / "fixtures" / "real-runs" / "tb_wordle_stage2"
    if not logdir.is_dir():
        pytest.skip(f"{logdir} is absent (the shared corpus of real runs is not beside this checkout)")
    out = command("grpo-diagnose", str(logdir), "--source", "tensorboard", "--format", "json", cwd=tmp_path)
    assert out.returncode == 3 and out.stderr == "", out.stderr  # read, each; three launches too short to judge
    runs = json.loads(out.stdout)
    assert len(runs) == 4 and all("#" in name for name in runs) and sum(d["steps"] for d in runs.values()) > 100

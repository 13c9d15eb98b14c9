"""Small real run folders for the dashboard tests, written with collectors.RunWriter.

Three runs under one root:
  healthy          finished, 40 steps, reward rising, a few samples
  broken_verifier  finished, 40 steps, every reward 0 (all groups fail, zero variance); samples whose
                   completions hold HTML and a Markdown image, to prove they are shown as plain text
  crashed          failed with an error text, 12 steps, no samples
"""

from __future__ import annotations

from pathlib import Path

from collectors import RunWriter

RUN_NAMES = ("healthy", "broken_verifier", "crashed")
# A completion that would fetch a URL or inject markup if it were rendered as Markdown or HTML.
UNSAFE_TEXT = "<img src=x onerror=alert(1)> ![a](http://example.com/a.png) **not bold**"
CONFIG = {"algo.group_size": 4, "algo.kl_coef": 0.04, "algo.advantage": "group", "algo.ratio_level": "token",
          "algo.loss_agg": "token_mean", "optim.lr": 1e-5, "sampling.temperature": 1.0}


def step_metrics(step: int, reward: float, zero_std: float, all_fail: float) -> dict[str, float]:
    return {"reward/mean": reward, "reward/std": 0.0 if zero_std == 1.0 else 0.3, "reward/pass_rate": reward,
            "groups/zero_std_frac": zero_std, "groups/all_fail_frac": all_fail,
            "groups/all_pass_frac": 0.0, "completions/len_mean": 40.0 + step % 5, "completions/len_max": 64.0,
            "completions/truncated_frac": 0.0, "policy/entropy": 1.2 - 0.005 * step, "policy/kl_ref": 0.001 * step,
            "policy/clipfrac": 0.02, "policy/ratio_first_step": 1.0, "loss/total": 0.1, "optim/lr": 1e-5}


def _samples(step: int, rewards: list[list[float]], text: str) -> list[dict]:
    rows = []
    for g, group in enumerate(rewards):
        mean = sum(group) / len(group)
        for s, r in enumerate(group):
            rows.append({"step": step, "prompt_id": f"p{g}", "group": g, "sample": s, "reward": r,
                         "passed": r > 0.5, "advantage": r - mean, "num_tokens": 10 + s, "truncated": s == 3,
                         "prompt": f"What is {g} + {s}?", "completion": f"{text} answer {s}"})
    return rows


def write_healthy(path: Path, steps: int = 40) -> Path:
    w = RunWriter(path, name="healthy", config=CONFIG, handle_signals=False)
    for i in range(steps):
        w.log_step(i, step_metrics(i, min(0.9, 0.1 + 0.02 * i), 0.2, 0.1))
    w.log_samples(_samples(steps - 1, [[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]], "The answer is 4."))
    w.close()
    return path


def write_broken_verifier(path: Path, steps: int = 40) -> Path:
    w = RunWriter(path, name="broken_verifier", config=CONFIG, handle_signals=False)
    for i in range(steps):
        w.log_step(i, step_metrics(i, 0.0, 1.0, 1.0))
    for step in (0, steps - 1):
        w.log_samples(_samples(step, [[0.0] * 4, [0.0] * 4], UNSAFE_TEXT))
    w.close()
    return path


def write_crashed(path: Path, steps: int = 12) -> Path:
    w = RunWriter(path, name="crashed", config=CONFIG, handle_signals=False)
    for i in range(steps):
        w.log_step(i, step_metrics(i, 0.2, 0.3, 0.2))
    w.close(status="failed", error="RuntimeError: CUDA out of memory (test)")
    return path


def make_root(root: Path) -> Path:
    """Write the three runs under `root` (created); returns root."""
    root.mkdir(parents=True, exist_ok=True)
    write_healthy(root / "healthy")
    write_broken_verifier(root / "broken_verifier")
    write_crashed(root / "crashed")
    return root

"""The Hugging Face path: a tiny random Llama- or Qwen2-style model and a tokenizer made with the
`tokenizers` library, saved to a temporary folder and loaded from there; nothing comes from a hub."""

import pytest
import tokenizers  # noqa: F401 - the dev extra: a broken install fails here, never skips
import torch
import transformers  # noqa: F401
from fixtures import tiny_hf  # tests/ is on sys.path; fixtures/ is a plain folder of helpers

from collectors import load_run
from collectors.schema import METRICS
from grpo_core.config import build_config
from grpo_core.policy import build_hf
from grpo_core.train import train
from grpo_core.verifiers import VERIFIERS

torch.set_num_threads(1)


def save_tiny_model(folder, family: str) -> str:
    return tiny_hf.save_tiny_model(folder, family, max_positions=64)


def length_reward(completion: str, answer: str):
    """Graded reward, so that a random model's groups are not all zero and the update moves weights."""
    return min(len(completion), 4) / 4


if "test_length" not in VERIFIERS:  # how a scenario adds a verifier: one decorated function
    VERIFIERS.register("test_length")(length_reward)


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_hf_model_trains_two_steps_and_logs_every_column(tmp_path, family):
    path = save_tiny_model(tmp_path / "model", family)
    sets = [("model.kind", "hf"), ("model.hf_path", path), ("warm_start.enabled", "false"), ("steps", "2"),
            ("out", str(tmp_path / "run")), ("log.progress", "false"), ("eval_every", "1"),
            ("rollout.prompts_per_step", "4"), ("rollout.group_size", "4"), ("rollout.max_new_tokens", "4"),
            ("task.verifier", "test_length"), ("optim.lr", "1e-2")]
    cfg = build_config(overrides=sets)
    before = {k: v.clone() for k, v in build_hf(cfg.model, torch.device("cpu")).net.state_dict().items()}
    result = train(cfg)
    assert result.status == "finished" and result.steps == 2
    r = load_run(result.run_dir)
    missing = [c for c in METRICS if c not in r.metrics.columns]
    # the correction's columns only with a correction on; a KL and exp-gap form only other frameworks log
    assert missing == [c for c in METRICS if c.startswith("policy/rollout_is_")
                       or c in ("policy/rollout_kl", "policy/rollout_exp_logprob_abs_diff")]
    assert (r.metrics["policy/ratio_first_step_max_dev"] < 1e-5).all()
    assert r.metrics["groups/zero_std_frac"].iloc[0] < 1
    assert len(r.samples()) == 2 * 16
    changed = [k for k, v in result.net.state_dict().items() if not torch.equal(before[k], v)]
    assert len(changed) > 0.9 * len(before)
    assert family in result.info["policy"].lower()

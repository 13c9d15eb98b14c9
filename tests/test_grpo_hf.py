"""The Hugging Face path: a tiny random Llama- or Qwen2-style model and a tokenizer made with the
`tokenizers` library, saved to a temporary folder and loaded from there; nothing comes from a hub."""

import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from collectors import load_run
from collectors.schema import METRICS
from grpo_core.config import build_config
from grpo_core.policy import build_hf
from grpo_core.train import train
from grpo_core.verifiers import VERIFIERS

torch.set_num_threads(1)


def save_tiny_model(folder, family: str) -> str:
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "<eos>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([f"{a}+{b}={a + b}" for a in range(10) for b in range(10)], trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>")
    fast.save_pretrained(folder)
    config_cls, model_cls = {"llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
                             "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM)}[family]
    config = config_cls(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                        eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id, bos_token_id=None)
    torch.manual_seed(0)
    model_cls(config).save_pretrained(folder)
    return str(folder)


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
    assert [c for c in METRICS if c not in r.metrics.columns] == []
    assert (r.metrics["policy/ratio_first_step_max_dev"] < 1e-5).all()
    assert r.metrics["groups/zero_std_frac"].iloc[0] < 1
    assert len(r.samples()) == 2 * 16
    changed = [k for k, v in result.net.state_dict().items() if not torch.equal(before[k], v)]
    assert len(changed) > 0.9 * len(before)
    assert family in result.info["policy"].lower()

"""GPU check: the default preset and a small Hugging Face model on CUDA with bf16 autocast.

    python benchmarks/gpu_check.py [--steps 50]

Prints the same figures as bench_trainer.py for (1) the built-in tiny model and (2) a small random
Qwen2-style model with a byte-level BPE tokenizer built here with `tokenizers` (nothing is downloaded),
both with `model.autocast_bf16=true` on CUDA. It also reports the first-step ratio deviation, which
under bf16 autocast with recomputed old log-probs must stay near 0 (both passes share the precision).
When TRL is importable it then runs benchmarks/bench_vs_trl.py's side-by-side comparison on CUDA (both
sides under bf16 autocast). Exits 1 with a one-line message when no CUDA device is visible.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_trainer import measure, show


def build_small_hf(folder: Path) -> str:
    """A random Qwen2-style model (4 layers, width 256) and a BPE tokenizer trained on addition strings."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "<eos>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([f"{a}+{b}={a + b}" for a in range(100) for b in range(100)], trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>")
    fast.save_pretrained(folder)
    config = transformers.Qwen2Config(vocab_size=len(fast), hidden_size=256, intermediate_size=768,
                                      num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=128, eos_token_id=fast.eos_token_id,
                                      pad_token_id=fast.pad_token_id, bos_token_id=None)
    torch.manual_seed(0)
    transformers.Qwen2ForCausalLM(config).save_pretrained(folder)
    return str(folder)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--trl-steps", type=int, default=30, help="steps per run of the TRL comparison")
    p.add_argument("--trl-repeats", type=int, default=3, help="interleaved runs per side and row")
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_check: no CUDA device is visible (torch.cuda.is_available() is False); run it on a GPU machine")
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    common = [("steps", str(a.steps)), ("model.device", "cuda"), ("model.autocast_bf16", "true")]
    show(measure(common, "default preset, cuda bf16"))
    with tempfile.TemporaryDirectory() as tmp:
        path = build_small_hf(Path(tmp) / "model")
        hf = [("model.kind", "hf"), ("model.hf_path", path), ("warm_start.enabled", "false"),
              ("rollout.max_new_tokens", "8")]
        show(measure(common + hf, "small Qwen2-style HF model, cuda bf16"))
    if importlib.util.find_spec("trl") is None:
        print("TRL is not installed: the side-by-side comparison is skipped (pip install trl)")
        return
    from bench_vs_trl import compare

    print("\nside by side with TRL's GRPOTrainer (benchmarks/bench_vs_trl.py) on CUDA:")
    compare(a.trl_steps, a.trl_repeats, "cuda")


if __name__ == "__main__":
    main()

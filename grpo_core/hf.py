"""Adapter that puts any Hugging Face causal LM behind the policy interface of policy.py.

transformers is imported here only, so the built-in policy works without the `hf` extra.
"""

from __future__ import annotations

import inspect

import torch
from torch import nn


class HFTokenizer:
    """encode/decode without special tokens; the end token is the model's eos, padding falls back to it."""

    def __init__(self, tok) -> None:
        if tok.eos_token_id is None:
            raise ValueError("the tokenizer has no eos token; a completion could never end")
        self.tok = tok
        self.eos_id = tok.eos_token_id
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        self.vocab_size = len(tok)

    def encode(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False)

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=True)


class HFCausalLM(nn.Module):
    def __init__(self, model) -> None:
        super().__init__()
        self.model = model
        # transformers 5 renamed `past_key_values` to `cache`; 4.x only knows the old name.
        self._cache_arg = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"

    def forward(self, ids, attn_mask, positions, cache=None, use_cache: bool = False, logits_to_keep: int = 0):
        """Same contract as TinyGPT.forward; the cache is the model's own (a transformers Cache)."""
        out = self.model(input_ids=ids, attention_mask=attn_mask.long(), position_ids=positions,
                         use_cache=use_cache, logits_to_keep=logits_to_keep, **{self._cache_arg: cache})
        if not use_cache:
            return out.logits, None
        # Not out.get("cache", out.past_key_values): reading the old name warns on transformers 5.
        return out.logits, out["cache"] if "cache" in out else out.past_key_values  # noqa: SIM401


def load_hf(path: str) -> tuple[HFCausalLM, HFTokenizer, str]:
    """Load model and tokenizer from a local folder or a hub id, in fp32 (training precision)."""
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        raise ImportError("model.kind=hf needs the `hf` extra: pip install 'grposcope[hf]'") from e
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    model.config.use_cache = False
    n = sum(p.numel() for p in model.parameters())
    return HFCausalLM(model), HFTokenizer(tok), f"{type(model).__name__} from {path}, {n} parameters"

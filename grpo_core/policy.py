"""One interface for every policy: log-probs of given tokens, entropy, and sampling with a KV cache.

A policy's `net` is any module called as `net(ids, attn_mask, positions, cache, use_cache,
logits_to_keep)` returning `(logits, cache)` (the built-in TinyGPT, or `hf.HFCausalLM` around a Hugging
Face model); its `tokenizer` has `encode`, `decode`, `eos_id` and `pad_id`. Prompts are left-padded, completions right-padded, so one
tensor holds a whole batch as [B, P + N] and the completion is always the last N columns.
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from grpo_core.registry import Registry

DTYPES: dict[str, torch.dtype] = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass
class Policy:
    net: nn.Module
    tokenizer: Any
    description: str  # what was loaded, for run.json


POLICIES: Registry = Registry("policy kind")  # name -> build(model_cfg, device) -> Policy


@POLICIES.register("tiny")
def build_tiny(model_cfg, device: torch.device) -> Policy:
    from grpo_core.tiny import CharTokenizer, TinyGPT

    tok = CharTokenizer()
    net = TinyGPT(tok.vocab_size, model_cfg.block_size, model_cfg.n_layer, model_cfg.n_head, model_cfg.d_model)
    n = sum(p.numel() for p in net.parameters())
    return Policy(net.to(device), tok, f"tiny char transformer, {n} parameters")


@POLICIES.register("hf")
def build_hf(model_cfg, device: torch.device) -> Policy:
    from grpo_core.hf import load_hf  # transformers is an optional extra; import it only when asked

    net, tok, description = load_hf(model_cfg.hf_path)
    return Policy(net.to(device), tok, description)


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def autocast(device: torch.device, enabled: bool):
    """bf16 autocast for the training passes on CUDA; a no-op elsewhere (CPU runs stay exact fp32)."""
    if enabled and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def frozen_copy(net: nn.Module, dtype: torch.dtype = torch.float32) -> nn.Module:
    """A copy without gradients, e.g. the KL reference or a rollout engine running in bf16."""
    twin = copy.deepcopy(net).to(dtype)
    for p in twin.parameters():
        p.requires_grad_(False)
    return twin.eval()


@torch.no_grad()
def sync_weights(dst: nn.Module, src: nn.Module) -> None:
    """Copy src's parameters into dst, casting to dst's dtype (the rollout engine's weight sync)."""
    for d, s in zip(dst.parameters(), src.parameters(), strict=True):
        d.copy_(s)


def positions(mask: torch.Tensor) -> torch.Tensor:
    """mask [B, S] (1 = real token) -> position ids [B, S]; the first real token of a row is 0."""
    return (mask.long().cumsum(1) - 1).clamp(min=0)


def token_logprobs(net: nn.Module, ids: torch.Tensor, mask: torch.Tensor, n: int, temperature: float = 1.0,
                   with_entropy: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probs of the last n tokens of each row under the tempered policy, in one batched forward.

    ids, mask: [B, P + n]; returns logp [B, n] and entropy [B, n] (nats) or None, both 0 where mask is 0.
    """
    # Logits only where they are needed: for a 150k vocabulary the prompt's would dominate memory.
    logits, _ = net(ids, mask, positions(mask), None, logits_to_keep=n + 1)
    logp_all = F.log_softmax(logits[:, -n - 1:-1].float() / temperature, dim=-1)
    keep = mask[:, -n:].bool()
    logp = torch.where(keep, logp_all.gather(-1, ids[:, -n:, None]).squeeze(-1), 0.0)
    if not with_entropy:
        return logp, None
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    return logp, torch.where(keep, entropy, 0.0)


def top_p_filter(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """logits [B, V] -> logits with the tokens outside the smallest set of mass >= top_p set to -inf."""
    if top_p >= 1.0:
        return logits
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    mass_before = sorted_logits.softmax(-1).cumsum(-1) - sorted_logits.softmax(-1)
    sorted_logits = sorted_logits.masked_fill(mass_before >= top_p, float("-inf"))  # the top token always stays
    return torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)


@dataclass
class Samples:
    """What `sample` returns. B sequences, N = steps actually decoded (<= max_new_tokens).

    tokens [B, N] long (pad after the end), mask [B, N] bool (real completion tokens, end token included),
    logp [B, N] float32 log-probs the sampling pass assigned (0 where mask is 0), ended [B] bool.
    """

    tokens: torch.Tensor
    mask: torch.Tensor
    logp: torch.Tensor
    ended: torch.Tensor


@torch.no_grad()
def sample(net: nn.Module, prompt: torch.Tensor, prompt_mask: torch.Tensor, max_new_tokens: int,
           eos_id: int, pad_id: int, temperature: float = 1.0, top_p: float = 1.0, greedy: bool = False,
           generator: torch.Generator | None = None) -> Samples:
    """Decode all B = prompts x G sequences together with a KV cache. prompt, prompt_mask: [B, P]."""
    pos = positions(prompt_mask)
    logits, cache = net(prompt, prompt_mask, pos, None, use_cache=True, logits_to_keep=1)
    last, mask, next_pos = logits[:, -1], prompt_mask.bool(), pos[:, -1:] + 1
    alive = torch.ones(prompt.shape[0], dtype=torch.bool, device=prompt.device)
    tokens, logps, live = [], [], []
    for t in range(max_new_tokens):
        scaled = last.float() / temperature
        if greedy:
            tok = scaled.argmax(-1)
        else:
            probs = top_p_filter(scaled, top_p).softmax(-1)
            tok = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
        tok = torch.where(alive, tok, pad_id)
        logps.append(F.log_softmax(scaled, -1).gather(-1, tok[:, None]).squeeze(-1) * alive)
        tokens.append(tok)
        live.append(alive)
        alive = alive & (tok != eos_id)
        if t == max_new_tokens - 1 or not alive.any():  # one host sync per token: stop when all have ended
            break
        mask = torch.cat([mask, live[-1][:, None]], dim=1)
        logits, cache = net(tok[:, None], mask, next_pos, cache, use_cache=True)
        last, next_pos = logits[:, -1], next_pos + 1
    return Samples(torch.stack(tokens, 1), torch.stack(live, 1), torch.stack(logps, 1), ~alive)

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

    net, tok, description = load_hf(model_cfg.hf_path, model_cfg.gradient_checkpointing)
    return Policy(net.to(device), tok, description)


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


TINY_CPU_THREADS = 1  # see ModelConfig.cpu_threads: the tiny model gains nothing from a second thread


def cpu_threads(cfg, device: torch.device) -> int | None:
    """The torch thread count a run on `device` sets (cfg: ModelConfig); None: leave torch's as it is."""
    if device.type != "cpu":
        return None
    if cfg.cpu_threads:
        return cfg.cpu_threads
    return TINY_CPU_THREADS if cfg.kind == "tiny" else None


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


# The most fp32 elements of full-vocabulary log-probs one block of token_logprobs materialises (64 MiB, 110
# positions of a 150k vocabulary; a whole batch would need B x N x 600 kB per copy, several copies at once).
LOGIT_BLOCK = 1 << 24


def logit_blocks(batch: int, n: int, vocab: int, budget: int = LOGIT_BLOCK) -> list[tuple[slice, slice]]:
    """(rows, positions) slices covering [batch, n], each holding at most `budget` logits (at least one
    position): whole rows when a row fits, otherwise runs of positions within one row."""
    if n * vocab <= budget:
        rows = max(1, budget // max(n * vocab, 1))
        return [(slice(b, min(b + rows, batch)), slice(0, n)) for b in range(0, batch, rows)]
    span = max(1, budget // vocab)
    return [(slice(b, b + 1), slice(t, min(t + span, n))) for b in range(batch) for t in range(0, n, span)]


class BlockwiseLogprobs(torch.autograd.Function):
    """Log-probs of given tokens (and entropy, no gradient) from logits, one block at a time.

    logits [B, n + 1, V] in the model's dtype (bf16 under autocast); position t predicts targets[:, t].
    What autograd would keep of log_softmax(logits.float() / T): the fp32 log-softmax of every position
    (and for the entropy its exp, and the temporaries beside them), several full [B, n, V] fp32 copies,
    is never built: the forward computes each block's fp32 log-softmax, takes what it needs and drops it;
    only the logits are saved, and the backward recomputes each block's log-softmax to write its share of
    the logits' gradient. Every block is computed with the same operations as the whole batch, and the
    backward applies autograd's own formulas (gather's scatter-add, log_softmax's backward kernel, the
    division's), so the log-probs, the entropy and the gradients are those of the plain expression.
    """

    @staticmethod
    def forward(ctx, logits, targets, temperature: float, with_entropy: bool, budget: int):
        B, n = targets.shape
        at = logits.shape[1] - n - 1  # the first position whose logits predict a target
        logp = torch.empty(B, n, dtype=torch.float32, device=logits.device)
        entropy = torch.empty(B, n if with_entropy else 0, dtype=torch.float32, device=logits.device)
        for rows, cols in logit_blocks(B, n, logits.shape[-1], budget):
            lp = F.log_softmax(logits[rows, at + cols.start: at + cols.stop].float() / temperature, dim=-1)
            logp[rows, cols] = lp.gather(-1, targets[rows, cols, None]).squeeze(-1)
            if with_entropy:  # -(exp(lp) * lp).sum(-1), the product written over exp(lp): two blocks at a time
                entropy[rows, cols] = -lp.exp().mul_(lp).sum(-1)
            del lp
        ctx.save_for_backward(logits, targets)
        ctx.temperature, ctx.budget, ctx.at = temperature, budget, at
        ctx.mark_non_differentiable(entropy)
        return logp, entropy

    @staticmethod
    def backward(ctx, grad_logp, _grad_entropy):
        logits, targets = ctx.saved_tensors
        B, n = targets.shape
        T, at = ctx.temperature, ctx.at
        grad = torch.zeros_like(logits)
        for rows, cols in logit_blocks(B, n, logits.shape[-1], ctx.budget):
            lp = F.log_softmax(logits[rows, at + cols.start: at + cols.stop].float() / T, dim=-1)
            g = torch.zeros_like(lp).scatter_add_(-1, targets[rows, cols, None], grad_logp[rows, cols, None])
            g = torch._log_softmax_backward_data(g, lp, -1, lp.dtype)  # three blocks at most, here
            del lp
            grad[rows, at + cols.start: at + cols.stop] = g.div_(T)  # cast to the logits' dtype by the copy
            del g
        return grad, None, None, None, None


def token_logprobs(net: nn.Module, ids: torch.Tensor, mask: torch.Tensor, n: int, temperature: float = 1.0,
                   with_entropy: bool = False, budget: int = LOGIT_BLOCK) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probs of the last n tokens of each row under the tempered policy, in one batched forward.

    ids, mask: [B, P + n]; returns logp [B, n] and entropy [B, n] (nats, no gradient) or None, both 0
    where mask is 0. The fp32 log-softmax is built `budget` logits at a time (BlockwiseLogprobs).
    """
    # Logits only where they are needed: for a 150k vocabulary the prompt's would dominate memory.
    logits, _ = net(ids, mask, positions(mask), None, logits_to_keep=n + 1)
    logp, entropy = BlockwiseLogprobs.apply(logits, ids[:, -n:], float(temperature), with_entropy, budget)
    keep = mask[:, -n:].bool()
    logp = torch.where(keep, logp, 0.0)
    return logp, torch.where(keep, entropy, 0.0) if with_entropy else None


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


class KVDecode:
    """How sampling runs the model: the prompt once, then one token at a time over a growing KV cache (the
    model's own: TinyGPT's tensors, a transformers DynamicCache). An HF model on CUDA may offer another
    decode (hf.StaticDecode, rollout.compiled_decode) with the same two calls."""

    def __init__(self, net: nn.Module) -> None:
        self.net = net

    def prefill(self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """ids, mask, pos [B, P] -> the logits of the next token [B, V]."""
        logits, self.cache = self.net(ids, mask, pos, None, use_cache=True, logits_to_keep=1)
        self.mask = mask.bool()
        return logits[:, -1]

    def step(self, tok: torch.Tensor, live: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """tok [B] (live [B]: a real token, not padding after the end), pos [B, 1] -> next logits [B, V]."""
        self.mask = torch.cat([self.mask, live[:, None]], dim=1)
        logits, self.cache = self.net(tok[:, None], self.mask, pos, self.cache, use_cache=True)
        return logits[:, -1]


@torch.no_grad()
def sample(net: nn.Module, prompt: torch.Tensor, prompt_mask: torch.Tensor, max_new_tokens: int,
           eos_id: int, pad_id: int, temperature: float = 1.0, top_p: float = 1.0, greedy: bool = False,
           generator: torch.Generator | None = None) -> Samples:
    """Decode all B = prompts x G sequences together with a KV cache. prompt, prompt_mask: [B, P]."""
    static = getattr(net, "static_decode", None)  # hf.HFCausalLM with rollout.compiled_decode on CUDA
    dec = static(prompt.shape[0], prompt.shape[1] + max_new_tokens) if static is not None else None
    dec = dec or KVDecode(net)
    pos = positions(prompt_mask)
    last, next_pos = dec.prefill(prompt, prompt_mask, pos), pos[:, -1:] + 1
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
        last, next_pos = dec.step(tok, live[-1], next_pos), next_pos + 1
    return Samples(torch.stack(tokens, 1), torch.stack(live, 1), torch.stack(logps, 1), ~alive)

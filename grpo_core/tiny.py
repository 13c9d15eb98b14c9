"""The built-in policy: a character tokenizer and a small causal transformer with a KV cache.

Defined here so that the demo, the sample runs and the tests need no download. Positions come from the
attention mask (left-padded prompts start at position 0), so the cached decode and a full forward over
the same tokens compute the same log-probs.
"""

from __future__ import annotations

import string

import torch
import torch.nn.functional as F
from torch import nn

Cache = list[tuple[torch.Tensor, torch.Tensor]]  # per layer: keys, values [B, H, S, D/H]


class CharTokenizer:
    """Printable ASCII, one token per character, plus <pad> (0) and <eos> (1)."""

    def __init__(self) -> None:
        self.chars = string.printable[:95]  # digits, letters, punctuation, space
        self.pad_id, self.eos_id = 0, 1
        self._ids = {c: i + 2 for i, c in enumerate(self.chars)}
        self.vocab_size = len(self.chars) + 2

    def encode(self, text: str) -> list[int]:
        unknown = sorted({c for c in text if c not in self._ids})
        if unknown:
            raise ValueError(f"the char tokenizer has no token for {''.join(unknown)!r}")
        return [self._ids[c] for c in text]

    def decode(self, ids: list[int]) -> str:
        return "".join(self.chars[i - 2] for i in ids if i >= 2)


class Block(nn.Module):
    def __init__(self, d: int, n_head: int) -> None:
        super().__init__()
        self.n_head = n_head
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask, past):
        """x [B, t, d]; mask [B, 1, t, S] bool (True = may attend); past (k, v) [B, H, S - t, d/H] or None."""
        B, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(B, t, self.n_head, d // self.n_head).transpose(1, 2) for z in (q, k, v))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(y.transpose(1, 2).reshape(B, t, d))
        return x + self.mlp(self.ln2(x)), (k, v)


class TinyGPT(nn.Module):
    def __init__(self, vocab_size: int, block_size: int = 64, n_layer: int = 2, n_head: int = 4,
                 d_model: int = 64) -> None:
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.head.weight = self.tok.weight  # tied embeddings: fewer parameters for a tiny vocabulary
        self.apply(self._init)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, ids: torch.Tensor, attn_mask: torch.Tensor, positions: torch.Tensor,
                cache: Cache | None = None, use_cache: bool = False,
                logits_to_keep: int = 0) -> tuple[torch.Tensor, Cache | None]:
        """ids [B, t]; attn_mask [B, S] over past + new tokens (1 = real); positions [B, t].

        Returns logits [B, k, V] for the last k = logits_to_keep positions (all t when 0) and, with
        use_cache, the cache extended by these t tokens.
        """
        t = ids.shape[1]
        S = attn_mask.shape[1]
        if S > self.block_size:
            raise ValueError(f"sequence of {S} tokens exceeds model.block_size={self.block_size}")
        query_at = torch.arange(S - t, S, device=ids.device)
        causal = torch.arange(S, device=ids.device)[None, :] <= query_at[:, None]  # [t, S]
        # A query may see real keys up to itself, and always itself, so a padding row is never all -inf
        # (an all-masked row gives NaN, and NaN values leak through later layers despite the mask).
        mask = (causal[None] & attn_mask.bool()[:, None, :]) | (query_at[:, None] == torch.arange(S, device=ids.device))
        mask = mask[:, None]
        x = self.tok(ids) + self.pos(positions.clamp(0, self.block_size - 1))
        new_cache: Cache = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, mask, cache[i] if cache is not None else None)
            new_cache.append(kv)
        x = x[:, -logits_to_keep:] if logits_to_keep else x
        return self.head(self.ln_f(x)), (new_cache if use_cache else None)

"""Adapter that puts any Hugging Face causal LM behind the policy interface of policy.py.

transformers is imported here only, so the built-in policy works without the `hf` extra.
"""

from __future__ import annotations

import inspect
import types

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


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
        params = inspect.signature(model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        self._cache_position = "cache_position" in params  # dropped by later transformers 5 releases
        self._static: dict | None = None  # (batch, cache length) -> StaticDecode, once enabled

    def enable_static_decode(self, compile: bool = True) -> None:
        """Sample through a preallocated KV cache and (compile) a torch.compile'd decode step, as
        transformers' own generate does with cache_implementation="static" (rollout.compiled_decode).
        Enable it on the module that samples after any copy of it is made (a compiled step is not copied)."""
        self._static, self._compile = {}, compile

    def static_decode(self, batch: int, length: int) -> StaticDecode | None:
        """The decode for `batch` sequences of up to `length` tokens, kept per (batch, length rounded up to
        64) so a rollout of the same shape reuses its cache and compiled step; None when not enabled."""
        if self._static is None:
            return None
        key = (batch, -(-length // 64) * 64)
        if key not in self._static:
            self._static[key] = StaticDecode(self, *key, compile=self._compile)
        return self._static[key]

    def forward(self, ids, attn_mask, positions, cache=None, use_cache: bool = False, logits_to_keep: int = 0):
        """Same contract as TinyGPT.forward; the cache is the model's own (a transformers Cache)."""
        out = self.model(input_ids=ids, attention_mask=attn_mask.long(), position_ids=positions,
                         use_cache=use_cache, logits_to_keep=logits_to_keep, **{self._cache_arg: cache})
        if not use_cache:
            return out.logits, None
        # Not out.get("cache", out.past_key_values): reading the old name warns on transformers 5.
        return out.logits, out["cache"] if "cache" in out else out.past_key_values  # noqa: SIM401

    def checkpoint_layers(self, enabled: bool = True) -> int:
        """Recompute each decoder layer in the backward instead of keeping its activations (model.
        gradient_checkpointing); returns the number of layers. Only passes that build a graph are
        checkpointed: sampling and the no-grad log-prob passes run as they are.

        Not transformers' own gradient_checkpointing_enable: that acts in training mode only, and the policy
        stays in eval mode (no dropout: the update must see the policy that sampled). torch's non-reentrant
        checkpoint reruns the same operations (RNG and autocast state restored), so gradients are unchanged.
        """
        for layer in decoder_layers(self.model):
            if enabled:
                layer.forward = types.MethodType(_checkpointed_forward, layer)
            else:
                layer.__dict__.pop("forward", None)
        return len(decoder_layers(self.model))


class StaticDecode:
    """Sampling's decode (policy.KVDecode's two calls) for a transformers model on CUDA: a StaticCache
    preallocated for `batch` x `length` tokens, a [batch, length] attention mask filled as tokens arrive, so
    every decode step has the same shapes, and that step compiled once (torch.compile, mode reduce-overhead:
    CUDA graphs) and replayed for each token of every rollout of this shape. The prompt's forward runs
    eagerly (its length varies). Not used on CPU; untested on a GPU so far (rollout.compiled_decode)."""

    def __init__(self, lm: HFCausalLM, batch: int, length: int, compile: bool = True) -> None:
        from transformers import StaticCache

        config = lm.model.config
        kwargs = {}
        if "max_batch_size" in inspect.signature(StaticCache.__init__).parameters:  # transformers 4.x
            p = next(lm.model.parameters())
            kwargs = {"max_batch_size": batch, "device": p.device, "dtype": p.dtype}
        self.lm, self.length = lm, length
        self.cache = StaticCache(config=config, max_cache_len=length, **kwargs)
        self.mask = None
        self.at = 0  # the cache position the next token goes to
        self.run = torch.compile(self._forward, mode="reduce-overhead", dynamic=False) if compile else self._forward

    def _forward(self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor, cache_position: torch.Tensor):
        extra = {"cache_position": cache_position} if self.lm._cache_position else {}
        out = self.lm.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, logits_to_keep=1,
                            **{self.lm._cache_arg: self.cache}, **extra)
        return out.logits[:, -1]

    def prefill(self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        self.cache.reset()
        P = ids.shape[1]
        self.mask = torch.zeros(ids.shape[0], self.length, dtype=torch.long, device=ids.device)
        self.mask[:, :P] = mask
        self.at = P
        return self._forward(ids, self.mask, pos, torch.arange(P, device=ids.device))

    def step(self, tok: torch.Tensor, live: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        self.mask[:, self.at] = live
        at = torch.tensor([self.at], device=tok.device)
        self.at += 1
        return self.run(tok[:, None], self.mask, pos, at).clone()  # a CUDA graph's output is overwritten next time


def decoder_layers(model: nn.Module) -> list[nn.Module]:
    """The repeated blocks of a transformers model: its GradientCheckpointingLayer modules (transformers
    4.52 and later), else the longest ModuleList (model.model.layers in every decoder-only family)."""
    try:
        from transformers.modeling_layers import GradientCheckpointingLayer

        layers = [m for m in model.modules() if isinstance(m, GradientCheckpointingLayer)]
    except ImportError:
        layers = []
    if not layers:
        lists = [m for m in model.modules() if isinstance(m, nn.ModuleList)]
        layers = list(max(lists, key=len)) if lists else []
    return layers


def _checkpointed_forward(layer: nn.Module, *args, **kwargs):
    """A layer's own forward, under torch.utils.checkpoint when this pass builds a graph (bound per layer)."""
    forward = type(layer).forward
    if not torch.is_grad_enabled():
        return forward(layer, *args, **kwargs)
    return checkpoint(forward, layer, *args, use_reentrant=False, **kwargs)


def load_hf(path: str, gradient_checkpointing: bool = False) -> tuple[HFCausalLM, HFTokenizer, str]:
    """Load model and tokenizer from a local folder or a hub id, in fp32 (training precision)."""
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        raise ImportError("model.kind=hf needs the `hf` extra: pip install 'grposcope[hf]'") from e
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    model.config.use_cache = False
    n = sum(p.numel() for p in model.parameters())
    net = HFCausalLM(model)
    layers = net.checkpoint_layers() if gradient_checkpointing else 0
    ckpt = f", activations of {layers} layers recomputed in the backward" if layers else ""
    return net, HFTokenizer(tok), f"{type(model).__name__} from {path}, {n} parameters{ckpt}"

"""Tensors of a step -> {canonical metric name: value}. Pure, no gradients, one host transfer per step.

Everything is kept as 0-d device tensors until `fetch`, which moves all of them (and the per-response
vectors the samples table needs) to the host in a single copy: on a GPU that is the step's only sync for
metrics, so logging does not serialise the update. Names are those of collectors/schema.py.
"""

from __future__ import annotations

import torch

from grpo_core.advantages import zero_variance_groups


@torch.no_grad()
def rollout_metrics(rewards: torch.Tensor, passed: torch.Tensor, lengths: torch.Tensor, truncated: torch.Tensor,
                    adv: torch.Tensor, dropped: torch.Tensor) -> dict[str, torch.Tensor]:
    """rewards, passed: [P, G] (raw reward, verifier verdict); lengths, truncated: [P, G] (completion
    tokens, cut without an end token); adv: [P, G] the advantages the update uses; dropped: [P] bool.

    Stds here are population stds (n), describing the data; the advantage's own convention is its own.
    """
    r, p = rewards.float(), passed.float()
    n = lengths.float()
    return {
        "reward/mean": r.mean(),
        "reward/std": r.std(correction=0),
        "reward/min": r.min(),
        "reward/max": r.max(),
        "reward/pass_rate": p.mean(),
        "groups/zero_std_frac": zero_variance_groups(r).float().mean(),
        "groups/all_pass_frac": passed.all(dim=1).float().mean(),
        "groups/all_fail_frac": (~passed).all(dim=1).float().mean(),
        "groups/reward_std_mean": r.std(dim=1, correction=0).mean(),
        "groups/dropped_frac": dropped.float().mean(),
        "completions/len_mean": n.mean(),
        "completions/len_max": n.max(),
        "completions/truncated_frac": truncated.float().mean(),
        "completions/terminated_len_mean": (n * ~truncated).sum() / (~truncated).sum().clamp(min=1),
        "adv/mean": adv.mean(),
        "adv/std": adv.std(correction=0),
        "adv/zero_frac": (adv.abs() < 1e-8).float().mean(),
    }


@torch.no_grad()
def first_step_metrics(logp: torch.Tensor, old_logp: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """Token ratios of the first minibatch before any update, against old log-probs from their own pass.

    logp, old_logp: [B, N]; mask [B, N] bool. Per token even under GSPO: a token-level mismatch (a bf16
    rollout, a wrong mask) is what this check is for, and a sequence mean would average it away.
    """
    ratio = torch.exp(logp - old_logp)
    on = mask.bool()
    return {
        "policy/ratio_first_step": (ratio * on).sum() / on.sum().clamp(min=1),
        "policy/ratio_first_step_max_dev": torch.where(on, (ratio - 1).abs(), 0.0).max(),
    }


@torch.no_grad()
def logprob_gap(rollout_logp: torch.Tensor, train_logp: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """The rollout engine against the training model on the same tokens, in log-probs and probabilities
    (verl compares the latter): mean and largest |difference| over completion tokens. [B, N]."""
    on, n = mask.bool(), mask.sum().clamp(min=1)
    d_logp = torch.where(on, (rollout_logp - train_logp).abs(), 0.0)
    d_p = torch.where(on, (torch.exp(rollout_logp) - torch.exp(train_logp)).abs(), 0.0)
    return {"policy/rollout_logprob_abs_diff": d_logp.sum() / n, "policy/rollout_logprob_abs_diff_max": d_logp.max(),
            "policy/rollout_prob_abs_diff": d_p.sum() / n, "policy/rollout_prob_abs_diff_max": d_p.max()}


@torch.no_grad()
def entropy_metric(entropy: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """policy/entropy: mean per-token entropy over completion tokens only. [B, N]."""
    on = mask.float()
    return {"policy/entropy": (entropy * on).sum() / on.sum().clamp(min=1)}


def fetch(scalars: dict[str, torch.Tensor | float | int], vectors: dict[str, torch.Tensor] | None = None):
    """One device-to-host copy for the whole step.

    scalars: name -> 0-d tensor or Python number; vectors: name -> 1-d tensor (per response).
    Returns ({name: float}, {name: list[float]}).
    """
    vectors = vectors or {}
    tensors = {k: v for k, v in scalars.items() if isinstance(v, torch.Tensor)}
    parts = [v.detach().reshape(1).double() for v in tensors.values()]
    parts += [v.detach().reshape(-1).double() for v in vectors.values()]
    flat = torch.cat([p.to(parts[0].device) for p in parts]).cpu().tolist() if parts else []
    out = {k: float(v) for k, v in scalars.items() if not isinstance(v, torch.Tensor)}
    out.update(zip(tensors, flat[: len(tensors)]))
    vec_out, at = {}, len(tensors)
    for k, v in vectors.items():
        vec_out[k] = flat[at: at + v.numel()]
        at += v.numel()
    return out, vec_out

"""prime-rl's (PrimeIntellect-ai/prime-rl) trainer metrics -> canonical names.

Read in PrimeIntellect-ai/prime-rl v0.8.1.dev67 (main, August 2026): src/prime_rl/trainer/rl/train.py (`train`:
per-token tensors gathered in `Tensors`, `monitors.log(..., step=progress.step)`), src/prime_rl/trainer/rl/loss.py
(`compute_importance_ratio_and_mismatch_kl`, `default_loss_fn`'s metrics) and src/prime_rl/trainer/utils.py
(`Tensors.compute_stats`: each key becomes `<key>/mean`, `/median`, `/std`, `/min`, `/max` over every token of the
step, all ranks). Earlier versions logged the same tensors without the `/all` level (`mismatch_kl/mean`,
`entropy/mean`). `optim/lr` and `optim/grad_norm` are logged under our names already.
"""

from __future__ import annotations

PRIME_RL: dict[str, str] = {
    # r - log r - 1 with r = p trainer / p inference on the sampled tokens: the k3 estimate of
    # KL(inference || trainer) per token
    "mismatch_kl/all/mean": "policy/rollout_kl",
    "mismatch_kl/mean": "policy/rollout_kl",
    # share of the trainable tokens the loss masked (DPPO: |p trainer - p inference| past the trust region on the
    # advantage's side; IPO: past ipo_threshold)
    "is_masked/mean": "policy/rollout_is_masked_frac",
    "entropy/all/mean": "policy/entropy",
    "entropy/mean": "policy/entropy",
}
# not mapped: `masked_mismatch_kl/mean` and `unmasked_mismatch_kl/mean` (the same KL over the masked / kept tokens
# only), `is_masked_low/mean`, `is_masked_high/mean`, `loss/mean` (the summed per-token loss of a micro-batch),
# `kl_ent_ratio/mean`. The orchestrator's rollout metrics (`train/agg/<subset>/<agent>/reward/mean`,
# `.../is_truncated/mean`, `.../solved_none`) are nested by environment and agent names the run chooses; they are
# kept under their own names.

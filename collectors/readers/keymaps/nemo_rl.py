"""NeMo-RL's GRPO metrics -> canonical names.

Read in NVIDIA/NeMo-RL v0.1.0 (nemo_rl/algorithms/grpo.py `grpo_train`, nemo_rl/algorithms/loss_functions.py
`ClippedPGLossFn.__call__`, nemo_rl/experience/rollouts.py `run_multi_turn_rollout`) and, for the keys added
later, its 2026 main (`clipped_pg_diagnostic_metrics`). `grpo_train` logs `logger.log_metrics(metrics, step + 1,
prefix="train")`: every key below as `train/<key>` at steps 1, 2, ... (TensorBoard: add_scalar; wandb: log with
that step). The loss-function metrics are normalised by the step's global token (or sequence) count and summed
over micro-batches, so each is the step's mean over all tokens.
"""

from __future__ import annotations

NEMO_RL: dict[str, str] = {
    # `loss`, `reward` and `grad_norm` keep TRL's mapping (FAMILIES order), checked to mean the same: the total
    # loss (policy + KL penalty), the mean reward over the step's responses, the gradient norm before clipping.
    # the learning rate of the step (mean over micro-batches: one value)
    "lr": "optim/lr",
    # mean over tokens of exp(|log p generation - log p trainer|) with the training weights before the update
    # (prev_logprobs); NeMo-RL plots samples above 1.05
    "token_mult_prob_error": "policy/rollout_exp_logprob_abs_diff",
    # 2026: KL(generation || trainer) per token, the estimator of loss_fn.reference_policy_kl_type (k3 default)
    "gen_kl_error": "policy/rollout_kl",
    # mean over tokens of exp(log p trainer - log p generation), before any correction: a per-token ratio
    "sampling_importance_ratio": "policy/rollout_is_ratio_mean",
    # mean current/old ratio over tokens (the PPO ratio, all micro-batches)
    "probs_ratio": "policy/ratio_mean",
    # the KL penalty divided by its coefficient: the mean per-token KL to the reference (k3)
    "kl_penalty": "policy/kl_ref",
    # -E_gen[(pi / pi_gen) log pi] on the sampled tokens: an estimate of the policy's per-token entropy
    "approx_entropy": "policy/entropy",
    "mean_gen_tokens_per_sample": "completions/len_mean",
    # share of samples whose sequence (prompt, turns and environment replies) reached max_total_sequence_length;
    # single-turn, the response hit the length cap
    "truncation_rate": "completions/truncated_frac",
}
# not mapped: probs_ratio_clamped (+ _min/_max), policy_kl_error and js_divergence_error (other divergences of
# the same two distributions), natural_termination_rate, num_valid_samples, global_valid_seqs/toks,
# timing/train/*, validation/* (accuracy is the mean eval reward only for a 0/1 verifier).

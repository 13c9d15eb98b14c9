"""Canonical names of the run format, v1, each with one line of meaning.

Every producer (our trainer, the TRL callback, the readers of foreign logs) writes these names and every
consumer (diagnosis, dashboard) keys on them. A metric a source does not have is an absent column or null,
never a made-up zero. New metrics follow `namespace/name`, lower snake case, statistic or unit as suffix.
docs/run-format.md renders this table; tests check that the two agree.
"""

from __future__ import annotations

import re

SCHEMA_VERSION = 1

# name -> one-line meaning. Order here is the column order of a loaded metrics frame.
METRICS: dict[str, str] = {
    "step": "optimizer step (int, one row per step); rollout-level metrics belong to the step that used them",
    "wall_time": "seconds since the Unix epoch (UTC) when the step was logged",
    "reward/mean": "mean raw (unnormalised) reward over every sampled response of the step",
    "reward/std": "std of the raw reward over every response of the step (whole batch, population std)",
    "reward/min": "lowest raw reward among the step's responses",
    "reward/max": "highest raw reward among the step's responses",
    "reward/pass_rate": "fraction of the step's responses the verifier marked as passed",
    "groups/zero_std_frac": "fraction of prompt groups whose rewards are all equal (no learning signal)",
    "groups/all_pass_frac": "fraction of prompt groups where every response passed",
    "groups/all_fail_frac": "fraction of prompt groups where no response passed",
    "groups/reward_std_mean": "mean over groups of the within-group reward std",
    "groups/dropped_frac": "fraction of groups dropped before the update (dynamic sampling of zero-variance groups)",
    "completions/len_mean": "mean completion length in tokens (completion mask only)",
    "completions/len_max": "longest completion of the step, in tokens",
    "completions/truncated_frac": "fraction of completions cut at max new tokens without an end token",
    "policy/entropy": "mean per-token entropy of the policy over completion tokens, in nats",
    "policy/kl_ref": "mean per-token KL estimate between the policy and the frozen reference",
    "policy/clipfrac": "fraction of completion tokens whose ratio was clipped (low or high side)",
    "policy/clipfrac_low": "fraction of tokens clipped at 1 - eps_low (negative advantage side)",
    "policy/clipfrac_high": "fraction of tokens clipped at 1 + eps_high (positive advantage side)",
    "policy/ratio_mean": "mean current/old importance ratio over completion tokens, all minibatches",
    "policy/ratio_max": "largest current/old importance ratio of the step",
    "policy/ratio_first_step": "mean current/old ratio on the first minibatch of a rollout, before any update",
    "policy/ratio_first_step_max_dev": "max |ratio - 1| on that first minibatch, before any update",
    "policy/approx_kl_old": "mean k3 estimate of KL(old || current) over the update, a staleness gauge",
    "policy/rollout_logprob_abs_diff": "mean |log p rollout - log p train| on the same tokens",
    "adv/mean": "mean advantage over completions (about 0 under group normalisation)",
    "adv/std": "std of the advantages over completions",
    "adv/zero_frac": "fraction of completions whose advantage is exactly (|A| < 1e-8) zero",
    "loss/policy": "policy-gradient (clipped surrogate) loss of the step",
    "loss/kl": "KL penalty term of the loss (coefficient included); absent when the KL is not in the loss",
    "loss/total": "total loss that was backpropagated",
    "optim/lr": "learning rate used for the step",
    "optim/grad_norm": "global gradient norm before clipping",
    "eval/pass_rate": "pass rate on the held-out split (eval steps only, null elsewhere)",
    "eval/reward_mean": "mean reward on the held-out split (eval steps only, null elsewhere)",
    "perf/step_s": "wall-clock seconds the step took (rollout + update)",
    "perf/tokens_per_s": "generated completion tokens per second of rollout",
    "policy/kl_coef": "coefficient of the KL-to-reference penalty at the step (in the loss or in the reward)",
    "policy/clipfrac_dual": "fraction of tokens where the dual-clip bound applied (negative advantage, ratio above c)",
    "policy/rollout_logprob_abs_diff_max": "largest |log p rollout - log p train| on one token of the step",
    "policy/rollout_prob_abs_diff": "mean |p rollout - p train| on the same tokens (probabilities, as verl logs it)",
    "policy/rollout_prob_abs_diff_max": "largest |p rollout - p train| on one token of the step",
    "policy/rollout_is_ratio_mean": "mean per-token train/rollout probability ratio before any truncation or masking (1: no mismatch)",
    "policy/rollout_is_ratio_min": "smallest per-token train/rollout probability ratio of the step, before the correction",
    "policy/rollout_is_ratio_max": "largest per-token train/rollout probability ratio of the step, before the correction",
    "policy/rollout_is_weight_mean": "mean per-token rollout-correction weight the loss used (after truncation, masked ones as 0)",
    "policy/rollout_is_masked_frac": "fraction of completion tokens the rollout correction truncated or masked (a masked sequence counts all its tokens)",
    "completions/terminated_len_mean": "mean length of the completions that ended with an end token (0 when none did)",
    # Sequence level: one ratio per response, the product of its token ratios (exp of the summed log gaps), so a
    # per-token gap d moves it by about exp(d x length); never mixed into the per-token columns above.
    "policy/rollout_is_seq_ratio_mean": "mean per-sequence train/rollout ratio (product of the response's token ratios) before any correction",
    "policy/rollout_is_seq_ratio_min": "smallest per-sequence train/rollout ratio (product of token ratios) of the step, before the correction",
    "policy/rollout_is_seq_ratio_max": "largest per-sequence train/rollout ratio (product of token ratios) of the step, before the correction",
    "policy/rollout_is_seq_weight_mean": "mean per-sequence rollout-correction weight the loss used (product of token ratios, after truncation, masked ones as 0)",
    "policy/rollout_is_seq_masked_frac": "fraction of responses the rollout correction truncated or masked whole (sequence modes)",
    "policy/rollout_kl": "per-token estimate of KL(rollout || train) on the tokens the rollout sampled (k1 or k3 estimator; 0: no mismatch)",
    "policy/rollout_exp_logprob_abs_diff": "mean over tokens of exp(|log p rollout - log p train|) (1: no mismatch; at least 1 + the mean absolute gap)",
}

# One row per sampled response: column -> (arrow type name, meaning).
SAMPLES: dict[str, tuple[str, str]] = {
    "step": ("int64", "optimizer step whose rollout produced the response"),
    "prompt_id": ("string", "stable id of the prompt (same prompt, same id across steps)"),
    "group": ("int64", "index of the prompt group within the step"),
    "sample": ("int64", "index of the response within its group, 0..G-1"),
    "reward": ("float64", "raw reward of the response"),
    "passed": ("bool", "whether the verifier accepted the response"),
    "advantage": ("float64", "advantage the update used for the response"),
    "num_tokens": ("int64", "completion length in tokens"),
    "truncated": ("bool", "cut at max new tokens without an end token"),
    "prompt": ("string", "prompt text (optional, may be null)"),
    "completion": ("string", "completion text (optional, may be null); untrusted model output"),
}
SAMPLE_REQUIRED = ("step", "group", "sample", "reward")

STATUSES = ("running", "finished", "failed", "stopped", "unknown")  # stopped: ended by the guard, `error` says why
DERIVED_STATUSES = ("stale",)  # a `running` run whose heartbeat is older than the stale timeout

_NAME_RE = re.compile(r"^[a-z0-9_]+(/[a-z0-9_.@-]+)+$|^(step|wall_time)$")


def is_canonical_name(name: str) -> bool:
    """True for a well-formed `namespace/name` metric name (lower snake case)."""
    return bool(_NAME_RE.match(name))


def ordered_columns(columns) -> list[str]:
    """Canonical columns first, in schema order, then any extra columns sorted by name."""
    present = set(columns)
    head = [c for c in METRICS if c in present]
    tail = sorted(c for c in present if c not in METRICS)
    return head + tail

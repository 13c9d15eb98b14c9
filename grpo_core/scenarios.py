"""Named failure scenarios: each is the real trainer under a documented configuration (plus, for a bug,
a switch of config.FaultConfig), so the log shows the failure the notes describe by its own mechanism.

A scenario = config overrides + what it teaches + the symptom + the diagnosis rule ids that must fire at
warning or above (expected; only these may be critical) or may fire up to a cap (allowed: rule id -> the highest
severity it may get, "warning" or "info"). Both are written from the mechanism, what the configuration or fault
does to the run, never from what the diagnosis says about it (tests/diagnosis/test_diagnosis_accuracy.py scores the
diagnosis against them). Rule ids are those of docs/TEAM-CONTRACT.md. The overrides are applied after the
preset and before the user's own `--set`, so a scenario can still be tweaked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grpo_core.registry import Registry


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str  # the mechanism, one or two sentences
    symptom: str  # what the log shows
    overrides: dict[str, Any] = field(default_factory=dict)
    preset: str = "grpo"
    expected_rules: tuple[str, ...] = ()  # must fire at warning or above; the only rules that may be critical
    allowed_rules: dict[str, str] = field(default_factory=dict)  # rule id -> its cap ("warning" or "info")
    steps: int = 200


SCENARIOS: Registry = Registry("scenario")

# Every scenario runs on the task the demo uses (scripts/demo.sh): 2-digit addition, whose hash split holds
# out about 2,000 prompts, scored 256 at a time, so an eval moves by noise only ~0.03 (1-digit addition holds
# out 20 prompts: one answer moves its eval by 0.05). A scenario's own overrides come after.
TASK = {"task.digits": 2, "task.eval_size": 256}


def scenario(**kw) -> Scenario:
    s = Scenario(**kw)
    SCENARIOS.register(s.name)(s)
    return s


scenario(name="healthy", description="the default grpo preset on 2-digit addition after a warm start to 40% pass",
         symptom="none: pass rate and reward rise, entropy declines slowly, first-step ratio 1, clip fraction small")
scenario(name="broken_verifier",
         description=("training reward from a verifier that compares against ' ' + answer (FAULT "
                      "broken_padded_exact): every correct answer is rejected, no wrong one accepted"),
         symptom="reward flat at 0 although sampled answers are right (samples/), every group all-fail",
         overrides={"faults.reward_verifier": "broken_padded_exact"},
         # no response ever scores: reward exactly 0 with no spread on every step, so every group is all-fail and
         # no advantage moves the policy (the KL term's gradient is 0 at the reference)
         expected_rules=("reward_flat", "reward_constant", "verifier_suspect", "zero_variance_groups"),
         allowed_rules={"sparse_reward": "warning", "no_learning": "warning"})
scenario(name="too_hard", description="3-digit addition; the warm start gives up after 150 supervised steps",
         symptom="all-fail groups dominate, groups/zero_std_frac high, reward flat near 0",
         overrides={"task.digits": 3, "warm_start.max_steps": 150},
         # almost every group all-fail: almost no advantage, so the reward cannot rise from about 0
         expected_rules=("zero_variance_groups", "reward_flat"),
         allowed_rules={"sparse_reward": "warning", "no_learning": "warning"})
scenario(name="too_easy", description="warm start continued until 95% of samples pass before GRPO starts",
         symptom="all-pass groups dominate, groups/zero_std_frac high, little learning signal",
         overrides={"warm_start.target_pass_rate": 0.95},
         # almost every group all-pass: little signal, the reward at its ceiling; a policy trained to 95% is sharp
         expected_rules=("zero_variance_groups",),
         allowed_rules={"sparse_reward": "warning", "reward_flat": "warning", "no_learning": "warning",
                        "low_diversity": "warning"})
# The loss uses the tempered log-probs (logits / 0.1), so each update is about 10x larger: on 2-digit addition the
# policy also drifts (KL to the reference jumps, pass rate falls), which the manifest allows.
scenario(name="low_temperature", description="sampling temperature 0.1 (the loss uses the same tempered policy)",
         symptom=("little in-group diversity: zero-variance fraction about 0.9, entropy about 0.06; the 10x sharper "
                  "update also drifts the policy (KL to the reference jumps) and the pass rate falls"),
         overrides={"rollout.temperature": 0.1},
         # near-identical responses: most groups zero-variance (about 0.9), little signal; the 10x update drifts
         # the policy (a KL jump, the pass rate falls) as a side effect of the temperature, not the fault to report
         # first; entropy is low from the first step, so a fall from an early level is not this run's mechanism
         expected_rules=("low_diversity", "zero_variance_groups"),
         allowed_rules={"reward_flat": "warning", "sparse_reward": "warning", "no_learning": "warning",
                        "kl_clip_explode": "warning", "entropy_collapse": "info"})
scenario(name="lr_too_high", description="AdamW learning rate 0.05, 100x the default",
         symptom="policy/kl_ref jumps (clip fraction stays 0: one on-policy step per rollout), reward and eval collapse",
         overrides={"optim.lr": 0.05},
         # the broken policy's consequences: entropy to 0, completions pinned at the cap, reward and eval to 0,
         # every group all-fail (rollouts are on-policy in fp32: the first-step ratio stays 1)
         expected_rules=("kl_clip_explode",),
         allowed_rules=dict.fromkeys(("entropy_collapse", "no_learning", "reward_flat", "zero_variance_groups",
                                      "sparse_reward", "low_diversity", "length_drift", "truncation"), "warning"))
scenario(name="stale_rollouts", description="4 epochs x 4 minibatches per rollout: 16 optimizer steps per sample",
         symptom=("clip fraction, ratio spread and approx_kl_old grow with each reuse of a rollout; the policy drifts "
                  "from its rollouts and reward and eval fall"),
         overrides={"algo.epochs": 4, "algo.minibatches": 4}, steps=320,
         # the policy drifts from its rollouts and degrades: reward (and eval with it) falls
         expected_rules=("config_many_reuses", "kl_clip_explode"),
         allowed_rules={"entropy_collapse": "warning", "reward_flat": "warning", "no_learning": "warning"})
scenario(name="logprob_mismatch",
         description="old log-probs from a bf16 rollout engine while training in fp32 (old_logprob_source=rollout)",
         symptom=("first-step ratio deviation up to about 0.2 (healthy: 1e-5) and a rollout/train log-prob gap; "
                 "about the clip eps 0.2, so almost no clipping on this tiny model (clip fraction max 0.004)"),
         overrides={"rollout.dtype": "bf16", "algo.old_logprob_source": "rollout"},
         expected_rules=("first_step_ratio",))
# A small learning rate, so the fall is gradual (at 5e-4 the reward is at 0 within ten steps, which
# reads as "flat at 0", and the KL jump that comes with it hides the cause).
scenario(name="sign_flip", description="FAULT sign_flip: the advantage enters the loss negated (learning rate 2e-5)",
         symptom="loss looks ordinary, reward and pass rate fall steadily to about 0",
         overrides={"faults.sign_flip": True, "optim.lr": 2e-5},
         # learning to fail: reward and eval fall together (no divergence) towards 0, groups end all-fail, the
         # policy moves away from the reference
         expected_rules=("no_learning",),
         allowed_rules={"reward_flat": "warning", "zero_variance_groups": "warning", "sparse_reward": "warning",
                        "kl_clip_explode": "warning"})
scenario(name="detached_advantage",
         description="FAULT detach_policy_term: the ratio is detached, only the (zero at start) KL term has a gradient",
         symptom="loss finite and ordinary, grad norm about 0, policy unchanged, nothing learned",
         overrides={"faults.detach_policy_term": True},
         # the policy never changes (KL to the reference exactly 0): the reward is flat by construction
         expected_rules=("no_learning", "reward_flat"))
# Not the dapo preset: its dynamic sampling leaves steps without an update once groups are all equal.
# Two minibatches, so the second is off-policy and clip-higher (0.8) actually lets ratios run upward.
# 1-digit addition: on 2-digit the same settings break the policy instead (pass rate 0 within 20 steps,
# entropy rising 0.34 -> 0.49, measured), which is a KL explosion, not a collapse.
scenario(name="entropy_collapse",
         description="1-digit addition, no KL, learning rate 3e-3 (6x), two minibatches per rollout with clip-higher 0.8",
         symptom="entropy falls by more than half within a short window (about 0.9 -> 0.1 in 40 steps)",
         overrides={"task.digits": 1, "algo.kl_mode": "none", "optim.lr": 3e-3, "algo.minibatches": 2,
                    "algo.clip_eps_high": 0.8},
         # the collapsed policy answers each prompt one way: near-zero entropy, identical groups, a pass rate that
         # stops moving; without a KL term it moves far from the reference
         expected_rules=("entropy_collapse",),
         allowed_rules={"low_diversity": "warning", "zero_variance_groups": "warning", "kl_clip_explode": "warning",
                        "sparse_reward": "warning", "reward_flat": "warning", "no_learning": "warning"})
scenario(name="length_hacking",
         description=("training reward from FAULT verifier length_bonus (prefix match + 0.25 per extra character); "
                      "eval scored by the task's exact verifier; no KL"),
         symptom="train reward rises while eval/pass_rate falls, completion length and truncation grow",
         overrides={"faults.reward_verifier": "length_bonus", "algo.kl_mode": "none"},
         # the bonus pays per extra character: completions grow to the cap; without a KL term the policy drifts
         expected_rules=("eval_diverges", "length_drift"),
         allowed_rules={"truncation": "warning", "kl_clip_explode": "warning"})
scenario(name="small_group", description="group size G = 2 (with 64 prompts per step, the same batch size)",
         symptom="noisy advantages: every advantage is +-0.71 or 0, one response decides each group",
         overrides={"rollout.group_size": 2, "rollout.prompts_per_step": 64},
         # per-group std normalisation (the preset's adv_mode group) with G = 2; at a pass rate near 0.5 half the
         # pairs agree (zero variance)
         expected_rules=("small_group", "config_small_group_adv"),
         allowed_rules={"zero_variance_groups": "warning"})


def overrides_for(name: str) -> tuple[str, list[tuple[str, Any]]]:
    """(preset, [(dotted key, value)]) of a scenario, steps included; KeyError names the choices."""
    s = SCENARIOS[name]
    return s.preset, [("steps", s.steps), *TASK.items(), *s.overrides.items()]


def describe() -> str:
    return "\n".join(f"  {n:18s} {SCENARIOS[n].description}" for n in SCENARIOS)

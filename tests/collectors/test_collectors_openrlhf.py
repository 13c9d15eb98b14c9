"""OpenRLHF's logs through the TensorBoard and wandb offline readers, on files written by the real loggers.

OpenRLHF itself cannot run here (no GPU, no Ray / vLLM / DeepSpeed stack), so the files are written by the
real loggers (torch's SummaryWriter, wandb in offline mode) with OpenRLHF's key names and step convention,
as read in its source (OpenRLHF/OpenRLHF): openrlhf/utils/logging_utils.py (WandbLogger, TensorboardLogger;
commit 013525a4), openrlhf/trainer/ppo_trainer.py (BasePPOTrainer.train_step / save_logs_and_checkpoints),
openrlhf/trainer/ray/ppo_actor.py (ActorPPOTrainer.training_step status, commit c250c21a) and
openrlhf/trainer/ppo_utils/experience_maker.py (Experience.info, commit 89308a0b).

What OpenRLHF does, as reproduced below: every status key goes out as `train/<key>` at global_step 1, 2, ...
(TensorBoard: the event step; wandb: a `train/global_step` value in the same row, after a separate row that
holds only the `train/generated_samples` table). Eval metrics go out as `eval/eval_<datasource>_pass1` and
`..._pass<n>` (wandb: with `eval/global_step`). The run is GRPO-style: group_norm advantages, 8 samples per
prompt, --use_kl_loss, --entropy_loss_coef 0 (so `entropy_loss` is logged), no critic.
"""

from __future__ import annotations

import pytest
from fixtures.wandb_offline import write_offline_run  # tests/ is on sys.path

from collectors.sources import open_run

N = 40  # global steps
EVAL_EVERY = 5


def status(s: int) -> dict[str, float]:
    """The status dict OpenRLHF logs at global_step s (1-based), with hand-picked values."""
    return {
        "policy_loss": 0.5 - 0.01 * s,
        "actor_lr": 1e-6,
        "entropy_loss": 0.8 - 0.001 * s,  # a measured entropy moves; one value on every row reads as a placeholder
        "ppo_clip_ratio": 0.002,
        "ppo_kl": 0.0005,
        "kl": 0.001 * s,
        "response_length": 100.0 + s,
        "total_length": 150.0 + s,
        "response_clip_ratio": 0.01,
        "reward": 0.2 + 0.015 * s,
        "score": 0.2 + 0.015 * s,
        "return": 0.05,
        "group_reward_std": 0.4,
    }


def eval_logs(s: int) -> dict[str, float]:
    return {"eval_default_pass1": 0.3 + 0.001 * s, "eval_default_pass8": 0.6}


# The calls of OpenRLHF's WandbLogger (__init__, log_train, log_eval), in a subprocess with WANDB_MODE=offline.
WANDB_SCRIPT = """
import wandb
run = wandb.init(project="openrlhf", name="grpo-tiny", config={"advantage_estimator": "group_norm",
                 "n_samples_per_prompt": 8, "use_kl_loss": True, "init_kl_coef": 0.001}, dir=DIR)
wandb.define_metric("train/global_step")
wandb.define_metric("train/*", step_metric="train/global_step", step_sync=True)
wandb.define_metric("eval/epoch")
wandb.define_metric("eval/*", step_metric="eval/epoch", step_sync=True)
table = wandb.Table(columns=["global_step", "text", "reward"])
for s, st, ev in ROWS:
    table = wandb.Table(columns=table.columns, data=table.data)
    table.add_data(s, "1+1=2", st["reward"])
    wandb.log({"train/generated_samples": table})
    wandb.log({"train/%s" % k: v for k, v in {**st, "global_step": s}.items()})
    if ev:
        wandb.log({"eval/%s" % k: v for k, v in {**ev, "global_step": s}.items()})
run.finish()
"""


def _rows():
    return [(s, status(s), eval_logs(s) if s % EVAL_EVERY == 0 else None) for s in range(1, N + 1)]


@pytest.fixture(scope="module")
def tb_run(tmp_path_factory):
    from torch.utils.tensorboard import SummaryWriter

    log_dir = tmp_path_factory.mktemp("tb") / "grpo-tiny"  # TensorboardLogger: <use_tensorboard>/<run name>
    writer = SummaryWriter(log_dir=str(log_dir))
    for s, st, ev in _rows():  # TensorboardLogger.log_train / log_eval
        writer.add_text("train/generated_samples", f"Sample:\\n1+1=2\\n\\nReward: {st['reward']:.4f}", s)
        for k, v in st.items():
            writer.add_scalar(f"train/{k}", v, s)
        for k, v in (ev or {}).items():
            writer.add_scalar(f"eval/{k}", v, s)
    writer.close()
    return log_dir


@pytest.fixture(scope="module")
def wandb_run(tmp_path_factory):
    import wandb  # noqa: F401 - the dev extra: a broken install fails here, never skips
    return write_offline_run(tmp_path_factory.mktemp("wb"), WANDB_SCRIPT, ROWS=_rows())


# OpenRLHF key -> our column, for the keys with a faithful twin (collectors/readers/keymap.py OPENRLHF, TRL for kl/reward).
CANONICAL = {
    "policy_loss": "loss/policy",
    "actor_lr": "optim/lr",
    "entropy_loss": "policy/entropy",
    "ppo_clip_ratio": "policy/clipfrac",
    "ppo_kl": "policy/approx_kl_old",
    "kl": "policy/kl_ref",
    "response_length": "completions/len_mean",
    "response_clip_ratio": "completions/truncated_frac",
    "reward": "reward/mean",
    "group_reward_std": "groups/reward_std_mean",
}
# Keys with no faithful twin stay as extra columns under their logged name.
EXTRA = ("train/total_length", "train/score", "train/return", "eval/eval_default_pass8")

# Rules whose inputs OpenRLHF logs, so they must be judged on its runs:
JUDGED = {
    "reward_flat",  # reward/mean
    "reward_constant",  # reward/mean
    "eval_diverges",  # reward/mean, eval/reward_mean
    "length_drift",  # completions/len_mean, completions/truncated_frac
    "non_finite",  # every column
    "kl_clip_explode",  # policy/kl_ref, policy/clipfrac
    "entropy_collapse",  # policy/entropy
    "no_learning",  # loss/policy, reward/mean
}
# Not judged on OpenRLHF logs: sparse_reward (reward/pass_rate), zero_variance_groups (groups/zero_std_frac),
# first_step_ratio (policy/ratio_first_step), low_diversity / verifier_suspect (temperature, sample texts).
# small_group and the config_* rules are judged where the config (wandb) gives OpenRLHF's args.


def _check_metrics(run):
    m = run.metrics
    assert run.problems == []
    assert set(range(1, N + 1)) <= set(m["step"])  # OpenRLHF's global_step, one row each
    row = m.set_index("step").loc[20]
    expected = {CANONICAL[k]: v for k, v in status(20).items() if k in CANONICAL}
    for name, value in expected.items():
        assert row[name] == pytest.approx(value, rel=1e-6), name
    assert row["reward/mean"] == pytest.approx(0.5) and row["policy/kl_ref"] == pytest.approx(0.02)
    assert row["completions/len_mean"] == 120.0 and row["loss/policy"] == pytest.approx(0.3)
    for extra in EXTRA:
        assert extra in m.columns, extra
    assert row["train/total_length"] == 170.0 and row["train/return"] == pytest.approx(0.05)
    # no OpenRLHF key was relabelled into a canonical meaning it does not have
    assert not {"reward/pass_rate", "eval/pass_rate", "adv/mean", "loss/total"} & set(m.columns)
    return m


def _eval_rows(m):
    got = m.dropna(subset=["eval/reward_mean"]).set_index("step")
    return {int(s): float(v) for s, v in got["eval/reward_mean"].items()}


EVAL_EXPECTED = {s: pytest.approx(0.3 + 0.001 * s) for s in range(EVAL_EVERY, N + 1, EVAL_EVERY)}


def _check_diagnosis(run, judged=JUDGED):
    from dashboard.diagnosis.engine import diagnose

    d = diagnose(run)
    not_judged = {n.rule_id: n.reason for n in d.not_judged}
    assert judged.isdisjoint(not_judged), {r: not_judged[r] for r in judged & set(not_judged)}
    # what OpenRLHF does not log keeps these rules unjudged: first-minibatch ratio, pass rate, zero-std groups
    assert {"first_step_ratio", "sparse_reward", "zero_variance_groups"} <= set(not_judged)
    return d


def test_tensorboard_openrlhf_tags(tb_run):
    run = open_run(tb_run)
    assert run.meta.source == "tensorboard"
    m = _check_metrics(run)
    assert list(m["step"]) == list(range(1, N + 1))
    assert _eval_rows(m) == EVAL_EXPECTED  # eval/eval_default_pass1 at the event's global_step
    assert not [c for c in m.columns if "generated_samples" in c]  # the text summary is not a metric
    d = _check_diagnosis(run)
    assert d.steps == N and d.last_step == N


def test_wandb_offline_openrlhf_keys(wandb_run):
    run = open_run(wandb_run)
    assert run.meta.source == "wandb"
    m = _check_metrics(run)
    assert run.meta.config["advantage_estimator"] == "group_norm"
    assert not [c for c in m.columns if "generated_samples" in c]  # the samples table is media, not a metric
    _check_diagnosis(run, JUDGED | {"small_group"})


def test_wandb_offline_openrlhf_eval_step(wandb_run):
    # eval rows carry eval/global_step, not train/global_step; the samples-table row has no step of its own
    m = open_run(wandb_run).metrics
    assert _eval_rows(m) == EVAL_EXPECTED
    assert list(m["step"]) == list(range(1, N + 1))


# OpenRLHF's full argparse namespace for a GRPO run (names and defaults from openrlhf/cli/train_ppo_ray.py,
# commit 021d1b09), logged as WandbLogger does: wandb.init(config=args.__dict__). G = 2 with group_norm and
# 2 epochs x (64 x 2 / 32) = 8 optimizer steps per rollout, so two of the three config rules fire.
OPENRLHF_ARGS = {
    "advantage_estimator": "group_norm", "no_advantage_std_norm": False, "n_samples_per_prompt": 2,
    "policy_loss_type": "ppo", "use_kl_loss": True, "init_kl_coef": 0.001, "kl_estimator": "k3", "kl_target": None,
    "kl_horizon": 10000, "vllm_num_engines": 2, "enable_vllm_is_correction": False, "vllm_is_truncated_threshold": 2,
    "max_epochs": 2, "rollout_batch_size": 64, "train_batch_size": 32, "micro_train_batch_size": 4,
    "micro_rollout_batch_size": 8, "use_dynamic_batch": False, "eps_clip": 0.2, "eps_clip_low_high": [0.2, 0.2],
    "temperature": 1.0, "top_p": 1.0, "gamma": 1, "lambd": 1, "actor_learning_rate": 1e-6, "ema_beta": 0.992,
    "entropy_loss_coef": 0, "reward_clip_range": [-10, 10], "pretrain": "Qwen/Qwen2.5-0.5B", "critic_pretrain": None,
    "use_wandb": "True", "wandb_project": "openrlhf_train_ppo",
}

CONFIG_SCRIPT = """
import wandb
run = wandb.init(project="openrlhf_train_ppo", name="grpo-args", config=ARGS, dir=DIR)
wandb.define_metric("train/global_step")
wandb.define_metric("train/*", step_metric="train/global_step", step_sync=True)
for s in range(1, 31):
    wandb.log({"train/policy_loss": 0.5 - 0.01 * s, "train/reward": 0.2 + 0.01 * s, "train/kl": 0.001 * s,
               "train/response_length": 100.0 + s, "train/global_step": s})
run.finish()
"""


def test_wandb_offline_openrlhf_args_config_audit(tmp_path):
    import wandb  # noqa: F401 - the dev extra: a broken install fails here, never skips

    from dashboard.diagnosis.engine import diagnose
    from dashboard.diagnosis.rules.config_questions import answer_questions

    run = open_run(write_offline_run(tmp_path, CONFIG_SCRIPT, ARGS=OPENRLHF_ARGS))
    assert run.meta.source == "wandb" and run.meta.config["n_samples_per_prompt"] == 2
    answers = [a.answer for a in answer_questions(run.meta.config, run.meta.source)]
    assert answers[0] == "per prompt group: A = (r - group mean) / (group std + 1e-9) (advantage_estimator group_norm)"
    assert answers[3] == "added to the loss, outside the reward (estimator k3, coef 0.001)"
    assert answers[4].startswith("8 optimizer steps per rollout (2 epoch(s) x 4 minibatch(es))")
    d = diagnose(run)
    not_judged = {n.rule_id: n.reason for n in d.not_judged}
    rules = {"config_kl_twice", "config_small_group_adv", "config_many_reuses"}
    assert rules.isdisjoint(not_judged), {r: not_judged[r] for r in rules & set(not_judged)}
    fired = {f.rule_id for f in d.findings}
    assert {"config_small_group_adv", "config_many_reuses"} <= fired and "config_kl_twice" not in fired


# OpenRLHF 0.9.2 on logs both `truncated` (vLLM's finish_reason "length": our truncated share) and
# `response_clip_ratio` (the length cap reached, end token or not), and 0.8.1 on `dynamic_filtering_pass_rate` in
# percent of the prompts consumed. Whatever order the status dict holds them in, the faithful key is the column.
BOTH = {"truncated": 0.25, "response_clip_ratio": 0.5, "dynamic_filtering_pass_rate": 62.5}
ORDERS = {"truncated_first": dict(BOTH), "clip_ratio_first": dict(reversed(list(BOTH.items())))}


def _check_both(m):
    assert m["completions/truncated_frac"].tolist() == [0.25] * 3  # truncated's, never the clip ratio's 0.5
    assert m["train/response_clip_ratio"].tolist() == [0.5] * 3  # kept under its own name
    # 62.5% of the consumed prompts kept: 1 - 62.5 / 100 dropped; the rate stays as logged
    assert m["groups/dropped_frac"].tolist() == [0.375] * 3
    assert m["train/dynamic_filtering_pass_rate"].tolist() == [62.5] * 3


@pytest.mark.parametrize("order", ORDERS)
def test_tensorboard_truncated_wins_over_response_clip_ratio_in_any_tag_order(tmp_path, order):
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(log_dir=str(tmp_path / "grpo"))
    for s in (1, 2, 3):  # TensorboardLogger.log_train: one add_scalar per status key, in the dict's order
        for k, v in {**status(s), **ORDERS[order]}.items():
            writer.add_scalar(f"train/{k}", v, s)
    writer.close()
    _check_both(open_run(tmp_path / "grpo").metrics)


@pytest.mark.parametrize("order", ORDERS)
def test_wandb_truncated_wins_over_response_clip_ratio_in_any_key_order(tmp_path, order):
    script = """
import wandb
run = wandb.init(project="openrlhf", name="grpo", config={"n_samples_per_prompt": 8}, dir=DIR)
wandb.define_metric("train/global_step")
wandb.define_metric("train/*", step_metric="train/global_step", step_sync=True)
for s, st in ROWS:
    wandb.log({"train/%s" % k: v for k, v in {**st, "global_step": s}.items()})
run.finish()
"""
    rows = [(s, {**status(s), **ORDERS[order]}) for s in (1, 2, 3)]
    _check_both(open_run(write_offline_run(tmp_path, script, ROWS=rows)).metrics)

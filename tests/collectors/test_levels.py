"""The importance ratio's level (per token or per response) from the run's config (collectors/levels.py), and the
first-step rule judging each level with its own yardstick (dashboard/diagnosis/rules/first_step.py).

TRL output folders are written by the libraries: trainer_state.json by transformers' TrainerState.save_to_json,
training_args.bin by torch.save of TRL 1.16's own GRPOConfig, as Trainer._save does. Values are those TRL logs
(trl/trainer/grpo_trainer.py, `_generate_and_score_completions`): in the sequence modes the ratio is exp of the
response's summed log gaps, a product."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from collectors.levels import LEVEL_INFO, place
from collectors.sources import open_run
from dashboard.diagnosis import diagnose

N = 30


def trl_folder(path, mode: str | None, rows: list[dict]) -> object:
    """A TRL output folder with one checkpoint: the GRPOConfig (vllm_importance_sampling_mode = mode, TRL's own
    default when None) and the log history `rows` (one dict per step, TRL's key names)."""
    import torch
    from transformers import TrainerState
    from trl import GRPOConfig

    ckpt = path / f"checkpoint-{len(rows)}"
    ckpt.mkdir(parents=True)
    kwargs = {} if mode is None else {"vllm_importance_sampling_mode": mode}
    args = GRPOConfig(output_dir=str(path), use_cpu=True, bf16=False, num_generations=8, logging_steps=1,
                      per_device_train_batch_size=8, **kwargs)
    torch.save(args, ckpt / "training_args.bin")
    state = TrainerState(global_step=len(rows), max_steps=len(rows), logging_steps=1)
    state.log_history = [{**row, "step": i + 1} for i, row in enumerate(rows)]
    state.save_to_json(str(ckpt / "trainer_state.json"))
    return path


def trl_rows(is_mean: float, logp_diff: list[float], length: float = 8000.0) -> list[dict]:
    return [{"loss": 0.01, "reward": 0.2 + 0.01 * i, "reward_std": 0.3, "completions/mean_length": length,
             "learning_rate": 1e-6, "sampling/sampling_logp_difference/mean": logp_diff[i],
             "sampling/sampling_logp_difference/max": 0.5, "sampling/importance_sampling_ratio/min": 0.0,
             "sampling/importance_sampling_ratio/mean": is_mean, "sampling/importance_sampling_ratio/max": 2.9}
            for i in range(len(logp_diff))]


def first_step(run) -> list:
    return [f for f in diagnose(run).findings if f.rule_id == "first_step_ratio"]


def test_a_long_product_ratio_with_a_tiny_token_gap_is_no_alarm(tmp_path):
    # TRL's default sequence_mask: a response's ratio is the product of its 8,000 token ratios. A mean of 0.06
    # is |ln 0.06| / 8000 = 3.5e-4 nats per token, and the token gap TRL logs is 1.2e-4: both far under 0.1.
    # (Before the level was kept, the 0.06 was read as a per-token weight, |0.06 - 1| > 0.05: a finding.)
    run = open_run(trl_folder(tmp_path / "seq", "sequence_mask", trl_rows(0.06, [1.2e-4] * N)))
    m = run.metrics
    assert "policy/rollout_is_weight_mean" not in m.columns
    assert m["policy/rollout_is_seq_weight_mean"].tolist() == [0.06] * N
    assert run.meta.info[LEVEL_INFO] == {"train/sampling/importance_sampling_ratio/mean": (  # as TRL's reader keeps it
        "policy/rollout_is_seq_weight_mean (config vllm_importance_sampling_mode = sequence_mask)")}
    assert first_step(run) == []


def test_trl_default_mode_is_read_from_the_saved_config(tmp_path):
    # GRPOConfig's own default (sequence_mask in TRL 0.26 on) is in training_args.bin like any other field
    run = open_run(trl_folder(tmp_path / "default", None, trl_rows(0.06, [1.2e-4] * N)))
    assert "policy/rollout_is_seq_weight_mean" in run.metrics.columns and first_step(run) == []


def test_the_same_mean_per_token_is_a_mismatch(tmp_path):
    # token_truncate: 0.06 is the mean weight of single tokens, |0.06 - 1| = 0.94 > 0.05
    run = open_run(trl_folder(tmp_path / "tok", "token_truncate", trl_rows(0.06, [1.2e-4] * N)))
    assert run.metrics["policy/rollout_is_weight_mean"].tolist() == [0.06] * N
    (f,) = first_step(run)
    assert f.severity == "warning" and f.evidence[0].metric == "policy/rollout_is_weight_mean"
    assert f.evidence[0].value == pytest.approx(0.94)


def test_a_short_product_ratio_far_from_1_is_a_mismatch(tmp_path):
    # the same 0.06 over responses of 20 tokens: |ln 0.06| / 20 = 0.14 nats per token > 0.1
    run = open_run(trl_folder(tmp_path / "short", "sequence_truncate", trl_rows(0.06, [1.2e-4] * N, length=20.0)))
    (f,) = first_step(run)
    (e,) = [e for e in f.evidence if e.metric == "policy/rollout_is_seq_weight_mean"]
    assert f"per-token gap of {-math.log(0.06) / 20:.3g} nats" in e.text


def test_a_token_gap_growing_from_step_1_is_a_mismatch_even_at_learning_rate_0(tmp_path):
    # the per-token gap rises 1e-3 -> 3.0e-2 over 30 steps: the last quarter (30 // 4 = 7 steps, 0.024-0.030) has a
    # median of 0.027, 13.5 x the first three steps' 0.002, though under the 0.1 a fixed gap is judged by (median
    # 0.0155); the learning rate is 0 throughout
    gaps = [1e-3 * (i + 1) for i in range(N)]
    rows = [r | {"learning_rate": 0.0} for r in trl_rows(1.0, gaps)]
    run = open_run(trl_folder(tmp_path / "grow", "sequence_mask", rows))
    (f,) = first_step(run)
    (e,) = [e for e in f.evidence if e.metric == "policy/rollout_logprob_abs_diff"]
    assert e.value == pytest.approx(0.027) and e.threshold == pytest.approx(3 * 0.002)
    assert "grows from 0.002 (first steps) to 0.027 (last quarter), 13.5 times" in e.text and "while the learning rate is 0" in e.text
    # the same values in another order: no trend, no alarm (a level of 0.016 nats is bf16 numerics)
    flat = [r | {"learning_rate": 0.0} for r in trl_rows(1.0, sorted(gaps, key=lambda g: (g * 7919) % 1))]
    assert first_step(open_run(trl_folder(tmp_path / "flat", "sequence_mask", flat))) == []


def test_place_leaves_an_unknown_mode_alone():
    chunk = pd.DataFrame({"step": [1], "train/sampling/importance_sampling_ratio/mean": [0.5]})
    info: dict = {}
    assert place(chunk, {}, info).columns.tolist() == chunk.columns.tolist() and info == {}
    # a mode TRL names with a logger's prefix on the key; TRL before 0.26 (a cap and no mode): per-token truncation
    got = place(chunk, {"vllm_importance_sampling_cap": 2.0}, info)
    assert got.columns.tolist() == ["step", "policy/rollout_is_weight_mean"]
    assert "without a mode: token_truncate" in info[LEVEL_INFO]["train/sampling/importance_sampling_ratio/mean"]


def test_the_new_yardsticks_read_in_chinese(tmp_path):
    from dashboard.diagnosis.i18n import evidence_text

    short = open_run(trl_folder(tmp_path / "short", "sequence_truncate", trl_rows(0.06, [1.2e-4] * N, length=20.0)))
    grow = open_run(trl_folder(tmp_path / "grow", "sequence_mask",
                               [r | {"learning_rate": 0.0} for r in trl_rows(1.0, [1e-3 * (i + 1) for i in range(N)])]))
    texts = [e.text for run in (short, grow) for f in first_step(run) for e in f.evidence]
    zh = [evidence_text(t, "zh") for t in texts]
    assert any(z.startswith("按回答计的 IS ratio（回答中各 token ratio 的乘积）：中位数 0.06，回答平均 20 个 token") for z in zh), zh
    assert any("而此时 LR 为 0：权重没有变" in z and "13.5 倍" in z for z in zh), zh


def test_the_live_callback_writes_the_level_it_was_configured_with(tmp_path):
    # GrpoScopeCallback writes (and hands its guard) the row a reader of the written run would read
    from transformers import TrainerControl, TrainerState
    from trl import GRPOConfig

    from collectors import load_run
    from collectors.trl import GrpoScopeCallback

    args = GRPOConfig(output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, num_generations=8,
                      per_device_train_batch_size=8, vllm_importance_sampling_mode="token_mask")
    cb, state, control = GrpoScopeCallback(tmp_path / "run"), TrainerState(), TrainerControl()
    cb.on_train_begin(args, state, control)
    for step in (1, 2):
        state.global_step = step
        cb.on_log(args, state, control, logs={"reward": 0.5, "sampling/importance_sampling_ratio/mean": 0.97})
    cb.on_train_end(args, state, control)
    m = load_run(tmp_path / "run").metrics
    assert m["policy/rollout_is_weight_mean"].tolist() == [0.97, 0.97]
    assert not [c for c in m.columns if "importance_sampling_ratio/mean" in c]

"""The GRPO variants, each against numbers worked out by hand here, and the policy losses against TRL's
own GRPOTrainer._compute_loss on the same model, tokens and old/reference log-probs."""

import math

import pytest
import torch
import trl  # the dev extra: a broken install fails here, never skips

from grpo_core.advantages import ADVANTAGES
from grpo_core.config import AlgoConfig, ConfigError, build_config, validate
from grpo_core.losses import KL_ESTIMATORS, POLICY_LOSSES, grpo_loss
from grpo_core.metrics import logprob_gap, rollout_metrics
from grpo_core.rollout_correction import ROLLOUT_CORRECTIONS
from grpo_core.shaping import loss_mask, soft_overlong_penalty

torch.set_num_threads(1)


def adv(mode, rewards, eps=0.0, tokens=None, unbiased=True):
    tokens = torch.tensor(tokens, dtype=torch.float64) if tokens is not None else None
    return ADVANTAGES[mode](torch.tensor(rewards, dtype=torch.float64), eps=eps, tokens=tokens,
                            unbiased=unbiased).tolist()


def test_rloo_leave_one_out_baseline():
    # [1, 0, 0, 0]: response 0's baseline is the mean of the others, 0 -> A = 1; response 1's is
    # (1 + 0 + 0) / 3 -> A = -1/3. A group of equal rewards gets exactly 0.
    got = adv("rloo", [[1, 0, 0, 0], [0.7, 0.7, 0.7, 0.7]])
    assert got[0] == pytest.approx([1, -1 / 3, -1 / 3, -1 / 3])
    assert got[1] == [0, 0, 0, 0]
    # verl's formula (compute_rloo_outcome_advantage): r * n / (n - 1) - mean * n / (n - 1)
    r = [0.5, 0.2, 0.9, 0.4]
    n, mean = 4, sum(r) / 4
    assert adv("rloo", [r])[0] == pytest.approx([x * n / (n - 1) - mean * n / (n - 1) for x in r])


def test_reinforce_pp_batch_zscore_without_group_baseline():
    # [[1, 0], [1, 1]]: batch mean 0.75, deviations .25 -.75 .25 .25, sum of squares 0.75, Bessel std
    # sqrt(0.75 / 3) = 0.5 -> [0.5, -1.5, 0.5, 0.5]: the all-pass group keeps a positive advantage.
    assert adv("reinforce_pp", [[1, 0], [1, 1]]) == [pytest.approx([0.5, -1.5]), pytest.approx([0.5, 0.5])]
    assert adv("reinforce_pp", [[0.7, 0.7], [0.7, 0.7]]) == [[0, 0], [0, 0]]  # a constant batch: 0, not NaN


def test_reinforce_pp_whitens_over_tokens():
    # rewards [[1, 0], [1, 1]] with 3, 1 | 2, 2 tokens: 8 token returns, seven 1s and one 0, mean 7/8.
    # squared deviations 7 x (1/8)^2 + (7/8)^2 = 7/8; Bessel over tokens: var 7/8 / 7 = 1/8, std 0.353553
    # -> A = 0.125 / 0.353553 = 0.353553 for a 1, -0.875 / 0.353553 = -2.474874 for the 0.
    got = adv("reinforce_pp", [[1, 0], [1, 1]], tokens=[[3, 1], [2, 2]])
    assert got == [pytest.approx([0.353553, -2.474874], abs=1e-6), pytest.approx([0.353553, 0.353553], abs=1e-6)]
    # population variance (OpenRLHF): 7/8 / 8, std 0.330719 -> 0.377964, -2.645751
    got = adv("reinforce_pp", [[1, 0], [1, 1]], tokens=[[3, 1], [2, 2]], unbiased=False)
    assert got[0] == pytest.approx([0.377964, -2.645751], abs=1e-6)
    # a response with no loss token (masked truncation) weighs nothing: the same as leaving it out
    assert adv("reinforce_pp", [[1, 0, 5]], tokens=[[3, 1, 0]])[0][:2] == pytest.approx(
        adv("reinforce_pp", [[1, 0]], tokens=[[3, 1]])[0])


def test_reinforce_pp_baseline_whitens_the_centred_rewards_over_tokens():
    # centred [.75 -.25 -.25 -.25 | 0 0 0 0], tokens [2 1 1 1 | 1 1 1 1]: 9 tokens, token mean 0.75 / 9 = 1/12
    # deviations 2/3 (x2), -1/3 (x3), -1/12 (x4): squares 8/9 + 3/9 + 4/144 = 1.25; Bessel 1.25 / 8, std
    # 0.395285 -> 1.686548, -0.843274; the all-pass group gets -1/12 / 0.395285 = -0.210819, not 0.
    got = adv("reinforce_pp_baseline", [[1, 0, 0, 0], [1, 1, 1, 1]], tokens=[[2, 1, 1, 1], [1, 1, 1, 1]])
    assert got[0] == pytest.approx([1.686548, -0.843274, -0.843274, -0.843274], abs=1e-6)
    assert got[1] == pytest.approx([-0.210819] * 4, abs=1e-6)


@pytest.mark.parametrize("mode", ["reinforce_pp", "reinforce_pp_baseline"])
@pytest.mark.parametrize("unbiased", [True, False])
def test_reinforce_pp_equals_token_level_whitening_of_the_returns(mode, unbiased):
    # The published recipe on per-token tensors: every action token's return is the (group-centred)
    # outcome reward; whiten over the masked tokens of the batch (verl: Bessel, rsqrt(var + 1e-8);
    # OpenRLHF: population variance, rsqrt(max(var, 1e-8))). Ours, per response, must give each token's value.
    gen = torch.Generator().manual_seed(0)
    P, G, N = 3, 4, 6
    rewards = torch.randint(0, 3, (P, G), generator=gen).double() / 2
    lengths = torch.randint(1, N + 1, (P, G), generator=gen)
    mask = (torch.arange(N) < lengths.reshape(-1, 1)).double()  # [P * G, N]
    score = rewards - rewards.mean(1, keepdim=True) if mode == "reinforce_pp_baseline" else rewards
    returns = score.reshape(-1, 1) * mask
    n = mask.sum()
    mean = (returns * mask).sum() / n
    var = ((returns - mean) ** 2 * mask).sum() / (n - 1 if unbiased else n)
    want = ((returns - mean) * torch.rsqrt(var + 1e-8 if unbiased else var.clamp(min=1e-8))) * mask
    got = ADVANTAGES[mode](rewards, eps=0.0, unbiased=unbiased, tokens=lengths)
    assert torch.allclose(got.reshape(-1, 1) * mask, want, rtol=1e-6, atol=1e-7)


def test_reinforce_pp_baseline_group_mean_then_batch_std():
    # centred: [.75 -.25 -.25 -.25 | .5 .5 -.5 -.5], sum of squares 1.75, Bessel std sqrt(1.75 / 7) = 0.5
    got = adv("reinforce_pp_baseline", [[1, 0, 0, 0], [1, 1, 0, 0]])
    assert got[0] == pytest.approx([1.5, -0.5, -0.5, -0.5])
    assert got[1] == pytest.approx([1, 1, -1, -1])
    # an all-pass group adds four zeros to the batch: std sqrt(1.75 / 11) = 0.398862, and stays at 0 itself
    got = adv("reinforce_pp_baseline", [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]])
    assert got[0][0] == pytest.approx(0.75 / 0.398862, abs=1e-5)
    assert got[2] == [0, 0, 0, 0]


def loss_of(name, ratios, a, **knobs):
    algo = AlgoConfig(**{"clip_eps_low": 0.2, "clip_eps_high": 0.2, **knobs})
    log_ratio = torch.tensor([ratios], dtype=torch.float64).log().requires_grad_(True)
    loss, low, high, dual = POLICY_LOSSES[name](log_ratio, torch.tensor([a], dtype=torch.float64), algo)
    assert name == "dual_clip" or not dual.any()
    return loss, low, high | dual, log_ratio


def test_dual_clip_caps_the_negative_advantage_loss_at_c():
    # A = -1, eps 0.2: the clipped surrogate is max(r, clip(r)) = [.8, 1, 2, 4]; dual clip c = 3 -> [.8, 1, 2, 3]
    loss, low, high, _ = loss_of("dual_clip", [0.5, 1.0, 2.0, 4.0], -1.0, clip_ratio_c=3.0)
    assert loss[0].tolist() == pytest.approx([0.8, 1.0, 2.0, 3.0])
    assert low[0].tolist() == [True, False, False, False] and high[0].tolist() == [False, False, False, True]
    # A = +1: the same as the clipped surrogate, -min(r, clip(r)) = [-.5, -1, -1.2, -1.2]
    loss, *_ = loss_of("dual_clip", [0.5, 1.0, 2.0, 4.0], 1.0, clip_ratio_c=3.0)
    assert loss[0].tolist() == pytest.approx([-0.5, -1.0, -1.2, -1.2])


def test_cispo_truncated_detached_weight_keeps_every_gradient():
    # A = 2, cap 1 + 0.2: weights [0.5, 1, 1.2]; d loss / d log pi = -w A = [-1, -2, -2.4]: the token at
    # r = 1.5 keeps a gradient (the clip would have removed it), only its size is bounded.
    loss, low, high, log_ratio = loss_of("cispo", [0.5, 1.0, 1.5], 2.0)
    (grad,) = torch.autograd.grad(loss.sum(), log_ratio)
    assert grad[0].tolist() == pytest.approx([-1.0, -2.0, -2.4])
    assert high[0].tolist() == [False, False, True] and not low.any()


def test_sapo_soft_gate():
    # A = +1, tau 1: -sigmoid(r - 1) * 4; at r = 1 that is -2 with slope -1; at r = 1.5, -4 * 0.622459.
    loss, low, high, log_ratio = loss_of("sapo", [1.0, 1.5], 1.0, sapo_tau_pos=1.0, sapo_tau_neg=1.05)
    sig = 1 / (1 + math.exp(-0.5))
    assert loss[0].tolist() == pytest.approx([-2.0, -4 * sig])
    (grad,) = torch.autograd.grad(loss[0, 0], log_ratio)  # d/d log r = r * d/dr = 1 * (-1)
    assert grad[0, 0].item() == pytest.approx(-1.0)
    # A = -1, tau_neg 1.05 at r = 0.5: sigmoid(-0.525) = 0.371684, * 4 / 1.05 = 1.415938
    loss, *_ = loss_of("sapo", [0.5], -1.0, sapo_tau_pos=1.0, sapo_tau_neg=1.05)
    assert loss.item() == pytest.approx(4 / 1.05 / (1 + math.exp(0.525)))
    assert loss.item() == pytest.approx(1.415938, abs=1e-6) and not low.any() and not high.any()


def test_low_var_kl_is_k3_with_verls_clamps():
    logp = torch.tensor([[-1.0, -30.0, -0.5]])
    ref = torch.tensor([[-1.5, -0.1, -40.0]])
    got = KL_ESTIMATORS["low_var_kl"](logp, ref)[0].tolist()
    assert got[0] == pytest.approx(math.exp(-0.5) - 1 + 0.5)  # inside the clamps: k3
    assert got[1] == 10.0  # log r = 29.9 -> k3 ~ 1e13, clamped to 10
    assert got[2] == 10.0  # log r = -39.5 clamped to -20: k3 = e^-20 + 19 -> 10


def test_bias_corrected_kl_multiplies_by_the_ratio():
    # one token, ratio 2 (logp - old = log 2), k3(logp, ref) with log(ref/p) = -0.5 -> kl = e^-0.5 - 1 + 0.5
    logp, old, ref = torch.tensor([[math.log(0.4)]]), torch.tensor([[math.log(0.2)]]), torch.tensor([[math.log(0.4) - 0.5]])
    mask = torch.ones(1, 1, dtype=torch.bool)
    kl = math.exp(-0.5) - 1 + 0.5
    algo = AlgoConfig(kl_coef=0.1, kl_bias_correction=True, clip_eps_high=10.0)
    _, stats = grpo_loss(logp, old, ref, torch.tensor([0.0]), mask, algo, 1.0, kl_in_loss=True)
    assert stats["loss/kl"].item() == pytest.approx(0.1 * kl * 2)
    assert stats["policy/kl_ref"].item() == pytest.approx(kl)  # the logged KL stays the plain estimate


def test_rollout_corrections_token_and_sequence():
    # token log weights log(old / rollout): [log 2, log 0.5, log 4] on one response of three tokens.
    old = torch.tensor([[0.0, 0.0, 0.0]])
    rollout = -torch.tensor([[math.log(2), math.log(0.5), math.log(4)]])
    mask = torch.tensor([[True, True, True]])
    w = {n: ROLLOUT_CORRECTIONS[n](old, rollout, mask, 0.6, 3.0)[0][0].tolist() for n in ROLLOUT_CORRECTIONS}
    assert w["token_truncate"] == pytest.approx([2.0, 0.6, 3.0])
    assert w["token_mask"] == pytest.approx([2.0, 0.0, 0.0])
    # sequence: 2 * 0.5 * 4 = 4 on every token -> truncated to 3, masked to 0
    assert w["sequence_truncate"] == pytest.approx([3.0, 3.0, 3.0])
    assert w["sequence_mask"] == [0.0, 0.0, 0.0]
    rollout2 = -torch.tensor([[math.log(2), math.log(0.5), 0.0]])
    assert ROLLOUT_CORRECTIONS["sequence_mask"](old, rollout2, mask, 0.6, 3.0)[0][0].tolist() == pytest.approx([1, 1, 1])


def test_rollout_correction_statistics_by_hand():
    # Two responses, token ratios pi_old / pi_rollout: A = [2, 0.5, 4]; B = [1.5, pad, pad] (the padded
    # ratios of 9 must count nowhere). Bounds [0.6, 3].
    old = torch.zeros(2, 3)
    rollout = -torch.tensor([[2, 0.5, 4], [1.5, 9, 9]]).log()
    mask = torch.tensor([[True, True, True], [True, False, False]])
    # token modes log policy/rollout_is_*, sequence modes policy/rollout_is_seq_* (a product per response)
    stats = {n: {k.removeprefix("policy/rollout_is_").removeprefix("seq_"): v.item() for k, v in
                 ROLLOUT_CORRECTIONS[n](old, rollout, mask, 0.6, 3.0)[1].items()} for n in ROLLOUT_CORRECTIONS}
    # tokens 2, 0.5, 4, 1.5: mean 2, min 0.5, max 4; 0.5 and 4 lie outside -> 2 of 4
    # truncated weights 2, 0.6, 3, 1.5 -> mean 1.775; masked 2, 0, 0, 1.5 -> 0.875
    tok = {"ratio_mean": 2.0, "ratio_min": 0.5, "ratio_max": 4.0, "masked_frac": 0.5}
    assert stats["token_truncate"] == pytest.approx({**tok, "weight_mean": 1.775})
    assert stats["token_mask"] == pytest.approx({**tok, "weight_mean": 0.875})
    # sequences: A = 2 * 0.5 * 4 = 4, B = 1.5: mean 2.75; A lies outside -> 1 of 2
    # truncated weights 3, 1.5 -> 2.25; masked 0, 1.5 -> 0.75
    seq = {"ratio_mean": 2.75, "ratio_min": 1.5, "ratio_max": 4.0, "masked_frac": 0.5}
    assert stats["sequence_truncate"] == pytest.approx({**seq, "weight_mean": 2.25})
    assert stats["sequence_mask"] == pytest.approx({**seq, "weight_mean": 0.75})
    assert set(ROLLOUT_CORRECTIONS["sequence_mask"](old, rollout, mask, 0.6, 3.0)[1]) == {
        "policy/rollout_is_seq_ratio_mean", "policy/rollout_is_seq_ratio_min", "policy/rollout_is_seq_ratio_max",
        "policy/rollout_is_seq_weight_mean", "policy/rollout_is_seq_masked_frac"}


def test_rollout_logprob_gap_by_hand():
    # probabilities rollout [.5, .25 | .5, pad], train [.25, .25 | .5, pad]: |dlogp| = log 2, 0, 0 -> mean
    # log(2) / 3, max log 2; |dp| = 0.25, 0, 0 -> mean 0.25 / 3, max 0.25. The pad's gap counts nowhere.
    rollout = torch.tensor([[0.5, 0.25], [0.5, 1.0]]).log()
    train_ = torch.tensor([[0.25, 0.25], [0.5, 1.0]]).log()
    train_[1, 1] = -5.0
    mask = torch.tensor([[True, True], [True, False]])
    got = {k: v.item() for k, v in logprob_gap(rollout, train_, mask).items()}
    assert got == pytest.approx({"policy/rollout_logprob_abs_diff": math.log(2) / 3,
                                 "policy/rollout_logprob_abs_diff_max": math.log(2),
                                 "policy/rollout_prob_abs_diff": 0.25 / 3, "policy/rollout_prob_abs_diff_max": 0.25})


def test_terminated_length_mean_by_hand():
    # lengths 3, 8 | 5, 8 with the 8s cut at the cap: the ended ones average (3 + 5) / 2 = 4; none ended: 0
    lengths, cut = torch.tensor([[3, 8], [5, 8]]), torch.tensor([[False, True], [False, True]])
    r = torch.zeros(2, 2)
    m = rollout_metrics(r, r.bool(), lengths, cut, r, torch.zeros(2, dtype=torch.bool))
    assert m["completions/terminated_len_mean"].item() == 4.0
    m = rollout_metrics(r, r.bool(), lengths, torch.ones(2, 2, dtype=torch.bool), r, torch.zeros(2, dtype=torch.bool))
    assert m["completions/terminated_len_mean"].item() == 0.0


def test_soft_overlong_penalty_and_truncation_mask():
    # max 8 tokens, buffer 4: free up to 4 tokens, then -(len - 4) / 4: 5 -> -0.25, 8 -> -1 (factor 1)
    lengths = torch.tensor([3, 4, 5, 7, 8])
    assert soft_overlong_penalty(lengths, 8, 4, 1.0).tolist() == pytest.approx([0, 0, -0.25, -0.75, -1.0])
    assert soft_overlong_penalty(lengths, 8, 4, 0.5).tolist()[-1] == pytest.approx(-0.5)
    assert soft_overlong_penalty(lengths, 8, 0, 1.0).tolist() == [0, 0, 0, 0, 0]
    cm = torch.ones(2, 3, dtype=torch.bool)
    assert loss_mask(cm, torch.tensor([True, False]), True).tolist() == [[False] * 3, [True] * 3]
    assert loss_mask(cm, torch.tensor([True, False]), False).all()


@pytest.mark.parametrize("key,value,needle", [
    ("algo.clip_ratio_c", "1.0", "clip_ratio_c"), ("algo.refill_rounds", "2", "drop_zero_var_groups"),
    ("algo.rollout_correction", "tis", "rollout correction"), ("algo.overlong_buffer", "8", "overlong_buffer"),
    ("algo.policy_loss", "cispo2", "cispo"), ("algo.adv_mode", "rlo", "rloo"),
])
def test_bad_variant_settings_are_one_line_errors(key, value, needle):
    with pytest.raises(ConfigError, match=needle):
        validate(build_config(overrides=[(key, value)]))


# -- TRL's own loss on the same tensors ------------------------------------------------------------

@pytest.fixture(scope="module")
def trl_trainer(tmp_path_factory):
    from datasets import Dataset
    from fixtures import tiny_hf

    folder = tmp_path_factory.mktemp("trl_model")
    path = tiny_hf.save_tiny_model(folder, "qwen2", max_positions=64)
    args = trl.GRPOConfig(output_dir=str(folder / "out"), per_device_train_batch_size=4, num_generations=4,
                          max_completion_length=5, beta=0.04, epsilon=0.2, use_cpu=True, report_to=[],
                          disable_tqdm=True)
    trainer = trl.GRPOTrainer(model=path, reward_funcs=lambda completions, **kw: [0.0] * len(completions),
                              args=args, train_dataset=Dataset.from_dict({"prompt": ["1+2="] * 4}))
    trainer.model.eval()  # mode "eval": TRL does not divide by gradient accumulation steps
    return trainer


def same_tensors(trainer):
    """Prompts of equal length (TRL passes no position ids), completions of lengths 5, 3, 2, 4."""
    from grpo_core.hf import HFCausalLM
    from grpo_core.policy import token_logprobs

    g = torch.Generator().manual_seed(0)
    prompt = torch.randint(3, 200, (4, 3), generator=g)
    completion = torch.randint(3, 200, (4, 5), generator=g)
    cmask = torch.tensor([[t < n for t in range(5)] for n in (5, 3, 2, 4)]).long()
    ids, mask = torch.cat([prompt, completion], 1), torch.cat([torch.ones_like(prompt), cmask], 1)
    with torch.no_grad():
        logp = token_logprobs(HFCausalLM(trainer.model), ids, mask, 5)[0]
    old = logp + 0.3 * torch.randn(4, 5, generator=g)
    ref = logp + 0.5 * torch.randn(4, 5, generator=g)
    inputs = {"prompt_ids": prompt, "prompt_mask": torch.ones_like(prompt), "completion_ids": completion,
              "completion_mask": cmask, "advantages": torch.tensor([1.0, -0.5, 2.0, -1.5]),
              "old_per_token_logps": old * cmask, "ref_per_token_logps": ref * cmask,
              "num_items_in_batch": cmask.sum()}
    return ids, mask, inputs


def grads(model):
    return torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])


# TRL loss_type -> our settings; cispo's cap is TRL's epsilon_high itself, ours 1 + clip_eps_high.
TRL_CASES = [
    ("grpo", {}, {"policy_loss": "clip", "loss_agg": "seq_mean_token_mean"}),
    ("bnpo", {}, {"policy_loss": "clip", "loss_agg": "token_mean"}),
    ("dapo", {"epsilon_high": 0.28}, {"policy_loss": "clip", "loss_agg": "token_mean", "clip_eps_high": 0.28}),
    ("dr_grpo", {}, {"policy_loss": "clip", "loss_agg": "seq_mean_token_sum_norm"}),
    ("grpo", {"use_bias_correction_kl": True}, {"policy_loss": "clip", "kl_bias_correction": True}),
    ("sapo", {}, {"policy_loss": "sapo", "loss_agg": "seq_mean_token_mean"}),
    # without the KL: with it, TRL's own KL gradient under cispo differs from the one under dapo by ~1e-2
    # relative (seen with TRL 1.16's fused head), while ours matches TRL's under every other loss type
    ("cispo", {"epsilon_high": 1.2, "beta": 0.0},
     {"policy_loss": "cispo", "loss_agg": "token_mean", "clip_eps_high": 0.2, "kl_coef": 0.0}),
]


@pytest.mark.parametrize("loss_type,trl_knobs,ours", TRL_CASES)
def test_policy_loss_matches_trl_compute_loss(trl_trainer, loss_type, trl_knobs, ours):
    tr = trl_trainer
    tr.loss_type = loss_type
    tr.epsilon_high = trl_knobs.get("epsilon_high", 0.2)
    tr.args.use_bias_correction_kl = trl_knobs.get("use_bias_correction_kl", False)
    tr.beta = trl_knobs.get("beta", 0.04)
    ids, mask, inputs = same_tensors(tr)
    tr.model.zero_grad()
    trl_loss = tr._compute_loss(tr.model, inputs)
    trl_loss.backward()
    want = grads(tr.model).clone()
    tr.model.zero_grad()
    # TRL's own forward (a fused head, ~1e-3 from a plain log_softmax), so only the loss formulas differ
    logp = tr._get_per_token_logps_and_entropies(tr.model, ids, mask, 5)[0] * inputs["completion_mask"]
    algo = AlgoConfig(**{"kl_coef": 0.04, "kl_estimator": "k3", "kl_bias_correction": False, **ours})
    cm = inputs["completion_mask"].bool()
    loss, _ = grpo_loss(logp, inputs["old_per_token_logps"], inputs["ref_per_token_logps"], inputs["advantages"],
                        cm, algo, norm=5.0, kl_in_loss=True)
    loss.backward()
    got = grads(tr.model)
    assert (got - want).abs().max() <= 1e-5 * want.abs().max(), (got - want).abs().max()
    if loss_type != "cispo":  # CISPO: TRL weighs log pi, we weigh log(pi / pi_old): same gradient, shifted value
        assert loss.item() == pytest.approx(trl_loss.item(), rel=1e-5)


@pytest.mark.parametrize("sets,number,needle", [
    ({"algo.adv_mode": "rloo"}, 1, "leave-one-out"),
    ({"algo.adv_mode": "reinforce_pp"}, 1, "REINFORCE++"),
    ({"algo.adv_mode": "reinforce_pp_baseline"}, 1, "REINFORCE++-baseline"),
    ({"algo.drop_zero_var_groups": "true", "algo.refill_rounds": "3"}, 1, "refilled by up to 3"),
    ({"algo.overlong_buffer": "4", "algo.overlong_penalty": "0.5"}, 1, "-0.5 reward over the last 4 tokens"),
    ({"algo.policy_loss": "dual_clip"}, 2, "dual-clip"),
    ({"algo.policy_loss": "cispo"}, 2, "CISPO"),
    ({"algo.policy_loss": "sapo"}, 2, "SAPO"),
    ({"algo.mask_truncated": "true"}, 2, "truncated completions get no loss"),
    ({"algo.rollout_correction": "sequence_mask", "algo.rollout_correction_max": "2"}, 3,
     "sequence_mask importance weights in [0.0, 2.0]"),
    ({"algo.kl_bias_correction": "true"}, 4, "bias-corrected"),
    ({"algo.kl_estimator": "low_var_kl"}, 4, "low_var_kl"),
])
def test_every_variant_knob_shows_in_the_config_questions(sets, number, needle):
    from dashboard.diagnosis.rules.config_questions import answer_questions
    from grpo_core.config import to_dict

    answers = answer_questions(to_dict(build_config(overrides=list(sets.items()))), "grpo_core")
    assert needle in answers[number - 1].answer
    plain = answer_questions(to_dict(build_config()), "grpo_core")
    assert needle not in plain[number - 1].answer


def test_rollout_correction_refuses_old_logprobs_taken_from_the_rollout():
    cfg = build_config(overrides=[("algo.rollout_correction", "token_mask"), ("algo.old_logprob_source", "rollout")])
    with pytest.raises(ConfigError, match="old_logprob_source=recompute"):
        validate(cfg)

"""Aggregation modes, KL estimators, ratios and clipping against formulas written out here,
on responses of unequal length (lengths 1, 3 and 5 with padding)."""

import math

import pytest
import torch

from grpo_core.config import AlgoConfig
from grpo_core.losses import AGGREGATIONS, KL_ESTIMATORS, RATIOS, aggregate, clipped_surrogate, grpo_loss

torch.set_num_threads(1)

LENGTHS = [1, 3, 5]
N = 5


def make(seed=0):
    g = torch.Generator().manual_seed(seed)
    logp = -torch.rand(3, N, generator=g, dtype=torch.float64) * 2
    old = logp + 0.3 * torch.randn(3, N, generator=g, dtype=torch.float64)
    ref = logp + 0.5 * torch.randn(3, N, generator=g, dtype=torch.float64)
    mask = torch.tensor([[t < n for t in range(N)] for n in LENGTHS])
    # garbage on padding, which every function must ignore
    logp, old, ref = (torch.where(mask, x, torch.tensor(123.0, dtype=x.dtype)) for x in (logp, old, ref))
    return logp, old, ref, mask


def tokens(x, mask, i):
    return [x[i, t].item() for t in range(N) if mask[i, t]]


def test_token_mean_reference():
    v, _, _, mask = make()
    flat = [x for i in range(3) for x in tokens(v, mask, i)]
    assert aggregate("token_mean", v * mask, mask, 7.0).item() == pytest.approx(sum(flat) / 9)


def test_seq_mean_token_mean_reference():
    v, _, _, mask = make()
    want = sum(sum(tokens(v, mask, i)) / LENGTHS[i] for i in range(3)) / 3
    assert aggregate("seq_mean_token_mean", v * mask, mask, 7.0).item() == pytest.approx(want)


def test_seq_mean_token_sum_norm_reference():
    v, _, _, mask = make()
    want = sum(sum(tokens(v, mask, i)) / 7.0 for i in range(3)) / 3
    assert aggregate("seq_mean_token_sum_norm", v * mask, mask, 7.0).item() == pytest.approx(want)


def test_aggregations_differ_on_unequal_lengths():
    v, _, _, mask = make()
    got = {name: aggregate(name, v * mask, mask, 5.0).item() for name in AGGREGATIONS}
    assert len({round(x, 9) for x in got.values()}) == 3


@pytest.mark.parametrize("name,formula", [
    ("k1", lambda lp, rf: lp - rf),
    ("k2", lambda lp, rf: 0.5 * (lp - rf) ** 2),
    ("k3", lambda lp, rf: math.exp(rf - lp) - 1 - (rf - lp)),
])
def test_kl_estimators_reference(name, formula):
    logp, _, ref, _ = make()
    got = KL_ESTIMATORS[name](logp, ref)
    for i in range(3):
        for t in range(LENGTHS[i]):
            assert got[i, t].item() == pytest.approx(formula(logp[i, t].item(), ref[i, t].item()))


def test_kl_estimators_are_zero_at_equal_policies_and_k2_k3_nonnegative():
    logp, _, ref, mask = make()
    assert mask.sum() == sum(LENGTHS)
    for name in KL_ESTIMATORS:
        assert KL_ESTIMATORS[name](logp, logp).abs().max().item() == 0
    assert (KL_ESTIMATORS["k2"](logp, ref)[mask] >= 0).all()
    assert (KL_ESTIMATORS["k3"](logp, ref)[mask] >= 0).all()


def test_sequence_ratio_is_exp_of_mean_token_log_ratio():
    logp, old, _, mask = make()
    seq = RATIOS["sequence"](logp, old, mask.double())
    for i in range(3):
        mean = sum(a - b for a, b in zip(tokens(logp, mask, i), tokens(old, mask, i))) / LENGTHS[i]
        geo = math.prod(math.exp(a - b) for a, b in zip(tokens(logp, mask, i), tokens(old, mask, i))) ** (1 / LENGTHS[i])
        for t in range(LENGTHS[i]):
            assert math.exp(seq[i, t].item()) == pytest.approx(math.exp(mean))
            assert math.exp(seq[i, t].item()) == pytest.approx(geo)
        assert all(seq[i, t].item() == 0 for t in range(LENGTHS[i], N))


def test_clipped_surrogate_reference_and_clip_sides():
    ratio = torch.tensor([[0.5, 0.9, 1.0, 1.1, 1.5]])
    for a in (1.0, -1.0):
        loss, low, high, dual = clipped_surrogate(ratio.log(), torch.tensor([a]), AlgoConfig(clip_eps_low=0.2, clip_eps_high=0.28))
        want = [-min(r * a, min(max(r, 0.8), 1.28) * a) for r in ratio[0].tolist()]
        assert loss[0].tolist() == pytest.approx(want)
        if a > 0:
            assert high[0].tolist() == [False, False, False, False, True] and not low.any()
        else:
            assert low[0].tolist() == [True, False, False, False, False] and not high.any()
        assert not dual.any()


@pytest.mark.parametrize("agg", ["token_mean", "seq_mean_token_mean", "seq_mean_token_sum_norm"])
@pytest.mark.parametrize("ratio", ["token", "sequence"])
def test_grpo_loss_on_policy_matches_minus_aggregated_advantage(agg, ratio):
    # At ratio 1 the clipped surrogate is -A per token; the KL term adds coef * agg(kl).
    logp, _, ref, mask = make()
    adv = torch.tensor([1.0, -0.5, 2.0], dtype=torch.float64)
    algo = AlgoConfig(loss_agg=agg, ratio=ratio, kl_coef=0.1, kl_estimator="k3")
    loss, stats = grpo_loss(logp, logp.clone(), ref, adv, mask, algo, norm=7.0, kl_in_loss=True)
    per_token = -adv[:, None].expand(3, N) * mask
    kl = KL_ESTIMATORS["k3"](logp, ref) * mask
    want = aggregate(agg, per_token, mask, 7.0) + 0.1 * aggregate(agg, kl, mask, 7.0)
    assert loss.item() == pytest.approx(want.item())
    assert stats["policy/clipfrac"].item() == 0
    assert stats["policy/ratio_mean"].item() == pytest.approx(1.0)
    assert "loss/kl" in stats


def test_padding_tokens_get_no_gradient_and_kl_absent_when_not_in_loss():
    logp, _, ref, mask = make()
    old = logp.clone()  # on-policy, so no real token is clipped and every real token has a gradient
    logp = logp.clone().requires_grad_(True)
    adv = torch.tensor([1.0, -0.5, 2.0], dtype=torch.float64)
    for name in ["token_mean", "seq_mean_token_mean", "seq_mean_token_sum_norm"]:
        algo = AlgoConfig(loss_agg=name, kl_coef=0.1)
        loss, stats = grpo_loss(logp, old, ref, adv, mask, algo, norm=7.0, kl_in_loss=False)
        assert "loss/kl" not in stats and "policy/kl_ref" in stats
        (grad,) = torch.autograd.grad(loss, logp)
        assert torch.all(grad[~mask] == 0)
        assert torch.all(grad[mask] != 0)

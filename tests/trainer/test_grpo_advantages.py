"""The notes' self-test (section 9) as executable checks, with the numbers worked out by hand."""

import math

import pytest
import torch

from grpo_core.advantages import ADVANTAGES, zero_variance_groups
from grpo_core.config import AlgoConfig
from grpo_core.losses import grpo_loss
from grpo_core.metrics import rollout_metrics

torch.set_num_threads(1)


def adv(mode, rewards, unbiased=True, eps=1e-6):
    return ADVANTAGES[mode](torch.tensor(rewards, dtype=torch.float64), eps=eps, unbiased=unbiased)


def test_group_zscore_hand_worked_one_success():
    # r = [1, 0, 0, 0]: mean 0.25, deviations [0.75, -0.25, -0.25, -0.25], sum of squares 0.75.
    # Bessel std = sqrt(0.75 / 3) = 0.5 -> A = [1.5, -0.5, -0.5, -0.5];
    # population std = sqrt(0.75 / 4) = 0.4330 -> A = [1.7321, -0.5774, -0.5774, -0.5774].
    a = adv("group", [[1, 0, 0, 0]], eps=0.0)
    assert a.tolist()[0] == pytest.approx([1.5, -0.5, -0.5, -0.5], abs=1e-12)
    a = adv("group", [[1, 0, 0, 0]], unbiased=False, eps=0.0)
    assert a.tolist()[0] == pytest.approx([math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3)])


def test_group_zscore_hand_worked_graded_rewards():
    # r = [0.5, 0.2, 0.9, 0.4]: mean 0.5, deviations [0, -0.3, 0.4, -0.1], sum of squares 0.26,
    # Bessel std = sqrt(0.26 / 3) = 0.294392 -> A = [0, -1.019049, 1.358732, -0.339683].
    a = adv("group", [[0.5, 0.2, 0.9, 0.4]], eps=0.0)
    assert a.tolist()[0] == pytest.approx([0.0, -1.019049, 1.358732, -0.339683], abs=1e-6)
    # the default eps = 1e-6 is added to the std: 0.4 / (0.294392 + 1e-6) = 1.358727
    assert adv("group", [[0.5, 0.2, 0.9, 0.4]])[0, 2].item() == pytest.approx(1.358727, abs=1e-6)


def test_mean_only_hand_worked():
    # Dr. GRPO: no division -> the deviations themselves.
    assert adv("mean_only", [[1, 0, 0, 0]]).tolist()[0] == pytest.approx([0.75, -0.25, -0.25, -0.25])
    assert adv("mean_only", [[0.5, 0.2, 0.9, 0.4]]).tolist()[0] == pytest.approx([0.0, -0.3, 0.4, -0.1])


def test_batch_mode_hand_worked():
    # Group means as baselines, one std over all 8 rewards as scale.
    # rewards [1,0,0,0 | 0.5,0.2,0.9,0.4]: batch mean 3/8 = 0.375; squared deviations
    # 0.390625 + 3 * 0.140625 + 0.015625 + 0.030625 + 0.275625 + 0.000625 = 1.135,
    # Bessel std = sqrt(1.135 / 7) = 0.402669.
    a = adv("batch", [[1, 0, 0, 0], [0.5, 0.2, 0.9, 0.4]], eps=0.0)
    s = math.sqrt(1.135 / 7)
    assert s == pytest.approx(0.402669, abs=1e-6)
    assert a.tolist()[0] == pytest.approx([0.75 / s, -0.25 / s, -0.25 / s, -0.25 / s])
    assert a.tolist()[1] == pytest.approx([0.0, -0.3 / s, 0.4 / s, -0.1 / s])


@pytest.mark.parametrize("mode", ["group", "batch", "mean_only"])
def test_all_correct_group_gives_exactly_zero_advantage(mode):
    # Section 9 q.2: every answer correct -> zero variance -> zero advantage, also for a reward like 0.7
    # whose float mean is not exactly 0.7.
    a = adv(mode, [[1, 1, 1, 1], [0.7, 0.7, 0.7, 0.7], [1, 0, 1, 0]])
    assert torch.all(a[:2] == 0)
    assert a[2].abs().sum() > 0


def test_zero_variance_group_counted_and_gives_no_gradient():
    rewards = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0]])
    a = ADVANTAGES["group"](rewards)
    passed = rewards > 0.5
    m = rollout_metrics(rewards, passed, torch.ones(2, 4), torch.zeros(2, 4, dtype=torch.bool), a,
                        torch.zeros(2, dtype=torch.bool))
    assert m["groups/zero_std_frac"].item() == 0.5
    assert m["groups/all_pass_frac"].item() == 0.5
    assert m["adv/zero_frac"].item() == 0.5
    # Gradient of the loss w.r.t. the log-probs of the all-correct group's responses is exactly zero.
    logp = torch.randn(8, 5, requires_grad=True)
    mask = torch.ones(8, 5, dtype=torch.bool)
    algo = AlgoConfig(kl_mode="none")
    loss, _ = grpo_loss(logp, logp.detach(), None, a.reshape(-1), mask, algo, norm=5.0, kl_in_loss=False)
    loss.backward()
    assert torch.all(logp.grad[:4] == 0)
    assert logp.grad[4:].abs().sum() > 0
    assert zero_variance_groups(rewards).tolist() == [True, False]


@pytest.mark.parametrize("mode", ["group", "mean_only"])
def test_same_relative_quality_same_advantage_on_easy_and_hard_prompt(mode):
    # Section 2: the group mean is a prompt-conditioned baseline. An easy prompt where 3 of 4 pass and a
    # hard prompt where 1 of 4 nearly passes, with the same spread, get the same advantages.
    easy = [[1.0, 0.9, 0.9, 0.8]]
    hard = [[0.3, 0.2, 0.2, 0.1]]
    assert adv(mode, easy).tolist()[0] == pytest.approx(adv(mode, hard).tolist()[0], abs=1e-12)
    # and the locally best answer on the hard prompt is still positive
    assert adv(mode, hard)[0, 0] > 0


def loop_advantages(rewards, mode, eps=1e-6, unbiased=True):
    """Plain Python reference, one group at a time."""
    flat = [r for g in rewards for r in g]
    n_all = len(flat)
    mean_all = sum(flat) / n_all
    std_all = math.sqrt(sum((r - mean_all) ** 2 for r in flat) / (n_all - unbiased))
    out = []
    for g in rewards:
        n, mean = len(g), sum(g) / len(g)
        std = math.sqrt(sum((r - mean) ** 2 for r in g) / (n - unbiased))
        scale = {"group": std + eps, "batch": std_all + eps, "mean_only": 1.0}[mode]
        out.append([0.0 if len(set(g)) == 1 else (r - mean) / scale for r in g])
    return out


@pytest.mark.parametrize("mode", ["group", "batch", "mean_only"])
@pytest.mark.parametrize("unbiased", [True, False])
def test_vectorised_equals_loop(mode, unbiased):
    g = torch.Generator().manual_seed(0)
    rewards = (torch.rand(6, 5, generator=g) > 0.5).double() * torch.rand(6, 5, generator=g).double()
    rewards[0] = 1.0  # include a zero-variance group
    got = ADVANTAGES[mode](rewards, eps=1e-6, unbiased=unbiased)
    want = loop_advantages(rewards.tolist(), mode, unbiased=unbiased)
    assert got.tolist() == [pytest.approx(row, abs=1e-12) for row in want]


@pytest.mark.parametrize("mode", ["group", "batch", "mean_only"])
def test_eps_zero_keeps_zero_variance_groups_at_zero_not_nan(mode):
    # algo.adv_eps = 0: a group of equal rewards has std 0, and (r - mean) / 0 is 0 / 0 = NaN unless the
    # zero is applied after the division. [1, 0, 0, 0] still gets 0.75 / 0.5 = 1.5 (group, Bessel std).
    a = adv(mode, [[1, 1, 1, 1], [0.7, 0.7, 0.7, 0.7], [1, 0, 0, 0]], eps=0.0)
    assert not torch.isnan(a).any()
    assert torch.all(a[:2] == 0)
    if mode == "group":
        assert a[2].tolist() == pytest.approx([1.5, -0.5, -0.5, -0.5])
    # a batch whose every reward is equal: the batch std is 0 too
    assert torch.all(adv(mode, [[1, 1], [1, 1]], eps=0.0) == 0)

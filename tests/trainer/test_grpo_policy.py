"""The policy interface: cached sampling agrees with the full forward, padding changes nothing, and
prompt and padding tokens take no part in the loss, the length or the entropy."""

import pytest
import torch

from grpo_core.config import AlgoConfig, ModelConfig
from grpo_core.losses import grpo_loss
from grpo_core.metrics import entropy_metric
from grpo_core.policy import build_tiny, frozen_copy, sample, sync_weights, token_logprobs, top_p_filter
from grpo_core.rollout import decode, left_pad

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def policy():
    torch.manual_seed(0)
    return build_tiny(ModelConfig(), torch.device("cpu"))


def prompts(policy, texts=("3+4=", "12+5=", "7+0=")):
    return left_pad([policy.tokenizer.encode(t) for t in texts], policy.tokenizer.pad_id, "cpu")


def rollout(policy, seed=0, n=6):
    ids, mask = prompts(policy)
    s = sample(policy.net, ids, mask, n, policy.tokenizer.eos_id, policy.tokenizer.pad_id,
               generator=torch.Generator().manual_seed(seed))
    return ids, mask, s


def test_kv_cache_sampling_logprobs_equal_full_forward(policy):
    ids, mask, s = rollout(policy)
    full_ids, full_mask = torch.cat([ids, s.tokens], 1), torch.cat([mask, s.mask], 1)
    logp, _ = token_logprobs(policy.net, full_ids, full_mask, s.tokens.shape[1])
    assert (logp - s.logp).abs().max().item() < 1e-6
    assert torch.all(logp[~s.mask] == 0)


def test_left_padding_does_not_change_logprobs(policy):
    tok = policy.tokenizer
    ids, mask = left_pad([tok.encode("12+5=") + [5, 6], tok.encode("3=") + [5, 6]], tok.pad_id, "cpu")
    alone, amask = left_pad([tok.encode("3=") + [5, 6]], tok.pad_id, "cpu")
    lp_batch, _ = token_logprobs(policy.net, ids, mask, 2)
    lp_alone, _ = token_logprobs(policy.net, alone, amask, 2)
    assert torch.allclose(lp_batch[1], lp_alone[0], atol=1e-6)


def test_sampling_stops_at_the_end_token_and_masks_after_it(policy):
    _, _, s = rollout(policy, n=8)
    eos = policy.tokenizer.eos_id
    for row, m, ended in zip(s.tokens.tolist(), s.mask.tolist(), s.ended.tolist()):
        kept = [t for t, k in zip(row, m) if k]
        assert m == sorted(m, reverse=True)  # a prefix of real tokens, then padding
        assert (eos in kept) == ended and (not ended or kept[-1] == eos)


def test_greedy_sampling_is_deterministic(policy):
    ids, mask = prompts(policy)
    a = sample(policy.net, ids, mask, 5, policy.tokenizer.eos_id, policy.tokenizer.pad_id, greedy=True)
    b = sample(policy.net, ids, mask, 5, policy.tokenizer.eos_id, policy.tokenizer.pad_id, greedy=True)
    assert torch.equal(a.tokens, b.tokens)


def test_top_p_keeps_the_smallest_set_with_the_mass():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    kept = torch.isfinite(top_p_filter(logits, 0.7))
    assert kept.tolist() == [[True, True, False, False]]
    assert torch.isfinite(top_p_filter(logits, 0.01)).sum() == 1  # the top token always stays
    assert torch.equal(top_p_filter(logits, 1.0), logits)


class KeepLogits(torch.nn.Module):
    """Wraps a net so the test can read the gradient that reaches every position's logits."""

    def __init__(self, net):
        super().__init__()
        self.net, self.logits = net, None

    def forward(self, ids, mask, pos, cache=None, use_cache=False, logits_to_keep=0):
        logits, cache = self.net(ids, mask, pos, cache, use_cache)  # all positions, prompt included
        logits.retain_grad()
        self.logits = logits
        return logits, cache


def test_prompt_and_padding_tokens_get_no_gradient(policy):
    ids, mask, s = rollout(policy)
    full_ids, full_mask = torch.cat([ids, s.tokens], 1), torch.cat([mask, s.mask], 1)
    net = KeepLogits(policy.net)
    logp, _ = token_logprobs(net, full_ids, full_mask, s.tokens.shape[1])
    loss, _ = grpo_loss(logp, logp.detach(), None, torch.tensor([1.0, -1.0, 0.5]), s.mask,
                        AlgoConfig(kl_mode="none"), norm=6.0, kl_in_loss=False)
    loss.backward()
    grad = net.logits.grad.abs().sum(-1)  # [B, L + N]: position t predicts token t + 1
    L = ids.shape[1]
    predicts_completion = torch.zeros_like(full_mask)
    predicts_completion[:, L - 1:-1] = s.mask
    assert torch.all(grad[~predicts_completion] == 0)
    assert torch.all(grad[predicts_completion] > 0)


def test_padding_does_not_count_in_length_or_entropy(policy):
    _, _, s = rollout(policy)
    _, lengths, _ = decode(policy.tokenizer, s.tokens, s.mask)
    assert lengths == s.mask.sum(1).tolist()
    entropy = torch.rand(s.mask.shape)
    noisy = torch.where(s.mask, entropy, 1e6)  # garbage on padding
    want = entropy[s.mask].mean()
    assert entropy_metric(noisy, s.mask)["policy/entropy"].item() == pytest.approx(want.item())


def test_frozen_copy_in_bf16_and_weight_sync(policy):
    twin = frozen_copy(policy.net, torch.bfloat16)
    assert all(p.dtype == torch.bfloat16 and not p.requires_grad for p in twin.parameters())
    with torch.no_grad():
        for p in twin.parameters():
            p.zero_()
    sync_weights(twin, policy.net)
    for a, b in zip(twin.parameters(), policy.net.parameters()):
        assert torch.allclose(a.float(), b, atol=1e-2, rtol=1e-2)

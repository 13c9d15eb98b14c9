"""The trainer at scale, on CPU (issue 26): dynamic sampling before a batch-wide estimator, micro-batches,
gradient checkpointing of a Hugging Face model and the blockwise log-probs, each against the plain step."""

import copy

import pytest
import torch
import torch.nn.functional as F
from fixtures.rollouts import fake_rollout  # tests/ is on sys.path

from collectors import load_run
from grpo_core.config import AlgoConfig, ConfigError, build_config, validate
from grpo_core.policy import BlockwiseLogprobs, build_tiny, logit_blocks, positions, token_logprobs
from grpo_core.rollout import collect
from grpo_core.train import Batch, backward, estimate, prepare, setup, train

torch.set_num_threads(1)


# --- dynamic sampling, then the estimate -------------------------------------------------------------

def test_a_batch_wide_estimator_sees_the_kept_groups_only():
    # The case: rewards [[1, 0, 0, 0], [1, 1, 1, 1]], 2 tokens each, the second group tied and dropped.
    # reinforce_pp on the kept group alone: 8 token returns, two 1s and six 0s (response 0 has 2 tokens), mean
    # 0.25; squared deviations 2 x 0.75^2 + 6 x 0.25^2 = 1.5; Bessel over 8 tokens: var 1.5 / 7, std 0.462910
    # -> A = 0.75 / 0.462910 = 1.620185, -0.25 / 0.462910 = -0.540062 (verl filters, then estimates).
    # Over both groups (the old result): 16 tokens, mean 0.625, var 3.75 / 15 = 0.25, std 0.5 -> 0.75, -1.25.
    rewards = torch.tensor([[1.0, 0, 0, 0], [1, 1, 1, 1]])
    tokens = torch.full((2, 4), 2.0)
    dropped = torch.tensor([False, True])
    kept = [1.620185, -0.540062, -0.540062, -0.540062]
    rpp = estimate(AlgoConfig(adv_mode="reinforce_pp", adv_eps=0.0), rewards, tokens, dropped)
    assert rpp[0].tolist() == pytest.approx(kept, abs=1e-6)
    assert rpp[1].tolist() == [0, 0, 0, 0]  # dropped: no advantage, as it reaches no loss
    # reinforce_pp_baseline: centred [.75, -.25, -.25, -.25], token mean 0, the same spread: the same numbers
    base = estimate(AlgoConfig(adv_mode="reinforce_pp_baseline", adv_eps=0.0), rewards, tokens, dropped)
    assert base[0].tolist() == pytest.approx(kept, abs=1e-6)
    # batch: group mean, std of the kept rewards [1, 0, 0, 0] (Bessel) 0.5 -> [1.5, -0.5 x 3]; with the tied
    # group it would be the std of eight rewards, 0.517549, and 0.7246 / -0.2415
    batch = estimate(AlgoConfig(adv_mode="batch", adv_eps=0.0), rewards, tokens, dropped)
    assert batch[0].tolist() == pytest.approx([1.5, -0.5, -0.5, -0.5])
    # without dropping, every group counts, as before
    every = estimate(AlgoConfig(adv_mode="reinforce_pp", adv_eps=0.0), rewards, tokens, None)
    assert every.reshape(-1).tolist() == pytest.approx([0.75, -1.25, -1.25, -1.25] + [0.75] * 4)
    # every group dropped: zeros, not an estimator over nothing
    assert estimate(AlgoConfig(adv_mode="reinforce_pp"), rewards[1:], tokens[1:], torch.tensor([True])).eq(0).all()


@pytest.mark.parametrize("mode,want", [("reinforce_pp", [1.620185, -0.540062, -0.540062, -0.540062]),
                                       ("batch", [1.5, -0.5, -0.5, -0.5])])
def test_prepare_drops_before_it_estimates(mode, want):
    tr = setup(build_config(overrides=[("warm_start.enabled", "false"), ("algo.kl_mode", "none"),
                                       ("log.track_kl_ref", "false"), ("algo.drop_zero_var_groups", "true"),
                                       ("algo.adv_mode", mode), ("algo.adv_eps", "0")]))
    batch, stats, adv, _ = prepare(tr, fake_rollout(tr.task, [[1, 0, 0, 0], [1, 1, 1, 1]]))
    assert batch.groups == 1 and len(batch.ids) == 4
    assert batch.adv.tolist() == pytest.approx(want, abs=1e-6)
    assert adv.tolist() == pytest.approx(want + [0] * 4, abs=1e-6)  # the samples table's: 0 where dropped
    assert stats["groups/dropped_frac"].item() == 0.5


# --- micro-batches ------------------------------------------------------------------------------------

def small_trainer(*sets):
    cfg = build_config(overrides=[("warm_start.enabled", "false"), ("model.n_layer", "1"), ("model.d_model", "32"),
                                  ("rollout.prompts_per_step", "3"), ("rollout.group_size", "4"),
                                  ("rollout.max_new_tokens", "5"), ("model.device", "cpu"), *sets])
    tr = setup(cfg)
    ro = collect(tr.net, tr.tokenizer, tr.task, tr.task.sample(tr.rng, 3), 4, cfg.rollout, tr.device, tr.gen)
    return tr, ro


def grads_and_stats(tr, batch, rows, micro: int):
    tr.cfg.optim.micro_batch = micro
    tr.net.zero_grad(set_to_none=True)
    b = copy.copy(batch)  # backward may keep the first pass as the old policy in it
    stats = backward(tr, b, rows, first=True, total=None)
    return [p.grad.clone() for p in tr.net.parameters()], {k: float(v) for k, v in stats.items()}


VARIANTS = {
    "grpo": [],
    "token_mean": [("algo.loss_agg", "token_mean")],
    "dr_grpo": [("algo.loss_agg", "seq_mean_token_sum_norm"), ("algo.adv_mode", "mean_only")],
    "gspo": [("algo.ratio", "sequence")],
    "kl_bias_sapo": [("algo.kl_bias_correction", "true"), ("algo.policy_loss", "sapo"), ("algo.kl_estimator", "k2")],
    "seq_correction": [("algo.rollout_correction", "sequence_mask"), ("algo.loss_agg", "token_mean"),
                       ("rollout.dtype", "bf16")],
    "masked_rows": [("algo.loss_agg", "token_mean")],  # rows with no loss token, as algo.mask_truncated leaves
}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("old_pass", [False, True])
def test_micro_batches_give_the_loss_and_gradients_of_the_plain_step(variant, old_pass):
    # 12 sequences in micro-batches of 5, 5 and 2 (and of 1): each piece's loss is its sum over the whole
    # minibatch's count, so the pieces add up to the plain loss; the step's metrics come from the whole batch.
    tr, ro = small_trainer(*VARIANTS[variant])
    batch, _, _, _ = prepare(tr, ro)
    # the old log-probs from a pass of their own (minibatches > 1), or the update's own first pass
    old = no_grad_pass(tr, ro) if old_pass else None
    noise = 0.3 * torch.randn(len(batch.adv), generator=torch.Generator().manual_seed(2))  # every row a gradient
    cmask = batch.cmask.clone()
    if variant == "masked_rows":
        cmask[::3] = False
    batch = Batch(batch.ids, batch.mask, cmask, batch.adv + noise, old,
                  batch.rollout_logp, batch.ref_logp, batch.groups)
    rows = torch.randperm(len(batch.ids), generator=torch.Generator().manual_seed(1))
    want_grads, want = grads_and_stats(tr, batch, rows, 0)
    for micro in (5, 1):
        grads, got = grads_and_stats(tr, batch, rows, micro)
        assert got.keys() == want.keys()
        for k in want:
            assert got[k] == pytest.approx(want[k], rel=1e-5, abs=1e-6), k
        for g, w in zip(grads, want_grads):
            assert torch.allclose(g, w, rtol=1e-4, atol=1e-7)
    assert any(w.abs().max() > 0 for w in want_grads)


def no_grad_pass(tr, ro):
    with torch.no_grad():
        return token_logprobs(tr.net, ro.ids, ro.mask, ro.n, tr.cfg.rollout.temperature)[0]


def test_micro_batched_no_grad_passes_equal_the_whole_pass():
    tr, ro = small_trainer(("algo.minibatches", "3"), ("algo.kl_mode", "loss"))
    assert tr.old_pass
    whole, _, _, _ = prepare(tr, ro)
    tr.cfg.optim.micro_batch = 5
    split, _, _, _ = prepare(tr, ro)
    assert torch.allclose(split.old_logp, whole.old_logp, atol=1e-6)
    assert torch.allclose(split.ref_logp, whole.ref_logp, atol=1e-6)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.getbasetemp() / "grpo_warm_start")  # shared with test_grpo_train


def short_run(tmp_path, cache, *sets, steps=3):
    result = train(build_config(overrides=[("warm_start.cache_dir", cache), ("out", str(tmp_path / "run")),
                                           ("steps", str(steps)), ("log.progress", "false"), ("eval_every", "0"),
                                           ("model.device", "cpu"), *sets]))
    assert result.status == "finished"
    return load_run(result.run_dir).metrics


def test_first_step_ratio_stays_exactly_one_with_micro_batches(tmp_path, cache):
    # fp32, one minibatch: each micro-batch's own forward is the old policy, so the loss's ratio is exactly 1
    # on every step and the first-step check (against the sampling pass) stays within the plain run's bound
    m = short_run(tmp_path / "a", cache, ("optim.micro_batch", "24"))
    assert (m["policy/ratio_mean"] == 1.0).all() and (m["policy/ratio_max"] == 1.0).all()
    assert (m["policy/clipfrac"] == 0).all()
    assert (m["policy/ratio_first_step_max_dev"] < 1e-5).all()
    plain = short_run(tmp_path / "b", cache)
    # the same run within float rounding (the loss is summed in another order, the sampled tokens agree)
    for k in ("loss/policy", "policy/kl_ref", "policy/entropy", "optim/grad_norm", "reward/mean"):
        assert m[k].tolist() == pytest.approx(plain[k].tolist(), rel=1e-4, abs=1e-6), k
    # with an old-log-prob pass of its own (4 minibatches), micro-batched as well: the first step's ratio is 1
    m4 = short_run(tmp_path / "c", cache, ("optim.micro_batch", "7"), ("algo.minibatches", "4"), steps=4)
    first = m4.dropna(subset=["policy/ratio_first_step"])
    assert (first["policy/ratio_first_step_max_dev"] < 1e-6).all()
    assert (first["policy/ratio_max"] - 1).abs().max() < 1e-6


def test_micro_batch_must_not_be_negative():
    with pytest.raises(ConfigError, match="optim.micro_batch"):
        validate(build_config(overrides=[("optim.micro_batch", "-1")]))


# --- blockwise log-probs ------------------------------------------------------------------------------

def plain_logprobs(net, ids, mask, n, temperature, with_entropy=True):
    """The expression the blockwise pass replaces: full-vocabulary fp32 log-softmax of the whole batch."""
    logits, _ = net(ids, mask, positions(mask), None, logits_to_keep=n + 1)
    logp_all = F.log_softmax(logits[:, -n - 1:-1].float() / temperature, dim=-1)
    keep = mask[:, -n:].bool()
    logp = torch.where(keep, logp_all.gather(-1, ids[:, -n:, None]).squeeze(-1), 0.0)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    return logp, torch.where(keep, entropy, 0.0)


def test_logit_blocks_cover_the_batch_once():
    for B, n, V, budget in [(5, 3, 10, 1000), (5, 3, 10, 60), (5, 3, 10, 25), (5, 3, 10, 7), (1, 1, 10, 1)]:
        seen = torch.zeros(B, n, dtype=torch.long)
        for rows, cols in logit_blocks(B, n, V, budget):
            seen[rows, cols] += 1
            assert (rows.stop - rows.start) * (cols.stop - cols.start) * V <= max(budget, V)
        assert seen.eq(1).all()


@pytest.mark.parametrize("budget", [1 << 26, 97 * 7 * 3, 97 * 2, 1])
def test_blockwise_logprobs_are_the_plain_expression_bit_for_bit(budget):
    net = build_tiny(build_config().model, torch.device("cpu")).net
    ids = torch.randint(2, 97, (6, 12), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(6, 12, dtype=torch.bool)
    mask[:2, :3] = False  # left padding
    mask[4, -2:] = False  # an early end
    weights = torch.randn(6, 7, generator=torch.Generator().manual_seed(1))
    got, want = [], []
    for fn, out in ((plain_logprobs, want), (lambda *a: token_logprobs(*a, with_entropy=True, budget=budget), got)):
        net.zero_grad(set_to_none=True)
        logp, entropy = fn(net, ids, mask, 7, 0.7)
        (logp * weights).sum().backward()
        out += [logp.detach(), entropy, *[p.grad for p in net.parameters()]]
    assert all(torch.equal(g, w) for g, w in zip(got, want))
    assert not got[1].requires_grad  # the entropy is a metric: no graph is kept for it


def test_blockwise_logprobs_keep_the_logits_dtype_gradient():
    logits = torch.randn(2, 4, 9, dtype=torch.bfloat16, requires_grad=True)
    targets = torch.randint(0, 9, (2, 3))
    logp, _ = BlockwiseLogprobs.apply(logits, targets, 1.0, False, 9)
    logp.sum().backward()
    ref = logits.detach().clone().requires_grad_(True)
    F.log_softmax(ref[:, :-1].float(), -1).gather(-1, targets[..., None]).sum().backward()
    assert logits.grad.dtype == torch.bfloat16 and torch.equal(logits.grad, ref.grad)


# --- a tiny Hugging Face model with each knob ---------------------------------------------------------

transformers = pytest.importorskip("transformers")
from fixtures import tiny_hf

from grpo_core.hf import decoder_layers, load_hf
from grpo_core.verifiers import VERIFIERS


def length_reward(completion: str, answer: str):
    """Graded reward, so that a random model's groups differ and the update moves the weights."""
    return min(len(completion), 4) / 4


if "test_scale_length" not in VERIFIERS:
    VERIFIERS.register("test_scale_length")(length_reward)


@pytest.fixture(scope="module")
def hf_path(tmp_path_factory):
    return tiny_hf.save_tiny_model(tmp_path_factory.mktemp("hf") / "model", "qwen2", max_positions=64)


def test_checkpointing_recomputes_each_layer_with_the_same_gradients(hf_path):
    plain, tok, _ = load_hf(hf_path)
    ckpt, _, description = load_hf(hf_path, gradient_checkpointing=True)
    assert "recomputed" in description
    layers = decoder_layers(ckpt.model)
    assert len(layers) == 2
    calls = []
    for layer in layers:  # a module inside the layer: the recompute calls the layer's forward, not the layer
        layer.mlp.register_forward_pre_hook(lambda *a: calls.append(1))
    ids = torch.randint(2, len(tok.tok), (4, 9), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(4, 9, dtype=torch.bool)
    mask[0, :2] = False
    grads = []
    for net in (plain, ckpt):
        logp, _ = token_logprobs(net, ids, mask, 5, with_entropy=True)
        logp.sum().backward()
        grads.append([p.grad for p in net.parameters()])
    assert len(calls) == 4  # each layer twice: the forward, and its recompute in the backward
    assert all(torch.equal(a, b) for a, b in zip(*grads))
    twin = copy.deepcopy(ckpt)  # a frozen copy (the reference, a bf16 engine) runs its own layers
    assert all(layer.forward.__self__ is layer for layer in decoder_layers(twin.model))
    with torch.no_grad():  # a no-grad pass is not checkpointed: once per layer (the twin kept the hooks)
        token_logprobs(twin, ids, mask, 5)
    assert len(calls) == 6


@pytest.mark.parametrize("checkpointing,micro", [("true", "0"), ("false", "3"), ("true", "5")])
def test_tiny_hf_model_trains_with_each_knob(tmp_path, hf_path, checkpointing, micro):
    sets = [("model.kind", "hf"), ("model.hf_path", hf_path), ("warm_start.enabled", "false"), ("steps", "2"),
            ("rollout.prompts_per_step", "4"), ("rollout.group_size", "4"), ("rollout.max_new_tokens", "4"),
            ("optim.lr", "1e-2"), ("model.gradient_checkpointing", checkpointing), ("optim.micro_batch", micro),
            ("task.verifier", "test_scale_length"),
            ("algo.minibatches", "2")]  # two minibatches: an old-log-prob pass, micro-batched too
    before = {k: v.clone() for k, v in load_hf(hf_path)[0].state_dict().items()}
    result = train(build_config(overrides=[("out", str(tmp_path / "run")), ("log.progress", "false"),
                                           ("eval_every", "0"), ("model.device", "cpu"), *sets]))
    assert result.status == "finished" and result.steps == 2
    m = load_run(result.run_dir).metrics
    assert m["loss/total"].notna().all() and (m["optim/grad_norm"] > 0).all()
    assert (m.dropna(subset=["policy/ratio_first_step"])["policy/ratio_first_step_max_dev"] < 1e-5).all()
    changed = [k for k, v in result.net.state_dict().items() if not torch.equal(before[k], v)]
    assert len(changed) > 0.9 * len(before)


def test_static_decode_samples_what_the_growing_cache_samples(hf_path):
    # rollout.compiled_decode's path without the compile (CUDA only): a preallocated StaticCache and a full-length
    # mask give the tokens of the default decode, greedy and sampled, and its log-probs to float rounding
    from grpo_core.policy import sample
    from grpo_core.rollout import left_pad

    net, tok, _ = load_hf(hf_path)
    ids, mask = left_pad([tok.encode(f"{i}+{3 * i}=") for i in range(5) for _ in range(3)], tok.pad_id, "cpu")
    for greedy in (True, False):
        net._static = None
        want = sample(net, ids, mask, 9, tok.eos_id, tok.pad_id, greedy=greedy, generator=torch.Generator().manual_seed(0))
        net.enable_static_decode(compile=False)
        for _ in range(2):  # the second rollout reuses the cache of the first
            got = sample(net, ids, mask, 9, tok.eos_id, tok.pad_id, greedy=greedy,
                         generator=torch.Generator().manual_seed(0))
            assert torch.equal(got.tokens, want.tokens) and torch.equal(got.mask, want.mask)
            assert torch.allclose(got.logp, want.logp, atol=1e-5)
        assert list(net._static) == [(15, 64)]  # one cache for this batch, its length rounded up to 64


def test_compiled_decode_is_for_hf_models_and_off_on_cpu(tmp_path, hf_path):
    with pytest.raises(ConfigError, match="rollout.compiled_decode"):
        validate(build_config(overrides=[("rollout.compiled_decode", "true")]))
    tr = setup(build_config(overrides=[("model.kind", "hf"), ("model.hf_path", hf_path), ("model.device", "cpu"),
                                       ("warm_start.enabled", "false"), ("rollout.compiled_decode", "true")]))
    assert tr.info["compiled_decode"].startswith("off") and tr.engine._static is None


def test_a_checkpointed_micro_batched_step_is_the_plain_step(hf_path):
    # the same HF rollout through the trainer's backward: checkpointing on gives the plain step's loss, metrics
    # and gradients exactly (the recompute repeats the same operations); with micro-batches too, to rounding
    results = []
    for checkpointing, micro in (("false", 0), ("true", 0), ("true", 3)):
        tr = setup(build_config(overrides=[
            ("model.kind", "hf"), ("model.hf_path", hf_path), ("model.device", "cpu"), ("warm_start.enabled", "false"),
            ("model.gradient_checkpointing", checkpointing), ("rollout.prompts_per_step", "2"),
            ("rollout.group_size", "4"), ("rollout.max_new_tokens", "4"), ("algo.loss_agg", "token_mean")]))
        ro = collect(tr.net, tr.tokenizer, tr.task, tr.task.sample(tr.rng, 2), 4, tr.cfg.rollout, tr.device,
                     torch.Generator().manual_seed(0))
        batch, _, _, _ = prepare(tr, ro)
        batch.adv = torch.linspace(-1, 1, len(batch.adv))  # a random model scores 0 everywhere: push anyway
        results.append(grads_and_stats(tr, batch, torch.arange(len(batch.ids)), micro))
    (plain_grads, plain), (ckpt_grads, ckpt), (micro_grads, micro_stats) = results
    assert ckpt == plain and all(torch.equal(a, b) for a, b in zip(ckpt_grads, plain_grads))
    assert micro_stats.keys() == plain.keys()
    assert all(micro_stats[k] == pytest.approx(plain[k], rel=1e-5, abs=1e-6) for k in plain)
    assert all(torch.allclose(a, b, rtol=1e-4, atol=1e-7) for a, b in zip(micro_grads, plain_grads))
    assert any(g.abs().max() > 0 for g in plain_grads)

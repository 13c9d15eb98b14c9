"""The GRPO loop, top to bottom (notes, section 2):

    for each rollout: sample G responses per prompt with the rollout engine, score them, turn rewards
    into group-relative advantages, take old (and reference) log-probs; then for each epoch and
    minibatch: recompute log-probs with gradients, clipped ratio x advantage (+ KL), one optimizer step,
    one logged row.

Rows are optimizer steps. The rollout-level metrics (reward/*, groups/*, completions/*, adv/*) and the
first-step ratio belong to the first optimizer step that used the rollout; with one epoch and one
minibatch (every preset) each step has its own rollout. Every algorithm choice is a registry lookup.
Under torchrun every rank runs this loop on its share of the prompts (grpo_core/distributed.py).
Around it: dynamic_sampling.py draws and refills the rollout, recording.py writes the rows.
"""

from __future__ import annotations

import contextlib
import copy
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from grpo_core import distributed as D
from grpo_core import metrics as M
from grpo_core.advantages import ADVANTAGES, zero_variance_groups
from grpo_core.config import PRESETS, Config, ConfigError, validate
from grpo_core.dynamic_sampling import sample_groups
from grpo_core.losses import AGGREGATIONS, KL_ESTIMATORS, grpo_loss
from grpo_core.policy import (
    DTYPES,
    POLICIES,
    cpu_threads,
    frozen_copy,
    pick_device,
    sync_weights,
    token_logprobs,
)
from grpo_core.recording import EarlyRun, StopOnSignal, record
from grpo_core.registry import Registry
from grpo_core.rollout import Rollout, evaluate
from grpo_core.rollout_correction import ROLLOUT_CORRECTIONS
from grpo_core.shaping import loss_mask, soft_overlong_penalty
from grpo_core.tasks import Task, TaskError, build_task
from grpo_core.trainer import Trainer
from grpo_core.verifiers import resolve as resolve_verifier
from grpo_core.warmstart import warm_start

# kl_mode -> (KL term in the loss, KL folded into the reward)
KL_PLACEMENT = {"none": (False, False), "loss": (True, False), "reward": (False, True)}
OLD_LOGPROBS: Registry = Registry("old log-prob source")  # (trainer, rollout) -> old log-probs [B, N]


@dataclass
class Batch:
    """The update's view of a rollout, kept groups only: K = kept groups x G responses.

    ids, mask [K, L + N]; cmask [K, N] bool, the tokens the loss sees; adv [K]; rollout_logp [K, N];
    old_logp, ref_logp [K, N] or None (old None: the update's first pass, detached, is the old policy, and
    with several epochs it is kept here by that first step).
    """

    ids: torch.Tensor
    mask: torch.Tensor
    cmask: torch.Tensor
    adv: torch.Tensor
    old_logp: torch.Tensor | None
    rollout_logp: torch.Tensor
    ref_logp: torch.Tensor | None
    groups: int


@torch.no_grad()
def no_grad_logprobs(tr: Trainer, net: torch.nn.Module, ro: Rollout) -> torch.Tensor:
    """Log-probs [B, N] of the rollout's completions under net, optim.micro_batch sequences per forward."""
    parts = micro_batches(torch.arange(len(ro.ids), device=tr.device), tr.cfg.optim.micro_batch)
    if len(parts) == 1:
        with tr.amp():
            return token_logprobs(net, ro.ids, ro.mask, ro.n, tr.cfg.rollout.temperature)[0]
    out = []
    for rows in parts:
        with tr.amp():
            out.append(token_logprobs(net, ro.ids[rows], ro.mask[rows], ro.n, tr.cfg.rollout.temperature)[0])
    return torch.cat(out)


@OLD_LOGPROBS.register("recompute")
def recompute_old(tr: Trainer, ro: Rollout) -> torch.Tensor:
    """A separate no-grad pass of the training model: equal to the update's first pass, ratio 1."""
    return no_grad_logprobs(tr, tr.net, ro)


@OLD_LOGPROBS.register("rollout")
def rollout_old(tr: Trainer, ro: Rollout) -> torch.Tensor:
    """The sampling pass's own log-probs, as an inference engine reports them (rollout.dtype)."""
    return ro.rollout_logp


def setup(cfg: Config, on_checked=None) -> Trainer:
    """Everything that can fail on a bad config, before any run folder exists or training starts.

    on_checked(main): called once the config passed every check, before the warm start (main: whether this
    process is rank 0); it may open the run and return the warm start's progress callback."""
    validate(cfg)
    if cfg.algo.old_logprob_source not in OLD_LOGPROBS:
        raise ConfigError(f"algo.old_logprob_source: {OLD_LOGPROBS.unknown(cfg.algo.old_logprob_source)}")
    task = build_task(cfg.task)
    world, device_name = D.init_from_env(cfg.model.device)
    if cfg.rollout.prompts_per_step < world.size:
        raise ConfigError(f"rollout.prompts_per_step ({cfg.rollout.prompts_per_step}) must be at least the number "
                          f"of processes ({world.size}): each rank samples whole groups of its own prompts")
    device = pick_device(device_name)
    threads = cpu_threads(cfg.model, device)
    if threads:  # process-wide; train() puts the caller's count back when it returns
        torch.set_num_threads(threads)
    torch.manual_seed(cfg.seed)
    policy = POLICIES[cfg.model.kind](cfg.model, device)
    _check_prompts_fit(policy, task, cfg)
    progress = on_checked(world.main) if on_checked is not None else None
    with D.rank_zero_first(world):  # one warm start fills the cache, the other ranks read it
        facts = warm_start(policy, task, cfg, device, progress)
    net = policy.net.eval()  # no dropout: the update must see the policy that sampled
    D.broadcast_parameters(net, world)
    dtype = DTYPES[cfg.rollout.dtype]
    engine = net if dtype == torch.float32 else frozen_copy(net, dtype)
    keep_ref = cfg.algo.kl_mode != "none" or cfg.log.track_kl_ref
    o = cfg.optim
    # fused: one kernel for every parameter, 5x faster than the per-tensor loop on a small CPU model
    # (0.14 ms against 0.79 ms a step for the tiny Qwen2); transformers' Trainer defaults to it too
    opt = torch.optim.AdamW(net.parameters(), lr=o.lr, betas=(o.beta1, o.beta2), weight_decay=o.weight_decay,
                            fused=device.type in ("cpu", "cuda"))
    info = {"policy": policy.description, "device": str(device), "preset_source": PRESETS[cfg.preset][0],
            "task_eval_size": len(task.eval_set), "verifier": task.verifier_name, "warm_start": facts,
            "torch": torch.__version__, "world_size": world.size, "torch_threads": torch.get_num_threads()}
    train_task = task
    if cfg.faults.reward_verifier:  # FAULT hook: rollouts scored by another verifier, eval by the task's own
        train_task = copy.copy(task)
        train_task.verifier_name = cfg.faults.reward_verifier
        train_task.verify = resolve_verifier(cfg.faults.reward_verifier)
        info["reward_verifier"] = cfg.faults.reward_verifier
    gen = torch.Generator(device=device).manual_seed(cfg.seed + 1_000_003 * world.rank)
    ref = frozen_copy(net) if keep_ref else None
    if cfg.rollout.compiled_decode:  # after every copy: a compiled step stays with the module it was made for
        if device.type == "cuda":
            engine.enable_static_decode()
        info["compiled_decode"] = "on" if device.type == "cuda" else f"off: CUDA only, not {device.type}"
    return Trainer(cfg, device, net, policy.tokenizer, engine, ref, train_task, opt, random.Random(cfg.seed), gen,
                   info, task, needs_old_pass(cfg, engine is net, device), world)


def needs_old_pass(cfg: Config, engine_is_net: bool, device: torch.device) -> bool:
    """Whether the old log-probs need a pass of their own before the update.

    Not when each epoch is one optimizer step (one minibatch) and the rollout engine is the training
    model in the training precision: the first step's forward sees every row before any update, so that
    pass, detached, is the old policy (TRL does the same with one iteration) and is kept for the later
    epochs. Nothing before the update may need them: a KL folded into the reward does. The first-step
    ratio then compares the sampling pass's own log-probs with the update's, the comparison notes
    section 9 q.3 is about.
    """
    a = cfg.algo
    if a.old_logprob_source != "recompute":
        return True  # taken from the rollout: there is no pass to save
    same_precision = engine_is_net and not (cfg.model.autocast_bf16 and device.type == "cuda")
    return not (a.minibatches == 1 and same_precision and a.kl_mode != "reward")


def _check_prompts_fit(policy, task: Task, cfg: Config) -> None:
    """Fail now, in one line, on a prompt the tokenizer cannot encode or the model cannot hold."""
    pool = getattr(task, "problems", []) + task.eval_set + task.sample(random.Random(0), 64)
    limit = getattr(policy.net, "block_size", None)
    for p in pool:
        try:
            n = len(policy.tokenizer.encode(p.prompt)) + cfg.rollout.max_new_tokens
        except ValueError as e:
            raise TaskError(f"prompt {p.id}: {e}") from None
        if limit is not None and n > limit:
            raise ConfigError(f"prompt {p.id} plus rollout.max_new_tokens is {n} tokens > model.block_size={limit}")


@torch.no_grad()
def prepare(tr: Trainer, ro: Rollout) -> tuple[Batch, dict, torch.Tensor, int]:
    """Old/reference log-probs, advantages, dynamic-sampling drop, for this rank's groups.

    Returns (batch, rollout metrics of every rank's groups, advantages of every rank's responses [B_all],
    index of this rank's first group among them).
    """
    a, P, G, w = tr.cfg.algo, len(ro.problems), ro.group_size, tr.world
    old = OLD_LOGPROBS[a.old_logprob_source](tr, ro) if tr.old_pass else None
    ref = None
    if tr.ref is not None:
        ref = no_grad_logprobs(tr, tr.ref, ro)
    shaped = ro.rewards + soft_overlong_penalty(ro.lengths, tr.cfg.rollout.max_new_tokens, a.overlong_buffer,
                                                a.overlong_penalty)
    if KL_PLACEMENT[a.kl_mode][1]:  # per-sequence KL penalty subtracted from the reward before normalising
        shaped = shaped - a.kl_coef * (KL_ESTIMATORS[a.kl_estimator](old, ref) * ro.completion_mask).sum(1)
    # Decided on the host copy of the raw rewards, so selecting the kept rows needs no device sync.
    dropped = zero_variance_groups(torch.tensor(ro.host["reward"]).view(P, G)) & a.drop_zero_var_groups
    keep = (~dropped).repeat_interleave(G).nonzero().squeeze(1).to(tr.device)
    # Every rank's groups: a batch-level statistic (std, mean) must be the whole batch's.
    cmask = loss_mask(ro.completion_mask, ro.truncated, a.mask_truncated)
    # the tokens each response's advantage reaches in the loss: what a token-level estimator weighs it by
    columns = [shaped, ro.rewards, ro.passed, ro.lengths, ro.truncated, dropped.to(tr.device).repeat_interleave(G),
               cmask.sum(1)]
    local = torch.cat([c.view(P, G).float() for c in columns], 1)
    every, first = D.gather_rows(local, w)
    sh, rw, ps, ln, tc, dr, tk = every.split(G, dim=1)
    adv = estimate(a, sh, tk, D.gather_rows(dropped, w)[0] if a.drop_zero_var_groups else None)
    stats = M.rollout_metrics(rw, ps.bool(), ln, tc.bool(), adv, dr[:, 0].bool())
    mine = adv[first: first + P].reshape(-1)
    cmask = cmask[keep]
    batch = Batch(ro.ids[keep], ro.mask[keep], cmask, mine[keep], old[keep] if old is not None else None,
                  ro.rollout_logp[keep], ref[keep] if ref is not None else None, int((~dropped).sum()))
    return batch, stats, adv.reshape(-1), first


def estimate(a, shaped: torch.Tensor, tokens: torch.Tensor, dropped: torch.Tensor | None) -> torch.Tensor:
    """Advantages [P_all, G] of every rank's groups; with dropped ([P_all] bool, on the host) the estimator
    sees the kept groups only and a dropped group gets 0 (verl filters, then estimates): a batch-wide
    estimator (batch, reinforce_pp, reinforce_pp_baseline) must not take its mean and std from groups that
    never reach the loss. The group estimators give a tied group 0 either way, so for them this changes nothing.
    """
    est = ADVANTAGES[a.adv_mode]
    if dropped is None:
        return est(shaped, eps=a.adv_eps, unbiased=a.adv_std_unbiased, tokens=tokens)
    kept = (~dropped).nonzero().squeeze(1).to(shaped.device)  # host -> device copy, no sync
    adv = torch.zeros_like(shaped)
    if len(kept):
        adv[kept] = est(shaped[kept], eps=a.adv_eps, unbiased=a.adv_std_unbiased, tokens=tokens[kept])
    return adv


def minibatch_plan(groups: int, group_size: int, epochs: int, chunks: int, gen: torch.Generator) -> list[torch.Tensor]:
    """Row indices of each optimizer step: whole groups, reshuffled every epoch, split in `chunks` per epoch.

    Across processes every rank makes the same number of steps, so a chunk may be empty on a rank
    whose groups were all dropped; in one process chunks <= groups and none is.
    """
    plan = []
    for _ in range(epochs):
        order = torch.randperm(groups, generator=gen)
        for chunk in torch.tensor_split(order, chunks):
            plan.append((chunk[:, None] * group_size + torch.arange(group_size)).reshape(-1))
    return plan


def minibatch_totals(tr: Trainer, b: Batch, plan: list[torch.Tensor]) -> list | None:
    """Each step's count under the loss aggregation (tokens or responses) over every rank, so each rank
    divides its sum by the whole minibatch's count; None in one process (the local count is the count)."""
    if not tr.world.active:
        return None
    a, norm = tr.cfg.algo, 1.0
    local = [AGGREGATIONS[a.loss_agg](b.cmask[rows.to(tr.device)].float(), b.cmask[rows.to(tr.device)], norm)[1]
             for rows in plan]
    every = D.sum_all(torch.stack([c.float() for c in local]), tr.world)
    return [lambda count, t=t: t for t in every]


def lr_at(cfg: Config, step: int) -> float:
    warm = cfg.optim.warmup_steps
    return cfg.optim.lr * (min(1.0, (step + 1) / warm) if warm > 0 else 1.0)


def micro_batches(rows: torch.Tensor, size: int) -> list[torch.Tensor]:
    """rows split in runs of `size` sequences (optim.micro_batch); 0, or more than there are: one run."""
    return list(rows.split(size)) if 0 < size < len(rows) else [rows]


def objective(tr: Trainer, b: Batch, rows: torch.Tensor, logp: torch.Tensor, old: torch.Tensor, total):
    """Loss of the given rows (clipped ratio x advantage, + KL) over `total`'s count, its metrics, and the
    rollout correction's metrics."""
    cfg, a = tr.cfg, tr.cfg.algo
    cm = b.cmask[rows]
    ref = b.ref_logp[rows] if b.ref_logp is not None else None
    rollout_logp = b.rollout_logp[rows]
    weight, is_stats = (ROLLOUT_CORRECTIONS[a.rollout_correction](old, rollout_logp, cm, a.rollout_correction_min,
                                                                  a.rollout_correction_max)
                        if a.rollout_correction else (None, {}))
    norm = float(a.loss_agg_norm or cfg.rollout.max_new_tokens)
    adv = -b.adv[rows] if cfg.faults.sign_flip else b.adv[rows]  # FAULT hook (off by default)
    loss, stats = grpo_loss(logp, old, ref, adv, cm, a, norm, kl_in_loss=KL_PLACEMENT[a.kl_mode][0],
                            detach_policy=cfg.faults.detach_policy_term, is_weight=weight, total=total)
    return loss, stats, is_stats


def update_forward(tr: Trainer, b: Batch, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probs (with gradients) and entropy of the given rows' completions."""
    with tr.amp():
        return token_logprobs(tr.net, b.ids[rows], b.mask[rows], b.cmask.shape[1], tr.cfg.rollout.temperature,
                              with_entropy=True)


def backward(tr: Trainer, b: Batch, rows: torch.Tensor, first: bool, total) -> dict:
    """Loss of the given rows and its backward, in micro-batches of optim.micro_batch sequences when set
    (gradients accumulate); its metrics as 0-d tensors.

    A micro-batch's loss is its sum over the count of the whole minibatch (tokens or responses, as the
    aggregation counts them; over every rank under torchrun), so the micro-batches' losses and gradients
    add up to the minibatch's. Its metrics are then taken once, without gradients, from the whole
    minibatch's log-probs, exactly as an unsplit step takes them.
    """
    cfg = tr.cfg
    old_kept = b.old_logp is None  # no old pass: this step's own forward is the old policy
    parts = micro_batches(rows, cfg.optim.micro_batch)
    if len(parts) == 1:
        logp, entropy = update_forward(tr, b, rows)
        loss, stats, is_stats = objective(tr, b, rows, logp, logp.detach() if old_kept else b.old_logp[rows], total)
    else:
        if total is None:  # one process: the minibatch's own count
            cm = b.cmask[rows]
            count = AGGREGATIONS[cfg.algo.loss_agg](cm.float(), cm, 1.0)[1]
            total = lambda _count, t=count: t
        logps, entropies = [], []
        for part in parts:
            logp, entropy = update_forward(tr, b, part)
            old = logp.detach() if old_kept else b.old_logp[part]
            objective(tr, b, part, logp, old, total)[0].backward()
            logps.append(logp.detach())
            entropies.append(entropy)
        logp, entropy = torch.cat(logps), torch.cat(entropies)
        with torch.no_grad():  # the step's metrics, from the whole minibatch
            loss, stats, is_stats = objective(tr, b, rows, logp, logp if old_kept else b.old_logp[rows], total)
    if old_kept and cfg.algo.epochs > 1:  # the first step's pass is the old policy of the epochs after
        b.old_logp = torch.zeros_like(b.rollout_logp).index_copy_(0, rows, logp.detach())
    cm, rollout_logp = b.cmask[rows], b.rollout_logp[rows]
    stats.update(M.entropy_metric(entropy.detach(), cm))
    stats.update(is_stats)
    if first:  # before any optimizer step on this rollout: the on-policy check of notes section 9 q.3
        stats.update(M.first_step_metrics(logp.detach(), rollout_logp if old_kept else b.old_logp[rows], cm))
        stats.update(M.logprob_gap(rollout_logp, logp.detach(), cm))
    if len(parts) == 1:
        loss.backward()
    return stats


def optimizer_step(tr: Trainer, b: Batch, rows: torch.Tensor, first: bool, step: int, total=None) -> dict:
    """One update on the given rows (none: this rank only joins the gradient sum); its metrics."""
    cfg, params = tr.cfg, list(tr.net.parameters())
    lr = lr_at(cfg, step)
    for group in tr.opt.param_groups:
        group["lr"] = lr
    tr.opt.zero_grad(set_to_none=True)
    stats = backward(tr, b, rows.to(tr.device), first, total) if len(rows) else {}
    D.sum_gradients(params, tr.world)
    clip = cfg.optim.grad_clip if cfg.optim.grad_clip > 0 else float("inf")
    stats["optim/grad_norm"] = torch.nn.utils.clip_grad_norm_(params, clip)
    stats["optim/lr"] = lr
    if any(KL_PLACEMENT[cfg.algo.kl_mode]):
        stats["policy/kl_coef"] = cfg.algo.kl_coef
    tr.opt.step()
    return stats


def sample_rows(step: int, ro: Rollout, adv: list[float], group0: int = 0) -> list[dict]:
    """One samples/ row per response (columns of collectors.schema.SAMPLES); group0 numbers the groups
    of this rank after those of the ranks before it, adv holds every rank's advantages."""
    G, h = ro.group_size, ro.host
    return [{"step": step, "prompt_id": ro.problems[i // G].id, "group": group0 + i // G, "sample": i % G,
             "reward": h["reward"][i], "passed": h["passed"][i], "advantage": adv[group0 * G + i],
             "num_tokens": h["num_tokens"][i], "truncated": h["truncated"][i], "prompt": ro.problems[i // G].prompt,
             "completion": ro.texts[i]} for i in range(len(ro.texts))]


def run_rollout(tr: Trainer, step: int, log, stop: StopOnSignal) -> int:
    """Sample, score and train on one rollout; log one row per optimizer step. Returns the next step."""
    t0 = time.perf_counter()
    if tr.engine is not tr.net:
        sync_weights(tr.engine, tr.net)  # the engine serves the current weights, in its own precision
    return train_on(tr, sample_groups(tr, step), step, log, stop, t0)


def train_on(tr: Trainer, ro: Rollout, step: int, log, stop, t0: float) -> int:
    """The updates of one rollout (this rank's groups of it); log one row per optimizer step."""
    cfg, w = tr.cfg, tr.world
    batch, ro_stats, adv, group0 = prepare(tr, ro)
    ro_stats["perf/tokens_per_s"] = sum(ro.host["num_tokens"]) / max(ro.sample_seconds, 1e-9)
    kept = int(D.sum_all(torch.tensor([float(batch.groups)]), w).item()) if w.active else batch.groups
    plan = minibatch_plan(batch.groups, ro.group_size, cfg.algo.epochs, min(cfg.algo.minibatches, kept),
                          torch.Generator().manual_seed(cfg.seed * 100_003 + step)) if kept else []
    totals = minibatch_totals(tr, batch, plan)
    for k, rows in enumerate(plan or [None]):  # None: every group dropped, a step without an update
        row = dict(ro_stats) if k == 0 else {}
        if cfg.eval_every and step % cfg.eval_every == 0 and w.main:
            t_eval = time.perf_counter()
            row.update(evaluate(tr.net, tr.tokenizer, tr.eval_task or tr.task, cfg.rollout, tr.device))
            t0 += time.perf_counter() - t_eval  # eval time is not step time
        if rows is not None:
            stats = optimizer_step(tr, batch, rows, first=k == 0, step=step, total=totals[k] if totals else None)
            row.update(D.reduce_stats(M.fetch(stats)[0], float(batch.cmask[rows.to(tr.device)].sum()), w)
                       if w.active else stats)
        row["perf/step_s"] = time.perf_counter() - t0
        values, vectors = M.fetch(row, {"adv": adv} if k == 0 else None)
        samples = sample_rows(step, ro, vectors["adv"], group0) if k == 0 and cfg.log.samples else None
        if w.active and samples is not None:
            samples = [s for part in D.gather_objects(samples, w) for s in part]
        log(step, values, samples)
        step, t0 = step + 1, time.perf_counter()
        if D.any_rank(step >= cfg.steps or stop.asked, w):
            break
    return step


@dataclass
class TrainResult:
    run_dir: Path
    status: str  # as recorded in run.json: finished, failed or stopped
    steps: int  # optimizer steps done
    final_eval: dict  # greedy eval of the final policy ({} when eval is off)
    info: dict  # what went into run.json's info (policy, warm start ...)
    error: str | None = None
    net: torch.nn.Module | None = None  # the trained policy, for callers that go on using it
    main: bool = True  # False on the other ranks of a torchrun run: rank 0 wrote the run and reports it


def default_out(cfg: Config) -> Path:
    return Path("runs") / f"{cfg.preset}-{cfg.task.name}-{time.strftime('%Y%m%d-%H%M%S')}"


@contextlib.contextmanager
def _keep_threads() -> Iterator[None]:
    """setup() may change torch's thread count for the run (ModelConfig.cpu_threads); the caller gets its own back."""
    before = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train(cfg: Config, guard=None, say=None) -> TrainResult:
    """Set up (all config errors raise here, before a run folder exists), train, and record the run.

    Under torchrun every rank trains; rank 0 alone writes the run (with every rank's samples) and evals.
    guard: a grpo_core.guard.TrainGuard (or None); rank 0 alone runs it, its stop reaches every rank.
    say: grpo_core.console's say for the warm start's lines on the console (rank 0), or None.
    """
    early = EarlyRun(cfg, Path(cfg.out) if cfg.out else default_out(cfg), say)
    with StopOnSignal() as stop, _keep_threads():
        stop.at_once = True  # a signal during the warm start ends it (and records the run failed) at once
        try:
            tr = setup(cfg, early.open)
        except BaseException as e:
            early.fail(e)
            raise
        early.warm_started(tr.info["warm_start"])
        stop.at_once = False
        try:
            return _train(tr, cfg, stop, early, guard if tr.world.main else None)
        finally:
            D.leave(tr.world)


def _train(tr: Trainer, cfg: Config, stop: StopOnSignal, early: EarlyRun, guard=None) -> TrainResult:
    run_dir = early.run_dir
    step, final, main = 0, {}, tr.world.main
    with record(cfg, run_dir, tr.info, stop, guard, main, early.writer) as rec:
        while step < cfg.steps and not D.any_rank(stop.asked, tr.world):
            step = run_rollout(tr, step, rec.log, stop)
        if guard is not None:
            guard.end()
        if cfg.eval_every and main:
            final = evaluate(tr.net, tr.tokenizer, tr.eval_task or tr.task, cfg.rollout, tr.device)
        rec.finish(final, step)
    status, error = rec.status()
    return TrainResult(run_dir, status, step, final, tr.info, error, tr.net, main)

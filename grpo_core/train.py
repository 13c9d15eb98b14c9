"""The GRPO loop, top to bottom (notes, section 2):

    for each rollout: sample G responses per prompt with the rollout engine, score them, turn rewards
    into group-relative advantages, take old (and reference) log-probs; then for each epoch and
    minibatch: recompute log-probs with gradients, clipped ratio x advantage (+ KL), one optimizer step,
    one logged row.

Rows are optimizer steps. The rollout-level metrics (reward/*, groups/*, completions/*, adv/*) and the
first-step ratio belong to the first optimizer step that used the rollout; with one epoch and one
minibatch (every preset) each step has its own rollout. Every algorithm choice is a registry lookup.
"""

from __future__ import annotations

import copy
import random
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import torch

from grpo_core import metrics as M
from grpo_core.advantages import ADVANTAGES, zero_variance_groups
from grpo_core.config import PRESETS, Config, ConfigError, to_dict, validate
from grpo_core.losses import KL_ESTIMATORS, grpo_loss
from grpo_core.mirror import WandbMirror
from grpo_core.policy import (
    DTYPES,
    POLICIES,
    autocast,
    frozen_copy,
    pick_device,
    sync_weights,
    token_logprobs,
)
from grpo_core.registry import Registry
from grpo_core.rollout import Rollout, collect, evaluate
from grpo_core.tasks import Task, TaskError, build_task
from grpo_core.verifiers import resolve as resolve_verifier
from grpo_core.warmstart import warm_start

# kl_mode -> (KL term in the loss, KL folded into the reward)
KL_PLACEMENT = {"none": (False, False), "loss": (True, False), "reward": (False, True)}
OLD_LOGPROBS: Registry = Registry("old log-prob source")  # (trainer, rollout) -> old log-probs [B, N]


@dataclass
class Trainer:
    cfg: Config
    device: torch.device
    net: torch.nn.Module  # the policy being trained (fp32 weights)
    tokenizer: object
    engine: torch.nn.Module  # the rollout engine: net itself, or a copy in rollout.dtype
    ref: torch.nn.Module | None  # frozen copy of the warm-started policy, for the KL
    task: Task
    opt: torch.optim.Optimizer
    rng: random.Random  # prompt order
    gen: torch.Generator  # sampling
    info: dict  # facts for run.json
    eval_task: Task | None = None  # the task eval scores with, when a fault gives training another reward

    def amp(self):
        return autocast(self.device, self.cfg.model.autocast_bf16)


@dataclass
class Batch:
    """The update's view of a rollout, kept groups only: K = kept groups x G responses.

    ids, mask [K, L + N]; cmask [K, N] bool; adv [K]; old_logp, rollout_logp [K, N]; ref_logp [K, N] or None.
    """

    ids: torch.Tensor
    mask: torch.Tensor
    cmask: torch.Tensor
    adv: torch.Tensor
    old_logp: torch.Tensor
    rollout_logp: torch.Tensor
    ref_logp: torch.Tensor | None
    groups: int


@OLD_LOGPROBS.register("recompute")
@torch.no_grad()
def recompute_old(tr: Trainer, ro: Rollout) -> torch.Tensor:
    """A separate no-grad pass of the training model: equal to the update's first pass, ratio 1."""
    with tr.amp():
        return token_logprobs(tr.net, ro.ids, ro.mask, ro.n, tr.cfg.rollout.temperature)[0]


@OLD_LOGPROBS.register("rollout")
def rollout_old(tr: Trainer, ro: Rollout) -> torch.Tensor:
    """The sampling pass's own log-probs, as an inference engine reports them (rollout.dtype)."""
    return ro.rollout_logp


def setup(cfg: Config) -> Trainer:
    """Everything that can fail on a bad config, before any run folder exists or training starts."""
    validate(cfg)
    if cfg.algo.old_logprob_source not in OLD_LOGPROBS:
        raise ConfigError(f"algo.old_logprob_source: {OLD_LOGPROBS.unknown(cfg.algo.old_logprob_source)}")
    task = build_task(cfg.task)
    device = pick_device(cfg.model.device)
    torch.manual_seed(cfg.seed)
    policy = POLICIES[cfg.model.kind](cfg.model, device)
    _check_prompts_fit(policy, task, cfg)
    facts = warm_start(policy, task, cfg, device)
    net = policy.net.eval()  # no dropout: the update must see the policy that sampled
    dtype = DTYPES[cfg.rollout.dtype]
    engine = net if dtype == torch.float32 else frozen_copy(net, dtype)
    keep_ref = cfg.algo.kl_mode != "none" or cfg.log.track_kl_ref
    o = cfg.optim
    opt = torch.optim.AdamW(net.parameters(), lr=o.lr, betas=(o.beta1, o.beta2), weight_decay=o.weight_decay)
    info = {"policy": policy.description, "device": str(device), "preset_source": PRESETS[cfg.preset][0],
            "task_eval_size": len(task.eval_set), "verifier": task.verifier_name, "warm_start": facts,
            "torch": torch.__version__}
    train_task = task
    if cfg.faults.reward_verifier:  # FAULT hook: rollouts scored by another verifier, eval by the task's own
        train_task = copy.copy(task)
        train_task.verifier_name = cfg.faults.reward_verifier
        train_task.verify = resolve_verifier(cfg.faults.reward_verifier)
        info["reward_verifier"] = cfg.faults.reward_verifier
    return Trainer(cfg, device, net, policy.tokenizer, engine, frozen_copy(net) if keep_ref else None, train_task,
                   opt, random.Random(cfg.seed), torch.Generator(device=device).manual_seed(cfg.seed), info, task)


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
def prepare(tr: Trainer, ro: Rollout) -> tuple[Batch, dict, torch.Tensor]:
    """Old/reference log-probs, advantages, dynamic-sampling drop. Returns (batch, metrics, adv [B])."""
    a, P, G = tr.cfg.algo, len(ro.problems), ro.group_size
    old = OLD_LOGPROBS[a.old_logprob_source](tr, ro)
    ref = None
    if tr.ref is not None:
        with tr.amp():
            ref = token_logprobs(tr.ref, ro.ids, ro.mask, ro.n, tr.cfg.rollout.temperature)[0]
    in_reward = KL_PLACEMENT[a.kl_mode][1]
    shaped = ro.rewards
    if in_reward:  # per-sequence KL penalty subtracted from the outcome reward before normalising
        shaped = ro.rewards - a.kl_coef * (KL_ESTIMATORS[a.kl_estimator](old, ref) * ro.completion_mask).sum(1)
    adv = ADVANTAGES[a.adv_mode](shaped.view(P, G), eps=a.adv_eps, unbiased=a.adv_std_unbiased)
    # Decided on the host copy of the rewards, so selecting the kept rows needs no device sync.
    zero = zero_variance_groups(torch.tensor(ro.host["reward"]).view(P, G))
    dropped = zero & a.drop_zero_var_groups
    keep = (~dropped).repeat_interleave(G).nonzero().squeeze(1).to(tr.device)
    stats = M.rollout_metrics(ro.rewards.view(P, G), ro.passed.view(P, G), ro.lengths.view(P, G),
                              ro.truncated.view(P, G), adv, dropped.to(tr.device))
    flat = adv.reshape(-1)
    batch = Batch(ro.ids[keep], ro.mask[keep], ro.completion_mask[keep], flat[keep], old[keep],
                  ro.rollout_logp[keep], ref[keep] if ref is not None else None, int((~dropped).sum()))
    return batch, stats, flat


def minibatch_plan(groups: int, group_size: int, epochs: int, minibatches: int,
                   gen: torch.Generator) -> list[torch.Tensor]:
    """Row indices of each optimizer step: whole groups, reshuffled every epoch, `minibatches` per epoch."""
    plan = []
    for _ in range(epochs):
        order = torch.randperm(groups, generator=gen)
        for chunk in torch.tensor_split(order, max(1, min(minibatches, groups))):  # 0 groups: no step
            plan.append((chunk[:, None] * group_size + torch.arange(group_size)).reshape(-1))
    return [p for p in plan if len(p)]


def lr_at(cfg: Config, step: int) -> float:
    warm = cfg.optim.warmup_steps
    return cfg.optim.lr * (min(1.0, (step + 1) / warm) if warm > 0 else 1.0)


def optimizer_step(tr: Trainer, b: Batch, rows: torch.Tensor, first: bool, step: int) -> dict:
    """One clipped-surrogate update on the given rows; returns its metrics as 0-d tensors."""
    cfg, a = tr.cfg, tr.cfg.algo
    rows = rows.to(tr.device)
    lr = lr_at(cfg, step)
    for group in tr.opt.param_groups:
        group["lr"] = lr
    cm, old = b.cmask[rows], b.old_logp[rows]
    with tr.amp():
        logp, entropy = token_logprobs(tr.net, b.ids[rows], b.mask[rows], cm.shape[1], cfg.rollout.temperature,
                                       with_entropy=True)
    ref = b.ref_logp[rows] if b.ref_logp is not None else None
    norm = float(a.loss_agg_norm or cfg.rollout.max_new_tokens)
    adv = -b.adv[rows] if cfg.faults.sign_flip else b.adv[rows]  # FAULT hook (off by default)
    loss, stats = grpo_loss(logp, old, ref, adv, cm, a, norm, kl_in_loss=KL_PLACEMENT[a.kl_mode][0],
                            detach_policy=cfg.faults.detach_policy_term)
    stats.update(M.entropy_metric(entropy.detach(), cm))
    if first:  # before any optimizer step on this rollout: the on-policy check of notes section 9 q.3
        stats.update(M.first_step_metrics(logp.detach(), old, cm))
        stats.update(M.logprob_gap(b.rollout_logp[rows], logp.detach(), cm))
    tr.opt.zero_grad(set_to_none=True)
    loss.backward()
    clip = cfg.optim.grad_clip if cfg.optim.grad_clip > 0 else float("inf")
    stats["optim/grad_norm"] = torch.nn.utils.clip_grad_norm_(tr.net.parameters(), clip)
    stats["optim/lr"] = lr
    tr.opt.step()
    return stats


def sample_rows(step: int, ro: Rollout, adv: list[float]) -> list[dict]:
    """One samples/ row per response (columns of collectors.schema.SAMPLES)."""
    G, h = ro.group_size, ro.host
    return [{"step": step, "prompt_id": ro.problems[i // G].id, "group": i // G, "sample": i % G,
             "reward": h["reward"][i], "passed": h["passed"][i], "advantage": adv[i], "num_tokens": h["num_tokens"][i],
             "truncated": h["truncated"][i], "prompt": ro.problems[i // G].prompt, "completion": ro.texts[i]}
            for i in range(len(ro.texts))]


def run_rollout(tr: Trainer, step: int, log, stop: StopOnSignal) -> int:
    """Sample, score and train on one rollout; log one row per optimizer step. Returns the next step."""
    cfg, t0 = tr.cfg, time.perf_counter()
    if tr.engine is not tr.net:
        sync_weights(tr.engine, tr.net)  # the engine serves the current weights, in its own precision
    problems = tr.task.sample(tr.rng, cfg.rollout.prompts_per_step)
    ro = collect(tr.engine, tr.tokenizer, tr.task, problems, cfg.rollout.group_size, cfg.rollout, tr.device, tr.gen)
    batch, ro_stats, adv = prepare(tr, ro)
    ro_stats["perf/tokens_per_s"] = sum(ro.host["num_tokens"]) / max(ro.sample_seconds, 1e-9)
    plan = minibatch_plan(batch.groups, ro.group_size, cfg.algo.epochs, cfg.algo.minibatches,
                          torch.Generator().manual_seed(cfg.seed * 100_003 + step))
    for k, rows in enumerate(plan or [None]):  # None: every group dropped, a step without an update
        row = dict(ro_stats) if k == 0 else {}
        if cfg.eval_every and step % cfg.eval_every == 0:
            t_eval = time.perf_counter()
            row.update(evaluate(tr.net, tr.tokenizer, tr.eval_task or tr.task, cfg.rollout, tr.device))
            t0 += time.perf_counter() - t_eval  # eval time is not step time
        if rows is not None:
            row.update(optimizer_step(tr, batch, rows, first=k == 0, step=step))
        row["perf/step_s"] = time.perf_counter() - t0
        values, vectors = M.fetch(row, {"adv": adv} if k == 0 else None)
        log(step, values, sample_rows(step, ro, vectors["adv"]) if k == 0 and cfg.log.samples else None)
        step, t0 = step + 1, time.perf_counter()
        if step >= cfg.steps or stop.signal:
            break
    return step


class StopOnSignal:
    """SIGINT/SIGTERM ask the loop to stop after the current step, so the run closes with its status;
    a second signal interrupts at once. Installed before the RunWriter, which then leaves them to us."""

    def __init__(self) -> None:
        self.signal: str | None = None
        self._old: dict = {}

    def _handle(self, signum, frame) -> None:
        if self.signal is not None:
            raise KeyboardInterrupt(f"second {signal.Signals(signum).name}")
        self.signal = signal.Signals(signum).name

    def __enter__(self) -> Self:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._old.items():
            signal.signal(sig, handler)


@dataclass
class TrainResult:
    run_dir: Path
    status: str  # as recorded in run.json: finished or failed
    steps: int  # optimizer steps done
    final_eval: dict  # greedy eval of the final policy ({} when eval is off)
    info: dict  # what went into run.json's info (policy, warm start ...)
    error: str | None = None
    net: torch.nn.Module | None = None  # the trained policy, for callers that go on using it


def default_out(cfg: Config) -> Path:
    return Path("runs") / f"{cfg.preset}-{cfg.task.name}-{time.strftime('%Y%m%d-%H%M%S')}"


def train(cfg: Config) -> TrainResult:
    """Set up (all config errors raise here, before a run folder exists), train, and record the run."""
    from collectors import RunWriter

    tr = setup(cfg)
    run_dir = Path(cfg.out) if cfg.out else default_out(cfg)
    flat = to_dict(cfg)
    step, final, pass_rates = 0, {}, []
    with StopOnSignal() as stop, RunWriter(run_dir, name=cfg.name or None, config=flat) as writer:
        writer.update_meta(**tr.info)
        mirror = WandbMirror(cfg.log, run_dir, writer.meta.name, flat)
        bar = progress_bar(cfg)

        def log(step: int, values: dict, samples: list | None) -> None:
            writer.log_step(step, values)
            mirror.log(step, values)
            if samples:
                writer.log_samples(samples)
            bar.update(1)
            if "reward/mean" in values:
                pass_rates.append(values["reward/pass_rate"])
                bar.set_postfix(reward=f"{values['reward/mean']:.3f}", pass_rate=f"{values['reward/pass_rate']:.3f}")

        try:
            while step < cfg.steps and stop.signal is None:
                step = run_rollout(tr, step, log, stop)
            if cfg.eval_every:
                final = evaluate(tr.net, tr.tokenizer, tr.eval_task or tr.task, cfg.rollout, tr.device)
            tr.info["summary"] = summarize(pass_rates)
            writer.update_meta(final_eval=final, steps_done=step, summary=tr.info["summary"])
        finally:
            bar.close()
            mirror.finish(ok=stop.signal is None)
        if stop.signal:
            writer.close("failed", error=f"interrupted by {stop.signal} after {step} of {cfg.steps} steps")
    return TrainResult(run_dir, writer.meta.status, step, final, tr.info, writer.meta.error, tr.net)


def summarize(pass_rates: list[float]) -> dict:
    """Mean sampled pass rate of the first and last tenth of the rollouts (at most 20 each)."""
    if not pass_rates:
        return {}
    w = max(1, min(20, len(pass_rates) // 10))
    return {"window": w, "pass_rate_first": sum(pass_rates[:w]) / w, "pass_rate_last": sum(pass_rates[-w:]) / w}


def progress_bar(cfg: Config):
    from tqdm.auto import tqdm

    return tqdm(total=cfg.steps, disable=not cfg.log.progress, desc="grpo", unit="step", dynamic_ncols=True)

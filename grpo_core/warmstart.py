"""Supervised warm start: imitate the task's targets until the SAMPLED pass rate reaches a target.

A binary reward teaches only through groups that mix successes and failures (notes, section 5), so a
randomly initialised model (pass rate ~0) would give GRPO nothing to work with. The stop rule uses the
pass rate at the rollout temperature, not greedy accuracy: a tiny model at 46% greedy accuracy on
1-digit addition passed only ~17% of samples at T=1 and GRPO barely moved, while one whose sampled
pass rate sat near 40% learned clearly within 200 steps. The result is cached under a hash of
everything it depends on, so it is paid once per configuration.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import time
from pathlib import Path

import torch

from grpo_core.policy import Policy, token_logprobs
from grpo_core.rollout import collect, evaluate, left_pad
from grpo_core.tasks import Task

VERSION = 1  # bump when the procedure changes, so old cache entries are not reused


def cache_dir(configured: str) -> Path:
    if configured:
        return Path(configured)
    root = os.environ.get("GRPOSCOPE_CACHE") or Path.home() / ".cache" / "grposcope"
    return Path(root) / "warm_start"


def cache_key(cfg) -> str:
    """Hash of the model, task, warm-start and sampling settings and the seed (not the cache folder)."""
    ws = {k: v for k, v in dataclasses.asdict(cfg.warm_start).items() if k != "cache_dir"}
    parts = {"v": VERSION, "model": dataclasses.asdict(cfg.model), "task": dataclasses.asdict(cfg.task),
             "warm_start": ws, "temperature": cfg.rollout.temperature, "top_p": cfg.rollout.top_p,
             "max_new_tokens": cfg.rollout.max_new_tokens, "seed": cfg.seed}
    parts["model"].pop("device", None)  # the same weights on CPU or GPU
    parts["model"].pop("gradient_checkpointing", None)  # and with or without recomputing activations
    parts["model"].pop("cpu_threads", None)  # and on any number of threads
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def supervised_batch(tokenizer, problems, device) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Prompt + target + end token -> ids [B, L + N], mask [B, L + N], N (target columns)."""
    prompt_ids, prompt_mask = left_pad([tokenizer.encode(p.prompt) for p in problems], tokenizer.pad_id, device)
    targets = [tokenizer.encode(p.target) + [tokenizer.eos_id] for p in problems]
    n = max(len(t) for t in targets)
    tgt = torch.full((len(targets), n), tokenizer.pad_id, dtype=torch.long)
    tmask = torch.zeros((len(targets), n), dtype=torch.bool)
    for i, t in enumerate(targets):
        tgt[i, : len(t)], tmask[i, : len(t)] = torch.tensor(t), True
    return torch.cat([prompt_ids, tgt.to(device)], 1), torch.cat([prompt_mask, tmask.to(device)], 1), n


def sampled_pass_rate(policy: Policy, task: Task, problems, rollout_cfg, device, generator) -> float:
    ro = collect(policy.net, policy.tokenizer, task, problems, 1, rollout_cfg, device, generator)
    return sum(ro.host["passed"]) / len(problems)


def _train(policy: Policy, task: Task, cfg, device, progress=None) -> dict:
    ws = cfg.warm_start
    rng, check_rng = random.Random(cfg.seed + 1), random.Random(cfg.seed + 2)
    check_set = task.sample(check_rng, ws.check_samples)  # fixed, so successive checks compare like with like
    gen = torch.Generator(device=device).manual_seed(cfg.seed + 3)
    opt = torch.optim.AdamW(policy.net.parameters(), lr=ws.lr, betas=(0.9, 0.99), weight_decay=0.0)
    t0, step, rate, history = time.perf_counter(), 0, 0.0, []
    while step < ws.max_steps:
        ids, mask, n = supervised_batch(policy.tokenizer, task.sample(rng, ws.batch_size), device)
        logp, _ = token_logprobs(policy.net, ids, mask, n)
        loss = -logp.sum() / mask[:, -n:].sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        if step % ws.check_every == 0:
            rate = sampled_pass_rate(policy, task, check_set, cfg.rollout, device, gen)
            history.append([step, round(rate, 4)])
            if rate >= ws.target_pass_rate:
                break
        if progress is not None:
            progress(step, ws.max_steps, history[-1][1] if history else None)
    return {"steps": step, "sampled_pass_rate": rate, "reached_target": rate >= ws.target_pass_rate,
            "seconds": round(time.perf_counter() - t0, 2), "history": history}


def warm_start(policy: Policy, task: Task, cfg, device, progress=None) -> dict:
    """Warm-start policy.net in place (from the cache when possible) and return the facts for run.json.

    progress: called as progress(step, max_steps, sampled pass rate of the last check or None) after each
    supervised step that is trained here (not for weights loaded from the cache)."""
    ws = cfg.warm_start
    if not ws.enabled:
        return {"enabled": False}
    path = cache_dir(ws.cache_dir) / f"{cache_key(cfg)}.pt"
    if path.exists():
        saved = torch.load(path, map_location=device, weights_only=False)
        policy.net.load_state_dict(saved["state_dict"])
        facts = dict(saved["facts"], cached=True)
    else:
        facts = _train(policy, task, cfg, device, progress)
        facts["greedy_eval_pass_rate"] = evaluate(policy.net, policy.tokenizer, task, cfg.rollout, device)["eval/pass_rate"]
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        torch.save({"state_dict": policy.net.state_dict(), "facts": facts}, tmp)
        os.replace(tmp, path)  # atomic: a concurrent run never loads half a file
        facts = dict(facts, cached=False)
    return {"enabled": True, "target_pass_rate": ws.target_pass_rate, "cache_file": str(path), **facts}

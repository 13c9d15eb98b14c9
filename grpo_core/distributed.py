"""torch.distributed for the trainer: started by torchrun, one process per device, gloo on CPU, NCCL on GPU.

Every function here is the identity in a single process (no group initialised), so the one-process
trainer pays nothing for it. Across processes each rank samples its own share of the prompts (whole
groups), the advantages and rollout metrics are computed on every rank from the gathered rewards (so
a batch-level std is the batch's), the loss of a minibatch is each rank's sum over the minibatch's
global count, and the gradients are summed over ranks: the update is the one-process update.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1

    @property
    def active(self) -> bool:
        return self.size > 1

    @property
    def main(self) -> bool:
        return self.rank == 0


def init_from_env(device_name: str) -> tuple[World, str]:
    """Join torchrun's process group when WORLD_SIZE > 1; returns the world and the device to use.

    On CUDA each rank takes the GPU of its LOCAL_RANK and NCCL; otherwise gloo on CPU.
    """
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World(), device_name
    cuda = device_name.startswith("cuda") or (device_name == "auto" and torch.cuda.is_available())
    if cuda:
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        device_name = f"cuda:{local}"
    if not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo")
    return World(dist.get_rank(), dist.get_world_size()), device_name


def shard(items: list, world: World) -> list:
    """This rank's contiguous share of a list that every rank holds whole (equal shares, remainder first)."""
    n, k = len(items), world.size
    start = world.rank * (n // k) + min(world.rank, n % k)
    return items[start: start + n // k + (world.rank < n % k)]


def gather_rows(x: torch.Tensor, world: World) -> tuple[torch.Tensor, int]:
    """Every rank's x concatenated along dim 0 in rank order (shares may differ in length), and the row
    at which this rank's share starts."""
    if not world.active:
        return x, 0
    parts: list = [None] * world.size
    dist.all_gather_object(parts, x.detach().cpu())
    return torch.cat(parts).to(x.device), sum(len(p) for p in parts[: world.rank])


def gather_objects(obj, world: World) -> list:
    """Every rank's obj, in rank order, on every rank."""
    if not world.active:
        return [obj]
    parts: list = [None] * world.size
    dist.all_gather_object(parts, obj)
    return parts


def sum_all(x: torch.Tensor, world: World) -> torch.Tensor:
    """x summed over ranks (a copy), on x's device; NCCL reduces only CUDA tensors, so it goes through one."""
    if not world.active:
        return x
    on = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else x.device
    y = x.to(on, copy=True)
    dist.all_reduce(y)
    return y.to(x.device)


def any_rank(flag: bool, world: World) -> bool:
    """True on every rank when any rank says so (a stop request must be agreed, or the others hang)."""
    if not world.active:
        return flag
    return bool(sum_all(torch.tensor([float(flag)]), world).item() > 0)


def sum_gradients(params: list[torch.Tensor], world: World) -> None:
    """Replace each parameter's gradient by its sum over ranks, in one flat all-reduce (DDP's result,
    without its hooks: a rank whose groups were all dropped joins with zero gradients and no forward)."""
    if not world.active:
        return
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    at = 0
    for p, g in zip(params, grads):
        p.grad = flat[at: at + g.numel()].view_as(g)
        at += g.numel()


@torch.no_grad()
def broadcast_parameters(module: torch.nn.Module, world: World) -> None:
    """Every rank starts from rank 0's weights."""
    if world.active:
        for p in module.parameters():
            dist.broadcast(p.data, 0)


# How a per-rank statistic of the update combines into the minibatch's: everything else is a mean over
# the rank's completion tokens, weighted by them.
SUMMED = {"loss/policy", "loss/kl", "loss/total"}  # each rank's share of the minibatch loss
MAXED = {"policy/ratio_max", "policy/ratio_first_step_max_dev", "perf/step_s", "policy/rollout_is_ratio_max",
         "policy/rollout_is_seq_ratio_max", "policy/rollout_logprob_abs_diff_max", "policy/rollout_prob_abs_diff_max"}
MINNED = {"policy/rollout_is_ratio_min", "policy/rollout_is_seq_ratio_min"}
SHARED = {"optim/grad_norm", "optim/lr", "policy/kl_coef"}  # after the gradient sum, or config: equal on every rank


def reduce_stats(values: dict[str, float], tokens: float, world: World) -> dict[str, float]:
    """Combine host-side update statistics of every rank ({} from a rank that had no rows)."""
    if not world.active:
        return values
    parts = gather_objects((values, tokens), world)
    total = sum(t for _, t in parts)
    out = {}
    for key in dict.fromkeys(k for v, _ in parts for k in v):
        got = [(v[key], t) for v, t in parts if key in v]
        if key in SUMMED:
            out[key] = sum(x for x, _ in got)
        elif key in MAXED:
            out[key] = max(x for x, _ in got)
        elif key in MINNED:
            out[key] = min(x for x, _ in got)
        elif key in SHARED:
            out[key] = got[0][0]
        else:
            out[key] = sum(x * t for x, t in got) / total if total else 0.0
    return out


@contextlib.contextmanager
def rank_zero_first(world: World):
    """Rank 0 runs the block first, then the others (e.g. rank 0 fills a cache the others then read)."""
    if world.active and not world.main:
        dist.barrier()
    yield
    if world.active and world.main:
        dist.barrier()


def leave(world: World) -> None:
    """Close the process group this process joined (torchrun starts a fresh one per run)."""
    if world.active and dist.is_initialized():
        dist.destroy_process_group()

"""What a training step reads and changes: the config, the policy and its rollout engine, the reference, the
task, the optimizer and the random streams. Its own module so that the loop (train.py) and the parts it calls
(dynamic_sampling.py) both name it without importing each other."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import torch

from grpo_core import distributed as D
from grpo_core.config import Config
from grpo_core.policy import autocast
from grpo_core.tasks import Task


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
    old_pass: bool = True  # False when the update's own first pass gives the old log-probs exactly
    world: D.World = field(default_factory=D.World)  # this process among torchrun's (1 process: rank 0 of 1)

    def amp(self):
        return autocast(self.device, self.cfg.model.autocast_bf16)

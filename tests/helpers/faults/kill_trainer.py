"""Kill grpo-train with SIGKILL at random moments, resuming into the same run folder each time.

    python tests/helpers/faults/kill_trainer.py OUT_ROOT KILLS SEED [SEED ...]

torch and the trainer are imported and warmed up once (one short run: the optimizer imports torch._dynamo
lazily, seconds on a busy machine); then, per seed, each round forks a child that runs grpo-train's `main`
into OUT_ROOT/seed-N (a resume after the first round), lets it run a random 0.3-3 s while reading the run as
a dashboard would, then SIGKILLs it. Prints one JSON line per round: {"seed", "round", "seen": steps a
reader saw before the kill, "killed"}. The test checks the folders afterwards.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # imported before forking, so each child starts training at once

from collectors import RunError, load_run
from grpo_core import cli, train  # noqa: F401  (train: cli imports it lazily, the child must not wait)

ARGS = ["--steps", "100000", "--set", "warm_start.enabled=false", "--set", "log.progress=false"]


def _child(out: str, seed: int) -> None:
    torch.set_num_threads(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os._exit(cli.main(["--out", out, "--set", f"seed={seed}", *ARGS]))


def _steps_seen(out: str) -> int:
    try:
        return len(load_run(out).metrics)
    except RunError:
        return 0  # not created yet


def main(root: str, kills: int, seeds: list[int]) -> None:
    with open(os.devnull, "w") as quiet:
        sys.stdout, real = quiet, sys.stdout
        cli.main(["--out", os.path.join(root, "warmup"), "--steps", "1", *ARGS[2:]])
        sys.stdout = real
    for seed in seeds:
        _rounds(os.path.join(root, f"seed-{seed}"), seed, kills)


def _rounds(out: str, seed: int, kills: int) -> None:
    rng = random.Random(seed)
    for round_ in range(kills):
        pid = os.fork()
        if pid == 0:
            _child(out, seed)
        start = time.monotonic()
        deadline = start + rng.uniform(0.3, 3.0)
        seen = 0
        while time.monotonic() < deadline:
            time.sleep(rng.uniform(0.0, 0.3))
            seen = max(seen, _steps_seen(out))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"seed": seed, "round": round_, "seen": seen, "killed": os.WIFSIGNALED(status),
                          "elapsed": round(time.monotonic() - start, 2)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), [int(a) for a in sys.argv[3:]])

"""The trainer across processes (torch.distributed, gloo on CPU): two ranks, each holding half of the
groups, give the one-process update: the same metrics within float tolerance and the same parameters."""

import os
import random
import socket
import time
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from fixtures.rollouts import fake_rollout  # tests/ is on sys.path

from grpo_core.config import ConfigError, build_config
from grpo_core.rollout import collect, take_groups
from grpo_core.train import prepare, setup, train, train_on
from grpo_core.verifiers import VERIFIERS

torch.set_num_threads(1)
P, G = 4, 4


def graded(completion: str, answer: str):
    """Reward by length, so that a random model's groups differ and every statistic has a value."""
    return min(len(completion), 3) / 3


if "test_dist_graded" not in VERIFIERS:
    VERIFIERS.register("test_dist_graded")(graded)

CASES = {
    # a batch-level std and a token-level mean: both need the whole batch, not a rank's half; the rollout
    # correction's ratio min and max must be the batch's, not a mean of the ranks'
    "batch_token": [("algo.adv_mode", "batch"), ("algo.loss_agg", "token_mean"), ("algo.kl_mode", "loss"),
                    ("algo.rollout_correction", "token_truncate")],
    # two epochs: the first step's pass kept as the old policy, and a second step on updated weights
    "two_epochs": [("algo.epochs", "2"), ("algo.kl_mode", "none"), ("algo.adv_mode", "reinforce_pp")],
    # dynamic sampling before a batch-wide estimate, and each rank's update in micro-batches of 3 sequences
    # over the whole minibatch's token count
    "drop_micro": [("algo.adv_mode", "reinforce_pp_baseline"), ("algo.drop_zero_var_groups", "true"),
                   ("algo.loss_agg", "token_mean"), ("optim.micro_batch", "3")],
}


def config(case: str):
    return build_config(overrides=[
        ("warm_start.enabled", "false"), ("eval_every", "0"), ("log.progress", "false"), ("model.device", "cpu"),
        ("rollout.prompts_per_step", str(P)), ("rollout.group_size", str(G)), ("rollout.max_new_tokens", "4"),
        ("task.verifier", "test_dist_graded"), ("model.n_layer", "1"), ("model.d_model", "32"), *CASES[case]])


def one_rollout(tr):
    """The same full rollout on every process: same weights, same prompts, same sampling generator."""
    problems = tr.task.sample(random.Random(0), P)
    return collect(tr.net, tr.tokenizer, tr.task, problems, G, tr.cfg.rollout, tr.device,
                   torch.Generator().manual_seed(123))


class NoStop:
    signal = reason = None
    asked = False


def update(tr, ro) -> tuple[list, list]:
    rows: list = []
    train_on(tr, ro, 0, lambda step, values, samples: rows.append((values, samples)), NoStop(), 0.0)
    return rows, [p.detach().clone() for p in tr.net.parameters()]


def worker(rank: int, world: int, port: int, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    with pytest.raises(ConfigError, match="at least the number of processes"):  # a rank without a group
        setup(build_config(overrides=[("warm_start.enabled", "false"), ("rollout.prompts_per_step", "1")]))
    for case in CASES:  # one process group for every case: starting processes is the slow part
        tr = setup(config(case))
        ro = one_rollout(tr)
        half = P // world
        rows, params = update(tr, take_groups(ro, half, start=rank * half))
        torch.save({"rows": rows, "params": params, "world_size": tr.world.size}, Path(out) / f"{case}{rank}.pt")
    # the issue-26 case across ranks: rank 0 holds the mixed group [1, 0, 0, 0], rank 1 the tied [1, 1, 1, 1]
    tr = setup(build_config(overrides=[
        ("warm_start.enabled", "false"), ("algo.kl_mode", "none"), ("log.track_kl_ref", "false"),
        ("algo.drop_zero_var_groups", "true"), ("algo.adv_mode", "reinforce_pp"), ("algo.adv_eps", "0"),
        ("rollout.prompts_per_step", "2"), ("rollout.group_size", "4"), ("model.device", "cpu")]))
    batch, _, every, _ = prepare(tr, fake_rollout(tr.task, [[1, 0, 0, 0]] if rank == 0 else [[1, 1, 1, 1]]))
    torch.save({"adv": batch.adv, "every": every}, Path(out) / f"dropped{rank}.pt")
    # the whole loop as `torchrun ... grpo-train` runs it: rank 0 writes the run, evals, gathers samples
    result = train(build_config(overrides=[
        ("out", str(Path(out) / "run")), ("warm_start.enabled", "false"), ("steps", "2"), ("eval_every", "1"),
        ("log.progress", "false"), ("rollout.prompts_per_step", "4"), ("rollout.group_size", "2"),
        ("rollout.max_new_tokens", "4"), ("model.device", "cpu"), ("model.n_layer", "1"), ("model.d_model", "32")]))
    (Path(out) / f"main{rank}").write_text(str(result.main))  # only rank 0 reports the run


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("ranks")
    # fork, not spawn: the children start with this process's imports (spawning re-imports torch and the
    # trainer in each: 125 s of this test instead of 28 s on a loaded machine). A child forked while some
    # other thread held a lock could hang, so a deadline turns that into a failure, not a stuck suite.
    ctx = mp.start_processes(worker, args=(2, free_port(), str(out)), nprocs=2, join=False, start_method="fork")
    deadline = time.monotonic() + 300
    while not ctx.join(timeout=5):
        if time.monotonic() > deadline:
            for p in ctx.processes:
                p.kill()
            pytest.fail("the two ranks did not finish within 300 s")
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("case", list(CASES))
def test_two_gloo_ranks_give_the_one_process_update(two_ranks, case):
    r0, r1 = (torch.load(two_ranks / f"{case}{r}.pt") for r in (0, 1))
    assert r0["world_size"] == 2
    tr = setup(config(case))
    assert tr.world.size == 1
    want_rows, want_params = update(tr, one_rollout(tr))
    got_rows = r0["rows"]
    assert len(got_rows) == len(want_rows) == int(case == "two_epochs") + 1
    for (got, got_samples), (want, want_samples) in zip(got_rows, want_rows):
        keys = {k for k in want if not k.startswith("perf/")}
        assert keys == {k for k in got if not k.startswith("perf/")}
        for k in sorted(keys):
            assert got[k] == pytest.approx(want[k], rel=1e-5, abs=1e-6), k
        if want_samples:  # rank 0 holds every rank's samples, numbered as in one process
            strip = [{k: v for k, v in s.items() if k != "advantage"} for s in want_samples]
            assert [{k: v for k, v in s.items() if k != "advantage"} for s in got_samples] == strip
            assert [s["advantage"] for s in got_samples] == pytest.approx([s["advantage"] for s in want_samples])
    for a, b, c in zip(r0["params"], r1["params"], want_params):
        assert torch.equal(a, b)  # the ranks stay in step exactly
        assert torch.allclose(a, c, rtol=1e-5, atol=1e-6)  # and take the one-process step
    assert any(not torch.equal(a, b) for a, b in zip(want_params, [p.detach() for p in setup(config(case)).net.parameters()]))


def test_dropped_groups_leave_the_batch_statistics_of_every_rank(two_ranks):
    # reinforce_pp on the kept group alone (tests/trainer/test_grpo_scale.py works the numbers): 1.6202, -0.5401 x 3
    r0, r1 = (torch.load(two_ranks / f"dropped{r}.pt") for r in (0, 1))
    kept = [1.620185, -0.540062, -0.540062, -0.540062]
    assert r0["adv"].tolist() == pytest.approx(kept, abs=1e-6)
    assert r1["adv"].numel() == 0  # rank 1's only group was dropped: no rows to update
    for r in (r0, r1):  # every rank reports every rank's advantages, 0 where dropped
        assert r["every"].tolist() == pytest.approx(kept + [0] * 4, abs=1e-6)


def test_train_under_two_ranks_writes_one_run_with_every_ranks_samples(two_ranks):
    from collectors import load_run

    run = load_run(two_ranks / "run")
    assert run.meta.status == "finished" and run.meta.info["world_size"] == 2
    assert [(two_ranks / f"main{r}").read_text() for r in (0, 1)] == ["True", "False"]
    assert run.metrics["step"].tolist() == [0, 1]
    assert run.metrics["eval/pass_rate"].notna().all()
    samples = run.samples()
    assert len(samples) == 2 * 4 * 2  # both steps, both ranks' groups
    assert sorted(samples[samples["step"] == 0]["group"].unique()) == [0, 1, 2, 3]

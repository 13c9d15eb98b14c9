"""first_step_ratio from what frameworks other than ours log (dashboard/diagnosis/rules/first_step.py), and
kl_clip_explode's early level and its "stays" (rules/kl.py): OpenRLHF's step-1 clip fraction against what its
warm-up learning rate can move (issue 31), TRL's on-policy step 1 and a clip level present from it (issue 24,
item 6). OpenRLHF logs are written as its logger writes them (tests/fixtures/openrlhf_console.py); the other runs
with the real RunWriter. Bounds are worked out in the comments."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from fixtures.openrlhf_console import ARGS, TrainerLog, noise, printed_args, status
from helpers.paths import REPO

from collectors import RunWriter, load_run
from collectors.sources import open_run
from dashboard.diagnosis import diagnose
from dashboard.diagnosis.rules.first_step import CLIP_AT_FULL_LR, EPS_REF, MIN_CLIP

REAL = REPO.parent / "shared" / "fixtures" / "real-runs"
EARLY, ELEVEN = REAL / "openrlhf_tools_gptoss_tdc_4770064_early", REAL / "openrlhf_tools_gptoss_tdc_4783410"


def real(path: Path) -> Path:
    if not path.is_dir():
        pytest.skip(f"{path} is not here (../shared/fixtures/real-runs)")
    return path


def by_rule(d, rule_id):
    hits = [f for f in d.findings if f.rule_id == rule_id]
    assert hits, f"{rule_id} did not fire; findings: {[(f.rule_id, f.title) for f in d.findings]}"
    return hits[0]


def rules(d, severity=("warning", "critical")):
    return {f.rule_id for f in d.findings if f.severity in severity}


def test_the_real_step_1_clip_of_14_percent_in_warm_up_is_a_mismatch(tmp_path):
    d = diagnose(open_run(real(EARLY)))
    f = by_rule(d, "first_step_ratio")
    # lr 2.5e-8 at step 1, 1/3 of the run's largest logged lr 7.5e-8: at most 0.2 x 1/3 x 0.2/0.2 = 6.7% can clip
    assert f.severity == "warning" and f.evidence[0].value == pytest.approx(0.14304099092260003)
    assert f.evidence[0].threshold == pytest.approx(CLIP_AT_FULL_LR / 3)
    # with the arguments the run was launched with (SOURCE.txt: lr 1e-6, eps_clip_low_high 0.3 / 0.362) the yardstick
    # is 0.2 x 0.025 x 0.2/0.3 = 0.33%: 43 times over, beyond doubt
    log = tmp_path / "with_args.out"
    log.write_text(printed_args(ARGS | {"actor_learning_rate": 1e-6, "eps_clip_low_high": [0.3, 0.362]})
                   + (EARLY / "global_step_lines.log").read_text())
    f = by_rule(diagnose(open_run(log)), "first_step_ratio")
    assert f.severity == "critical" and f.evidence[0].threshold == pytest.approx(max(MIN_CLIP, 0.2 * 0.025 * 0.2 / 0.3))
    assert "from config eps_clip_low_high" in f.evidence[0].text and "config actor_learning_rate" in f.evidence[0].text


def test_the_real_eleven_step_run_raises_nothing_and_cannot_judge_trends_yet():
    d = diagnose(open_run(real(ELEVEN)))
    assert rules(d) == set()
    assert d.verdict.kind == "cant_judge" and "11 logged step(s)" in d.verdict.reason
    assert not any(n.rule_id == "first_step_ratio" for n in d.not_judged)  # judged (lr in warm-up): nothing found


def openrlhf_log(path: Path, clips: list[float], lrs: list[float], kls: list[float] | None = None,
                 extra: dict | None = None) -> Path:
    rng = random.Random(0)
    with path.open("w") as f:
        log = TrainerLog(f)
        for s, (clip, lr) in enumerate(zip(clips, lrs, strict=True), 1):
            f.write(noise(rng, 50))
            st = status(s, rng) | {"ppo_clip_ratio": clip, "actor_lr": lr, "ppo_kl": (kls or [1e-5] * s)[s - 1]}
            log.step(s, st | (extra or {}))
    return path


@pytest.mark.parametrize(("lr1", "fires"), [(2.5e-8, True), (5e-7, False), (1e-6, None)])
def test_the_yardstick_is_what_the_learning_rate_moves(tmp_path, lr1, fires):
    # the same 3% clipped at step 1; the run's lr is 1e-6 after warm-up. At 1/40 of it, at most max(0.5%,
    # 0.2 x 0.025) = 0.5% can clip: 3% is a mismatch. At half of it, 10% can: 3% says nothing. At the full lr
    # (no warm-up) the step is not judged this way at all.
    lrs = [lr1] + [1e-6] * 9
    d = diagnose(open_run(openrlhf_log(tmp_path / "a.log", [0.03] + [0.002] * 9, lrs)))
    hit = [f for f in d.findings if f.rule_id == "first_step_ratio"]
    if fires:
        assert hit and hit[0].severity == "warning" and hit[0].evidence[0].threshold == pytest.approx(MIN_CLIP)
    else:
        assert not hit
    if fires is None:
        assert any(n.rule_id == "first_step_ratio" for n in d.not_judged)


def test_a_step_1_old_vs_current_kl_far_above_the_warm_up_learning_rate(tmp_path):
    # nothing clipped, but ppo_kl 0.01 nats at 1/40 of the lr: at most max(1e-3, 0.02 x 0.025) = 1e-3 nats
    d = diagnose(open_run(openrlhf_log(tmp_path / "kl.log", [0.0] * 10, [2.5e-8] + [1e-6] * 9,
                                       kls=[0.01] + [1e-5] * 9)))
    f = by_rule(d, "first_step_ratio")
    assert f.evidence[0].metric == "policy/approx_kl_old" and f.evidence[0].threshold == pytest.approx(1e-3)
    assert f.severity == "critical"  # 10x the bound


def test_openrlhfs_vllm_kl_far_beyond_bf16_numerics(tmp_path):
    # vllm_kl: mean log p vLLM - log p trainer on vLLM's tokens, a KL estimate; 0.05 nats is beyond 0.01
    d = diagnose(open_run(openrlhf_log(tmp_path / "v.log", [0.0005] * 10, [1e-6] * 10, extra={"vllm_kl": 0.05})))
    f = by_rule(d, "first_step_ratio")
    assert f.severity == "warning" and f.title == "The rollout engine's log-probs are far from the trainer's"
    assert f.evidence[0].metric == "vllm_kl" and "median 0.05 > 0.01" in f.evidence[0].text
    d = diagnose(open_run(openrlhf_log(tmp_path / "ok.log", [0.0005] * 10, [1e-6] * 10, extra={"vllm_kl": 0.002})))
    assert "first_step_ratio" not in rules(d)


def write(tmp_path, rows: dict[str, np.ndarray], config: dict, name: str):
    n = len(next(iter(rows.values())))
    with RunWriter(tmp_path / name, name=name, config=config) as w:
        for i in range(n):
            w.log_step(i + 1, {k: float(v[i]) for k, v in rows.items()})
    return load_run(tmp_path / name)


def trl_rows(clip: np.ndarray) -> dict[str, np.ndarray]:
    n = len(clip)
    rng = np.random.default_rng(0)
    return {"reward/mean": 0.5 + rng.normal(0, 0.03, n), "reward/std": np.full(n, 0.4),
            "policy/kl_ref": np.r_[0.0, 0.02 + rng.normal(0, 0.003, n - 1)], "policy/entropy": np.full(n, 0.7),
            "completions/len_mean": np.full(n, 60.0), "policy/clipfrac": clip, "optim/lr": np.full(n, 1e-6)}


TRL = {"num_generations": 8, "num_iterations": 4, "gradient_accumulation_steps": 1, "beta": 0.04}


def test_a_trl_clip_level_from_the_on_policy_step_1_is_a_mismatch_not_an_explosion(tmp_path):
    # issue 24, item 6: num_iterations 4 (each generation batch: 1 on-policy step, 3 reuses), a clip fraction about
    # 0.15 on every step from step 1, wandering above 0.2 for a while late in the run
    rng = np.random.default_rng(1)
    clip = np.clip(0.15 + rng.normal(0, 0.01, 120), 0, 1)
    clip[90:100] = 0.26
    d = diagnose(write(tmp_path, trl_rows(clip), TRL, "mismatch"))
    f = by_rule(d, "first_step_ratio")
    assert f.severity == "critical"
    assert any("at step 1, TRL's first optimizer step" in e.text and "a level present from the on-policy step on" in
               e.text for e in f.evidence)
    assert "kl_clip_explode" not in rules(d, ("warning", "critical"))
    # the same without a config, read from TRL's console (the steps are logged one by one from 1)
    console = tmp_path / "train.log"
    console.write_text("".join(f"{{'loss': 0.01, 'reward': {0.4 + 0.001 * i}, 'kl': 0.02, 'clip_ratio/region_mean': "
                               f"{clip[i]}, 'learning_rate': 1e-06, 'epoch': {i / 120}}}\n" for i in range(120)))
    run = open_run(console)
    assert run.meta.source == "trl-console" and run.last_step == 120
    d = diagnose(run)
    assert by_rule(d, "first_step_ratio").severity == "critical"
    assert "kl_clip_explode" not in rules(d)


def test_trl_reuse_steps_that_clip_while_step_1_does_not_are_staleness(tmp_path):
    # on-policy steps 1, 5, 9, ... clip nothing; the reuse steps 0.15-0.3 from the start: the level the config
    # implies (config_many_reuses' finding), neither a mismatch nor an explosion
    n = 120
    on_policy = (np.arange(n) % 4) == 0
    rng = np.random.default_rng(2)
    clip = np.where(on_policy, 0.0, np.clip(0.2 + rng.normal(0, 0.05, n), 0, 1))
    d = diagnose(write(tmp_path, trl_rows(clip), TRL | {"logging_steps": 1}, "stale"))
    assert "first_step_ratio" not in rules(d) and "kl_clip_explode" not in rules(d)
    # ... but a clip fraction that jumps from 0.02 to 0.4 and stays there is an explosion
    clip = np.where(on_policy, 0.0, np.r_[np.full(60, 0.02), np.full(60, 0.4)])
    f = by_rule(diagnose(write(tmp_path, trl_rows(clip), TRL | {"logging_steps": 1}, "jump")), "kl_clip_explode")
    assert f.severity == "critical"


def test_a_kl_jump_that_comes_back_is_a_warning_and_one_that_stays_is_critical(tmp_path):
    n = 100
    rng = np.random.default_rng(3)
    base = trl_rows(np.zeros(n))
    kl = np.r_[0.0, 0.05 + rng.normal(0, 0.005, n - 1)]
    back = kl.copy()
    back[50:58] = 3.0  # 8 logged points far above the level, then back at 0.05
    f = by_rule(diagnose(write(tmp_path, base | {"policy/kl_ref": back}, {"beta": 0.04}, "back")), "kl_clip_explode")
    assert f.severity == "warning" and f.title == "KL jumps far above its own level"
    assert "it comes back: its median over the next 20 logged points falls back" in f.evidence[0].text
    stays = kl.copy()
    stays[50:] = 3.0
    f = by_rule(diagnose(write(tmp_path, base | {"policy/kl_ref": stays}, {"beta": 0.04}, "stays")), "kl_clip_explode")
    assert f.severity == "critical" and f.title == "KL / clip fraction explode"


def test_eps_reference_and_yardstick_constants_stay_what_the_docstring_derives():
    # the clip bound scales as CLIP_AT_FULL_LR x f x EPS_REF / eps: at the reference clip range and the full lr
    # it is the kl rule's CLIP_HIGH, the clip fraction PPO practice keeps under
    from dashboard.diagnosis.rules.kl import CLIP_HIGH

    assert CLIP_AT_FULL_LR == CLIP_HIGH and EPS_REF == 0.2

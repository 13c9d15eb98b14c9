"""The OpenRLHF console reader (collectors/readers/openrlhf/console.py) on the two real OpenRLHF logs in
../shared/fixtures/real-runs and on files written the way OpenRLHF's logger writes them (tests/fixtures/
openrlhf_console.py: its format string, date format and NewLineFormatter from openrlhf/utils/logging_utils.py,
the `✨ Global step N: {log_status}` call of openrlhf/trainer/ppo_trainer.py, Ray's `(PPOTrainer pid=N)` prefix),
with thousands of lines of other output between two steps."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from fixtures.openrlhf_console import ARGS, TrainerLog, noise, printed_args, status, write_log
from helpers.paths import REPO

from collectors.meta import RunError
from collectors.readers.keymap import canonical_name
from collectors.readers.openrlhf.console import Launches, parse_status
from collectors.readers.openrlhf.console import printed_args as read_args
from collectors.sources import detect_source, launches_of, open_run, open_runs

REAL = REPO.parent / "shared" / "fixtures" / "real-runs"
EARLY, ELEVEN = REAL / "openrlhf_tools_gptoss_tdc_4770064_early", REAL / "openrlhf_tools_gptoss_tdc_4783410"

# what each logged key becomes (collectors/readers/keymap.py OPENRLHF, TRL's plain names, the reader's own)
MAPPED = {"policy_loss": "loss/policy", "actor_lr": "optim/lr", "actor_grad_norm": "optim/grad_norm",
          "ppo_clip_ratio": "policy/clipfrac", "ppo_kl": "policy/approx_kl_old", "kl": "policy/kl_ref",
          "reward": "reward/mean", "response_length": "completions/len_mean", "truncated": "completions/truncated_frac",
          "group_reward_std": "groups/reward_std_mean", "timing/step_total": "perf/step_s"}
EXTRA = ("score", "return", "total_length", "logprobs_diff", "dynamic_filtering_pass_rate", "response_clip_ratio",
         "rollout/num_samples", "timing/generation")


def real(path: Path) -> Path:
    if not path.is_dir():
        pytest.skip(f"{path} is not here (../shared/fixtures/real-runs)")
    return path


def test_the_two_real_openrlhf_logs_open_with_their_steps_and_columns():
    two, eleven = open_run(real(EARLY)), open_run(real(ELEVEN))
    assert two.meta.source == eleven.meta.source == "openrlhf"
    assert list(two.metrics["step"]) == [1, 2] and list(eleven.metrics["step"]) == list(range(1, 12))
    row = two.metrics.set_index("step").loc[1]
    # the line as printed: 'ppo_clip_ratio': 0.14304099092260003, 'actor_lr': 2.5000000236641284e-08, ...
    assert row["policy/clipfrac"] == 0.14304099092260003 and row["optim/lr"] == 2.5000000236641284e-08
    assert row["policy/approx_kl_old"] == 0.005103465817228425 and row["reward/mean"] == 0.6067708395421505
    assert row["groups/reward_std_mean"] == 0.41157857701182365 and row["loss/policy"] == 0.130784020293504
    # truncated (vLLM's finish_reason "length") is the truncated share, not response_clip_ratio (0.0052)
    assert row["completions/truncated_frac"] == 0.0 and row["response_clip_ratio"] == 0.0052083334885537624
    # dynamic filtering kept 52.46% of the prompts it consumed: 47.5% dropped
    assert row["groups/dropped_frac"] == pytest.approx(1 - 0.52459016393442624)
    for extra in ("score", "return", "total_length", "too_easy_pct", "tool_call_count"):
        assert extra in two.metrics.columns, extra
    # kl is 0 on all 11 rows (init_kl_coef 0): not measured
    assert "policy/kl_ref" in eleven.not_measured
    assert eleven.metrics.set_index("step").loc[11, "vllm_train_wall_sec"] == 764.8


def test_a_log_written_by_openrlhfs_logger_with_thousands_of_lines_between_steps(tmp_path):
    path = tmp_path / "grpo-tdc_4770064.out"
    written = write_log(path, steps=12, noise_lines=3000)[0]
    assert path.stat().st_size > 12 * 3000 * 80
    assert detect_source(path) == "openrlhf" and detect_source(tmp_path) == "openrlhf"
    run = open_run(path)
    m = run.metrics.set_index("step")
    assert list(m.index) == list(range(1, 13))
    for s, st in enumerate(written, 1):
        for key, ours in MAPPED.items():
            assert m.loc[s, ours] == st[key], (s, key)
        assert m.loc[s, "groups/dropped_frac"] == pytest.approx(1 - st["dynamic_filtering_pass_rate"] / 100)
    for extra in EXTRA:
        assert extra in m.columns, extra
    # the printed Namespace is the config, typed (`inf` is a float, kept as the text "inf" as every config keeps it)
    assert run.meta.config["n_samples_per_prompt"] == 8 and run.meta.config["eps_clip_low_high"] == [0.3, 0.362]
    assert run.meta.config["max_norm"] == "inf" and run.meta.config["advantage_estimator"] == "group_norm"
    assert run.meta.info["config_source"] == "grpo-tdc_4770064.out line 1 (printed args)"
    # the folder holding the log opens as that log
    assert list(open_run(tmp_path).metrics["step"]) == list(range(1, 13))


def test_a_step_of_thousands_of_digits_is_a_line_that_does_not_parse(tmp_path):
    # the fuzzer's huge integer in place of a step number: int() refuses past 4,300 digits (an internal ValueError
    # before); such a line is no step, and the others are read
    path = tmp_path / "train.log"
    write_log(path, steps=4, noise_lines=5)
    text = path.read_text()
    path.write_text(text.replace("Global step 3:", "Global step " + "9" * 5000 + ":", 1))
    assert open_run(path).metrics["step"].tolist() == [1, 2, 4]


@pytest.mark.parametrize(("ray", "colour"), [(True, True), (False, False)])
def test_with_or_without_rays_prefix(tmp_path, ray, colour):
    path = tmp_path / "train.log"
    written = write_log(path, steps=5, noise_lines=20, ray=ray, colour=colour)[0]
    text = path.read_text()
    assert ("\x1b[36m(PPOTrainer pid=2331013)\x1b[0m INFO" in text) == colour
    assert ("(PPOTrainer pid=2331013" in text) == ray and ("\nINFO " in text) == (not ray)
    m = open_run(path).metrics.set_index("step")
    assert [m.loc[s, "policy/clipfrac"] for s in range(1, 6)] == [st["ppo_clip_ratio"] for st in written]


def test_several_launches_in_one_file_are_kept_apart(tmp_path):
    path = tmp_path / "slurm-4783410.out"
    first, second = write_log(path, steps=8, noise_lines=30, launches=2, seed=3)
    assert launches_of(path) == [f"{path}#1", f"{path}#2"] and launches_of(tmp_path) == [f"{path}#1", f"{path}#2"]
    with pytest.raises(RunError, match="holds 2 separate runs"):
        open_run(path)
    runs = open_runs(path)
    assert [r.name for r in runs] == ["slurm-4783410#1", "slurm-4783410#2"]
    for run, written in zip(runs, (first, second), strict=True):
        m = run.metrics.set_index("step")
        assert list(m.index) == list(range(1, 9))
        assert [m.loc[s, "reward/mean"] for s in m.index] == [st["reward"] for st in written]
        assert run.meta.info["launches"] == 2 and run.meta.config["n_samples_per_prompt"] == 8
    assert runs[1].meta.info["config_source"].endswith("(printed args)")
    with pytest.raises(RunError, match="no such launch"):
        open_run(f"{path}#3")


def test_a_restart_from_a_checkpoint_is_the_same_launch_and_its_later_values_win(tmp_path):
    path = tmp_path / "job.out"
    rng = random.Random(4)
    with path.open("w") as f:
        log = TrainerLog(f, pid=11)
        for s in range(1, 31):
            f.write(noise(rng, 5))
            log.step(s, status(s, rng))
        f.write("(raylet) node died; the job is requeued\n")
        log = TrainerLog(f, pid=12)  # resumed from the checkpoint of step 20
        again = {}
        for s in range(21, 41):
            again[s] = status(s, rng)
            log.step(s, again[s])
    assert launches_of(path) == []
    run = open_run(path)
    m = run.metrics.set_index("step")
    assert list(m.index) == list(range(1, 41))
    assert all(m.loc[s, "reward/mean"] == again[s]["reward"] for s in range(21, 41))
    assert any("steps start again at 21" in p.message for p in run.problems)


def test_a_growing_log_is_read_as_it_grows_and_a_new_launch_stays_out(tmp_path):
    path = tmp_path / "live.out"
    write_log(path, steps=4, noise_lines=10)
    run = open_run(path)
    assert run.last_step == 4
    rng = random.Random(9)
    with path.open("a") as f:
        log = TrainerLog(f, pid=2331013)
        for s in range(5, 8):
            f.write(noise(rng, 10))
            log.step(s, status(s, rng))
    assert run.refresh() == 3 and run.last_step == 7
    write_log(path, steps=3, noise_lines=10, mode="a", seed=5)  # a second training in the same file
    run.refresh()
    assert run.last_step == 7 and list(run.metrics["step"]) == list(range(1, 8))
    assert len(launches_of(path)) == 2


def test_eval_lines_nan_inf_and_a_line_cut_short(tmp_path):
    path = tmp_path / "eval.log"
    write_log(path, steps=10, noise_lines=5, eval_every=5)
    rng = random.Random(2)
    with path.open("a") as f:
        log = TrainerLog(f)
        st = status(11, rng) | {"policy_loss": float("nan"), "actor_grad_norm": float("inf")}
        log.step(11, st)
        f.write("(PPOTrainer pid=2331013) INFO 03-04 13:04:55 ppo_trainer.py:547] ✨ Global step 12: {'policy_loss': 0.1, "
                "'act\n(raylet) the node died\n")  # the process died while writing the line
    cut = path.read_text().splitlines().index("(raylet) the node died")  # 0-based index of the line after it
    run = open_run(path)
    assert f"line {cut}: a step dict that does not parse (cut short?); skipped" in [p.message for p in run.problems]
    m = run.metrics.set_index("step")
    # eval_gsm8k_pass1 is the first `_pass1` key in sorted order: OpenRLHF's own best-checkpoint metric
    assert m.loc[5, "eval/reward_mean"] == pytest.approx(0.405) and m.loc[10, "eval/reward_mean"] == pytest.approx(0.41)
    assert m.loc[5, "eval_math_pass1"] == 0.2 and m.loc[5, "reward/mean"] > 0  # merged into the step's row
    assert math.isnan(m.loc[11, "loss/policy"]) and 11 in run.nan_at["loss/policy"]
    assert m.loc[11, "optim/grad_norm"] == math.inf
    assert 12 not in m.index


def test_status_dicts_parse_as_literal_eval_reads_them():
    import ast

    rng = random.Random(1)
    for _ in range(200):
        d = {f"k{i}/{rng.choice(['a', 'b_c', 'nan_count', 'inf'])}": rng.choice(
            [rng.random(), -rng.random() * 1e-9, rng.randrange(10**6), True, None, "text", "say 'hi'", 'a "q"',
             [1.0, 2.5], {"n": 1}]) for i in range(rng.randrange(1, 12))}
        text = str(d).encode()
        assert parse_status(text) == ast.literal_eval(text.decode())
    got = parse_status(b"{'a': nan, 'b': -inf, 'c': [inf, 1.0], 'd': np.float64(0.5), 'e': tensor(0.25, device='cuda:0'),"
                       b" 'f': 'x \"y\"'}")
    assert math.isnan(got["a"]) and got["b"] == -math.inf and got["c"] == [math.inf, 1.0]
    assert got["d"] == 0.5 and got["e"] == 0.25 and got["f"] == 'x "y"'
    assert parse_status(b"{'a': 1, 'b'") is None and parse_status(b"{1: 2}") is None


def test_printed_args_old_and_nested():
    flat = read_args(printed_args().strip())
    assert flat["actor_learning_rate"] == 1e-6 and flat["eps_clip_low_high"] == [0.3, 0.362] == ARGS["eps_clip_low_high"]
    # 0.10 on: hierarchize() turns dotted argparse names into nested SimpleNamespaces, printed as namespace(...)
    nested = read_args("namespace(actor=namespace(adam=namespace(lr=1e-06), eps_clip_low_high=[0.2, 0.28]), "
                       "rollout=namespace(n_samples_per_prompt=16), algo=namespace(advantage=namespace("
                       "estimator='group_norm'), kl=namespace(init_coef=0.0)), scheduler=<Sched.COSINE: 'cosine'>)")
    assert nested is None  # an object repr (<...>) is no Python expression
    nested = read_args("namespace(actor=namespace(adam=namespace(lr=1e-06), eps_clip_low_high=[0.2, 0.28]), "
                       "rollout=namespace(n_samples_per_prompt=16), algo=namespace(advantage=namespace("
                       "estimator='group_norm'), kl=namespace(init_coef=-0.0)), device=torch.device('cuda'))")
    assert nested["actor.adam.lr"] == 1e-6 and nested["rollout.n_samples_per_prompt"] == 16
    assert nested["algo.advantage.estimator"] == "group_norm" and nested["device"] == "torch.device('cuda')"


def test_a_users_map_names_a_key_as_on_every_reader(tmp_path):
    from collectors.readers.synonyms import set_user_map

    path = tmp_path / "binary.log"
    written = write_log(path, steps=4, noise_lines=5)[0]
    set_user_map({"score": "reward/pass_rate"})  # what `--map score=reward/pass_rate` sets (a 0/1 score)
    try:
        m = open_run(path).metrics
    finally:
        set_user_map({})
    assert list(m["reward/pass_rate"]) == [st["score"] for st in written] and "score" not in m


def test_pass_rate_in_kept_samples_per_prompt_uses_the_config(tmp_path):
    # from 0.11, filter_pass_rate = len(experiences) / prompts_consumed * 100 counts samples (n per prompt)
    path = tmp_path / "new.out"
    rng = random.Random(0)
    with path.open("w") as f:
        f.write(printed_args())
        log = TrainerLog(f)
        for s in range(1, 4):
            log.step(s, status(s, rng) | {"dynamic_filtering_pass_rate": 8 * 62.5})
    m = open_run(path).metrics
    assert list(m["groups/dropped_frac"]) == pytest.approx([0.375] * 3)
    with path.open("w") as f:  # no config: the unit is unknown, and it says so
        log = TrainerLog(f)
        for s in range(1, 4):
            log.step(s, status(s, rng) | {"dynamic_filtering_pass_rate": 500.0})
    run = open_run(path)
    assert "groups/dropped_frac" not in run.metrics and any("above 100%" in p.message for p in run.problems)


def test_the_key_map_covers_openrlhfs_names():
    for key, ours in {"actor_grad_norm": "optim/grad_norm", "train/actor_grad_norm": "optim/grad_norm",
                      "truncated": "completions/truncated_frac", "rollout/truncated_rate": "completions/truncated_frac",
                      "train/rollout/reward_mean": "reward/mean", "rollout/reward_std": "reward/std",
                      "rollout/response_length_mean": "completions/len_mean", "timing/step_total": "perf/step_s",
                      "eval_default_pass1": "eval/reward_mean", "eval/eval_default_pass1": "eval/reward_mean",
                      # the Train epoch bar's short names, before and from 0.8
                      "pg": "loss/policy", "act_loss": "loss/policy", "rm": "reward/mean", "glen": "completions/len_mean",
                      "gen_len": "completions/len_mean", "act_lr": "optim/lr", "ent_loss": "policy/entropy"}.items():
        assert canonical_name(key) == ours, key
    for key in ("score", "return", "ret", "total_length", "tot_len", "tlen", "vllm_kl", "logprobs_diff",
                "dynamic_filtering_pass_rate", "rollout/num_samples", "eval_gsm8k_pass8"):
        assert canonical_name(key) == key, key


def test_launches_follow_the_rule_of_group_launches():
    from collectors.readers.launches import FileStart, group_launches

    rng = random.Random(5)
    for _ in range(300):
        steps, s = [], rng.randrange(1, 4)
        for _ in range(rng.randrange(1, 40)):
            steps.append(s)
            s = s + rng.randrange(1, 3) if rng.random() > 0.15 else rng.randrange(1, s + 5)
        ours = Launches()
        numbers = [ours.add(x)[0] for x in steps]
        stretches, start = [], 0
        for i in range(1, len(steps)):
            if steps[i] <= steps[i - 1]:
                stretches.append((start, i))
                start = i
        stretches.append((start, len(steps)))
        theirs, _ = group_launches([FileStart(str(k), "", steps[a], steps[b - 1]) for k, (a, b) in enumerate(stretches)])
        expect = {int(name): n for n, launch in enumerate(theirs, 1) for name in launch.files}
        assert numbers == [expect[k] for k, (a, b) in enumerate(stretches) for _ in range(a, b)], steps


def test_an_openrlhf_log_of_a_version_without_step_lines_says_so(tmp_path):
    # OpenRLHF before 0.8.1 prints only progress bars; the key-value reader would take the Train epoch bar's
    # micro-batch values for steps, so the OpenRLHF reader claims the log and says where the step metrics are
    path = tmp_path / "openrlhf_0.7.log"
    path.write_text(noise(random.Random(0), 300))
    assert detect_source(path) == "openrlhf"
    run = open_run(path)
    assert len(run.metrics) == 0
    assert any("Before 0.8.1 it prints only progress bars" in p.message for p in run.problems)


def test_what_a_log_nobody_reads_looked_like(tmp_path):
    lines = tmp_path / "vllm_only.log"  # OpenRLHF's workers' output, but no step line and no PPO bar
    lines.write_text("".join(f"(LLMRayActor pid=7) INFO 03-04 12:58:0{i} [block_manager.py:242] update weights\n"
                             f"(PPOTrainer pid=6) INFO 03-04 12:58:0{i} ppo_trainer.py:224] Sample: ['x', 1.0]\n"
                             for i in range(5)))
    with pytest.raises(RunError, match="OpenRLHF-like lines but no '✨ Global step N: {...}' step dicts"):
        open_run(lines)
    empty = tmp_path / "empty.log"
    empty.write_text("")
    with pytest.raises(RunError, match=r"no reader recognises this \(an empty file\)"):
        open_run(empty)
    named = tmp_path / "job.stdout"  # step lines in a file no reader looks at by its name
    write_log(named, steps=3, noise_lines=3)
    with pytest.raises(RunError, match="--source openrlhf reads this one"):
        open_run(named)
    assert list(open_run(named, source="openrlhf").metrics["step"]) == [1, 2, 3]
    kv = tmp_path / "custom.log"
    kv.write_text("".join(f"epoch {i} loss: 0.{i} lr: 1e-5 tokens: {i}00 it{i}: 3\n" for i in range(5)))
    with pytest.raises(RunError, match="name: number pairs, but no two lines naming the same keys"):
        open_run(kv)
    folder = tmp_path / "nothing"
    folder.mkdir()
    (folder / "notes.md").write_text("# run notes\n")
    with pytest.raises(RunError, match=r"not a run folder \(no run.json\); 1 file\(s\), 0 folder\(s\): notes.md: 1 lines"):
        open_run(folder)

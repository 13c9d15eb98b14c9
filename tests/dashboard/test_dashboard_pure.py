"""The dashboard's pure modules: downsampling, URL/path resolution, config questions, sample filters,
chart builders, text helpers and the launcher's command line. No Streamlit runtime needed."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest
import tsdownsample  # noqa: F401 - the dev extra: a broken install fails here, never skips

from dashboard import charts, cli, downsample, paths, samples_view, text
from dashboard.diagnosis.rules import config_questions

# Both paths of spike_preserving_indices: tsdownsample is in the dev extra, so make test always runs the compiled one
# (a symlinked folder pointing out of a root is tested in test_reliability_paths.py, with every other path form)
BACKENDS = ["numpy", "tsdownsample"]


# -- downsampling ----------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_downsampling_keeps_single_step_spikes(backend):
    rng = np.random.default_rng(1)
    n = 100_000
    x = np.arange(n, dtype=float)
    y = rng.normal(size=n) * 0.01
    spikes = [3, 12_345, 50_001, 99_998]
    y[spikes] = [9.0, -7.0, 11.0, 8.0]
    idx = downsample.spike_preserving_indices(x, y, n_out=2000, backend=backend)
    assert len(idx) <= 2100
    assert set(spikes) <= set(idx.tolist())
    assert np.all(np.diff(idx) > 0)  # sorted, no repeats: plotted in step order
    every_nth = np.arange(0, n, n // 2000)
    assert not set(spikes[1:3]) <= set(every_nth.tolist())  # the naive thinning would have lost them


@pytest.mark.parametrize("backend", BACKENDS)
def test_downsampling_skips_non_finite_and_short_series(backend):
    y = np.array([1.0, np.nan, np.inf, 2.0, -np.inf, 3.0])
    assert downsample.spike_preserving_indices(np.arange(6.0), y, 100, backend).tolist() == [0, 3, 5]
    y = np.full(10_000, np.nan)
    y[::100] = np.arange(100.0)  # a sparse eval series
    idx = downsample.spike_preserving_indices(np.arange(10_000.0), y, 2000, backend)
    assert idx.tolist() == list(range(0, 10_000, 100))


def test_union_indices_is_shared_by_a_panels_series():
    x = np.arange(10_000.0)
    a, b = np.zeros(10_000), np.zeros(10_000)
    a[100], b[9000] = 5.0, -5.0
    idx = downsample.union_indices(x, [a, b], n_out=500)
    assert {100, 9000} <= set(idx.tolist())


# -- paths ----------------------------------------------------------------------------------------
@pytest.fixture
def two_roots(tmp_path):
    (tmp_path / "a" / "runs" / "r1").mkdir(parents=True)
    (tmp_path / "b" / "runs" / "deep" / "r2").mkdir(parents=True)
    (tmp_path / "secret").mkdir()
    return paths.make_roots([tmp_path / "a" / "runs", tmp_path / "b" / "runs"]), tmp_path


def test_run_keys_round_trip_and_labels_are_unique(two_roots):
    roots, tmp = two_roots
    assert [r.label for r in roots] == ["runs", "runs-2"]
    key = paths.run_key(roots, tmp / "b" / "runs" / "deep" / "r2")
    assert key == "runs-2/deep/r2"
    assert paths.resolve_run(roots, key) == (tmp / "b" / "runs" / "deep" / "r2").resolve()


@pytest.mark.parametrize("key, reason", [
    ("runs/../../secret", "'..'"), ("runs/./r1", "'..'"), ("/etc", "absolute"), ("runs\\..\\x", "absolute"),
    ("C:/Windows", "absolute"), ("elsewhere/r1", "not a configured root"), ("", "empty"), ("runs/missing", "not found"),
])
def test_run_keys_outside_the_roots_are_refused(two_roots, key, reason):
    roots, _ = two_roots
    with pytest.raises(paths.PathRefused, match=reason) as e:
        paths.resolve_run(roots, key)
    assert "inside the roots" in str(e.value) or "not found" in str(e.value)


def test_roots_from_env_and_defaults(tmp_path):
    env = {paths.ROOTS_ENV: f"{tmp_path / 'x'}:{tmp_path / 'y'}"}
    assert [r.path for r in paths.roots_from_env(env)] == [tmp_path / "x", tmp_path / "y"]
    defaults = paths.default_roots(tmp_path)
    assert defaults[0] == tmp_path / "runs" and defaults[1].name == "sample_runs"


# -- config questions --------------------------------------------------------------------------------
def _core_config(**over):
    from collectors.meta import flatten_config
    from grpo_core.config import Config

    flat = flatten_config(dataclasses.asdict(Config()))
    flat.update(over)
    return flat


def test_config_questions_for_our_trainer():
    answers = config_questions.answer_questions(_core_config(), "grpo_core")
    assert [a.number for a in answers] == [1, 2, 3, 4, 5] and all(a.known for a in answers)
    assert "per prompt group" in answers[0].answer and answers[0].keys[0] == "algo.adv_mode"
    assert "per token" in answers[1].answer
    assert "recomputed" in answers[2].answer
    assert "added to the loss" in answers[3].answer
    assert "on-policy" in answers[4].answer
    risky = config_questions.answer_questions(
        _core_config(**{"algo.old_logprob_source": "rollout", "rollout.dtype": "bf16", "algo.kl_mode": "reward",
                        "algo.epochs": 2, "algo.minibatches": 4, "algo.adv_mode": "mean_only"}), "grpo_core")
    assert "not divided" in risky[0].answer
    assert "bf16" in risky[2].answer and "away from 1" in risky[2].answer
    assert "folded into the reward" in risky[3].answer
    assert "8 optimizer steps" in risky[4].answer


def test_config_questions_for_imports_and_unknowns():
    trl = config_questions.answer_questions({"args.beta": 0.0, "args.scale_rewards": "batch",
                                             "args.loss_type": "dr_grpo", "args.num_iterations": 1}, "trl")
    assert "whole batch" in trl[0].answer and "Dr. GRPO" in trl[1].answer
    assert trl[2].answer == config_questions.UNKNOWN  # TRL's config here does not say where they come from
    assert "not used" in trl[3].answer and trl[3].keys == ("args.beta",)
    verl = config_questions.answer_questions(
        {"algorithm.adv_estimator": "grpo", "algorithm.norm_adv_by_std_in_grpo": True,
         "actor_rollout_ref.actor.use_kl_loss": True, "algorithm.use_kl_in_reward": True}, "verl")
    assert "per prompt group" in verl[0].answer and "counted twice" in verl[3].answer
    nothing = config_questions.answer_questions({"lr": 1e-3}, "wandb")
    assert all(a.answer == config_questions.UNKNOWN for a in nothing)


def test_config_diff_lists_only_differences():
    rows = config_questions.config_diff({"a": {"x": 1, "y": 2}, "b": {"x": 1, "y": 3, "z": "on"}})
    assert rows == [{"key": "y", "a": "2", "b": "3"}, {"key": "z", "a": "(absent)", "b": "on"}]


# -- sample filters --------------------------------------------------------------------------------------
@pytest.fixture
def samples():
    rows = []
    for g, rewards in enumerate([[0, 0, 0, 0], [1, 1, 1, 1], [0, 1, 0, 1]]):
        for i, r in enumerate(rewards):
            rows.append({"step": 5, "prompt_id": f"p{g}", "group": g, "sample": i, "reward": float(r), "passed": bool(r),
                             "advantage": 0.0, "num_tokens": 10 * g + i, "truncated": (g == 2 and i == 3),
                             "prompt": "q", "completion": f"answer {g}.{i}"})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("key, groups", [("all", {0, 1, 2}), ("zero_variance", {0, 1}), ("all_fail", {0}),
                                         ("all_pass", {1}), ("truncated", {2}), ("zero_reward", {0, 2})])
def test_group_filters(samples, key, groups):
    assert set(samples_view.apply_filter(samples, key)["group"]) == groups


def test_ranking_filters_and_aliases(samples):
    longest = samples_view.apply_filter(samples, "longest", limit=2)
    assert longest["num_tokens"].tolist() == [23, 22]
    assert samples_view.apply_filter(samples, "lowest_reward", limit=3)["reward"].tolist() == [0.0, 0.0, 0.0]
    assert samples_view.filter_key("zero_var") == "zero_variance"
    assert samples_view.filter_key("nonsense") == "all" and samples_view.filter_key(None) == "all"
    summary = samples_view.group_summary(samples_view.apply_filter(samples, "all"))
    # the sample std (n - 1), as the advantage divides by: 0, 1, 0, 1 -> sqrt((4 x 0.25) / 3) = 0.577
    assert summary["reward_std"].tolist()[:2] == [0.0, 0.0] and summary["pass_frac"].tolist() == [0.0, 1.0, 0.5]
    assert summary["reward_std"].iloc[2] == pytest.approx((1 / 3) ** 0.5)


# -- charts -------------------------------------------------------------------------------------------
def _frame(n=300):
    steps = np.arange(n)
    return pd.DataFrame({"step": steps, "wall_time": 1.7e9 + steps * 2.0, "reward/mean": np.linspace(0, 1, n),
                         "reward/std": np.full(n, 0.1), "groups/zero_std_frac": np.full(n, 0.3),
                         "policy/ratio_first_step": np.ones(n), "policy/kl_ref": np.r_[np.zeros(n - 1), np.inf],
                         "eval/pass_rate": np.where(steps % 50 == 0, 0.5, np.nan)})


def test_checklist_figure_rows_reference_line_and_missing_charts():
    fig = charts.checklist_figure(_frame())
    titles = [a.text for a in fig.layout.annotations]
    # a title promises only the series this frame logs: no all-pass / all-fail split (issue 39)
    assert titles[:2] == ["Raw reward: mean with std band", "Zero-variance groups"]  # eval/pass_rate, no eval reward
    assert titles.count("not logged by this run") == 3  # length, entropy, clip fraction
    assert any(s.type == "line" and s.y0 == 1.0 for s in fig.layout.shapes)  # ratio reference at 1
    names = [t.name for t in fig.data]
    assert "KL ref: inf" in names  # an infinity is marked, not silently dropped
    evals = next(t for t in fig.data if t.name == "eval")
    assert len(evals.x) == 6 and "markers" in evals.mode


def test_smoothing_draws_over_the_raw_series():
    fig = charts.checklist_figure(_frame(), smoothing=0.9)
    raw = next(t for t in fig.data if t.name == "reward mean")
    smooth = next(t for t in fig.data if t.name == "reward mean (EMA 0.9)")
    assert raw.opacity < 1 and len(raw.y) == len(smooth.y)
    assert raw.y[-1] == 1.0 and smooth.y[-1] < 1.0


def test_findings_are_shaded_on_their_charts_only():
    shade = charts.Shade(("groups/zero_std_frac",), (10, 40), "critical", "zero_var")
    fig = charts.checklist_figure(_frame(), shades=(shade,))
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(rects) == 1 and (rects[0].x0, rects[0].x1) == (10, 40)
    assert rects[0].yref.startswith("y2")  # the second row: zero-variance groups
    wall = charts.checklist_figure(_frame(), x="wall_time", shades=(shade,))
    rect = next(s for s in wall.layout.shapes if s.type == "rect")
    assert pd.Timestamp(rect.x0) == pd.to_datetime(1.7e9 + 20.0, unit="s")


def test_long_runs_are_downsampled_for_drawing():
    fig = charts.checklist_figure(_frame(100_000))
    raw = next(t for t in fig.data if t.name == "reward mean")
    assert len(raw.x) <= 2 * downsample.DEFAULT_POINTS


def test_compare_and_evidence_figures():
    fig = charts.compare_figure({"a": _frame(), "b": _frame(50)})
    # the runs' colours in the legend above the charts; each row's legend names its series once, and clicking
    # one toggles that series in both runs (one legend group per row and series)
    assert [t.name for t in fig.data if t.legend == "legend"] == ["a", "b"]
    reward = [t for t in fig.data if t.legendgroup == "1:reward/mean"]
    assert [t.showlegend is not False for t in reward] == [True, False, False] and {t.legend for t in reward} == {"legend2"}
    ev = charts.evidence_figure(_frame(), "groups/zero_std_frac", 0.6, (10, 40), "critical")
    assert any(s.type == "line" and s.y0 == 0.6 for s in ev.layout.shapes)
    assert charts.evidence_figure(_frame(), "policy/entropy") is None  # not logged: no chart at all


# -- text and launcher -----------------------------------------------------------------------------------
def test_escape_md_neutralises_images_and_html():
    out = text.escape_md("![x](http://evil.example/a.png) <img src=x> **b**\nnext")
    assert re.search(r"(?<!\\)[!\[\]()<>*]", out) is None  # every Markdown/HTML character escaped
    assert "\n" not in out and out.replace("\\", "").replace("\u200b", "").startswith("![x](http://evil")
    assert text.ago(100.0, now=112.0) == "12 s ago" and text.ago(None) == "never"
    assert text.ago(float("nan")) == "never" and text.fmt_time(float("nan")) == ""  # a table column's gap
    from dashboard.data import Health

    assert text.health_label(Health("healthy")) == "✅ ok"
    assert text.health_label(Health("not_learning", 2, 3)) == "🔴 not learning: 2 critical, 3 warning(s)"
    assert text.health_label(Health("healthy"), "failed") == "❌ failed, no finding in the metrics"
    assert "1 warning(s)" in text.health_label(Health("healthy", 0, 1), "failed")


def test_cli_runs_streamlit_headless_on_localhost(tmp_path):
    args = cli.parse_args([str(tmp_path / "r1"), str(tmp_path / "r2"), "--port", "9999"])
    cmd = cli.streamlit_command(args)
    assert cmd[1:4] == ["-m", "streamlit", "run"] and cmd[4].endswith("dashboard/server.py")  # app.py behind the origin guard
    flags = dict(zip(cmd[5::2], cmd[6::2]))
    assert flags["--server.headless"] == "true" and flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.address"] == "127.0.0.1" and flags["--server.port"] == "9999"
    env = cli.environment(args)
    assert env[paths.ROOTS_ENV].split(":") == [str(tmp_path / "r1"), str(tmp_path / "r2")]
    defaults = cli.environment(cli.parse_args([]))[paths.ROOTS_ENV].split(":")
    assert defaults[0].endswith("/runs") and defaults[1].endswith("/sample_runs")


def test_cli_a_log_file_as_root_watches_its_folder(tmp_path):
    (tmp_path / "verl").mkdir()
    log = tmp_path / "verl" / "main_ppo.log"
    log.write_text("step:1 - critic/score/mean:0.5\n")
    env = cli.environment(cli.parse_args([str(log), str(tmp_path / "verl")]))
    assert env[paths.ROOTS_ENV].split(":") == [str(tmp_path / "verl")]  # once, though named twice


# -- coverage: what a run lacks ----------------------------------------------------------------------
def test_split_panels_treats_an_all_null_column_as_not_logged():
    from dashboard import coverage

    frame = pd.DataFrame({"step": [1, 2], "reward/mean": [0.1, 0.2], "policy/entropy": [np.nan, np.nan],
                          "eval/pass_rate": [np.nan, 0.5]})
    drawn, missing = coverage.split_panels(frame, charts.CHECKLIST)
    assert [p.key for p in drawn] == ["reward", "pass_rate"]  # one eval point is enough to draw a chart
    assert "entropy" in [p.key for p in missing]
    msg = coverage.missing_panels_message("verl", missing, any_steps=True)
    assert msg.startswith("Not logged by this verl run, so not drawn: zero-variance groups, completion length, "
                          "entropy, KL to the reference, clip fraction, first-step ratio.")
    assert coverage.missing_panels_message("verl", missing, any_steps=False) is None


def test_missing_message_uses_the_readers_hint():
    from dashboard import coverage

    assert "trainer.rollout_data_dir" in coverage.missing_message("verl", "samples")
    assert coverage.missing_message("mystery", "config") == (
        "This mystery run has no config: the source did not record any.")


# OpenRLHF's argparse args (openrlhf/cli/train_ppo_ray.py, commit 021d1b09; names and defaults verified there),
# as `wandb.init(config=args.__dict__)` logs them: the defaults below, with a GRPO-style run's overrides.
OPENRLHF_DEFAULTS = {
    "advantage_estimator": "gae", "no_advantage_std_norm": False, "n_samples_per_prompt": 1,
    "policy_loss_type": "ppo", "use_kl_loss": False, "init_kl_coef": 0.01, "kl_estimator": "k1", "kl_target": None,
    "vllm_num_engines": None, "enable_vllm_is_correction": False, "vllm_is_truncated_threshold": 2,
    "max_epochs": 1, "rollout_batch_size": 1024, "train_batch_size": 128, "micro_train_batch_size": 4,
    "micro_rollout_batch_size": 8, "use_dynamic_batch": False, "eps_clip": 0.2, "temperature": 1.0, "ema_beta": 0.992,
}


def _openrlhf_config(**over):
    return {**OPENRLHF_DEFAULTS, **over}


def test_config_questions_for_openrlhf():
    grpo = _openrlhf_config(advantage_estimator="group_norm", n_samples_per_prompt=8, use_kl_loss=True,
                            init_kl_coef=0.001, kl_estimator="k3", vllm_num_engines=4, rollout_batch_size=128,
                            train_batch_size=256, max_epochs=2)
    a = [x.answer for x in config_questions.answer_questions(grpo, "openrlhf")]
    assert a == [
        "per prompt group: A = (r - group mean) / (group std + 1e-9) (advantage_estimator group_norm)",
        ("ratio per token; loss averaged over all tokens of each micro-batch first (token-level), micro-batches "
        "then averaged by gradient accumulation"),
        ("rollouts by vLLM (4 engine(s)); the actor (training model) recomputes the old log-probs before the "
        "update; vLLM/training log-prob differences are not corrected (enable_vllm_is_correction off)"),
        "added to the loss, outside the reward (estimator k3, coef 0.001)",
        # 128 prompts x 8 samples / 256 per optimizer step = 4 steps per epoch, x 2 epochs
        ("8 optimizer steps per rollout (2 epoch(s) x 4 minibatch(es)); only the first is on-policy, the last uses "
        "rollouts 7 update(s) old"),
    ]
    # a wandb (or TensorBoard) run: the logger, not the framework; the OpenRLHF reader is the one that knows
    assert [x.answer for x in config_questions.answer_questions(grpo, "wandb")] == a
    assert config_questions.answer_questions(grpo, "wandb")[3].keys == ("use_kl_loss", "init_kl_coef",
                                                                       "kl_estimator", "kl_target")
    # the argparse defaults: PPO with a critic, KL folded into the reward, one step per... 1024 / 128 = 8 steps
    ppo = [x.answer for x in config_questions.answer_questions(_openrlhf_config(), "wandb")]
    assert ppo[0] == ("GAE with a critic (PPO), no groups: advantages whitened over the whole batch (minus the "
                      "batch mean, divided by the batch std)")
    assert ppo[2] == ("generated without vLLM engines (vllm_num_engines None); the actor (training model) "
                      "recomputes the old log-probs before the update")
    assert ppo[3] == "folded into the reward (per token) (estimator k1, coef 0.01)"
    assert ppo[4].startswith("8 optimizer steps per rollout (1 epoch(s) x 8 minibatch(es))")
    other = config_questions.answer_questions(_openrlhf_config(
        advantage_estimator="reinforce_baseline", no_advantage_std_norm=True, n_samples_per_prompt=4,
        policy_loss_type="gspo", init_kl_coef=0, enable_vllm_is_correction=True, vllm_num_engines=2,
        kl_target=0.1, use_dynamic_batch=True), "openrlhf")
    assert [x.answer for x in other] == [
        ("group mean subtracted (REINFORCE++-baseline), then the batch mean is subtracted, not divided by any std "
        "(no_advantage_std_norm)"),
        ("sequence-level ratio (geometric mean of token ratios, GSPO); loss averaged over each response's tokens, "
        "then over responses"),
        ("rollouts by vLLM (2 engine(s)); the actor (training model) recomputes the old log-probs before the "
        "update; vLLM's own log-probs feed a truncated importance-sampling correction (threshold 2)"),
        "not used (init_kl_coef = 0: no reference model)",
        ("1 epoch(s) over each rollout; the optimizer steps per epoch are not known from the config "
        "(rollout_batch_size x n_samples_per_prompt / train_batch_size)"),
    ]
    dr = config_questions.answer_questions({"advantage_estimator": "dr_grpo", "kl_target": 0.05,
                                            "init_kl_coef": 0.02, "use_kl_loss": False}, "wandb")
    assert dr[0].answer == "group mean subtracted, not divided by any std (Dr. GRPO)"
    assert dr[3].answer == "folded into the reward (per token) (adaptive coef from 0.02, target 0.05)"
    assert [x.answer for x in dr[1:3]] + [dr[4].answer] == [config_questions.UNKNOWN] * 3  # not in this config
    rloo = config_questions.answer_questions({"advantage_estimator": "rloo"}, "openrlhf")[0].answer
    assert rloo.startswith("leave-one-out baseline") and "depends on the OpenRLHF version" in rloo


def test_config_questions_openrlhf_reader_stays_off_other_frameworks():
    # verl's flat config shares suffixes with OpenRLHF's names (use_kl_loss, train_batch_size): without
    # OpenRLHF's advantage_estimator / n_samples_per_prompt its reader answers nothing, and verl's wins
    verl = {"algorithm.adv_estimator": "grpo", "algorithm.norm_adv_by_std_in_grpo": True,
            "actor_rollout_ref.actor.use_kl_loss": True, "algorithm.use_kl_in_reward": False,
            "actor_rollout_ref.actor.kl_loss_type": "low_var_kl", "actor_rollout_ref.actor.kl_loss_coef": 0.001,
            "data.train_batch_size": 256, "actor_rollout_ref.actor.ppo_epochs": 1}
    assert all(a.answer == config_questions.UNKNOWN for a in config_questions.answer_questions(verl, "openrlhf"))
    assert config_questions.answer_questions(verl, "wandb")[3].answer == "added to the loss (low_var_kl, coef 0.001)"
    trl = {"beta": 0.04, "num_generations": 8, "scale_rewards": "group", "loss_type": "dapo", "use_vllm": True,
           "num_iterations": 1, "steps_per_generation": 4, "temperature": 1.0}
    assert config_questions.answer_questions(trl, "tensorboard")[3].answer == "added to the loss (beta 0.04)"


def test_eval_reward_is_drawn_on_the_reward_chart_at_its_steps_only():
    frame = pd.DataFrame({"step": [0, 1, 2, 3], "reward/mean": [0.1, 0.2, 0.3, 0.4],
                          "eval/reward_mean": [0.5, np.nan, np.nan, 0.7]})
    fig = charts.checklist_figure(frame, (charts.PANELS["reward"],))
    (ev,) = [t for t in fig.data if t.name == "eval reward"]
    assert list(ev.x) == [0, 3] and list(ev.y) == [0.5, 0.7] and ev.mode == "lines+markers"


def test_a_logged_nan_is_marked_a_gap_is_not():
    frame = pd.DataFrame({"step": [0, 1, 2, 3], "policy/entropy": [1.0, np.nan, np.nan, 0.5]})
    fig = charts.checklist_figure(frame, (charts.PANELS["entropy"],), nan_at={"policy/entropy": {2}})
    (mark,) = [t for t in fig.data if t.name == "entropy: NaN"]
    assert list(mark.x) == [2] and list(mark.y) == [1.0]  # step 1 is only a null: no mark
    assert not [t for t in charts.checklist_figure(frame, (charts.PANELS["entropy"],)).data if "NaN" in str(t.name)]


def test_tick_format_has_the_digits_the_spread_needs():
    from dashboard.charts import tick_format

    # magnitude 1, spread 8e-6: log10(1.25e5) = 5.1 -> 6 digits + 3 = 9
    assert tick_format(np.array([1 - 2e-6, 1 + 6e-6])) == "~.9g"
    assert tick_format(np.array([0.1, 0.5])) == "~g"  # 6 digits are plenty
    assert tick_format(np.array([5.0, 5.0, np.nan])) == "~g"  # a constant: axis_range spreads it from 0
    assert tick_format(np.array([np.nan])) == "~g"


def test_axis_range_of_constants_and_fractions():
    from dashboard.charts import axis_range

    assert axis_range(np.zeros(5)) == (0.0, 1.0)  # a truncated fraction stuck at 0: no negative ticks
    assert axis_range(np.full(3, 0.05)) == (0.0, 0.1)  # the constant in the middle of an axis from 0
    assert axis_range(np.full(3, -2.0)) == (-4.0, 0.0)
    lo, hi = axis_range(np.array([0.1, 0.5]))  # span 0.4, pad 8% = 0.032 each side; 0.068 stays above 0
    assert abs(lo - 0.068) < 1e-12 and abs(hi - 0.532) < 1e-12
    assert axis_range(np.array([0.01, 0.5]))[0] == 0.0  # the padding would go below 0: from 0
    assert axis_range(np.array([np.nan])) is None

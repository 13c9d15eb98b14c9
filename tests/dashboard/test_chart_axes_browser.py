"""Every axis at the scale of its metric, read from the rendered SVG in Chromium (issue 39, items 1 and 2): a
first-step ratio of 1 +- 1e-7 is drawn on 1 +- 0.01 with ticks a person writes (it was 0.9999998999999999 ..
1.0000001); a truncated fraction under 1% on 0 .. 1 (it was 0 .. 0.008, full-height spikes); titles name only the
series the run logs; findings shaded on one panel in colours of their own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers.browser_fixtures import browser, dash_server, page, screenshot, wait_rendered  # noqa: F401
from helpers.paths import REPO
from test_dashboard_charts_browser import charts_of, number

from collectors import RunWriter
from dashboard import charts

N = 60


@pytest.fixture(scope="module")
def noisy_root(tmp_path_factory) -> Path:
    """A healthy-looking run whose ratio is 1 to 1e-7 and whose truncation stays under 1%."""
    root = tmp_path_factory.mktemp("issue39")
    rng = np.random.default_rng(0)
    with RunWriter(root / "noisy", name="noisy", config={"rollout.group_size": 8}) as w:
        for i in range(N):
            w.log_step(i, {"reward/mean": 0.3 + 0.005 * i, "reward/std": 0.2,
                           "policy/ratio_first_step": 1.0 + float(rng.uniform(-1e-7, 1e-7)),
                           "policy/ratio_first_step_max_dev": float(rng.uniform(0, 3e-5)),
                           "completions/len_mean": 1700.0 + 30 * float(rng.random()),
                           "completions/truncated_frac": 0.008 * float(rng.random() < 0.2),
                           "policy/clipfrac": 0.001 * float(rng.random())})
    return root


@pytest.fixture(scope="module")
def noisy_server(noisy_root):
    with dash_server([str(noisy_root), "--host", "127.0.0.1"], REPO) as url:
        yield url


def axis_ticks(c: dict, axis: str) -> tuple[list[float], list[str]]:
    texts = [t["text"] for t in c["ticks"][axis] if t["text"].strip()]
    return sorted(number(t) for t in texts), texts


def test_float_noise_is_no_spike_and_ticks_are_numbers_a_person_writes(noisy_server, noisy_root, page):
    page.goto(f"{noisy_server}/checklist?run={noisy_root.name}/noisy")
    wait_rendered(page, "Checklist")
    (c,) = charts_of(page)
    screenshot(page, "issue39_checklist_noisy")
    # the page draws the panels the run logs, in the figure's order: reward y, length y2 + its right y3, clip y4,
    # ratio y5 + its right y6
    ratio, ratio_texts = axis_ticks(c, "y5")
    assert ratio[0] >= 0.985 and ratio[-1] <= 1.015 and ratio[-1] - ratio[0] >= 0.015, ratio_texts
    assert all(len(t) <= 6 for t in ratio_texts), ratio_texts  # 0.995, 1, 1.005: never 0.9999998999999999
    dev, dev_texts = axis_ticks(c, "y6")
    assert dev[0] == 0 and dev[-1] >= 0.008, dev_texts  # max |ratio - 1| on 0 .. 0.01, not 0 .. 0.00003
    trunc, trunc_texts = axis_ticks(c, "y3")
    assert trunc[0] == 0 and trunc[-1] >= 0.8, trunc_texts  # under 1% truncation is a sliver of 0 .. 1
    _, length_texts = axis_ticks(c, "y2")
    assert not [t for t in length_texts if "e" in t.lower() or t.endswith("k")], length_texts  # 1500, not 1.5e+03
    clip, clip_texts = axis_ticks(c, "y4")
    assert clip[-1] >= 0.15, clip_texts  # a clip fraction of 0.001 on 0 .. 0.2


def test_titles_name_only_the_series_the_run_logs(noisy_server, noisy_root, page):
    page.goto(f"{noisy_server}/checklist?run={noisy_root.name}/noisy")
    wait_rendered(page, "Checklist")
    (c,) = charts_of(page)
    titles = {t["t"] for t in c["texts"]}
    assert "Raw reward: mean with std band" in titles  # no eval reward logged: not promised
    assert "Clip fraction" in titles and "Clip fraction (low / high)" not in titles


def test_titles_of_a_source_without_the_std_and_the_truncation():
    frame = pd.DataFrame({"step": np.arange(30), "reward/mean": np.linspace(0, 1, 30),
                          "completions/len_mean": np.full(30, 200.0), "completions/truncated_frac": np.nan})
    titles = [a.text for a in charts.checklist_figure(frame).layout.annotations]
    assert "Raw reward: mean" in titles and "Completion length (tokens)" in titles
    zh = [a.text for a in charts.checklist_figure(frame, lang="zh").layout.annotations]
    assert "raw reward：均值" in zh and "completion 长度（token）" in zh


def test_findings_shaded_on_one_panel_have_colours_of_their_own():
    frame = pd.DataFrame({"step": np.arange(50), "reward/mean": np.linspace(0, 1, 50)})
    shades = (charts.Shade(("reward/mean",), (0, 49), "warning", "reward_flat"),
              charts.Shade(("reward/mean",), (10, 10), "warning", "truncation"))
    fig = charts.checklist_figure(frame, panels=(charts.PANELS["reward"],), shades=shades)
    fills = [s.fillcolor for s in fig.layout.shapes if s.type == "rect"]
    assert len(fills) == 2 and fills[0] != fills[1]
    names = [t.name for t in fig.data if t.marker is not None and t.marker.symbol == "square"]
    assert names == ["warning · reward_flat (steps 0-49)", "warning · truncation (step 10)"]

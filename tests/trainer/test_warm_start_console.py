"""make demo's log is not silent during the warm start: grpo-train prints its start, each sampled pass-rate check
and its end (or that the weights came from the cache), in English or Chinese, flushed at once; and the tiny model
trains on one torch thread on CPU (two threads on two busy cores made its warm start 4x slower), giving the
caller's thread count back afterwards."""

import torch
from helpers.zh_words import english_left

from collectors import load_run
from grpo_core.cli import main

# a warm start that gives up after two checks (a 99% target is out of reach in 50 steps): seconds, not minutes
SHORT = ["--set", "warm_start.max_steps=50", "--set", "warm_start.check_every=25", "--set", "warm_start.check_samples=64",
         "--set", "warm_start.target_pass_rate=0.99", "--set", "eval_every=0", "--steps", "1"]


def test_warm_start_lines_then_cache_line_in_both_languages(tmp_path, capsys):
    cache = str(tmp_path / "cache")
    before = torch.get_num_threads()
    assert main(["--out", str(tmp_path / "a"), "--set", f"warm_start.cache_dir={cache}", *SHORT]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.replace("\r", "\n").splitlines() if ln.startswith("warm start: ")]
    assert lines[0].startswith("warm start: supervised steps until 99% of sampled answers pass (at most 50 steps)")
    assert cache in lines[0]
    assert [ln.split(":")[1].strip() for ln in lines[1:3]] == ["step 25 of at most 50", "step 50 of at most 50"]
    assert lines[3].startswith("warm start: done in 50 steps, ") and lines[3].endswith("first GRPO step next")
    assert torch.get_num_threads() == before  # the caller's count back
    assert load_run(tmp_path / "a").meta.info["torch_threads"] == 1  # the tiny model's, on CPU

    assert main(["--out", str(tmp_path / "b"), "--set", f"warm_start.cache_dir={cache}", "--lang", "zh", *SHORT]) == 0
    zh = [ln for ln in capsys.readouterr().err.replace("\r", "\n").splitlines() if ln.startswith("监督预热")]
    assert len(zh) == 1 and zh[0].startswith("监督预热：从缓存读取（" + cache) and english_left(zh[0], set()) == []


def test_no_lines_without_progress_and_threads_as_configured(tmp_path, capsys):
    assert main(["--out", str(tmp_path / "r"), "--set", f"warm_start.cache_dir={tmp_path / 'c'}",
                 "--set", "log.progress=false", "--set", "model.cpu_threads=2", *SHORT]) == 0
    assert "warm start" not in capsys.readouterr().err
    assert load_run(tmp_path / "r").meta.info["torch_threads"] == 2

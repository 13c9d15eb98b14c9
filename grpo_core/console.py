"""What grpo-train says on its console before the first step, in English and Chinese: the supervised warm start
can take a minute on a busy machine the first time, and a silent log (make demo's runs/demo.log) reads as a hang.
The dashboard shows the same progress from run.json's `phase` (dashboard/text.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable

Say = Callable[..., None]  # say(event, **values): one line for an event of the list below

LINES: dict[str, dict[str, str]] = {
    "en": {
        "warm_start_begin": ("warm start: supervised steps until {target:.0%} of sampled answers pass (at most "
                             "{total} steps); the first run of this configuration pays it, later ones load it from "
                             "{cache}"),
        "warm_start_check": "warm start: step {done} of at most {total}: sampled pass rate {rate:.2f} (stops at {target:g})",
        "warm_start_done": "warm start: done in {steps} steps, {seconds:.0f} s (sampled pass rate {rate:.2f}); first GRPO step next",
        "warm_start_cached": "warm start: loaded from the cache ({file}); first GRPO step next",
    },
    "zh": {
        "warm_start_begin": ("监督预热：训练到 {target:.0%} 的采样回答通过为止（最多 {total} 步）；这个配置第一次运行时做一次，"
                             "之后从 {cache} 读取"),
        "warm_start_check": "监督预热：第 {done} 步，最多 {total} 步：采样 pass rate {rate:.2f}（到 {target:g} 即停）",
        "warm_start_done": "监督预热：用了 {steps} 步、{seconds:.0f} 秒（采样 pass rate {rate:.2f}）；接下来是第一个 GRPO 步",
        "warm_start_cached": "监督预热：从缓存读取（{file}）；接下来是第一个 GRPO 步",
    },
}


def console(lang: str, stream=None) -> Say:
    """A `say` that writes each event's line in `lang` (en when not ours) to `stream` (stderr), flushed at once:
    make demo sends it to a file, where an unflushed line would wait for the buffer to fill."""
    lines = LINES.get(lang, LINES["en"])

    def say(event: str, **values) -> None:
        print(lines[event].format(**values), file=stream or sys.stderr, flush=True)

    return say

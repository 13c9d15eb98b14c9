"""The GRPO settings a TRL console log prints: a GRPOConfig / TrainingArguments repr (`GRPOConfig(...,
max_completion_length=256, ...)`), an argparse Namespace, or a dict a script prints (`{'num_generations': 8}`).

Only the settings the diagnosis reads, under TRL's own names (what `training_args.bin` gives for an output
folder): the length cap (truncation), the group size, the KL coefficient, the iterations per generation (the
first-step check), the sampling temperature, the clip range and the loss. The first value printed for a key wins (a
script that prints its config prints it before training).
"""

from __future__ import annotations

import ast
import re
from typing import Any

# (not learning_rate: every log dict carries the step's value under that name, and the logged series is read)
KEYS = ("max_completion_length", "max_prompt_length", "num_generations", "beta", "num_iterations", "temperature",
        "epsilon", "epsilon_high", "loss_type", "scale_rewards", "steps_per_generation", "importance_sampling_level",
        "per_device_train_batch_size", "gradient_accumulation_steps")
# key=value (a repr, a Namespace) or 'key': value (a dict); the value up to the next separator of its container
_ARG_RE = re.compile(rb"(?<![A-Za-z0-9_])['\"]?(" + b"|".join(k.encode() for k in KEYS)
                     + rb")['\"]?\s*[=:]\s*('[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|[^,)}\s\n]{1,64})")


def printed_args(text: bytes) -> dict[str, Any]:
    """{TRL key: value} of the settings printed in `text`: numbers, booleans and None as Python values, quoted
    strings unquoted, anything else as its text."""
    out: dict[str, Any] = {}
    for m in _ARG_RE.finditer(text):
        key = m[1].decode()
        if key in out:
            continue
        raw = m[2].decode("utf-8", "replace")
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = raw
        if isinstance(value, (bool, int, float, str)) or value is None:
            out[key] = value
    return out

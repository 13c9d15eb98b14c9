"""collectors/readers/trl/printed_args.py on the texts TRL users' scripts print: the GRPOConfig repr (a dataclass
repr of TRL's GRPOConfig, made by TRL itself here), an argparse Namespace, a printed dict."""

from __future__ import annotations

import argparse

from collectors.readers.trl.printed_args import printed_args


def test_a_grpo_config_repr_made_by_trl_gives_its_settings(tmp_path):
    from trl import GRPOConfig

    cfg = GRPOConfig(output_dir=str(tmp_path), max_completion_length=256, num_generations=4, beta=0.0,
                     num_iterations=2, temperature=0.9, learning_rate=1e-6, report_to=[], use_cpu=True,
                     bf16=False)
    got = printed_args(f"some output\n{cfg!r}\nmore output\n".encode())
    assert {k: got[k] for k in ("max_completion_length", "num_generations", "beta", "num_iterations",
                                "temperature")} == {
        "max_completion_length": 256, "num_generations": 4, "beta": 0.0, "num_iterations": 2, "temperature": 0.9}
    assert "learning_rate" not in got  # every log dict prints the step's learning rate under that name


def test_a_namespace_and_a_dict_and_the_first_value_wins():
    ns = argparse.Namespace(model="q", max_completion_length=512, loss_type="dr_grpo")
    text = f"{ns}\n{{'num_generations': 8, 'max_completion_length': 128}}\n".encode()
    assert printed_args(text) == {"max_completion_length": 512, "loss_type": "dr_grpo", "num_generations": 8}
    # a key that only ends in a known name is not it; nothing printed gives nothing
    assert printed_args(b"my_max_completion_length=7 other_beta=3") == {}
    assert printed_args(b"") == {}

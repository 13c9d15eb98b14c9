"""grpo-train --scenario: a run is named after its --out folder like any other (two --scenario lr_too_high runs
into runs/a and runs/b are two rows, a and b), after the scenario only when no folder is given."""

from __future__ import annotations

from grpo_core.cli import resolve


def test_scenario_run_is_named_after_its_folder():
    cfg, _ = resolve(["--scenario", "lr_too_high", "--out", "runs/lr_high_try2"])
    assert cfg.name == "" and cfg.out == "runs/lr_high_try2"  # "" = the folder's name (config.name)
    cfg, _ = resolve(["--scenario", "lr_too_high", "--set", "out=runs/x"])
    assert cfg.name == ""
    cfg, _ = resolve(["--scenario", "lr_too_high"])
    assert cfg.name == "lr_too_high"
    cfg, _ = resolve(["--scenario", "lr_too_high", "--out", "runs/y", "--set", "name=mine"])
    assert cfg.name == "mine"

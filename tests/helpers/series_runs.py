"""Runs written from plain series by the project's own RunWriter, for rule tests that state their numbers by hand."""

from __future__ import annotations

from collectors import RunWriter, load_run


def write(tmp_path, series: dict, config: dict | None = None, steps=None, name: str = "r"):
    """A run folder `tmp_path/name` with one logged step per index of the series (steps: 0..n-1 unless given),
    opened again with load_run."""
    path = tmp_path / name
    n = len(next(iter(series.values())))
    steps = range(n) if steps is None else steps
    with RunWriter(path, name=name, config=config or {}) as w:
        for i, s in enumerate(steps):
            w.log_step(int(s), {k: float(v[i]) for k, v in series.items()})
    return load_run(path)


def finding(d, rule_id):
    """The diagnosis d's finding of rule_id, or None."""
    return next((f for f in d.findings if f.rule_id == rule_id), None)

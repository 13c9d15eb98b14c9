"""Which reader answers a run: its framework's own, or for a source without one (wandb, TensorBoard, ...) the
reader that knows most of the config's keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashboard.diagnosis.rules.config_questions import core, openrlhf, trl, verl
from dashboard.diagnosis.rules.config_questions.questions import QUESTIONS, UNKNOWN, Answer, Lookup, Reader

READERS: dict[str, Reader] = {
    "grpo_core": core.READER,
    "trl": trl.READER,
    "verl": verl.READER,
    "openrlhf": openrlhf.READER,
}


def _answers(config: Mapping[str, Any], reader: Reader, log: Any = None) -> list[Answer]:
    lk = Lookup(config, log)
    out = []
    for i, (question, fn) in enumerate(zip(QUESTIONS, reader, strict=True), start=1):
        text = fn(lk)
        out.append(Answer(i, question, text, lk.take_used()))
    return out


def answer_questions(config: Mapping[str, Any], source: str, log: Any = None) -> list[Answer]:
    """The five answers for a run of `source`; an unknown source uses the reader that knows most keys.

    log: the run's metrics (a DataFrame, one column a metric) or None: where the config does not say, a reader
    may answer from what its framework logs (verl's KL coefficients). The reader of an unknown source is picked
    by the config alone, so that a metric name never makes another framework's reader answer for a run."""
    if source in READERS:
        return _answers(config, READERS[source], log)
    by_config = [(_answers(config, r), r) for r in READERS.values()]
    best, reader = max(by_config, key=lambda ar: sum(x.known for x in ar[0]))
    if not any(a.known for a in best):
        return [Answer(i, q, UNKNOWN, ()) for i, q in enumerate(QUESTIONS, start=1)]
    return _answers(config, reader, log) if log is not None else best

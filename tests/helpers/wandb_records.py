"""A wandb offline run's own records (its run-*.wandb file, read with wandb's protobufs): what the guard tests
check reached the summary and the alerts that `wandb sync` would upload."""

from __future__ import annotations

import json
from pathlib import Path


def records(run_dir: Path, kind: str) -> list:
    """The run's own records of one kind ("summary", "alert"), from its record file (wandb's protobufs)."""
    from wandb.proto import wandb_internal_pb2 as pb

    from collectors.readers.wandb.offline import RecordReader, wandb_file

    recs = [pb.Record.FromString(raw) for raw in RecordReader(wandb_file(run_dir)).read()]
    return [getattr(r, kind) for r in recs if r.WhichOneof("record_type") == kind]


def summary_of(run_dir: Path) -> dict:
    """The last value of each summary key."""
    out = {}
    for summary in records(run_dir, "summary"):
        for item in summary.update:
            out[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
    return out

"""grpo-import: convert a foreign run (TRL, verl, TensorBoard, wandb, JSONL/CSV) into our run format.

    grpo-import SOURCE --to RUN_DIR [--format NAME] [--map THEIRS=OURS ...]

Exit 0 on success, 2 on bad input (one line on stderr naming the file). What a reader skipped or repaired
is printed as warnings and recorded in the new run's notes, so the converted run says where it came from.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from collectors.meta import RUN_JSON, RunError
from collectors.readers.synonyms import add_map_option, parse_args_with_map, parse_map, set_user_map
from collectors.sources import SOURCES, _load_readers, open_run, split_launch
from collectors.store.writer import RunWriter
from collectors.version import version_flag


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="grpo-import", description=__doc__.split("\n")[0])
    ap.add_argument("source", help="a foreign log file or folder, or wandb://ENTITY/PROJECT/RUN_ID")
    ap.add_argument("--to", required=True, help="run folder to create (must not hold a run yet)")
    ap.add_argument("--format", "--source", dest="format", default=None,
                    help="reader name (trl, verl, generic, kvtext, trl-console, ...); detected from the files when omitted")
    add_map_option(ap)  # the syntax grpo-diagnose takes: one pair per --map, repeated
    ap.add_argument("--version", **version_flag("grpo-import"))
    return parse_args_with_map(ap, argv)


def _open(args: argparse.Namespace, mapping: dict[str, str]):
    # the text readers apply the map as they read (so a mapped column is judged under its canonical name);
    # the others' columns are renamed after the read, in convert
    set_user_map(mapping)
    try:
        return open_run(args.source, args.format)
    finally:
        set_user_map({})  # the run keeps its map; later opens in this process (tests, a notebook) start clean


def convert(args: argparse.Namespace) -> tuple[Path, int, list[str]]:
    """Read the source and write it to args.to; return (run dir, steps written, warnings)."""
    try:
        mapping = parse_map(args.map, [args.source])
    except ValueError as e:
        raise RunError(str(e)) from None
    src = Path(split_launch(args.source)[0])  # one launch of a folder holding several: FOLDER#LAUNCH
    if "://" not in args.source and not src.exists():  # a URI (wandb://...) is checked by its reader
        raise RunError(f"{src}: no such file or folder")
    to = Path(args.to)
    if (to / RUN_JSON).exists():
        raise RunError(f"{to}: already holds a run; choose a new --to folder")
    _load_readers()
    if args.format is not None and args.format not in SOURCES:
        raise RunError(f"--format {args.format!r}: unknown; known: {', '.join(sorted(SOURCES))}")
    run = _open(args, mapping)
    metrics = run.metrics.rename(columns=mapping)
    warnings = [str(p) for p in run.problems]
    if not len(metrics) and not len(run.samples()):
        raise RunError(f"{args.source}: nothing readable" + (f" ({warnings[0]})" if warnings else ""))
    writer = RunWriter(to, name=run.name, config=run.meta.config, source=run.meta.source, handle_signals=False)
    # a NaN the source logged stays NaN; every other gap is a null ("not measured"), as in the source
    logged_nan = {(mapping.get(k, k), s) for k, steps in run.nan_at.items() for s in steps}
    try:
        for rec in metrics.to_dict("records"):
            step = int(rec.pop("step"))
            rec.setdefault("wall_time", None)  # a source without times stays without, not "now"
            writer.log_step(step, {k: (None if isinstance(v, float) and math.isnan(v) and (k, step) not in logged_nan
                                       else v) for k, v in rec.items()})
        samples = run.samples()
        if len(samples):
            writer.log_samples(samples)
        writer.meta.notes.append(f"imported from {args.source} ({run.meta.source})")
        writer.meta.notes.extend(f"import warning: {w}" for w in warnings)
    except BaseException:
        writer.close("failed", error="import interrupted")
        raise
    status = run.meta.status if run.meta.status in ("finished", "failed", "stopped") else "unknown"
    # the run's own end, not the import's: the Runs table's "last update" of a run published months ago
    ended = next((t for t in (run.meta.end_time, _last_wall_time(metrics)) if t is not None), None)
    writer.close(status, error=run.meta.error if status != "finished" else None, ended_at=ended)
    return to, len(metrics), warnings


def _last_wall_time(metrics) -> float | None:
    """The last time the source logged (unix s), None when it logged no times."""
    if "wall_time" not in metrics:
        return None
    t = pd.to_numeric(metrics["wall_time"], errors="coerce")
    t = t[t > 0]
    return float(t.max()) if len(t) else None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        to, n, warnings = convert(args)
    except (RunError, OSError) as e:
        print(f"grpo-import: {e}", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"grpo-import: warning: {w}", file=sys.stderr)
    print(f"{to}: {n} steps imported")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The OpenRLHF console reader against reading the same file's bytes.

    python benchmarks/bench_openrlhf.py [--repeats 7]

Writes OpenRLHF console logs the way its logger writes them (tests/fixtures/openrlhf_console.py: the logger's
format string, Ray's prefix, the `✨ Global step N: {...}` line) with N lines of other output (vLLM weight
syncs, NCCL, tqdm bars) between two steps, then times a fresh open of each (`OpenRLHFRun`: read, scan, parse,
metrics frame) against `open(path, "rb").read()` of the same file, taking the median of `--repeats` runs of each,
in turns. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fixtures.openrlhf_console import write_log

from collectors.readers.openrlhf.console import OpenRLHFRun

CASES = ((200, 2000), (100, 5000), (123, 130))  # (steps, lines between two steps); 130 lines ~ 17 KB, as issue 31


def median_times(path: Path, repeats: int) -> tuple[float, float, int]:
    read, opened, rows = [], [], 0
    for _ in range(repeats):
        t = time.perf_counter()
        with open(path, "rb") as f:
            f.read()
        read.append(time.perf_counter() - t)
        t = time.perf_counter()
        rows = len(OpenRLHFRun(path).metrics)
        opened.append(time.perf_counter() - t)
    return statistics.median(read), statistics.median(opened), rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args(argv)
    print("| steps | lines between steps | file | read bytes | open (rows) | open / read |")
    print("|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for steps, noise in CASES:
            path = Path(tmp) / f"openrlhf_{steps}_{noise}.out"
            write_log(path, steps, noise_lines=noise)
            median_times(path, 1)  # page cache and imports warm, as for every row
            read, opened, rows = median_times(path, args.repeats)
            print(f"| {steps} | {noise:,} | {path.stat().st_size / 1e6:.1f} MB | {read * 1e3:.1f} ms | "
                  f"{opened * 1e3:.1f} ms ({rows}) | {opened / read:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

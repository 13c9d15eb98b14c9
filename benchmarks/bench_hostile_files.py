"""Files that once took all memory or minutes (issue 38): CPU seconds and peak memory of each, in a fresh process.

    python benchmarks/bench_hostile_files.py [--sparse-gb 10] [--record-mb 50] [--log-mb 190]

- a sparse `big.jsonl` (one valid line, then NULs with no line end, then one more valid line) opened with
  open_run: LineTail reads by chunks and jumps the holes of the line it passes over;
- a wandb offline run with one history record of N MB (framed over N*32 chunks of 32 KiB), opened with open_run;
- a valid JSONL log of N MB read by LineTail in one refresh (the common case, which must not get slower).
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers.hostile import huge_record_run, sparse_log


def measure(code: str) -> str:
    """`code` in a fresh Python: its own printout, CPU seconds and peak RSS."""
    tail = "\nimport resource; u = resource.getrusage(resource.RUSAGE_SELF)\n" \
           "print(f'| {u.ru_utime + u.ru_stime:.2f} | {u.ru_maxrss >> 10} |')"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code) + tail], capture_output=True, text=True,
                         env=env, check=False)
    return " ".join(out.stdout.split()) if out.returncode == 0 else f"| failed: {out.stderr.strip()[-200:]} | | |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparse-gb", type=int, default=10)
    ap.add_argument("--record-mb", type=int, default=50)
    ap.add_argument("--log-mb", type=int, default=190)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        big = sparse_log(t / "big.jsonl", a.sparse_gb << 30)
        run = huge_record_run(t / "wandb", a.record_mb)
        log = t / "valid.jsonl"
        line = b'{"step": 1, "reward": 0.5, "kl": 0.01, "text": "' + b"a" * 150 + b'"}\n'
        with log.open("wb") as f:
            for _ in range(a.log_mb):
                f.write(line * ((1 << 20) // len(line)))
        print("| case | result | CPU (s) | peak RSS (MB) |\n|---|---|---|---|")
        print(f"| sparse {a.sparse_gb} GB big.jsonl, open_run |", measure(f"""
            from collectors import open_run
            r = open_run({str(big)!r}); print(f"steps {{list(r.metrics['step'])}}")"""))
        print(f"| wandb record of {a.record_mb} MB, open_run |", measure(f"""
            from collectors import open_run
            print(f"{{len(open_run({str(run)!r}).metrics)}} rows")"""))
        print(f"| valid JSONL of {log.stat().st_size >> 20} MB, LineTail.read_bytes |", measure(f"""
            from pathlib import Path
            from collectors.readers.text.linetail import LineTail
            print(f"{{len(LineTail(Path({str(log)!r})).read_bytes()[0]) >> 20}} MB")"""))


if __name__ == "__main__":
    main()

"""Fuzz every registered reader on mutated valid files, many cases each; print a Markdown table of outcomes.

    python benchmarks/fuzz_readers.py [--cases 10000] [--first 0] [--jobs 2] [--source NAME ...]   (or `make fuzz`)

The same cases as tests/collectors/test_fuzz_readers.py (case i of a source is the same mutation in both), only more of
them (`--first 300` skips the cases the suite already runs): each is opened with open_run, read (.metrics, .samples()), diagnosed and refreshed, under a CPU-time
bound. Outcomes: opened (read what was valid), refused (RunError naming the file), and the failures:
unhandled (any other exception), timeout, memory (peak +512 MB in one case), message (a RunError that is not
one line naming the file), abort (the case killed its worker process; the others still run: harness.run_isolated).
The most frequent failure sites are listed under the table.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from helpers.fuzz.harness import Tally, fuzz_source, merge, report, run_isolated
from helpers.fuzz.mutators import MUTATORS, ONLY_ENV
from helpers.fuzz.seeds import NO_FILES, default_roots, find_seeds

KINDS = ["opened", "refused", "unhandled", "timeout", "memory", "message", "abort"]


def _slice(args: tuple) -> Tally:
    source, seeds, first, n, limit_s = args
    with tempfile.TemporaryDirectory(prefix="fuzz-") as work:
        return fuzz_source(source, seeds, n, Path(work), first=first, limit_s=limit_s)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10_000, help="cases per reader")
    ap.add_argument("--first", type=int, default=0, help="the first case number (the suite runs 0-299)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--limit-s", type=float, default=10.0, help="CPU seconds per case")
    ap.add_argument("--source", action="append", help="only these sources (default: every registered one)")
    ap.add_argument("--mutators", default=None, metavar="NAME,NAME",
                    help=f"only these mutations (of: {', '.join(sorted(MUTATORS))}); case i is then another case")
    args = ap.parse_args(argv)
    if args.mutators:
        unknown = sorted(set(args.mutators.split(",")) - set(MUTATORS))
        if unknown:
            ap.error(f"--mutators: unknown {', '.join(unknown)}")
        os.environ[ONLY_ENV] = args.mutators  # the slices' processes inherit it
    with tempfile.TemporaryDirectory(prefix="fuzz-seeds-") as gen:
        seeds = find_seeds(default_roots(Path(gen)))
        names = [n for n in sorted(seeds) if not args.source or n in args.source]
        rows, tallies = [], []
        # each slice in a process of its own (threads only wait on them): a case that kills its process costs
        # that case, not the run
        with ThreadPoolExecutor(args.jobs) as pool:
            for name in names:
                if name in NO_FILES or not seeds[name]:
                    print(f"{name}: not fuzzed ({NO_FILES.get(name, 'no seed file found')})", file=sys.stderr)
                    continue
                step = -(-args.cases // args.jobs)
                jobs = [(name, seeds[name], args.first + a, min(step, args.cases - a), args.limit_s)
                        for a in range(0, args.cases, step)]
                start = time.perf_counter()
                tally = merge(name, list(pool.map(partial(run_isolated, _slice), jobs)))
                took = time.perf_counter() - start
                tallies.append(tally)
                print(report(tally), f"({took:.0f} s)", file=sys.stderr, flush=True)
                c = tally.counts
                rows.append(f"| {name} | {len(seeds[name])} | {sum(c.values()):,} | "
                            + " | ".join(f"{c[k]:,}" for k in KINDS) + f" | {tally.slowest_s:.1f} |")
    print("| reader | seeds | cases | " + " | ".join(KINDS) + " | slowest case (s) |")
    print("|---|---|---|" + "---|" * (len(KINDS) + 1))
    print("\n".join(rows))
    failures = Counter()
    for t in tallies:
        failures.update({f"{t.source}: {w}": n for w, n in t.where.items()})
        for rule, n in t.rule_failures.items():
            print(f"note: diagnosis rule {rule} failed (shown as not judged) on {n} {t.source} cases", file=sys.stderr)
    for where, n in failures.most_common(20):
        print(f"- {n} x {where}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

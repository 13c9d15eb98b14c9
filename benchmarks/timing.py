"""Timing helper shared by the benchmark scripts (run as `python benchmarks/bench_*.py`)."""

import statistics
import time


def median_time(fn, repeats: int) -> float:
    """Median wall time of `repeats` calls of fn(), in seconds: a median resists a noisy shared machine."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)

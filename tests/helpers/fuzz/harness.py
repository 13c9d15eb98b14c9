"""One fuzz case: copy a seed, mutate one of its files, then open, read and diagnose it like the dashboard.

The promise checked: the run opens (whatever is valid in it is read), or the project's RunError is raised
with a one-line message that names the file; never another exception, never longer than a time bound, never
a jump in memory. A case is reproduced from (source, seed, case number): the mutation's Random is seeded
with them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import random
import re
import resource
import signal
import time
import traceback
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from collectors.meta import RunError
from collectors.sources import detect_source, launches_of, open_run, split_launch
from dashboard.diagnosis import diagnose
from helpers.fuzz.mutators import mutate
from helpers.fuzz.seeds import copy_seed
from helpers.paths import REPO

MEMORY_JUMP_MB = 512  # a case raising the process's peak memory by more than this grows with its garbage


class CaseTimeout(BaseException):  # BaseException: a reader's `except Exception` must not eat it
    """Raised by the case timer."""


@dataclass
class Tally:
    source: str
    counts: Counter = field(default_factory=Counter)  # opened / refused / unhandled / timeout / memory / message /
    # abort (the case killed its process: a C abort or the kernel's OOM killer; see run_isolated)
    where: Counter = field(default_factory=Counter)  # "ExcType @ module.function" -> cases
    examples: dict[str, str] = field(default_factory=dict)  # where -> how to reproduce
    rule_failures: Counter = field(default_factory=Counter)  # diagnosis rules that gave up with an exception
    slowest_s: float = 0.0

    @property
    def failures(self) -> int:
        return sum(v for k, v in self.counts.items() if k not in ("opened", "refused"))


@contextlib.contextmanager
def time_limit(seconds: float, cpu: bool):
    """Raise CaseTimeout after `seconds` of wall time, or of CPU time with `cpu` (SIGVTALRM: leaves
    SIGALRM to pytest-timeout, and a busy shared machine does not make a case look slow)."""
    which, sig = (signal.ITIMER_VIRTUAL, signal.SIGVTALRM) if cpu else (signal.ITIMER_REAL, signal.SIGALRM)

    def expire(signum, frame):
        raise CaseTimeout(f"over {seconds:g} s")

    old = signal.signal(sig, expire)
    signal.setitimer(which, seconds)
    try:
        yield
    finally:
        signal.setitimer(which, 0)
        signal.signal(sig, old)


def _where(exc: BaseException) -> str:
    """`ExcType @ module.function` of the innermost frame in the project's own code."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(str(REPO))
              and "/tests/" not in f.filename and "/.venv/" not in f.filename]
    if not frames:
        return type(exc).__name__
    f = frames[-1]
    module = Path(f.filename).relative_to(REPO).with_suffix("").as_posix().replace("/", ".")
    return f"{type(exc).__name__} @ {module}.{f.name}"


# Python's own words: an exception's text passed on instead of what is wrong with the file
_INTERNAL = re.compile(r"Traceback|codec can't|Exceeds the limit|maximum recursion depth|has no attribute|"
                       r"surrogates not allowed|object is not|not supported between|unhashable type|"
                       r"index out of range|NoneType|\b(?:[A-Z][a-z]+)+(?:Error|Exception)\b")


def internal_words(text: str) -> str | None:
    """The piece of `text` that is Python's message rather than words about the file, or None."""
    m = _INTERNAL.search(text)
    return m.group() if m else None


def _read_all(target: Path, source: str, tally: Tally, mutated: Path | None = None) -> list:
    """Open, read, diagnose and refresh the target as grpo-diagnose and the dashboard do: a target holding
    several launches (a TensorBoard logdir a sweep wrote into, a wandb/ folder of run folders) is each of its
    launches, of which the one holding the mutated file is read (the others are the seed as it was)."""
    detect_source(target)  # detection must not raise either
    launches = launches_of(target, source)
    if len(launches) > 1:
        launches = [t for t in launches if mutated is None or _holds(t, mutated)] or launches[:1]
    runs = []
    for one in launches or [target]:
        run = open_run(one, source=source)
        _ = run.metrics
        run.samples()
        run.eval_samples()
        verdict = diagnose(run)
        for nj in verdict.not_judged:
            if "the rule failed" in nj.reason:
                tally.rule_failures[nj.rule_id] += 1
        run.refresh()
        runs.append(run)
    return runs


def _holds(launch: str, mutated: Path) -> bool:
    """Whether the launch target `launch` (FOLDER#LAUNCH, or a sub-folder) reads the file `mutated`."""
    base, lid = split_launch(launch)
    return lid in mutated.name if lid else Path(base) in mutated.parents


def _names_the_file(message: str, target: Path, mutated: Path) -> bool:
    return any(part in message for part in (str(target), target.name, mutated.name, str(target.parent)))


def run_case(source: str, seed: Path, case: int, workdir: Path, tally: Tally, limit_s: float = 10.0,
             cpu: bool = True) -> None:
    rng = random.Random(f"{source}|{'/'.join(seed.parts[-2:])}|{case}")  # not the temporary folder: reproducible
    target = copy_seed(seed, workdir / "fuzzcase")
    files = sorted(p for p in ([target] if target.is_file() else target.rglob("*")) if p.is_file())
    mutated = rng.choice(files)
    how, data = mutate(mutated.read_bytes(), rng)
    mutated.write_bytes(data)
    repro = f"seed {seed}, case {case}: {how} on {mutated.relative_to(target.parent)}"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    kind, where = "opened", ""
    try:
        with time_limit(limit_s, cpu):
            runs = _read_all(target, source, tally, mutated)
        notes = [str(p) for run in runs for p in run.problems]
        if said := next(((w, n) for n in notes if (w := internal_words(n))), None):
            kind, where = "message", f"a reader note in Python's words ({said[0]!r})"
            repro += f" -> {said[1][:200]!r}"
    except CaseTimeout:
        kind, where = "timeout", f"timeout ({how})"
    except RunError as e:
        kind = "refused"
        if "\n" in str(e) or not _names_the_file(str(e), target, mutated):
            kind, where = "message", f"RunError message not one line naming the file: {str(e)[:200]!r}"
        elif said := internal_words(str(e)):
            kind, where = "message", f"RunError in Python's words ({said!r}): {str(e)[:160]!r}"
    except Exception as e:  # noqa: BLE001 - any other exception is exactly what the fuzzing looks for
        kind, where = "unhandled", _where(e)
    tally.slowest_s = max(tally.slowest_s, time.perf_counter() - start)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024
    if kind in ("opened", "refused") and grown_mb > MEMORY_JUMP_MB:
        kind, where = "memory", f"peak memory +{grown_mb:.0f} MB ({how})"
    tally.counts[kind] += 1
    if where:
        tally.where[where] += 1
        tally.examples.setdefault(where, repro)


def fuzz_source(source: str, seeds: list[Path], cases: int, workdir: Path, first: int = 0,
                limit_s: float = 10.0, cpu: bool = True) -> Tally:
    """Run cases first..first+cases-1 of `source`, cycling over its seeds."""
    tally = Tally(source)
    for i in range(first, first + cases):
        run_case(source, seeds[i % len(seeds)], i, workdir, tally, limit_s, cpu)
    return tally


def report(tally: Tally, limit: int = 8) -> str:
    lines = [f"{tally.source}: {dict(tally.counts)}"]
    for where, n in tally.where.most_common(limit):
        lines.append(f"  {n:5d}  {where}   e.g. {tally.examples[where]}")
    return "\n".join(lines)


def merge(source: str, parts: list[Tally]) -> Tally:
    """One tally of several slices' tallies."""
    out = Tally(source)
    for t in parts:
        out.counts += t.counts
        out.where += t.where
        out.rule_failures += t.rule_failures
        out.slowest_s = max(out.slowest_s, t.slowest_s)
        for k, v in t.examples.items():
            out.examples.setdefault(k, v)
    return out


def run_isolated(work, job: tuple) -> Tally:
    """work(job) in a process of its own. job = (source, seeds, first, n, limit_s): cases first..first+n-1.

    A case that kills the process (a C++ abort in a library, the OOM killer) raises no exception to record: the
    slice is halved and each half run afresh until that case stands alone; it is counted as `abort`, named, and
    every other case of the slice still runs. Without this, one such case stopped a whole `make fuzz`."""
    try:
        # spawn, not fork: the caller may wait on several slices from threads, and a fork of a threaded process
        # can inherit a held lock; `work` must be importable (a module's function, or a partial of one)
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(work, job).result()
    except BrokenProcessPool:
        source, seeds, first, n, limit_s = job
        if n <= 1:
            t, where = Tally(source), f"the process died (case {first})"
            t.counts["abort"] += 1
            t.where[where] += 1
            t.examples[where] = f"seed {seeds[first % len(seeds)]}, case {first}"
            return t
        half = n // 2
        return merge(source, [run_isolated(work, (source, seeds, first, half, limit_s)),
                              run_isolated(work, (source, seeds, first + half, n - half, limit_s))])

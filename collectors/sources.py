"""Which reader opens a given path or URI: a small registry the foreign readers add themselves to.

A source says, cheaply (file names only), whether it recognises a target, and how to open it as a Run.
`open_run` and `discover_runs` ask the registered sources in priority order; our own format is one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from collectors.meta import RUN_JSON, STALE_AFTER_S, RunError
from collectors.run import Run, RunInfo
from collectors.store.load import load_run, native_info


@dataclass(frozen=True)
class Source:
    name: str
    detect: Callable[[str], bool]  # path or URI -> recognised?
    open: Callable[[str], Run]
    info: Callable[[Path, float], RunInfo] | None = None  # cheap runs-table line; default opens the run
    priority: int = 0  # higher is asked first
    # what this source never or not always holds, and how a user gets it: {"samples": ..., "config": ...,
    # "live": how often it is written, where that is not as it happens}
    hints: Mapping[str, str] = field(default_factory=dict)


SOURCES: dict[str, Source] = {}


def register_source(name: str, detect: Callable[[str], bool], priority: int = 0,
                    info: Callable[[Path, float], RunInfo] | None = None, hints: Mapping[str, str] | None = None):
    """Decorator for a reader's open function: `@register_source("verl", detect=...)`."""

    def wrap(open_fn: Callable[[str], Run]) -> Callable[[str], Run]:
        SOURCES[name] = Source(name, detect, open_fn, info, priority, dict(hints or {}))
        return open_fn

    return wrap


def _ordered() -> list[Source]:
    _load_readers()
    return sorted(SOURCES.values(), key=lambda s: -s.priority)


def detect_source(target: str | Path) -> str | None:
    for src in _ordered():
        if src.detect(str(target)):
            return src.name
    return None


def open_run(target: str | Path, source: str | None = None) -> Run:
    """Open any run the collectors can read: a run folder, a foreign log folder or file, or a URI."""
    name = source or detect_source(target)
    if name is None:
        broken = "".join(f"; {p}" for p in LOAD_PROBLEMS)
        raise RunError(f"{target}: no reader recognises this (not a run folder, and no known log files){broken}")
    if name not in SOURCES:
        raise RunError(f"{target}: unknown source {name!r}; known: {', '.join(sorted(SOURCES))}")
    return SOURCES[name].open(str(target))


def missing_hint(source: str, what: str) -> str | None:
    """How a user of `source` gets `what` ("samples", "config", "live") into their run, if the reader says."""
    _load_readers()
    src = SOURCES.get(source)
    return src.hints.get(what) if src else None


def info_for(path: Path, stale_after_s: float = STALE_AFTER_S,
             open_foreign: Callable[[Path], Run] | None = None) -> RunInfo | None:
    """A runs-table line for `path` when some source recognises it, else None."""
    for src in _ordered():
        if src.detect(str(path)):
            if src.info is not None:
                return src.info(path, stale_after_s)
            # no summary file: the run is read; a caller that keeps runs open hands over its own copy
            try:
                run = open_foreign(path) if open_foreign else src.open(str(path))
            except RunError as e:
                return RunInfo(path, path.name, src.name, "unknown", None, None, str(e))
            if open_foreign is None:
                run.stale_after_s = stale_after_s
            return RunInfo(path, run.name, run.meta.source, run.status, run.last_step, run.last_update)
    return None


register_source("grpo", detect=lambda t: (Path(t) / RUN_JSON).is_file(), priority=100, info=native_info, hints={
    "samples": "grpo-train writes one row per response unless `log.samples` is false; none was written yet.",
    "config": "run.json has no config: the writer was started without one.",
})(load_run)

_loaded = False
LOAD_PROBLEMS: list[str] = []  # "module: error" for each reader that failed to import


def reader_problems() -> list[str]:
    """Readers that could not be loaded (a missing optional dependency, a bug), one line each."""
    _load_readers()
    return list(LOAD_PROBLEMS)


def _load_readers() -> None:
    """Import the foreign readers once, so their @register_source calls run."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib

    for module in READER_MODULES:
        try:  # one broken reader must not take discovery of every other source down with it
            importlib.import_module(module)
        except Exception as e:  # noqa: BLE001 - any import-time failure of a reader is reported the same way
            LOAD_PROBLEMS.append(f"reader {module} could not be loaded: {type(e).__name__}: {e}")


# Each foreign reader module registers itself on import; add new readers here.
READER_MODULES: list[str] = ["collectors.readers.tensorboard", "collectors.readers.verl", "collectors.readers.trl",
                             "collectors.readers.wandb_offline", "collectors.readers.wandb_online", "collectors.readers.generic"]

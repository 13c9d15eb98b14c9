"""Which reader opens a given path or URI: a small registry the foreign readers add themselves to.

A source says, cheaply (file names only), whether it recognises a target, and how to open it as a Run.
`open_run` and `discover_runs` ask the registered sources in priority order; our own format is one of them.

Launches: one target may hold several separate runs (a TensorBoard logdir that a sweep wrote into, a
`wandb/` folder of run folders). Such a source lists them (`launches`) as targets of their own: a sub-folder
where there is one, else `TARGET#LAUNCH`. `open_runs(target)` opens them all; `open_run` opens one and
refuses to guess between several; discovery lists each as a run.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from collectors.meta import RUN_JSON, STALE_AFTER_S, RunError
from collectors.oserrors import access_refusal
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
    # target -> the targets of the separate runs it holds ([] when it is itself one run); None: always one
    launches: Callable[[str], list[str]] | None = None
    # folder -> the names of its sub-folders this reader reads as part of the run (checkpoint-N, a dump
    # folder, a run folder's files/). Discovery checks them with the folder's own files for links that lead
    # out of the roots before the reader reads anything, and looks for runs of their own in every other
    # sub-folder (a folder that holds run folders is a folder of runs). None: all of them, nothing below walked.
    parts: Callable[[str], Collection[str]] | None = None


SOURCES: dict[str, Source] = {}
LAUNCH_SEP = "#"  # TARGET#LAUNCH names one launch of a target that holds several


def register_source(name: str, detect: Callable[[str], bool], priority: int = 0,
                    info: Callable[[Path, float], RunInfo] | None = None, hints: Mapping[str, str] | None = None,
                    launches: Callable[[str], list[str]] | None = None,
                    parts: Callable[[str], Collection[str]] | None = None):
    """Decorator for a reader's open function: `@register_source("verl", detect=...)`.

    A source with `launches` is given back, in `open`, the targets that function returns (`TARGET#LAUNCH`,
    see `split_launch`, or a sub-folder). `parts` names the sub-folders it reads (see `Source.parts`); a
    reader of a folder's own files passes `no_parts`.
    """

    def wrap(open_fn: Callable[[str], Run]) -> Callable[[str], Run]:
        SOURCES[name] = Source(name, detect, open_fn, info, priority, dict(hints or {}), launches, parts)
        return open_fn

    return wrap


def no_parts(target: str) -> tuple[str, ...]:
    """`parts` of a reader that reads only the files directly in a folder."""
    return ()


def get_source(name: str) -> Source | None:
    """The registered source called `name`, or None."""
    _load_readers()
    return SOURCES.get(name)


def _ordered() -> list[Source]:
    _load_readers()
    return sorted(SOURCES.values(), key=lambda s: -s.priority)


def split_launch(target: str | Path) -> tuple[str, str | None]:
    """`"logs/tb#1767724543.host.34196.0"` -> ("logs/tb", "1767724543.host.34196.0"); no `#` -> (target, None).

    A path that exists as written (a folder whose name holds `#`) is never split; URIs are not split.
    """
    text = str(target)
    base, sep, launch = text.rpartition(LAUNCH_SEP)
    if not sep or not base or not launch or "://" in text or "/" in launch or _exists(text):
        return text, None
    return base, launch


def _exists(path: str) -> bool:
    """Path.exists, where a name too long for the file system (a launch named by a 50,000-character run name)
    is a name that does not exist rather than an OSError."""
    try:
        return Path(path).exists()
    except OSError:
        return False


def launch_target(target: str | Path, launch: str) -> str:
    return f"{target}{LAUNCH_SEP}{launch}"


def detect_source(target: str | Path) -> str | None:
    base, _ = split_launch(target)
    for src in _ordered():
        if src.detect(base):
            return src.name
    return None


def _source_for(target: str | Path, source: str | None) -> Source:
    if (denied := access_refusal(split_launch(target)[0])) is not None:  # before any reader tries a file in it
        raise RunError(denied)
    name = source or detect_source(target)
    if name is None:
        broken = "".join(f"; {p}" for p in LOAD_PROBLEMS)
        from collectors.readers.sniff import describe  # what it looked like: can --map or --source help?

        raise RunError(f"{target}: no reader recognises this ({describe(target)}){broken}")
    _load_readers()
    if name not in SOURCES:
        raise RunError(f"{target}: unknown source {name!r}; known: {', '.join(sorted(SOURCES))}")
    return SOURCES[name]


def launches_of(target: str | Path, source: str | None = None) -> list[str]:
    """The targets of the separate runs a target holds (each a run of its own); [] when it is one run."""
    src = _source_for(target, source)
    if split_launch(target)[1] is not None or src.launches is None:
        return []
    return src.launches(str(target))


def open_run(target: str | Path, source: str | None = None) -> Run:
    """Open any run the collectors can read: a run folder, a foreign log folder or file, a URI, or one
    launch of a target holding several (`TARGET#LAUNCH`). A target holding several launches, named
    without one, is a RunError that lists them: `open_runs` opens them all."""
    src = _source_for(target, source)
    if split_launch(target)[1] is not None and src.launches is None:
        raise RunError(f"{target}: no such file or folder ({src.name} runs have no launches to name with "
                       f"{LAUNCH_SEP!r})")
    launches = launches_of(target, src.name)
    if source is not None and not launches and src.launches is not None and Path(split_launch(target)[0]).is_dir() \
            and not src.detect(split_launch(target)[0]):
        # a reader named for a folder in which it finds nothing would open an empty run and diagnose 0 steps
        raise RunError(f"{target}: the {src.name} reader finds nothing to read in this folder")
    if len(launches) > 1:
        shown = ", ".join(launches[:3]) + (", ..." if len(launches) > 3 else "")
        raise RunError(f"{target}: holds {len(launches)} separate runs ({shown}); open one of them, "
                       "or all with open_runs (grpo-diagnose and the dashboard take each as a run)")
    return src.open(launches[0] if launches else str(target))


def open_runs(target: str | Path, source: str | None = None) -> list[Run]:
    """Every run a target holds: one per launch (named `PARENT#LAUNCH`), or the one run it is."""
    src = _source_for(target, source)
    return [src.open(t) for t in launches_of(target, src.name) or [str(target)]]


def source_names() -> list[str]:
    """The names `open_run(target, source)` takes, sorted."""
    _load_readers()
    return sorted(SOURCES)


def missing_hint(source: str, what: str) -> str | None:
    """How a user of `source` gets `what` ("samples", "config", "live") into their run, if the reader says."""
    _load_readers()
    src = SOURCES.get(source)
    return src.hints.get(what) if src else None


def infos_for(path: Path, stale_after_s: float = STALE_AFTER_S,
              open_foreign: Callable[[Path], Run] | None = None, source: str | None = None) -> list[RunInfo] | None:
    """Runs-table lines for `path` when some source recognises it (one per launch), else None; `source`
    names the reader to use instead of asking each one (an unknown name is a RunError).

    A launch's line has the launch's own target as its path (a sub-folder, or `PATH#LAUNCH`: a `Path`
    whose last part holds the `#`), which is what `open_run` and `open_foreign` are then given.
    """
    for src in [_source_for(path, source)] if source else _ordered():
        if source is None and not src.detect(str(path)):
            continue
        if src.info is not None:
            return [src.info(path, stale_after_s)]
        try:
            launches = launches_of(path, src.name)
        except RunError as e:
            return [RunInfo(path, path.name, src.name, "unknown", None, None, str(e))]
        targets = [Path(t) for t in launches] or [path]
        return [_read_info(t, src, stale_after_s, open_foreign) for t in targets]
    return None


def info_for(path: Path, stale_after_s: float = STALE_AFTER_S,
             open_foreign: Callable[[Path], Run] | None = None) -> RunInfo | None:
    """The first runs-table line for `path` (see `infos_for`), or None."""
    infos = infos_for(path, stale_after_s, open_foreign)
    return infos[0] if infos else None


def _read_info(target: Path, src: Source, stale_after_s: float,
               open_foreign: Callable[[Path], Run] | None) -> RunInfo:
    # no summary file: the run is read; a caller that keeps runs open hands over its own copy
    try:
        run = open_foreign(target) if open_foreign else src.open(str(target))
    except RunError as e:
        return RunInfo(target, target.name, src.name, "unknown", None, None, str(e))
    if open_foreign is None:
        run.stale_after_s = stale_after_s
    return RunInfo(target, run.name, run.meta.source, run.status, run.last_step, run.last_update)


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
READER_MODULES: list[str] = ["collectors.readers.tensorboard.logdir", "collectors.readers.tensorboard.scalar_csv", "collectors.readers.verl.console", "collectors.readers.trl.output_dir",
                             "collectors.readers.wandb.offline", "collectors.readers.wandb.online",
                             "collectors.readers.wandb.chart_csv", "collectors.readers.text.generic",
                             "collectors.readers.text.kvtext", "collectors.readers.text.texttable", "collectors.readers.trl.console",
                             "collectors.readers.trl.notebook",
                             "collectors.readers.openrlhf.console",
                             "collectors.readers.stores.trackio", "collectors.readers.stores.mlflow_store",
                             "collectors.readers.stores.swanlab"]

"""Finding runs under a root folder: our run folders and every foreign run a registered reader recognises.

What a root guarantees (docs/reliability.md, "What a root holds"):

- A folder that holds run folders is a folder of runs: a log file beside them (a stray `0.jsonl`,
  `metrics.jsonl`, an event file) is one more run, never the one run that hides the others. Discovery goes on
  into every sub-folder that the reader of a folder's own run does not read as part of it (`Source.parts`).
- Nothing outside the roots is opened, even to list it: before a reader looks at a folder's files, the folder's
  entries and the sub-folders its reader would read are checked for links that lead out of the roots; such a
  link is a line of its own (or the run that holds it is one line), saying it was not read, never naming the
  link's target. Links are never followed into folders; a link into another root is fine.
- A named pipe, socket or device named like a log is a line saying it was skipped; it is never opened.
- One entry that cannot be read is one line with the reason; it never ends the listing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from collectors.meta import RUN_JSON, STALE_AFTER_S, RunError
from collectors.oserrors import access_refusal, cannot_read, is_loop, where
from collectors.run import Run, RunInfo
from collectors.sources import detect_source, get_source, infos_for

# not "wandb": that folder is walked, because each of its offline-run-* folders is a run
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "metrics", "samples"}
# never read by any reader: not checked for links (a virtualenv's bin/python leads out of every root)
_UNREAD_DIRS = _SKIP_DIRS - {"metrics", "samples"}
LINK_DEPTH = 3  # levels below a folder a reader reads (wandb/run-*/files/output.log)
LINK_LIMIT = 20_000  # entries looked at for links below one folder; more is refused, not read unchecked

_LOG_NAMES = (".log", ".txt", ".jsonl", ".csv", ".json", ".wandb", ".parquet")
OUTSIDE = "a link that leads outside the roots: not opened"
LOOP = "a loop of symbolic links: not opened"


def special_files(folder: Path, names: Iterable[str]) -> list[RunInfo]:
    """A line for each file named like a log that is a named pipe, socket or device: skipped, never opened
    (reading a pipe waits for a writer forever), or that this user may not read; said, so a user looking for
    that log knows why."""
    out = []
    for name in names:
        if not (name.endswith(_LOG_NAMES) or "tfevents" in name):
            continue
        try:
            mode = os.stat(folder / name).st_mode
        except OSError:
            continue  # vanished, or a dangling link
        if stat.S_ISREG(mode) and not os.access(folder / name, os.R_OK):  # a log this user may not read: said
            out.append(RunInfo(folder / name, name, "unknown", "unknown", None, None, f"no permission to read {name}"))
        elif not stat.S_ISREG(mode):
            kind = "a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
            out.append(RunInfo(folder / name, name, "unknown", "unknown", None, None,
                               f"{kind}, not a regular file: skipped"))
    return out


def _inside(path: Path, allowed: list[Path]) -> bool:
    return any(path == a or path.is_relative_to(a) for a in allowed)


def _leads_out(entry: os.DirEntry, allowed: list[Path]) -> bool:
    """A symlink whose target (followed to the end; a dangling one as written) is outside every root, or a
    loop of links (which leads nowhere: opening it fails, and Path.resolve() raises RuntimeError)."""
    try:
        real = Path(entry.path).resolve()
    except (OSError, RuntimeError):  # a loop of links
        return True
    return not _inside(real, allowed)


def link_words(link: Path) -> str:
    """What a link refused by `outside_links` is: a loop of links, or a link leading out (its target unnamed)."""
    try:
        Path(link).resolve()
    except (OSError, RuntimeError) as e:
        if is_loop(e):
            return LOOP
    return OUTSIDE


class TooMany(Exception):
    """More entries below a folder than LINK_LIMIT: it is not read, rather than read unchecked."""


def outside_links(folder: Path, allowed: list[Path], names: Iterable[str] | None = None,
                  depth: int = LINK_DEPTH, limit: int | None = LINK_LIMIT) -> list[Path]:
    """The symlinks in `folder` that lead outside every path of `allowed` (resolved roots), looked for in its
    own entries and, down to `depth` levels, in its sub-folders (only those called `names`, when given).
    Links are listed, never followed. Raises TooMany past `limit` entries (None: no limit)."""
    found: list[Path] = []
    seen = 0
    level: list[tuple[Path, int]] = [(folder, 1)]
    while level:
        below = []
        for d, lvl in level:
            try:
                with os.scandir(d) as it:
                    entries = list(it)
            except OSError:
                continue
            seen += len(entries)
            if limit is not None and seen > limit:
                raise TooMany(f"more than {limit:,} entries below it")
            for e in sorted(entries, key=lambda e: e.name):
                if e.name in _UNREAD_DIRS:  # no reader looks in a virtualenv or .git (whose links lead out)
                    continue
                if e.is_symlink():
                    if _leads_out(e, allowed):
                        found.append(Path(e.path))
                elif lvl < depth and e.is_dir(follow_symlinks=False) and (
                        d != folder or names is None or e.name in names):
                    below.append((Path(e.path), lvl + 1))
        level = below
    return found


def _refused(folder: Path, link: Path, source: str = "unknown") -> RunInfo:
    """One line for a run not read because `link`, inside it, leads outside the roots (the target unnamed)."""
    return RunInfo(folder, folder.name, source, "unknown", None, None,
                   f"{link.relative_to(folder).as_posix()} is {link_words(link)}; this run is not read")


def link_refusal(folder: Path, allowed: list[Path], source: str | None = None) -> str | None:
    """Why the run in `folder` (read by `source`, or by whichever reader recognises it) must not be read:
    a link in it that leads outside `allowed`, or too many entries to check; None when it may be read.
    Looks at the folder's own entries first, so no reader reads a file of it before this says yes."""
    direct = outside_links(folder, allowed, depth=1, limit=None)
    if direct:
        return f"{direct[0].relative_to(folder).as_posix()} is {link_words(direct[0])}"
    try:
        deep = outside_links(folder, allowed, _parts(folder, source or detect_source(folder)))
    except TooMany as e:
        return f"{folder.name}: {e}; not read"
    return f"{deep[0].relative_to(folder).as_posix()} is {link_words(deep[0])}" if deep else None


def _parts(folder: Path, source: str | None) -> set[str] | None:
    """The sub-folders of `folder` its reader reads (Source.parts); None: all of them (no reader, or it says so)."""
    src = get_source(source) if source else None
    return None if src is None or src.parts is None else set(src.parts(str(folder)))


def _walkable(folder: Path, names: list[str]) -> list[str]:
    return sorted(d for d in names if d not in _SKIP_DIRS and not d.startswith(".")
                  and not os.path.islink(folder / d))


def _is_native(folder: Path) -> bool:
    return os.path.lexists(folder / RUN_JSON)  # a run.json that is a link counts: it is not followed here


def discover_runs(root: Path | str, stale_after_s: float = STALE_AFTER_S,
                  open_foreign: Callable[[Path], Run] | None = None,
                  inside: Iterable[Path | str] | None = None) -> list[RunInfo]:
    """Every run under `root` (our folders, and foreign ones that a registered source recognises); a folder
    holding several launches gives one line per launch, its path `FOLDER#LAUNCH`.

    Foreign runs have no summary file, so their line needs the run read; `open_foreign(path)` lets a caller
    that keeps runs open (the dashboard) hand over its own, refreshed, instead of a second copy.
    `inside`: the folders links may lead into (the dashboard's roots); default `root` alone.
    """
    root = Path(root)
    found: list[RunInfo] = []
    if not root.is_dir():
        return found
    allowed = [Path(p).resolve() for p in (inside if inside is not None else [root])]
    if root.resolve() not in allowed:
        allowed.append(root.resolve())
    def unlisted(e: OSError) -> None:  # a folder this user may not list: a line, and the walk goes on
        where_ = Path(e.filename or root)
        found.append(RunInfo(where_, where_.name, "unknown", "unknown", None, None, cannot_read(where_.name, e)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=unlisted):
        here = Path(dirpath)
        walk, lines = _look(here, dirnames, filenames, allowed, stale_after_s, open_foreign)
        found.extend(lines)
        dirnames[:] = walk
    found.sort(key=lambda r: (-(r.last_update or 0), r.name))
    return found


def _look(here: Path, dirnames: list[str], filenames: list[str], allowed: list[Path], stale_after_s: float,
          open_foreign: Callable[[Path], Run] | None) -> tuple[list[str], list[RunInfo]]:
    """(sub-folders to walk, lines) for one folder of the walk."""
    walk = _walkable(here, dirnames)
    if (denied := access_refusal(here)) is not None:  # listed, but its entries cannot be opened (no `x`)
        return [], [RunInfo(here, here.name, "unknown", "unknown", None, None, f"no permission to read {here.name}"
                            if denied.startswith("no permission") else denied)]
    direct = outside_links(here, allowed, depth=1, limit=None)  # the walk listed them all already
    if direct:
        if _is_native(here):  # our run folder: one line, nothing of it read
            return [], [_refused(here, direct[0])]
        # its own files are not read (a reader would open the link); its sub-folders are walked as usual
        links = [RunInfo(link, link.name, "unknown", "unknown", None, None, link_words(link)) for link in direct]
        return walk, links + special_files(here, [f for f in filenames if here / f not in direct])
    try:
        name = detect_source(here)
        parts = _parts(here, name) if name else None
    except Exception as e:  # noqa: BLE001 - a reader's bug on one folder is that folder's line, not the page's end
        return walk, [_unreadable(here, e)]
    if name is None:
        return walk, special_files(here, filenames)
    rest = [] if parts is None else [d for d in walk if d not in parts]
    try:
        deep = outside_links(here, allowed, parts)
    except TooMany as e:
        return rest, [RunInfo(here, here.name, name, "unknown", None, None, f"{e}; not read")]
    if deep:
        return rest, [_refused(here, deep[0], "unknown" if _is_native(here) else name)]
    try:
        infos = infos_for(here, stale_after_s, open_foreign, source=name) or []
    except Exception as e:  # noqa: BLE001 - as above
        return rest, [_unreadable(here, e)]
    launched = {i.path.name for i in infos if i.path.parent == here}  # launches that are sub-folders
    notes = [] if parts is None else special_files(here, filenames)
    return [d for d in rest if d not in launched], infos + notes


def _unreadable(here: Path, e: Exception) -> RunInfo:
    why = str(e) if isinstance(e, RunError) else cannot_read(where(e, here.name), e) if isinstance(e, OSError) \
        else f"{type(e).__name__}: {e}"
    return RunInfo(here, here.name, "unknown", "unknown", None, None, f"could not be read: {why}")

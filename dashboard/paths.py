"""Where runs may be opened from: the roots given at launch, and run keys that stay inside them.

A run is named in the URL by a key `<root label>/<path inside that root>` (e.g. `sample_runs/healthy`; one
launch of a folder holding several ends in `#<launch>`, as `collectors.open_run` names it),
so a shared link opens the same run on another machine with the same roots. A key is resolved only inside
its root: absolute paths, `..`, and symlinks that lead outside are refused with a message; so is a run that
holds a link leading outside the roots (`collectors.discovery.link_refusal`, the check discovery makes before
it reads a folder).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from collectors.discovery import link_refusal
from collectors.meta import RunError
from collectors.oserrors import cannot_read, is_loop
from collectors.oserrors import where as named_in
from collectors.sources import launch_target, split_launch

ROOTS_ENV = "GRPOSCOPE_ROOTS"  # os.pathsep-separated roots; set by grpo-dash
STALE_ENV = "GRPOSCOPE_STALE_AFTER_S"  # seconds of silence before a running run is shown as stale
SOURCE_ENV = "GRPOSCOPE_SOURCE"  # a reader name: each root is then one run read by it (grpo-dash --source)
BUNDLED_SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"


MAX_KEY = 1024  # characters in a run key; a longer one is no path any filesystem here takes


class PathRefused(ValueError):
    """A run key that names something outside the configured roots, or nothing at all."""


@dataclass(frozen=True)
class Root:
    label: str  # first component of a run key
    path: Path  # absolute


def default_roots(cwd: Path | None = None) -> list[Path]:
    """./runs and the bundled sample_runs/ (only when the package sits in its source tree: an installed wheel
    has none, and a root that cannot exist is not watched)."""
    cwd = Path.cwd() if cwd is None else cwd
    return [cwd / "runs"] + ([BUNDLED_SAMPLES] if BUNDLED_SAMPLES.is_dir() else [])


def roots_from_env(environ: dict[str, str] | None = None) -> list[Root]:
    environ = os.environ if environ is None else environ
    raw = environ.get(ROOTS_ENV, "")
    paths = [Path(p) for p in raw.split(os.pathsep) if p] if raw else default_roots()
    return make_roots(paths)


def forced_source(environ: dict[str, str] | None = None) -> str | None:
    """The reader every root is read with (`grpo-dash --source NAME`), or None: discovery as usual."""
    environ = os.environ if environ is None else environ
    return environ.get(SOURCE_ENV) or None


def make_roots(paths: list[Path | str]) -> list[Root]:
    """Label each root by its folder name; a repeated name gets a suffix (`runs`, `runs-2`)."""
    roots: list[Root] = []
    seen: set[str] = set()
    for p in paths:
        path = Path(p).expanduser().resolve()
        if any(r.path == path for r in roots):
            continue
        base = path.name or "root"
        label, i = base, 2
        while label in seen:
            label, i = f"{base}-{i}", i + 1
        seen.add(label)
        roots.append(Root(label, path))
    return roots


def run_key(roots: list[Root], path: Path | str) -> str:
    """The URL key of a run found under one of the roots: from the path as discovery walked it, links not
    followed (a link in a root is named by where it lies; opening it is what resolve_run checks)."""
    path = Path(os.path.abspath(path))
    for root in roots:
        if path == root.path or path.is_relative_to(root.path):
            rel = path.relative_to(root.path).as_posix()
            return root.label if rel == "." else f"{root.label}/{rel}"
    raise PathRefused(f"{path.name} is not inside any root")


def resolve_run(roots: list[Root], key: str) -> Path:
    """The folder a run key names, checked to lie inside its root. Raises PathRefused with the reason."""
    where = "runs are opened only inside the roots: " + ", ".join(f"{r.label} ({r.path})" for r in roots)
    if not key or "\x00" in key:
        raise PathRefused(f"empty run name; {where}")
    if len(key) > MAX_KEY or any(len(p.encode()) > 255 for p in key.split("/")):
        raise PathRefused(f"a run name of {len(key)} characters refused: longer than a path can be; {where}")
    if "\\" in key or key.startswith("/") or (len(key) > 1 and key[1] == ":"):
        raise PathRefused(f"run {key!r} refused: an absolute path is not allowed; {where}")
    if any(p.partition("#")[0] in ("..", ".", "") for p in key.split("/")):
        raise PathRefused(f"run {key!r} refused: '..', '.' and empty parts are not allowed in a run name; {where}")
    parts = PurePosixPath(key).parts
    root = next((r for r in roots if r.label == parts[0]), None)
    if root is None:
        raise PathRefused(f"run {key!r} refused: {parts[0]!r} is not a configured root; {where}")
    try:
        # one launch of a folder holding several: `<folder>#<launch>`, checked as the folder
        base, launch = split_launch(root.path.joinpath(*parts[1:]))
        target = Path(base).resolve()
        if not (target == root.path or target.is_relative_to(root.path)):
            raise PathRefused(f"run {key!r} refused: it leads outside its root (symlink); {where}")
        if not (target.is_dir() or target.is_file()):  # a file: a log a reader named as a run (a CSV, a JSONL)
            raise PathRefused(f"run {key!r} not found under {root.path}")
        # a file is read with what lies beside it (a config*.yaml, a TRL folder's checkpoints): its folder
        why = link_refusal(target if target.is_dir() else target.parent, [r.path for r in roots])
    except (OSError, RuntimeError) as e:  # a name the filesystem refuses, a folder that cannot be listed, a
        # loop of links (Python 3.11's Path.resolve() raises RuntimeError for one, not OSError)
        if not isinstance(e, OSError) and not is_loop(e):
            raise
        raise PathRefused(f"run {key!r} cannot be opened ({cannot_read(named_in(e, key), e)})") from None
    except RunError as e:  # a reader's own refusal while it was asked whether it knows the folder
        raise PathRefused(f"run {key!r} cannot be opened ({e})") from None
    if why is not None:
        raise PathRefused(f"run {key!r} refused: {why}; {where}")
    return target if launch is None else Path(launch_target(target, launch))

"""Where runs may be opened from: the roots given at launch, and run keys that stay inside them.

A run is named in the URL by a key `<root label>/<path inside that root>` (e.g. `sample_runs/healthy`; one
launch of a folder holding several ends in `#<launch>`, as `collectors.open_run` names it),
so a shared link opens the same run on another machine with the same roots. A key is resolved only inside
its root: absolute paths, `..`, and symlinks that lead outside are refused with a message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

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
    """./runs and the bundled sample_runs/ (when the package sits in its source tree)."""
    cwd = Path.cwd() if cwd is None else cwd
    return [cwd / "runs", BUNDLED_SAMPLES]


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
    """The URL key of a run folder found under one of the roots."""
    path = Path(path).resolve()
    for root in roots:
        if path == root.path or path.is_relative_to(root.path):
            rel = path.relative_to(root.path).as_posix()
            return root.label if rel == "." else f"{root.label}/{rel}"
    raise PathRefused(f"{path} is not inside any root")


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
        outside = link_outside(target, roots) if target.is_dir() else None
    except OSError as e:  # a name the filesystem refuses, a folder that cannot be listed
        raise PathRefused(f"run {key!r} cannot be opened ({e.strerror or e})") from None
    if outside is not None:
        raise PathRefused(f"run {key!r} refused: {outside.relative_to(target)} is a link to a file outside the "
                          f"roots; {where}")
    return target if launch is None else Path(launch_target(target, launch))


def link_outside(folder: Path, roots: list[Root], depth: int = 3, limit: int = 20_000) -> Path | None:
    """The first symlink in `folder` (up to `depth` levels, `limit` entries) that leads outside every root:
    a run.json, part or log linked to a file elsewhere would show that file's data."""
    level, seen = [folder], 0
    for _ in range(depth):
        below = []
        for d in level:
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            for e in entries:
                seen += 1
                if seen > limit:
                    return None
                if e.is_symlink():
                    real = Path(e.path).resolve()
                    if not any(real == r.path or real.is_relative_to(r.path) for r in roots):
                        return Path(e.path)
                elif e.is_dir(follow_symlinks=False):
                    below.append(Path(e.path))
        level = below
    return None

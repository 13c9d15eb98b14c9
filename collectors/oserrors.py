"""An operating system's refusal to read a file, said in plain words naming the file.

Python's own text (`[Errno 13] Permission denied: '/runs/a/metrics'`, `Symlink loop from '...'`) is what a user
of a shared machine meets when a colleague's run folder is not readable to them; these say what happened and
which file, and nothing of Python. Readers and discovery use them, so one unreadable file is one line, and the
rest of a folder or a run is still listed and read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_DENIED = (errno.EACCES, errno.EPERM)


def is_loop(e: BaseException) -> bool:
    """A loop of symbolic links: the kernel's ELOOP, or pathlib's own RuntimeError ("Symlink loop from ...",
    Python 3.11's Path.resolve(), which walks the links itself)."""
    return (isinstance(e, OSError) and e.errno == errno.ELOOP) or (
        isinstance(e, RuntimeError) and "Symlink loop" in str(e))


def cannot_read(path: Path | str, e: BaseException) -> str:
    """`e` (raised reading `path`) in words: "no permission to read PATH", "PATH is a loop of symbolic links",
    else "cannot read PATH (the system's reason)"."""
    if isinstance(e, OSError) and e.errno in _DENIED:
        return f"no permission to read {path}"
    if is_loop(e):
        return f"{path} is a loop of symbolic links"
    why = e.strerror if isinstance(e, OSError) and e.strerror else type(e).__name__
    return f"cannot read {path} ({why})"


def where(e: OSError, default: Path | str) -> Path | str:
    """The file an OSError names (the one refused, deeper than the folder asked for), else `default`."""
    return e.filename if isinstance(e, OSError) and e.filename else default


def access_refusal(target: Path | str) -> str | None:
    """Why this user may not read `target` (a file or folder on disk), in words; None when it may, or when it
    is no path on disk (a URI, a launch a reader names): asked before any reader looks, so a folder that cannot
    be searched is named itself, not a `run.json` inside it that a reader tried (and that may not exist)."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return None
    except OSError as e:  # a folder above it that cannot be searched, a loop of links; else the reader's say
        return cannot_read(target, e) if e.errno in _DENIED or is_loop(e) else None
    mode = os.R_OK | (os.X_OK if stat.S_ISDIR(st.st_mode) else 0)
    return None if os.access(target, mode) else f"no permission to read {target}"

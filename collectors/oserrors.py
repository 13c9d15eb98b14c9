"""An operating system's refusal to read a file, said in plain words naming the file.

Python's own text (`[Errno 13] Permission denied: '/runs/a/metrics'`, `Symlink loop from '...'`) is what a user
of a shared machine meets when a colleague's run folder is not readable to them; these say what happened and
which file, and nothing of Python. Readers and discovery use them, so one unreadable file is one line, and the
rest of a folder or a run is still listed and read.
"""

from __future__ import annotations

import errno
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

"""grpo-dash's output through a relay that never breaks, so the server always stops on SIGTERM and SIGINT.

Streamlit prints to stdout (its URL, "Stopping...") and logs to stderr. Piped into a reader that has gone
(`grpo-dash runs | head -8`), such a write raises BrokenPipeError; raised in Streamlit's signal handler it ended the
handler before the server stopped, so `timeout 20 grpo-dash ... | head -8` left the server up until SIGKILL
(issue 39). Here a forked process reads what the server writes to a pipe and copies it on, dropping it once the
reader is gone; the server itself (which grpo-dash becomes by exec) never meets a closed pipe. The relay ignores
SIGINT and SIGTERM and ends when the server's end of the pipe closes (it exits, or is killed), so it outlives the
server only by what is left to copy, and is never left behind.
"""

from __future__ import annotations

import os
import selectors
import signal
import sys

CHUNK = 65536


def relay_output(fds: tuple[int, ...] = (1, 2)) -> None:
    """Put a relay between this process and each of `fds` that is not a terminal (a pipe or a file); a terminal
    is left as it is (it does not break when read no more). Call right before exec: the exec'd program writes
    into the relay's pipes. No-op where fork is not available."""
    fds = tuple(fd for fd in fds if not _isatty(fd))
    if not fds or not hasattr(os, "fork"):
        return
    pipes = {fd: os.pipe() for fd in fds}
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:  # the relay
        try:
            for r, w in pipes.values():
                os.close(w)
            _copy({r: fd for fd, (r, _) in pipes.items()})
        finally:
            os._exit(0)
    for fd, (r, w) in pipes.items():
        os.close(r)
        os.dup2(w, fd)
        os.close(w)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return True  # a closed descriptor: nothing to relay


def _copy(sources: dict[int, int]) -> None:
    """Copy each pipe (read end -> the fd it stands for) until every writer has closed; a destination that fails
    (its reader left) is dropped and what would go there is read and discarded."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: keep copying until EOF
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sel = selectors.DefaultSelector()
    for r, fd in sources.items():
        sel.register(r, selectors.EVENT_READ, fd)
    live = dict(sources)
    while live:
        for key, _ in sel.select():
            chunk = os.read(key.fd, CHUNK)
            if not chunk:
                sel.unregister(key.fd)
                live.pop(key.fd)
                continue
            dest = key.data
            if dest is not None:
                try:
                    _write_all(dest, chunk)
                except OSError:  # the reader has gone (EPIPE): keep draining, write nowhere
                    sel.modify(key.fd, selectors.EVENT_READ, None)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]

"""Which files of a folder any process opens, by Linux inotify (IN_OPEN, IN_ACCESS): the proof that nothing
outside a root is read, by this process or by a dashboard server started from it. Linux only; `available()`
says whether it works here (some container filesystems give no events)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import time
from pathlib import Path

IN_ACCESS, IN_OPEN, IN_NONBLOCK = 0x1, 0x20, 0o4000
_EVENT = struct.Struct("iIII")


def _libc():
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name or "libc.so.6", use_errno=True)


class OpenWatch:
    """Watch folders for opens and reads of the files directly in them; `opened()` lists those names."""

    def __init__(self, *folders: Path) -> None:
        self._libc = _libc()
        self.fd = self._libc.inotify_init1(IN_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.folders: dict[int, Path] = {}
        for f in folders:
            wd = self._libc.inotify_add_watch(self.fd, str(f).encode(), IN_OPEN | IN_ACCESS)
            if wd < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {f}")
            self.folders[wd] = Path(f)
        self.seen: list[Path] = []

    def opened(self) -> list[Path]:
        """Every file opened or read since the watch began (the folder itself, listed, as the folder)."""
        while True:
            try:
                buf = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return list(self.seen)
            at = 0
            while at < len(buf):
                wd, _mask, _cookie, size = _EVENT.unpack_from(buf, at)
                name = buf[at + _EVENT.size: at + _EVENT.size + size].rstrip(b"\0").decode()
                self.seen.append(self.folders.get(wd, Path("?")) / name)
                at += _EVENT.size + size

    def close(self) -> None:
        os.close(self.fd)


def available(tmp: Path) -> bool:
    """Whether an open of a file in `tmp` is seen here."""
    (tmp / "probe").write_text("x")
    try:
        w = OpenWatch(tmp)
    except OSError:
        return False
    try:
        (tmp / "probe").read_text()
        time.sleep(0.05)
        return any(p.name == "probe" for p in w.opened())
    finally:
        w.close()

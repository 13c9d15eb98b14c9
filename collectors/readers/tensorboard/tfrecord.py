"""TFRecord framing (TensorBoard event files), read from a kept byte offset with a native CRC32C check.

Each record is: length (uint64 LE), masked CRC32C of those 8 bytes (uint32), data, masked CRC32C of the
data (uint32). TensorBoard's own reader checks the CRC in pure Python when TensorFlow is absent (about
half of an event file's read time); here the CRC is computed by `google_crc32c` (Google's C library), or
`crc32c` when that is what is installed, and falls back to TensorBoard's pure-Python one only if neither is.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

_HEAD = struct.Struct("<QI")
_U32 = struct.Struct("<I")


def _native_crc() -> Callable[[bytes], int] | None:
    try:
        import google_crc32c

        if google_crc32c.implementation == "c":
            return google_crc32c.value
    except ImportError:
        pass
    try:
        import crc32c

        return crc32c.crc32c
    except ImportError:
        return None


def _python_crc() -> Callable[[bytes], int]:
    from collectors.extras import require

    return require("tensorboard.compat.tensorflow_stub.pywrap_tensorflow", "tensorboard",
                   "reading TensorBoard event files").crc32c


CRC32C = _native_crc()
NATIVE_CRC = CRC32C is not None


def masked(crc: int) -> int:
    """TFRecord's masked CRC: rotate right by 15 bits and add a constant (tensorflow/core/lib/hash/crc32c.h)."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class RecordReader:
    """The records appended to one file since the last `read()`; stops at a partial record (still being
    written, read again next time) and for good at a CRC mismatch (`error` says where)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.error: str | None = None

    def read(self, limit: int | None = None) -> list[bytes]:
        """The new records; with `limit`, at most that many, reading only as many bytes as they need."""
        if self.error:
            return []
        size = None if limit is None else 1 << 16
        while True:
            data, at_end = self._bytes(size)
            if data is None:
                return []
            out, pos = self._frame(data, limit)
            if out or at_end:
                self.offset += pos
                return out
            size *= 4  # a record larger than what was read: read more

    def _bytes(self, size: int | None) -> tuple[bytes | None, bool]:
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read() if size is None else f.read(size)
        except OSError as e:
            self.error = f"cannot read ({e.strerror})"
            return None, True
        return data, size is None or len(data) < size

    def _frame(self, data: bytes, limit: int | None) -> tuple[list[bytes], int]:
        crc = CRC32C or _python_crc()
        out: list[bytes] = []
        pos, n = 0, len(data)
        while pos + 12 <= n and (limit is None or len(out) < limit):
            length, length_crc = _HEAD.unpack_from(data, pos)
            c = crc(data[pos : pos + 8])  # masked as in `masked`, inline: this loop runs once per record
            if (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF != length_crc:
                self.error = f"corrupt record at byte {self.offset + pos} (CRC mismatch); later events skipped"
                break
            end = pos + 12 + length
            if end + 4 > n:
                break  # a writer mid-record
            body = data[pos + 12 : end]
            c = crc(body)
            if (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF != _U32.unpack_from(data, end)[0]:
                self.error = f"corrupt record at byte {self.offset + pos} (CRC mismatch); later events skipped"
                break
            out.append(body)
            pos = end + 4
        return out, pos

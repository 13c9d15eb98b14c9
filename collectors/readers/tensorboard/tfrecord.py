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

import numpy as np

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
        """The complete records at the start of `data` (at most `limit`) and the bytes they span, up to the
        first CRC mismatch (then `error` says where). The walk from length to length is the only loop per
        record; the CRCs are checked per record length (`crc_ok`)."""
        walk = struct.Struct("<Q").unpack_from
        offsets: list[int] = []
        lengths: list[int] = []
        pos, n = 0, len(data)
        while pos + 12 <= n and (limit is None or len(offsets) < limit):
            length = walk(data, pos)[0]
            if pos + 16 + length > n:
                break  # a writer mid-record (or a damaged length: its header CRC says which)
            offsets.append(pos)
            lengths.append(length)
            pos += 16 + length
        records = [data[o + 12:o + 12 + k] for o, k in zip(offsets, lengths, strict=True)]
        good = crc_ok(data, np.array(offsets, dtype=np.int64), np.array(lengths, dtype=np.int64), records)
        if not good.all():
            bad = int(np.argmin(good))
            self.error = f"corrupt record at byte {self.offset + offsets[bad]} (CRC mismatch); later events skipped"
            return records[:bad], offsets[bad]
        if pos + 12 <= n and (limit is None or len(offsets) < limit) and not _header_ok(data, pos):
            self.error = f"corrupt record at byte {self.offset + pos} (CRC mismatch); later events skipped"
        return records, pos


def _crc() -> Callable[[bytes], int]:
    return CRC32C or _python_crc()


def _header_ok(data: bytes, pos: int) -> bool:
    return masked(_crc()(data[pos:pos + 8])) == _U32.unpack_from(data, pos + 8)[0]


def crc_ok(data: bytes, offsets: np.ndarray, lengths: np.ndarray, records: list[bytes]) -> np.ndarray:
    """Whether each framed record's two CRCs hold (bool per record). The length's CRC depends on the length
    only: one per distinct length. The data's CRC is computed for all records of one length at once, byte
    column by byte column with numpy (`crc32c_rows`), when that is cheaper than one native call per record
    (many short records, as torch's one-scalar events), else per record."""
    ok = np.ones(len(offsets), dtype=bool)
    if not len(offsets):
        return ok
    buf = np.frombuffer(data, dtype=np.uint8)
    stored = _u32_at(buf, offsets + 8)
    for length in np.unique(lengths).tolist():
        ok[lengths == length] = masked(_crc()(struct.pack("<Q", length))) == stored[lengths == length]
    stored = _u32_at(buf, offsets + 12 + lengths)
    by_length = np.argsort(lengths, kind="stable")
    for idx in np.split(by_length, np.flatnonzero(np.diff(lengths[by_length])) + 1):
        size = int(lengths[idx[0]])
        if size and size * (15 + len(idx) * 0.005) < len(idx) * 0.5:  # est. µs: numpy columns vs native calls
            rows = np.frombuffer(b"".join([records[i] for i in idx.tolist()]), dtype=np.uint8).reshape(-1, size)
            crcs = _masked_rows(crc32c_rows(rows))
        else:
            crc = _crc()
            crcs = np.array([masked(crc(records[i])) for i in idx.tolist()], dtype=np.uint32)
        ok[idx] &= crcs == stored[idx]
    return ok


def _u32_at(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    return buf[at[:, None] + np.arange(4)].copy().view("<u4").reshape(-1)


def _crc32c_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):  # reflected Castagnoli polynomial
        table = np.where(table & 1, (table >> 1) ^ np.uint32(0x82F63B78), table >> 1).astype(np.uint32)
    return table


_TABLE = _crc32c_table()


def crc32c_rows(rows: np.ndarray) -> np.ndarray:
    """CRC32C of each row of a (n, k) uint8 matrix: the byte-at-a-time table algorithm, run on all rows at
    once (k steps of n-wide array operations). Equal to google_crc32c.value(row.tobytes()) for every row."""
    crc = np.full(len(rows), 0xFFFFFFFF, dtype=np.uint32)
    for j in range(rows.shape[1]):
        crc = _TABLE[(crc ^ rows[:, j]) & 0xFF] ^ (crc >> 8)
    return crc ^ np.uint32(0xFFFFFFFF)


def _masked_rows(crc: np.ndarray) -> np.ndarray:
    return ((crc >> 15) | (crc << 17)) + np.uint32(0xA282EAD8)

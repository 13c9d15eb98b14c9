"""The record log of a `run-*.wandb` file: LevelDB-log framing, read for all 32 KiB blocks at once.

The file: a 7-byte header (`:W&B`, magic 0xBEE1, version 0), then 32 KiB blocks of chunks: crc32 (uint32,
over the type byte and the data), length (uint16), type (FULL, FIRST, MIDDLE, LAST), data; a block's last
< 7 bytes are padding. A record is one FULL chunk, or FIRST, MIDDLE..., LAST joined.
`RecordReader` keeps its byte offset, so a refresh on a file that is still being written reads only new chunks.
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import numpy as np

from collectors.readers.wandb.bulk import varint_len
from collectors.readers.wandb.history import record_type

BLOCK = 32 * 1024
HEADER = struct.pack("<4sHB", b":W&B", 0xBEE1, 0)
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
WINDOW = 256 * BLOCK  # bytes read and framed at a time
_KIND_CRC = [zlib.crc32(bytes([kind])) for kind in range(256)]  # a chunk's CRC starts with its type byte


class RecordReader:
    """The serialized records appended since the last read; stops at a partial chunk (still writing)."""

    def __init__(self, path: Path, header: bytes = HEADER, kind: str = "wandb run file") -> None:
        """header: the file's first 7 bytes (SwanLab's `.swanlab` files use the same framing under their own
        header); kind: what the file is called when the header is not that one."""
        self.path, self.header, self.kind = path, header, kind
        self.offset = 0
        # data of the FIRST/MIDDLE chunks waiting for their LAST, grown in place: joining a record of N chunks by
        # `bytes + bytes` copied it N times (a 50 MB record: 1,600 chunks, 24.7 s of CPU; now 0.1 s)
        self.pending = bytearray()
        self.pending_type: int | None = None  # the record type of that record, when its first bytes said
        self.passing = False  # the pending record is one of the types passed over
        self.error: str | None = None

    def read(self) -> list[bytes]:
        """Every record, whatever its type."""
        return [raw for _, raw in self.records()]

    def records(self, types: frozenset[int] = frozenset(),
                wanted: frozenset[int] = frozenset()) -> list[tuple[int | None, bytes]]:
        """(record type, bytes) of the records whose `record_type` field (one of `types`, the field numbers
        of Record's oneof) is in `wanted`, or cannot be told (None: the caller parses it whole); with no
        `types`, every record. The other records are passed over: neither joined nor CRC-checked.

        Why passing over is safe: a chunk's CRC guards its own bytes only, and the bytes of a record the
        reader never parses cannot change what it returns. A damaged length in such a chunk sends the walk
        of its block astray, but the next "chunk" is then read from the middle of record data, whose type
        byte is almost never 1-4 and whose length rarely fits the block (both refused below), and a record
        that is read is CRC-checked, so the damage is found at the latest there; it never reaches past the
        block, where the framing starts afresh. A chunk of a record that is read is checked as before: a
        damaged byte stops the read there with an error naming its offset."""
        out: list[tuple[int | None, bytes]] = []
        if self.error:
            return out
        try:
            f = self.path.open("rb")
        except OSError as e:
            self.error = f"cannot read ({e.strerror})"
            return out
        with f:
            if self.offset == 0:
                head = f.read(7)
                if len(head) < 7:
                    return out
                if head != self.header:
                    self.error = f"not a {self.kind} of a known version (bad header)"
                    return out
                self.offset = 7
            f.seek(self.offset)
            # a window of whole blocks at a time, into one buffer: reading a whole file into fresh memory
            # cost 5x more than this (the pages of a new buffer are faulted in one by one)
            buffer = memoryview(bytearray(max(0, min(WINDOW, os.fstat(f.fileno()).st_size - self.offset))))
            while not self.error:
                want = min(len(buffer), WINDOW - self.offset % BLOCK)
                size = f.readinto(buffer[:want])
                if not size:
                    break
                stop = self._window(buffer[:size], types, wanted, out)
                if size < want or stop < size:  # the end of the file, or of what is written so far
                    break
        if not types:
            return out
        typed = ((kind if kind is not None else record_type(raw, types), raw) for kind, raw in out)
        return [(kind, raw) for kind, raw in typed if kind is None or kind in wanted]

    def _window(self, data: memoryview, types: frozenset[int], wanted: frozenset[int],
                out: list[tuple[int | None, bytes]]) -> int:
        """The records of `data` (the file's bytes from `self.offset`, ending at a block's end or the end
        of the file) appended to `out`; moves the offset past what was read and returns how far that is."""
        arr = np.frombuffer(data, dtype=np.uint8)
        at, lengths, kinds, crcs, ends, stop = chunks(arr, self.offset)
        bad = np.flatnonzero((at + 7 + lengths > ends) | (kinds < FULL) | (kinds > LAST))
        last = int(bad[0]) if len(bad) else len(at)  # no chunk after a malformed one is read
        start = (kinds[:last] == FULL) | (kinds[:last] == FIRST)
        rec = np.cumsum(start) - 1  # a record number per chunk; -1: the record pending from before
        first_type = leading_type(arr, at[:last][start] + 7, lengths[:last][start], types)
        passed = np.isin(first_type, np.array(sorted(types - wanted), dtype=np.int64))
        picks = np.flatnonzero(~np.append(passed, self.passing)[rec])
        pick_types = np.append(first_type, -1 if self.pending_type is None else self.pending_type)[rec[picks]]
        if last < len(at):  # checked too, for the error it gives
            picks, pick_types = np.append(picks, last), np.append(pick_types, -1)
        stop = self._join(data, picks, at, lengths, kinds, crcs, ends, pick_types, stop, out)
        if self.error is None and len(rec) and (tail := int(rec[-1])) >= 0:  # a record may go on next time
            self.passing = bool(passed[tail])
            self.pending_type = int(first_type[tail]) if first_type[tail] >= 0 else None
        self.offset += stop
        return stop

    def _join(self, data: memoryview, picks: np.ndarray, at: np.ndarray, lengths: np.ndarray, kinds: np.ndarray,
              crcs: np.ndarray, ends: np.ndarray, types: np.ndarray, stop: int,
              out: list[tuple[int | None, bytes]]) -> int:
        """The chunks `picks` (in file order; `types`: their record's type, -1 unknown) CRC-checked and joined
        into records appended to `out`; returns where reading stops: at the first damaged chunk, else
        `stop`."""
        kind_crc = _KIND_CRC
        for pos, length, kind, crc, block_end, rtype in zip(
                at[picks].tolist(), lengths[picks].tolist(), kinds[picks].tolist(), crcs[picks].tolist(),
                ends[picks].tolist(), types.tolist(), strict=True):
            end = pos + 7 + length
            body = data[pos + 7:end].tobytes()
            if zlib.crc32(body, kind_crc[kind]) != crc or end > block_end:
                self.error = f"corrupt chunk at byte {self.offset + pos} (CRC mismatch); later records skipped"
                return pos
            if kind == FULL:
                out.append((rtype if rtype >= 0 else None, body))
            elif kind == FIRST:
                self.pending = bytearray(body)
            elif kind == MIDDLE:
                self.pending += body
            elif kind == LAST:
                self.pending += body
                out.append((rtype if rtype >= 0 else None, bytes(self.pending)))
                self.pending = bytearray()
            else:
                self.error = f"unknown chunk type {kind} at byte {self.offset + end}; later records skipped"
                return end
        return stop


def leading_type(arr: np.ndarray, body: np.ndarray, size: np.ndarray, types: frozenset[int]) -> np.ndarray:
    """Per record, from the `size` bytes of its first chunk at `body`: the field number of its record type
    when the bytes begin with it (after `num`, field 1, if present; a key of one or two bytes, a
    length-delimited field among `types`), else -1. All records at once."""
    n = len(arr)
    if not len(body) or not types:
        return np.full(len(body), -1, dtype=np.int64)
    has_num = arr[np.minimum(body, n - 1)] == 0x08
    num_len = varint_len(arr, body + 1)
    key_at = body + np.where(has_num, 1 + num_len, 0)
    b0 = arr[np.minimum(key_at, n - 1)].astype(np.int64)
    b1 = arr[np.minimum(key_at + 1, n - 1)].astype(np.int64)
    key = np.where(b0 < 0x80, b0, (b0 & 0x7F) | b1 << 7)
    key_len = np.where(b0 < 0x80, 1, np.where(b1 < 0x80, 2, 0))
    ok = ((~has_num | (num_len > 0)) & (key_len > 0) & (key_at + key_len <= body + size) & (key & 7 == 2)
          & np.isin(key >> 3, np.array(sorted(types), dtype=np.int64)))
    return np.where(ok, key >> 3, -1)


def chunks(arr: np.ndarray, offset: int) -> tuple[np.ndarray, ...]:
    """The chunks of LevelDB-log framing in `arr` (the file's bytes from `offset`), walked for all 32 KiB
    blocks at once, one chunk per block and round: (positions, data lengths, types, CRCs, their block's
    end), in file order, and the position where reading stops (a partial chunk in the last block, which
    the data ends inside: a writer mid-chunk; else the end of the data). A block ends at its end, at fewer
    than 7 bytes before it (padding) or at a zero-filled header; a chunk that runs past its block's end is
    given with it (the caller refuses it)."""
    n = len(arr)
    first = BLOCK - offset % BLOCK
    starts = np.concatenate(([0], np.arange(first, n, BLOCK))).astype(np.int64)
    block_ends = np.where(starts == 0, first, starts + BLOCK)
    pos, final = starts.copy(), block_ends.copy()
    found: list[tuple[np.ndarray, ...]] = []
    live = np.arange(len(starts))
    while len(live):
        p, e = pos[live], block_ends[live]
        padding = e - p < 7
        final[live[padding & (n - p < e - p)]] = p[padding & (n - p < e - p)]  # the data ends in the padding
        cut = ~padding & (n - p < 7)
        final[live[cut]] = p[cut]
        live, p, e = live[~padding & ~cut], p[~padding & ~cut], e[~padding & ~cut]
        crc = (arr[p].astype(np.int64) | arr[p + 1].astype(np.int64) << 8 | arr[p + 2].astype(np.int64) << 16
               | arr[p + 3].astype(np.int64) << 24)
        length = arr[p + 4].astype(np.int64) | arr[p + 5].astype(np.int64) << 8
        kind = arr[p + 6].astype(np.int64)
        zero = (length == 0) & (kind == 0) & (crc == 0)  # zero fill: the rest of the block is empty
        partial = ~zero & (p + 7 + length > n) & (e > n)  # a writer mid-chunk, in the last block written
        final[live[partial]] = p[partial]
        chunk = ~zero & ~partial
        found.append((p[chunk], length[chunk], kind[chunk], crc[chunk], e[chunk]))
        pos[live[chunk]] = p[chunk] + 7 + length[chunk]
        go_on = chunk & (p + 7 + length <= e)
        live = live[go_on]
    at, lengths, kinds, crcs, ends = (np.concatenate([f[i] for f in found]) if found else np.zeros(0, np.int64)
                                      for i in range(5))
    order = np.argsort(at, kind="stable")
    return at[order], lengths[order], kinds[order], crcs[order], ends[order], int(final[-1])

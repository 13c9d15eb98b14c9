"""Following a growing text log from a kept byte offset (verl console, JSONL, CSV, key-value and console logs).

The file is read in CHUNK-sized pieces, never in one `read()` from the offset to the end: a sparse or damaged
file (10 GB of NULs after one valid line, a log whose newlines were lost) would otherwise be taken into memory
whole. A line longer than MAX_LINE is passed over (its bytes are dropped as they are read, and the holes of a
sparse file are jumped over, not read), said once in a note, and replaced by an empty line so that the lines
after it keep their numbers.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from collectors.meta import RunError
from collectors.oserrors import cannot_read

CHUNK = 4 << 20  # bytes per read(): what is held beyond the lines returned is at most this and MAX_LINE
# A line this long is no log line: the longest of the 63 real runs' text logs is under 1 MiB (a TRL console
# dict of completions), and the readers are held to read lines of 5 MB (docs/reliability.md); 16 MiB leaves
# room for whole completions of long-context runs while a JSON parse of it stays well under the fuzz
# harness's 512 MB of peak memory per case.
MAX_LINE = 16 << 20
WINDOW = 256 << 20  # what is new up to this is read at once (a refresh of a log, most whole logs); beyond, by CHUNK


class LineTail:
    """Complete new lines of a growing file, from a kept byte offset; notes a rewrite (the file shrank).

    A last line without its newline is waited for while the file is fresh; once the file has not changed
    for SETTLED_S it is taken as written (a finished log often ends without a newline, and its last
    step must not be lost). `note` is told, once per line, of a line passed over for its length.
    """

    SETTLED_S = 10.0

    def __init__(self, path: Path, carriage_return_ends: bool = False,
                 note: Callable[[str], None] | None = None) -> None:
        self.path = path
        # a console's progress bars redraw in place ending with `\r`, and the line holding them only ends at the
        # next print: a reader of bars takes each finished `\r` segment as it comes, not a print later
        self.carriage_return_ends = carriage_return_ends
        self.offset = 0
        self.line_no = 0
        self.notes: list[str] = []  # what `note` was told (kept when there is no `note`)
        self._note = note
        self._skipping = False  # inside a line longer than MAX_LINE, passed over up to its end

    def read_bytes(self) -> tuple[bytes, int, bool, bool]:
        """(new complete lines as bytes, number of the first of them, rewritten?, an incomplete last line waits?).

        For readers that hand a whole block to a native parser (pyarrow), so the cost is per block, not per line.
        Raises RunError naming the file when it cannot be opened (no permission, a loop of links).
        """
        try:
            st = self.path.stat()
        except OSError:
            return b"", self.line_no + 1, False, False
        if not stat.S_ISREG(st.st_mode):  # a named pipe or a device: reading would wait forever
            return b"", self.line_no + 1, False, False
        rewritten = st.st_size < self.offset
        if rewritten:
            self.offset, self.line_no, self._skipping = 0, 0, False
        try:
            f = self.path.open("rb")
        except OSError as e:
            raise RunError(cannot_read(self.path, e)) from None
        with f:
            pieces, partial, end = self._whole(f, st.st_size) or self._take(f)
        first = self.line_no + 1
        if partial and time.time() - st.st_mtime > self.SETTLED_S:
            pieces.append(partial + b"\n")  # the writer is done with it: a complete last line
            end, partial = end + len(partial), b""
        block = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        self.line_no += block.count(b"\n")
        self.offset = end
        return block, first, rewritten, bool(partial)

    def _whole(self, f, size: int) -> tuple[list[bytes], bytes, int] | None:
        """What `_take` gives, in one read, for what is new when it is at most WINDOW bytes and no line in it
        is longer than MAX_LINE (the common case: a log read by a refresh); None otherwise."""
        if self._skipping or size - self.offset > WINDOW:
            return None
        f.seek(self.offset)
        data = f.read(WINDOW + 1)
        half = MAX_LINE // 2  # a run of MAX_LINE bytes without a line end holds a whole aligned half of it
        cr = self.carriage_return_ends
        if len(data) > WINDOW or any(data.find(b"\n", i, i + half) < 0 and not (cr and data.find(b"\r", i, i + half) >= 0)
                                     for i in range(0, len(data) - half + 1, half)):
            return None
        last = self._last_end(data) + 1
        block = data if last == len(data) else data[:last]  # no copy of a read that ends its last line
        return [block], data[last:], self.offset + last

    def _take(self, f) -> tuple[list[bytes], bytes, int]:
        """(complete lines from the offset, in pieces; the unfinished last line; the offset after the last
        complete line), read CHUNK by CHUNK. A line growing past MAX_LINE is dropped as it is read."""
        pieces: list[bytes] = []
        partial = b""  # the line being read, not yet ended
        pos = end = self.offset
        while True:
            if self._skipping:
                pos = end = _past_hole(f, pos)
            f.seek(pos)
            chunk = f.read(CHUNK)
            if not chunk:
                break
            pos += len(chunk)
            last = self._last_end(chunk)
            if last < 0:  # no line ends in this chunk
                if not self._skipping:
                    partial += chunk
                    if len(partial) > MAX_LINE:
                        self._start_skip(pieces)
                        partial = b""
                end = pos if self._skipping else end  # a skipped line's bytes are never read again
                continue
            first_end = self._first_end(chunk)
            if self._skipping:
                self._end_skip(pieces)
            elif len(partial) + first_end > MAX_LINE:
                self._start_skip(pieces)
                self._end_skip(pieces)
            else:
                pieces.append(partial + chunk[:first_end + 1])
            pieces.append(chunk[first_end + 1:last + 1])
            partial, end = chunk[last + 1:], pos - (len(chunk) - last - 1)
        return pieces, partial, end

    def _start_skip(self, pieces: list[bytes]) -> None:
        n = self.line_no + 1 + sum(p.count(b"\n") for p in pieces)
        self._skipping = True
        self._say(f"line {n:,} is longer than {MAX_LINE >> 20} MiB: not read (a damaged or sparse file?)")

    def _end_skip(self, pieces: list[bytes]) -> None:
        self._skipping = False
        pieces.append(b"\n")  # the line passed over, empty: the lines after it keep their numbers

    def _say(self, message: str) -> None:
        self.notes.append(message)
        if self._note is not None:
            self._note(message)

    def _last_end(self, data: bytes) -> int:
        return max(data.rfind(b"\n"), data.rfind(b"\r") if self.carriage_return_ends else -1)

    def _first_end(self, data: bytes) -> int:
        ends = [i for i in (data.find(b"\n"), data.find(b"\r") if self.carriage_return_ends else -1) if i >= 0]
        return min(ends)

    def read(self) -> tuple[list[tuple[int, str]], bool, bool]:
        """(new (line number, text) pairs, rewritten?, an incomplete last line waits?)."""
        block, first, rewritten, waiting = self.read_bytes()
        lines = [(first + i, raw.decode("utf-8", "replace")) for i, raw in enumerate(block.split(b"\n")[:-1])]
        return lines, rewritten, waiting


def _past_hole(f, pos: int) -> int:
    """`pos`, or where data starts again when `pos` is in a hole of a sparse file (the end of the file when
    none follows). A hole reads as NULs, which hold no line end: a line passed over goes on through it."""
    fd = f.fileno()
    try:
        if os.lseek(fd, pos, os.SEEK_HOLE) != pos:
            return pos
        return os.lseek(fd, pos, os.SEEK_DATA)
    except OSError as e:
        if e.errno == errno.ENXIO:  # no data after pos: the rest of the file is a hole
            return os.fstat(fd).st_size
        return pos  # a file system that cannot tell: read on
    except AttributeError:  # no SEEK_HOLE on this platform
        return pos

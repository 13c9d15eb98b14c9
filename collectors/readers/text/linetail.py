"""Following a growing text log from a kept byte offset (verl console, JSONL, CSV, key-value and console logs)."""

from __future__ import annotations

import stat
import time
from pathlib import Path


class LineTail:
    """Complete new lines of a growing file, from a kept byte offset; notes a rewrite (the file shrank).

    A last line without its newline is waited for while the file is fresh; once the file has not changed
    for SETTLED_S it is taken as written (a finished log often ends without a newline, and its last
    step must not be lost).
    """

    SETTLED_S = 10.0

    def __init__(self, path: Path, carriage_return_ends: bool = False) -> None:
        self.path = path
        # a console's progress bars redraw in place ending with `\r`, and the line holding them only ends at the
        # next print: a reader of bars takes each finished `\r` segment as it comes, not a print later
        self.carriage_return_ends = carriage_return_ends
        self.offset = 0
        self.line_no = 0

    def read_bytes(self) -> tuple[bytes, int, bool, bool]:
        """(new complete lines as bytes, number of the first of them, rewritten?, an incomplete last line waits?).

        For readers that hand a whole block to a native parser (pyarrow), so the cost is per block, not per line.
        """
        try:
            st = self.path.stat()
        except OSError:
            return b"", self.line_no + 1, False, False
        if not stat.S_ISREG(st.st_mode):  # a named pipe or a device: reading would wait forever
            return b"", self.line_no + 1, False, False
        rewritten = st.st_size < self.offset
        if rewritten:
            self.offset, self.line_no = 0, 0
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = max(data.rfind(b"\n"), data.rfind(b"\r") if self.carriage_return_ends else -1) + 1
        block = data if end == len(data) else data[:end]  # no copy of a whole file that ends its last line
        if end < len(data) and time.time() - st.st_mtime > self.SETTLED_S:
            block, end = data + b"\n", len(data)  # the writer is done with it: a complete last line
        first = self.line_no + 1
        self.line_no += block.count(b"\n")
        self.offset += end
        return block, first, rewritten, end < len(data)

    def read(self) -> tuple[list[tuple[int, str]], bool, bool]:
        """(new (line number, text) pairs, rewritten?, an incomplete last line waits?)."""
        block, first, rewritten, waiting = self.read_bytes()
        lines = [(first + i, raw.decode("utf-8", "replace")) for i, raw in enumerate(block.split(b"\n")[:-1])]
        return lines, rewritten, waiting

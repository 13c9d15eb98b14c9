"""Following a growing text log line by line (verl console, JSONL, CSV)."""

from __future__ import annotations

import time
from pathlib import Path


class LineTail:
    """Complete new lines of a growing file, from a kept byte offset; notes a rewrite (the file shrank).

    A last line without its newline is waited for while the file is fresh; once the file has not changed
    for SETTLED_S it is taken as written (a finished log often ends without a newline, and its last
    step must not be lost).
    """

    SETTLED_S = 10.0

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.line_no = 0

    def read(self) -> tuple[list[tuple[int, str]], bool, bool]:
        """(new (line number, text) pairs, rewritten?, an incomplete last line waits?)."""
        try:
            st = self.path.stat()
        except OSError:
            return [], False, False
        size = st.st_size
        rewritten = size < self.offset
        if rewritten:
            self.offset, self.line_no = 0, 0
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        text = data[:end]
        if end < len(data) and time.time() - st.st_mtime > self.SETTLED_S:
            text, end = data + b"\n", len(data)  # the writer is done with it: a complete last line
        lines = []
        for raw in text.split(b"\n")[:-1]:
            self.line_no += 1
            lines.append((self.line_no, raw.decode("utf-8", "replace")))
        self.offset += end
        return lines, rewritten, end < len(data)

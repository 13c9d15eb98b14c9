"""Part files of a run folder: naming, listing, and which parts a compaction merges.

A part is `part-SSSSSSSS.parquet` (one flush, sequence number S) or, after compaction,
`part-LLLLLLLL-HHHHHHHH-cK.parquet` (the rows of parts L..H, merged at level K). Every row carries a
`_seq` column with the sequence number of the flush that wrote it, so a reader that has already read some
of L..H can take just the rows it has not seen. A part whose range lies inside a larger one is superseded
(left behind by a crash between writing a merge and deleting its inputs) and is not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SEQ_COLUMN = "_seq"
_PART_RE = re.compile(r"^part-(\d{8})(?:-(\d{8})-c(\d+))?\.parquet$")


@dataclass(frozen=True)
class Part:
    path: Path
    lo: int  # first sequence number covered
    hi: int  # last sequence number covered (inclusive)
    level: int  # 0 for a flush, k for a k-th level merge

    @property
    def seqs(self) -> range:
        return range(self.lo, self.hi + 1)


def part_name(lo: int, hi: int | None = None, level: int = 0) -> str:
    if level == 0:
        return f"part-{lo:08d}.parquet"
    return f"part-{lo:08d}-{hi:08d}-c{level}.parquet"


def parse_part(path: Path) -> Part | None:
    m = _PART_RE.match(path.name)
    if not m:
        return None
    lo = int(m.group(1))
    if m.group(2) is None:
        return Part(path, lo, lo, 0)
    return Part(path, lo, int(m.group(2)), int(m.group(3)))


def list_parts(folder: Path) -> tuple[list[Part], list[Path]]:
    """Live parts of a folder, sorted by sequence, and the files that are not parts at all.

    Dotfiles (temporary files of an atomic write in progress) are neither.
    """
    if not folder.is_dir():
        return [], []
    parts, strangers = [], []
    for p in folder.iterdir():
        if p.name.startswith("."):
            continue
        part = parse_part(p)
        if part is None:
            strangers.append(p)
        else:
            parts.append(part)
    # Widest first, so that a superseded part meets its cover before it is kept.
    parts.sort(key=lambda q: (q.lo, -(q.hi - q.lo)))
    live: list[Part] = []
    for q in parts:
        if live and q.hi <= live[-1].hi:
            continue  # inside the previous (wider) part
        live.append(q)
    return live, sorted(strangers)


def plan_merge(parts: list[Part], fanout: int) -> list[Part] | None:
    """The oldest run of `fanout` consecutive same-level parts, lowest level first, or None.

    Merging `fanout` parts of level k into one of level k+1 keeps at most fanout-1 parts per level,
    so a run of N flushes leaves O(fanout * log_fanout N) files and each row is rewritten log N times.
    """
    levels = sorted({q.level for q in parts})
    for level in levels:
        run: list[Part] = []
        for q in parts:
            if q.level == level and (not run or q.lo == run[-1].hi + 1):
                run.append(q)
                if len(run) == fanout:
                    return run
            elif q.level == level:
                run = [q]
            else:
                run = []
    return None


def next_seq(parts: list[Part]) -> int:
    return max((q.hi for q in parts), default=-1) + 1

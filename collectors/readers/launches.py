"""Which files of one log folder belong to one launch: pure, on what each file's name and first step say.

A folder that several launches wrote into (a sweep re-run into one TensorBoard logdir, a `wandb/` folder)
holds several separate runs. Each writer process writes its own file, so the file is the unit; files are
taken in creation order, and a file starts a new launch when its first step is at or below the first step
of the launch before it (the steps start over). A file whose steps go on past that first step is the same
run resumed (from a checkpoint, by the same or a new process) and is joined to it; where it reaches back
into steps already logged, its values win for those steps. A file with no step at all (a launch that
stopped before its first log) is no run; it is named in a note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

NO_STEP = ("holds no logged step (a launch that stopped before its first log, or only its config); "
           "not a run of its own")


@dataclass(frozen=True)
class FileStart:
    """What grouping needs of one file: its name, the process that wrote it, its first and last step."""

    name: str
    process: str  # host.pid where the file name says it, else ""
    first_step: int | None  # None: no step logged (yet)
    last_step: int | None = None


@dataclass
class Launch:
    files: list[str] = field(default_factory=list)
    first_step: int = 0
    last_step: int = 0
    resumed_at: list[int] = field(default_factory=list)  # first step of each file joined as a resume or restart

    @property
    def id(self) -> str:
        return self.files[0]


def group_launches(files: list[FileStart]) -> tuple[list[Launch], list[tuple[str, str]]]:
    """Files in creation order -> (launches, notes as (file, message)).

    Hand-worked: starts [1, 51, 1, 81, None] -> launches [[f0, f1], [f2, f3]]; f1 and f3 are resumes
    (resumed_at [51] and [81]), f4 is named as holding no steps.
    """
    launches: list[Launch] = []
    notes: list[tuple[str, str]] = []
    for f in files:
        if f.first_step is None:
            notes.append((f.name, NO_STEP))
            continue
        last = f.last_step if f.last_step is not None else f.first_step
        current = launches[-1] if launches else None
        if current is None or f.first_step <= current.first_step:
            launches.append(Launch([f.name], f.first_step, last))
            continue
        before = current.files[-1]
        if f.first_step <= current.last_step:
            notes.append((f.name, (f"starts at step {f.first_step}, within {before} (up to step "
                                   f"{current.last_step}): a restarted run; for steps in both, this later file's "
                                   "values win")))
        else:
            notes.append((f.name, (f"continues {before} (up to step {current.last_step}) from step "
                                   f"{f.first_step}: the same run resumed, joined")))
        current.files.append(f.name)
        current.resumed_at.append(f.first_step)
        current.last_step = max(current.last_step, last)
    return launches, notes


@dataclass
class RowLaunches:
    """Which launch each row of a one-file log belongs to, a block of rows at a time (a live log grows).

    The rule of `group_launches` with a stretch of rising steps in the place of a file: a row whose step falls
    below the row before and is at or below the first step of the current launch starts a new launch (the step
    counter started over: an aborted launch, then the real run, appended to one file); a fall that stays above
    that first step is the launch restarted from a checkpoint (the same launch; for steps logged twice the later
    values win). Rows of one step in parts (a train row, then an eval row) never start one.
    """

    first: list[int] = field(default_factory=list)
    last: list[int] = field(default_factory=list)
    prev: int | None = None

    def assign(self, steps) -> list[int]:
        """The 1-based launch of each row, in order. Hand-worked: [1, 2, 3, 1, 2, 1, 2, 3, 2, 3] -> launches
        [1, 1, 1, 2, 2, 3, 3, 3, 3, 3] (the fall to 2 at the 9th row is a restart within the third launch)."""
        out = []
        for step in steps:
            if math.isnan(step):  # NaN: a row without a step (skipped by the reader) stays in the current launch
                out.append(max(1, len(self.first)))
                continue
            step = int(step)
            if self.prev is None or (step < self.prev and step <= self.first[-1]):
                self.first.append(step)
                self.last.append(step)
            self.last[-1] = max(self.last[-1], step)
            self.prev = step
            out.append(len(self.first))
        return out

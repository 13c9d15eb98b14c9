"""A table of metrics printed inside any text: the transformers notebook progress table saved as text
(`Step	Training Loss	reward	kl`), a Markdown pipe table (`| Step | Training Loss | reward |`), or columns
aligned with two or more spaces, inside a `.txt`, `.md`, `.log` or `.out` file among other output.

A header line of at least MIN_COLUMNS names, one of them a step or a training word (text.guess), followed by
lines with as many cells, most of them numbers, is a table; cells that are not numbers (`No log`, which the
Trainer prints before the first loss) are null. Several tables of one header (a notebook run twice) are read in
order; a step that starts over starts a new launch only through the generic reader's rule, so here the later
rows of a step win. The step is guessed as for rows logs (text.guess.guess_step), said in a note.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from collectors.meta import RunMeta
from collectors.readers.folders import file_runs, head_of
from collectors.readers.text.guess import guess_step, looks_like_training
from collectors.readers.text.whole_files import WholeFilesRun
from collectors.run import Problem
from collectors.sources import no_parts, register_source

SUFFIXES = (".txt", ".md", ".log", ".out")
DETECT_BYTES = 1 << 20
MIN_COLUMNS = 3  # a step, a loss and a reward: fewer names are a sentence more often than a table
MIN_ROWS = 2
_NUMBER_RE = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^[-+]?(?:nan|inf)$", re.IGNORECASE)
_RULE_RE = re.compile(r"^\|?\s*:?-{3,}")  # a Markdown table's |---|---| line
# a thousands separator (`1,204.5`), the only comma a number keeps here: `0,5` (a decimal comma) is no number
_THOUSANDS_RE = re.compile(r"^([-+]?\d{1,3}(?:,\d{3})+)(\.\d*)?$")


def cells(line: str) -> list[str]:
    """A line cut into cells: by `|` when it is a pipe table's, else by tabs, else by two or more spaces."""
    text = line.strip()
    if text.startswith("|") and text.endswith("|"):
        return [c.strip() for c in text[1:-1].split("|")]
    if "\t" in text:
        return [c.strip() for c in text.split("\t")]
    return [c.strip() for c in re.split(r"\s{2,}", text)]


def plain(cell: str) -> str:
    """The cell with a thousands separator taken out (`1,204` -> `1204`); any other cell as it is."""
    return cell.replace(",", "") if _THOUSANDS_RE.match(cell) else cell


def _numeric(cell: str) -> bool:
    return bool(_NUMBER_RE.match(plain(cell)))


def tables(text: str) -> list[pd.DataFrame]:
    """Every metrics table in a text (see the module docstring), as frames of the logged names (strings)."""
    out: list[pd.DataFrame] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        head = cells(lines[i])
        if len(head) < MIN_COLUMNS or any(_numeric(c) or not c for c in head) or not looks_like_training(head):
            i += 1
            continue
        rows, j = [], i + 1
        while j < len(lines) and (_RULE_RE.match(lines[j].strip()) or not lines[j].strip()):
            j += 1
        while j < len(lines):
            row = cells(lines[j])
            if len(row) != len(head) or sum(map(_numeric, row)) * 2 <= len(row):
                break
            rows.append(row)
            j += 1
        if len(rows) >= MIN_ROWS:
            out.append(pd.DataFrame(rows, columns=head))
        i = max(j, i + 1)
    return out


def detect_file(target: str) -> bool:
    if (head := head_of(target, SUFFIXES, DETECT_BYTES)) is None:
        return False
    return bool(tables(head.decode("utf-8", "replace")))


class TextTableRun(WholeFilesRun):
    """A run read from the metrics tables printed in one text file."""

    def __init__(self, path: Path | str) -> None:
        path = Path(path)
        super().__init__(path, RunMeta(run_id=path.stem, name=path.stem, source="text-table"), [path])
        self._start()

    def _frame(self, path: Path) -> pd.DataFrame | None:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            self._note(Problem(path.name, f"cannot be read: {e.strerror or e}"))
            return None
        found = tables(text)
        if not found:
            return None
        frame = pd.concat(found, ignore_index=True, sort=False)
        frame = frame.map(plain)
        step = guess_step(frame.apply(pd.to_numeric, errors="coerce"), self.mapping)
        if step.how:
            self._note(Problem(path.name, f"guessed step: {step.how}"))
        if step.column is None:
            return frame.assign(step=range(1, len(frame) + 1))
        return frame.rename(columns={step.column: "step"})


detect_any, launches = file_runs(detect_file, SUFFIXES)


@register_source("text-table", detect=detect_any, launches=launches, parts=no_parts, priority=0, hints={
    "samples": "a printed table holds per-step numbers only; responses need a run folder (collectors.RunWriter).",
    "config": "a printed table holds no config; put the config the run used beside it as config*.yaml (or .json).",
})
def open_text_table(target: str) -> TextTableRun:
    return TextTableRun(target)

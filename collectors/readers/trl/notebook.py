"""GRPO runs trained in a notebook: the Trainer's progress table saved in the notebook's output (`.ipynb`), or in
its Markdown / HTML export (`jupyter nbconvert`), the form most shared GRPO notebooks (Unsloth's, TRL's) reach
GitHub in.

In a notebook the transformers Trainer draws its log as an HTML table (transformers/utils/notebook.py:
`NotebookTrainingTracker.write_line`, `text_to_html_table`): a header row `Step`, `Training Loss`, then one
column per logged key (Unsloth's notebook callback shows every key of the log, a `/` written ` / `:
`completions / mean_length`), a row per logging step, floats printed `%.6f`, `No Log` where a step lacks a key.
Each `trainer.train()` leaves one such table; a file with several is one run per table (launches `1`, `2`, ...).

The config is what the notebook's code says: the keyword arguments of a `GRPOConfig(...)` call written as
literals (`num_generations = 8`, `max_completion_length = 256`), read with `ast`, never run; a name or an
expression as a value is left out.
"""

from __future__ import annotations

import ast
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from collectors.meta import RunError, RunMeta
from collectors.readers import jsontext
from collectors.readers.folders import file_runs
from collectors.readers.text.rows import TextRun
from collectors.run import Problem
from collectors.sources import launch_target, no_parts, register_source, split_launch

SUFFIXES = (".ipynb", ".md", ".html", ".htm")
MAX_BYTES = 64 << 20  # a notebook with its images; past this it is not looked into
_MARK = re.compile(rb"<th>\s*(Step|Epoch)\s*</th>\s*(?:\\n|\s)*(?:\"\s*,?\s*\"\s*)?<th>\s*Training Loss\s*</th>")
_COLUMNS = {"Step": "step", "Training Loss": "loss", "Validation Loss": "eval_loss", "Epoch": "epoch"}
_NO_LOG = {"No Log", "No log", ""}
_CONFIG_CALLS = ("GRPOConfig", "TrainingArguments", "GRPOTrainingArguments")
_CODE_BLOCK = re.compile(r"```(?:python|py)?\n(.*?)```", re.DOTALL)


def _read(path: Path) -> bytes:
    if path.stat().st_size > MAX_BYTES:
        raise RunError(f"{path}: over {MAX_BYTES >> 20} MB; not read as a notebook")
    return path.read_bytes()


def _detect_file(target: str) -> bool:
    p = Path(target)
    if not (p.is_file() and p.suffix in SUFFIXES):
        return False
    try:
        return _MARK.search(_read(p)) is not None
    except (OSError, RunError):
        return False


detect, _files = file_runs(_detect_file, SUFFIXES)


class _Tables(HTMLParser):
    """Every <table> of an HTML text as a list of rows of cell texts (th and td alike)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _texts(path: Path, raw: bytes) -> tuple[list[str], list[str]]:
    """(HTML texts that may hold the table, code texts) of a notebook or of its export."""
    text = raw.decode("utf-8", "replace")
    if path.suffix != ".ipynb":
        return [text], [m[1] for m in _CODE_BLOCK.finditer(text)]
    try:
        nb, _ = jsontext.loads(text)
    except jsontext.JsonProblem as e:
        raise RunError(f"{path}: not a notebook: {e}") from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise RunError(f"{path}: a notebook without a `cells` list")
    html, code = [], []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        if cell.get("cell_type") == "code":
            code.append(_joined(cell.get("source")))
        outputs = cell.get("outputs")
        for out in outputs if isinstance(outputs, list) else []:  # a damaged cell's outputs: none
            data = out.get("data") if isinstance(out, dict) else None
            if isinstance(data, dict) and "text/html" in data:
                html.append(_joined(data["text/html"]))
    return html, code


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def progress_tables(html_texts: list[str]) -> list[list[list[str]]]:
    """The Trainer's progress tables among the tables of `html_texts`: a header starting Step (or Epoch),
    Training Loss."""
    out = []
    for text in html_texts:
        if "Training Loss" not in text:
            continue
        parser = _Tables()
        parser.feed(text)
        parser.close()
        out += [t for t in parser.tables if t and len(t[0]) >= 2 and t[0][0] in ("Step", "Epoch")
                and t[0][1] == "Training Loss"]
    return out


def config_from_code(code_texts: list[str]) -> dict[str, Any]:
    """Literal keyword arguments of the last GRPOConfig(...) (or TrainingArguments(...)) call in the code."""
    found: dict[str, Any] = {}
    for code in code_texts:
        lines = [ln for ln in code.splitlines() if not ln.lstrip().startswith(("!", "%"))]  # shell and magics
        try:
            tree = ast.parse("\n".join(lines))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name not in _CONFIG_CALLS:
                continue
            args = {}
            for kw in node.keywords:
                if kw.arg is None:
                    continue
                try:
                    value = ast.literal_eval(kw.value)
                except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                    continue  # a name or an expression: not what the run used, as far as the text says
                if isinstance(value, (int, float, str, bool)) or value is None:
                    args[kw.arg] = value
            if args:
                found = args
    return found


def column_key(header: str) -> str:
    """A table header as the key the Trainer logged: `completions / mean_length` -> `completions/mean_length`."""
    return _COLUMNS.get(header, header.replace(" / ", "/"))


def _launches(target: str) -> list[str]:
    p = Path(target)
    if p.is_dir():
        return _files(target)
    try:
        html, _ = _texts(p, _read(p))
    except (OSError, RunError):
        return []
    n = len(progress_tables(html))
    return [launch_target(target, str(i)) for i in range(1, n + 1)] if n > 1 else []


class NotebookRun(TextRun):
    """One progress table of a notebook (or of its export); read again whole when the file changes."""

    def __init__(self, target: str) -> None:
        base, launch = split_launch(target)
        path = Path(base)
        super().__init__(path, RunMeta(run_id=path.stem, name=path.stem, source="trl-notebook"))
        self.launch = int(launch) if launch is not None and launch.isdigit() else None
        if launch is not None and self.launch is None:
            raise RunError(f"{base}: no table {launch!r} (the launches of a notebook are its tables: 1, 2, ...)")
        if self.launch is not None:
            self.meta.name = f"{path.stem}#{self.launch}"
        self._stamp: tuple | None = None
        self.refresh()

    def _read_new(self) -> list[pd.DataFrame]:
        try:
            st = self.path.stat()
        except OSError:
            self._note(Problem(self.path.name, "no such file"))
            return []
        stamp = (st.st_size, st.st_mtime_ns)
        if stamp == self._stamp:
            return []
        if self._stamp is not None:
            self._reset(self.path.name, "the notebook changed; read again")
        self._stamp = stamp
        html, code = _texts(self.path, _read(self.path))
        tables = progress_tables(html)
        if not tables:
            self._note(Problem(self.path.name, "no Trainer progress table (a header Step, Training Loss) in it"))
            return []
        index = (self.launch or 1) - 1
        if index >= len(tables):
            raise RunError(f"{self.path}: no table {self.launch}; it holds {len(tables)}")
        if config := config_from_code(code):
            self.meta.config = config
            self.meta.info["config_source"] = "GRPOConfig(...) in the notebook's code (literal arguments only)"
        return self._emit(self._frame(tables[index]), self.path.name)

    def _frame(self, table: list[list[str]]) -> pd.DataFrame:
        header, rows = table[0], table[1:]
        # the tracker adds a column when a key first appears and leaves the rows before it one cell short: a
        # shorter row lacks the later keys; a longer one is no row of this table
        keep = [r + [""] * (len(header) - len(r)) for r in rows if len(r) <= len(header)]
        if len(keep) < len(rows):
            self._note(Problem(self.path.name, f"{len(rows) - len(keep)} table row(s) with more cells than its "
                                               f"{len(header)} columns; left out"))
        cells = np.array(keep, dtype=object).reshape(len(keep), len(header))
        frame = pd.DataFrame({column_key(h): cells[:, j] for j, h in enumerate(header)})
        frame = frame.replace(list(_NO_LOG), np.nan)
        if "step" not in frame:  # an Epoch table (eval_strategy="epoch"): the epoch is the only position known
            frame = frame.rename(columns={"epoch": "step"})
            self._note(Problem(self.path.name, "the table counts epochs, not steps: each epoch is a step here"))
        return frame


register_source("trl-notebook", detect=detect, launches=_launches, parts=no_parts, priority=17, hints={
    "samples": "a notebook's progress table holds the logged metrics only; TRL's `log_completions=True` prints "
               "completions into the notebook as a rich table, and collectors.trl.GrpoScopeCallback keeps them.",
    "config": "the config is read from a GRPOConfig(...) call written with literal values in the notebook's code; "
              "values given as names or expressions are not known.",
})(NotebookRun)

"""Roots that hold what a real disk holds beside run folders, for the tests of what a root guarantees
(docs/reliability.md, "What a root holds"): stray logs and named pipes with log names beside run folders, and
every kind of link that leads out of the roots. Built from small runs written with collectors.RunWriter.

    <base>/
      elsewhere_7f3a/            outside every root: nothing in it may be opened, nothing of it shown
        secret_run/              a run folder named SECRET-RUN-7f3a (its run.json and parts are linked to)
        secret.jsonl             a step log whose metric is called secret_marker_7f3a
      stray_dump/     healthy/ two_steps/  0.jsonl (a verl rollout dump)
      stray_metrics/  healthy/ two_steps/  metrics.jsonl (a generic step log)
      pipe_dump/      healthy/ two_steps/  0.jsonl (a named pipe)
      pipe_events/    healthy/ two_steps/  events.out.tfevents.1700000000.host.1.0 (a named pipe)
      links/          ok/ broken/ two_steps/        runs that open as usual
                      passwd/run.json      -> /etc/passwd
                      linked_meta/run.json -> elsewhere_7f3a/secret_run/run.json
                      linked_part/metrics/part-... -> a part of elsewhere_7f3a/secret_run
                      jsonlink/train.jsonl -> elsewhere_7f3a/secret.jsonl
                      zero.log             -> /dev/zero
                      to_secret            -> elsewhere_7f3a/secret_run (a folder)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from collectors import RunWriter
from helpers.dash_fixtures import write_broken_verifier, write_healthy

OUTSIDE = "elsewhere_7f3a"
SECRET_NAME = "SECRET-RUN-7f3a"
MARK = "secret_marker_7f3a"
# what must never reach a page: the outside folder's name, its data, the targets of the links
NEVER_SHOWN = (OUTSIDE, SECRET_NAME, MARK, "root:x:0", "/etc/passwd", "/dev/zero")
STRAY_ROOTS = ("stray_dump", "stray_metrics", "pipe_dump", "pipe_events")
EVENT_PIPE = "events.out.tfevents.1700000000.host.1.0"


@dataclass
class Layout:
    base: Path
    outside: Path
    roots: list[Path]
    verdicts: dict[str, str] = field(default_factory=dict)  # run key -> the verdict kind its diagnosis gives
    refused: set[str] = field(default_factory=set)  # keys listed as a line saying a link leads outside
    pipes: set[str] = field(default_factory=set)  # keys listed as a named pipe, skipped
    strays: set[str] = field(default_factory=set)  # keys of stray logs listed as one more run

    def watched(self) -> list[Path]:
        """The outside folders a test watches for opens."""
        return [self.outside, self.outside / "secret_run", self.outside / "secret_run" / "metrics"]


def write_steps(path: Path, name: str, steps: int) -> Path:
    """A short healthy-looking run: with 2 steps the diagnosis cannot judge it yet."""
    with RunWriter(path, name=name, handle_signals=False) as w:
        for i in range(steps):
            w.log_step(i, {"reward/mean": 0.1 + 0.1 * i, "policy/entropy": 1.0})
    return path


def _runs(root: Path, layout: Layout, label: str) -> None:
    write_healthy(root / "healthy")
    write_steps(root / "two_steps", "two_steps", 2)
    layout.verdicts.update({f"{label}/healthy": "healthy", f"{label}/two_steps": "cant_judge"})


def make_layout(base: Path) -> Layout:
    outside = base / OUTSIDE
    write_healthy(outside / "secret_run")
    meta = json.loads((outside / "secret_run" / "run.json").read_text())
    (outside / "secret_run" / "run.json").write_text(json.dumps({**meta, "name": SECRET_NAME}))
    (outside / "secret.jsonl").write_text("".join(json.dumps({"step": i, "reward": 0.5, MARK: 1.0}) + "\n"
                                                  for i in range(30)))
    layout = Layout(base, outside, [])

    for label in STRAY_ROOTS:
        root = base / label
        _runs(root, layout, label)
        layout.roots.append(root)
    (base / "stray_dump" / "0.jsonl").write_text(
        json.dumps({"input": "q", "output": "a", "score": 1.0, "step": 0}) + "\n")
    layout.strays.add("stray_dump")  # the root's own loose dump: one more (verl) run, never the only one
    (base / "stray_metrics" / "metrics.jsonl").write_text(
        "".join(json.dumps({"step": i, "reward": 0.1 * i}) + "\n" for i in range(5)))
    layout.strays.add("stray_metrics/metrics.jsonl")
    os.mkfifo(base / "pipe_dump" / "0.jsonl")
    os.mkfifo(base / "pipe_events" / EVENT_PIPE)
    layout.pipes |= {"pipe_dump/0.jsonl", f"pipe_events/{EVENT_PIPE}"}

    links = base / "links"
    write_healthy(links / "ok")
    write_broken_verifier(links / "broken")
    write_steps(links / "two_steps", "two_steps", 2)
    layout.verdicts.update({"links/ok": "healthy", "links/broken": "not_learning", "links/two_steps": "cant_judge"})
    write_healthy(links / "passwd")
    (links / "passwd" / "run.json").unlink()
    (links / "passwd" / "run.json").symlink_to("/etc/passwd")
    write_healthy(links / "linked_meta")
    (links / "linked_meta" / "run.json").unlink()
    (links / "linked_meta" / "run.json").symlink_to(outside / "secret_run" / "run.json")
    write_healthy(links / "linked_part")
    part = min((links / "linked_part" / "metrics").glob("*.parquet"))
    part.unlink()
    part.symlink_to(min((outside / "secret_run" / "metrics").glob("*.parquet")))
    (links / "jsonlink").mkdir()
    (links / "jsonlink" / "train.jsonl").symlink_to(outside / "secret.jsonl")
    (links / "zero.log").symlink_to("/dev/zero")
    (links / "to_secret").symlink_to(outside / "secret_run")
    layout.refused |= {"links/passwd", "links/linked_meta", "links/linked_part", "links/jsonlink/train.jsonl",
                       "links/zero.log", "links/to_secret"}
    layout.roots.append(links)
    return layout


# what a careless or hostile .streamlit/config.toml in the working folder would switch off
HOSTILE_CONFIG = """\
[server]
enableXsrfProtection = false
enableCORS = false
corsAllowedOrigins = ["http://evil.example"]
enableAgentApi = true
enableStaticServing = true

[client]
showErrorDetails = "full"
showErrorLinks = "true"

[global]
developmentMode = true
"""


def hostile_folder(folder: Path) -> Path:
    """`folder` holding .streamlit/config.toml = HOSTILE_CONFIG (Streamlit reads it from the working folder)."""
    (folder / ".streamlit").mkdir(parents=True, exist_ok=True)
    (folder / ".streamlit" / "config.toml").write_text(HOSTILE_CONFIG)
    return folder

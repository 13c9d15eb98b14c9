"""Issue 38: files and folders this user may not read are named in plain words ("no permission to read FILE"),
and everything else is still listed and read.

Root reads every file whatever its mode, so the reader runs in a subprocess as `nobody` (setpriv); the test
skips, saying why, only where no unprivileged user can be switched to.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from helpers.paths import REPO

HEALTHY = REPO / "sample_runs" / "healthy"
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def _as_nobody(code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([*NOBODY, sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300, env=env, cwd=cwd, check=False)


@pytest.fixture
def world():
    """A folder nobody may enter, holding runs with parts, folders and logs of every mode."""
    if os.geteuid() != 0:
        pytest.skip("not root: cannot make files another user owns or switch to nobody (run the suite as root)")
    if shutil.which("setpriv") is None:
        pytest.skip("no setpriv to run the reader as nobody")
    probe = subprocess.run([*NOBODY, sys.executable, "-c", "import pandas, collectors"], capture_output=True,
                           env={**os.environ, "PYTHONPATH": str(REPO)}, cwd="/", check=False)
    if probe.returncode:
        pytest.skip(f"nobody cannot run this Python: {probe.stderr.decode(errors='replace')[-200:]}")
    t = Path(tempfile.mkdtemp(prefix="grposcope-perm-"))  # pytest's own tmp folders are 0700: nobody stops there
    os.chmod(t, 0o755)
    for name in ("open", "part", "nometrics", "nojson"):
        shutil.copytree(HEALTHY, t / name)
    (t / "logs").mkdir()
    for name in ("train.jsonl", "later.jsonl", "fine.jsonl"):
        (t / "logs" / name).write_text('{"step": 1, "reward": 0.5}\n{"step": 2, "reward": 0.6}\n')
    (t / "locked" / "inner").mkdir(parents=True)
    (t / "locked" / "inner" / "x.jsonl").write_text('{"step": 1, "reward": 0.5}\n')
    (t / "scratch").mkdir()  # nobody's own: a log it makes unreadable after the run was opened
    subprocess.run(["chmod", "-R", "a+rX", str(t)], check=True)
    os.chmod(t / "scratch", 0o777)
    os.chmod(t / "part" / "metrics" / "part-00000016.parquet", 0)
    os.chmod(t / "nometrics" / "metrics", 0)
    os.chmod(t / "nojson" / "run.json", 0)
    os.chmod(t / "logs" / "train.jsonl", 0)
    os.chmod(t / "locked", 0o711)  # searchable, not listable
    os.chmod(t / "locked" / "inner", 0)
    yield t
    subprocess.run(["chmod", "-R", "u+rwX", str(t)], check=False)
    shutil.rmtree(t, ignore_errors=True)


def test_unreadable_files_are_named_in_words_and_the_rest_is_read(world):
    out = _as_nobody(f"""
        import json, os, time
        from pathlib import Path
        from collectors import RunError, open_run
        from collectors.discovery import discover_runs
        t = Path({str(world)!r})
        said = {{}}
        for name in ("part", "nometrics", "nojson"):
            run = open_run(str(t / name))
            said[name] = [len(run.metrics), [f"{{p.file}}: {{p.message}}" for p in run.problems]]
        for name in ("logs/train.jsonl", "locked/inner", "locked"):
            try:
                open_run(str(t / name))
            except RunError as e:
                said[name] = str(e)
        log = t / "scratch" / "seen.jsonl"
        log.write_text('{{"step": 1, "reward": 0.5}}\\n')
        run = open_run(str(log))
        os.chmod(log, 0)  # after it was seen: size and mtime as before
        try:
            run.refresh()
        except RunError as e:
            said["chmod"] = str(e)
        said["listed"] = sorted((str(i.path.relative_to(t)), i.error) for i in discover_runs(t))
        print(json.dumps(said))
    """, world)
    assert out.returncode == 0, out.stderr[-3000:]
    said = json.loads(out.stdout)
    assert said["part"] == [188, [("metrics/part-00000016.parquet: no permission to read "
                                   "metrics/part-00000016.parquet; skipped")]]  # was "[Errno 13] Failed to open..."
    assert said["nometrics"] == [0, ["metrics: no permission to read metrics/; its parts are not read"]]  # raised
    assert said["nojson"] == [200, [f"run.json: no permission to read {world}/nojson/run.json; metadata ignored"]]
    assert said["logs/train.jsonl"] == f"no permission to read {world}/logs/train.jsonl"
    assert said["locked/inner"] == f"no permission to read {world}/locked/inner"  # named a run.json that is not there
    assert said["locked"] == f"no permission to read {world}/locked"
    assert said["chmod"] == f"no permission to read {world}/scratch/seen.jsonl"  # was a raw PermissionError
    listed = dict(map(tuple, said["listed"]))
    assert listed["locked"] == "no permission to read locked"  # was missing from the table
    assert listed["logs/train.jsonl"] == "no permission to read train.jsonl"  # was missing
    assert listed["logs/fine.jsonl"] is None and listed["logs/later.jsonl"] is None and listed["open"] is None
    assert listed["nojson"] == f"no permission to read {world}/nojson/run.json"
    assert all("Errno" not in str(e) and "Permission denied" not in str(e) for e in listed.values())


def test_grpo_diagnose_names_the_unreadable_folder_in_one_line(world):
    out = _as_nobody(f"""
        import sys
        from dashboard.diagnosis.cli import main
        sys.exit(main([{str(world / 'locked' / 'inner')!r}]))
    """, world)
    assert out.returncode == 2
    assert out.stderr.strip() == f"grpo-diagnose: no permission to read {world}/locked/inner"  # not run.json

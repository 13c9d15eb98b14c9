"""grpo-diagnose --watch follows a verl file-logger log as it is appended (verl's documented JSONL format:
json.dumps({"step": N, "data": {...}}) a line) and a run folder of ours as its writer appends; the stop file
and exit status 1 come once a critical finding holds, and a healthy-looking log ends with exit 0."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from collectors import RunWriter
from dashboard.diagnosis.cli import main

ROOT = Path(__file__).resolve().parents[1]


def verl_line(step: int, score: float) -> str:
    data = {"critic/score/mean": score, "critic/score/max": score, "critic/score/min": score,
            "actor/entropy": 1.0, "actor/pg_clipfrac": 0.01, "response_length/mean": 20.0}
    return json.dumps({"step": step, "data": data}) + "\n"


def test_watch_follows_a_growing_verl_log_and_writes_the_stop_file(tmp_path):
    log = tmp_path / "metrics.jsonl"
    log.write_text("".join(verl_line(s, 0.0) for s in range(1, 4)))
    stop = tmp_path / "stop.json"
    proc = subprocess.Popen([sys.executable, "-m", "dashboard.diagnosis.cli", str(log), "--watch", "--interval",
                             "0.1", "--hold", "2", "--stop-file", str(stop)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    step = 4
    try:
        # a reward of exactly 0 at every step: keep appending until the watcher has seen it hold twice
        while proc.poll() is None and step < 400:
            with log.open("a") as fh:
                fh.write("".join(verl_line(s, 0.0) for s in range(step, step + 5)))
            step += 5
            time.sleep(0.3)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 1, err[-2000:]
    body = json.loads(stop.read_text())
    assert body["severity"] == "critical" and body["rule_id"] in out and body["step"] >= 10
    assert "new finding" in out and f"stop: critical finding {body['rule_id']}" in out


def test_watch_a_finished_run_prints_what_holds_and_exits_0_without_fail_on(tmp_path, capsys):
    out = tmp_path / "ours"
    with RunWriter(out) as w:
        for s in range(30):
            w.log_step(s, {"reward/mean": 0.0, "reward/std": 0.0})
    assert main([str(out), "--watch", "--interval", "0"]) == 0  # finished: one final check, nothing to wait for
    printed = capsys.readouterr().out
    assert "new finding" in printed and "reward_constant" in printed
    assert main([str(out), "--watch", "--interval", "0", "--fail-on", "critical"]) == 1

"""grpo-diagnose --watch follows a run as it grows: a verl file-logger log as it is appended (verl's documented
JSONL format: json.dumps({"step": N, "data": {...}}) a line), a run folder of ours as its writer appends, a
TensorBoard logdir as torch's SummaryWriter writes it and a TRL output folder as transformers' TrainerState saves
checkpoints. A finding is printed once however many checks it holds; the stop file and exit status 1 come once a
critical finding holds, and a finished run ends with exit 0."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from helpers.paths import REPO

from collectors import RunWriter
from dashboard.diagnosis.cli import main


def verl_line(step: int, score: float) -> str:
    data = {"critic/score/mean": score, "critic/score/max": score, "critic/score/min": score,
            "actor/entropy": 1.0, "actor/pg_clipfrac": 0.01, "response_length/mean": 20.0}
    return json.dumps({"step": step, "data": data}) + "\n"


def test_watch_follows_a_growing_verl_log_and_writes_the_stop_file(tmp_path):
    log = tmp_path / "metrics.jsonl"
    log.write_text("".join(verl_line(s, 0.0) for s in range(1, 4)))
    stop = tmp_path / "stop.json"
    proc = subprocess.Popen([sys.executable, "-m", "dashboard.diagnosis.cli", str(log), "--watch", "--interval",
                             "0.1", "--hold", "2", "--stop-file", str(stop)], cwd=REPO, stdout=subprocess.PIPE,
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


class Watch:
    """`grpo-diagnose TARGET --watch ...` in a subprocess; its output lines gathered by threads as they come."""

    def __init__(self, target: Path, *args: str) -> None:
        import threading

        self.proc = subprocess.Popen([sys.executable, "-m", "dashboard.diagnosis.cli", str(target), "--watch",
                                      "--interval", "0.2", "--hold", "2", *args], cwd=REPO, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.err: list[str] = []
        self._readers = [threading.Thread(target=lambda f=f, into=into: into.extend(iter(f.readline, "")),
                                          daemon=True) for f, into in ((self.proc.stdout, self.lines),
                                                                       (self.proc.stderr, self.err))]
        for t in self._readers:
            t.start()

    def events(self) -> list[dict]:
        return [json.loads(x) for x in list(self.lines) if x.startswith("{")]

    def end(self) -> str:
        """Stop it if it still runs (it may be ended twice); its stderr."""
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=60)
        for t in self._readers:
            t.join(timeout=10)
        return "".join(self.err)


def follow_while_writing(write_steps, watches: tuple[Watch, Watch], step: int, after: int = 30,
                         cap: int = 600) -> int:
    """Write 5 steps at a time from `step` on (write_steps(first, last)) while the two watches follow: until the stopping
    watch has exited and the other has printed a new finding and then seen `after` more steps. Returns the
    last step written."""
    follower, stopper = watches
    seen_at = None
    while step < cap:
        write_steps(step, step + 4)
        step += 5
        if seen_at is None and any(e["event"] == "new" for e in follower.events()):
            seen_at = step
        if stopper.proc.poll() is not None and seen_at is not None and step - seen_at >= after:
            break
        time.sleep(0.3)
    return step - 1


def assert_once_then_stopped(follower: Watch, stopper: Watch, stop: Path, last: int, rule: str) -> None:
    """The follower printed each finding once (`rule` among them) as the run grew, well before its end, and kept
    following; the stopper wrote the stop file naming a critical finding of those and exited 1."""
    err = follower.end()
    assert follower.proc.returncode not in (0, 1), err[-2000:]  # it was still following: terminated by us
    new = [e["finding"]["rule_id"] for e in follower.events() if e["event"] == "new"]
    assert rule in new and len(new) == len(set(new)), new  # once each, over the many checks that followed
    at = next(e["step"] for e in follower.events() if e["event"] == "new" and e["finding"]["rule_id"] == rule)
    assert 10 <= at <= last - 25, (at, last)  # seen as the run grew, not read from a finished file
    err = stopper.end()
    assert stopper.proc.returncode == 1, err[-2000:]
    body = json.loads(stop.read_text())
    assert body["severity"] == "critical" and body["rule_id"] in new and 10 <= body["step"] <= last, body
    printed = "".join(stopper.lines)
    assert printed.count(f"({body['rule_id']}, steps") == 1, printed
    assert f"stop: critical finding {body['rule_id']}" in printed


def test_watch_follows_a_tensorboard_logdir_as_summarywriter_writes_it(tmp_path):
    from torch.utils.tensorboard import SummaryWriter
    logdir, stop = tmp_path / "runs" / "exp", tmp_path / "stop.json"
    writer = SummaryWriter(log_dir=str(logdir))

    def write_steps(first: int, last: int) -> None:
        for s in range(first, last + 1):  # TRL's names through transformers' TensorBoardCallback: a reward of 0
            for tag, v in (("train/reward", 0.0), ("train/reward_std", 0.0), ("train/entropy", 1.0),
                           ("train/completions/mean_length", 20.0), ("train/loss", 0.0)):
                writer.add_scalar(tag, v, s)
        writer.flush()

    write_steps(0, 2)  # the event file exists before the watches start
    watches = (Watch(logdir, "--format", "json"), Watch(logdir, "--stop-file", str(stop)))
    try:
        last = follow_while_writing(write_steps, watches, 3)
        assert_once_then_stopped(*watches, stop, last, "reward_constant")
    finally:
        writer.close()
        for w in watches:
            w.end()


def test_watch_follows_a_trl_folder_as_its_trainer_state_grows(tmp_path):
    from transformers import TrainerState
    out, stop = tmp_path / "trl_out", tmp_path / "stop.json"
    state = TrainerState(max_steps=10_000, logging_steps=1, save_steps=5)

    def write_steps(first: int, last: int) -> None:
        # what a GRPOTrainer logs with a reward that is always 0, saved at a checkpoint as transformers saves it
        for s in range(first + 1, last + 2):  # TRL counts steps from 1
            state.log_history.append({"loss": 0.0, "grad_norm": 0.0, "learning_rate": 1e-6, "reward": 0.0,
                                      "reward_std": 0.0, "frac_reward_zero_std": 1.0, "entropy": 1.0,
                                      "completions/mean_length": 20.0, "step": s, "epoch": s / 100})
        state.global_step = last + 1
        ckpt = out / f"checkpoint-{last + 1}"
        ckpt.mkdir(parents=True)
        state.save_to_json(str(ckpt / "trainer_state.json"))

    write_steps(0, 4)
    watches = (Watch(out, "--format", "json"), Watch(out, "--stop-file", str(stop)))
    try:
        last = follow_while_writing(write_steps, watches, 5)
        assert_once_then_stopped(*watches, stop, last + 1, "reward_constant")
    finally:
        for w in watches:
            w.end()


def test_a_cleared_finding_is_said_in_the_watch_language(capsys):
    import argparse

    from collectors import open_run
    from dashboard.diagnosis import diagnose
    from dashboard.diagnosis.guard.watch import Update
    from dashboard.diagnosis.guard.watch_cli import show

    f = next(f for f in diagnose(open_run(REPO / "sample_runs" / "small_group")).findings if f.rule_id == "small_group")
    for lang, line in (("en", "-- r: grposcope cleared at step 41: Group too small (G = 2) (small_group) no longer holds"),
                       ("zh", "-- r: grposcope 第 41 步：group 太小（G = 2）（small_group）已不再成立")):
        show("r", Update(step=41, cleared=[f]), argparse.Namespace(format="text", lang=lang))
        assert capsys.readouterr().out == line + "\n"


def test_a_rule_error_and_the_stop_are_said_in_the_watch_language(capsys):
    import argparse

    from collectors import open_run
    from dashboard.diagnosis import NotJudged, diagnose
    from dashboard.diagnosis.guard.watch import Update
    from dashboard.diagnosis.guard.watch_cli import show

    f = next(f for f in diagnose(open_run(REPO / "sample_runs" / "small_group")).findings if f.rule_id == "small_group")
    err = NotJudged("kl_clip_explode", "ValueError: boom")
    for lang, lines in (("en", ["-- r: rule kl_clip_explode raised and is ignored: ValueError: boom",
                                f"-- r at step 41: stop: {f.severity} finding small_group: Group too small (G = 2)"]),
                        ("zh", ["-- r: 规则 kl_clip_explode 运行出错，已忽略：ValueError: boom",
                                "-- r 第 41 步: 停止：警告发现 small_group：group 太小（G = 2）"])):
        show("r", Update(step=41, errors=[err], stop=f), argparse.Namespace(format="text", lang=lang))
        assert capsys.readouterr().out.splitlines() == lines

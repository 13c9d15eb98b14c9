"""The guard's alerts from inside a training run, against real HTTP servers on 127.0.0.1
(tests/helpers/webhook_server.py): grpo-train --stop-on critical with --alert, and TRL's GrpoScopeGuardCallback
with alerts=[...] in a real tiny GRPOTrainer (tests/fixtures/trl/guarded_trl_run.py). Each confirmed finding
reaches each endpoint once, the stopping one marked so, in the shape its URL asks for."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers.paths import FIXTURES
from helpers.webhook_server import endpoint

from dashboard.diagnosis.guard.guard import read_findings
from grpo_core.cli import main as train_main

SCRIPT = FIXTURES / "trl" / "guarded_trl_run.py"


def test_grpo_train_stop_on_critical_pages_slack_once(tmp_path, tmp_path_factory, monkeypatch, capsys):
    """A run made to fail (a verifier that rejects every right answer) with --stop-on critical and two alerts:
    a Slack address, reached through a recording proxy on 127.0.0.1 (urllib honours http_proxy), and a plain
    URL read from the environment. The stopping finding reaches each once, Slack's in Slack's shape.

    The checks run every 5 steps whatever they cost (--watch-budget inf: the Pacer's budget never defers one), so
    the three checks that confirm a finding are steps 0, 5 and 10 on a loaded machine too; with a budget, a slow
    first check (the diagnosis' imports under a full parallel suite) deferred the next and moved the stop."""
    cache = str(tmp_path_factory.getbasetemp() / "grpo_warm_start")  # the warm start test_guard and others share
    slack = "http://hooks.slack.com/services/T0000/B0000/XXXXSECRET"
    with endpoint() as proxy, endpoint() as plain:
        monkeypatch.setenv("http_proxy", proxy.url.removesuffix("/hook"))
        monkeypatch.setenv("no_proxy", "127.0.0.1")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.setenv("GRPOSCOPE_TEST_HOOK", plain.url)
        out = tmp_path / "runs" / "broken"
        code = train_main(["--out", str(out), "--steps", "40", "--stop-on", "critical", "--alert", slack,
                           "--alert", "env:GRPOSCOPE_TEST_HOOK", "--dashboard", "http://dash:8501", "--lang", "en",
                           "--watch-every", "5", "--watch-budget", "inf", "--set", "log.progress=false",
                           "--set", "faults.reward_verifier=broken_padded_exact",
                           "--set", f"warm_start.cache_dir={cache}"])
    assert code == 3
    (stop,) = [e for e in read_findings(out) if e["event"] == "stop"]
    new = [e for e in read_findings(out) if e["event"] == "new"]
    assert len(plain.bodies) == len(new) == len(proxy.bodies)  # one message per confirmed finding, none per step
    (body,) = [b for b in plain.bodies if b["rule_id"] == stop["rule_id"]]
    assert body["stop"] is True and body["step"] == stop["step"] == 10 and body["severity"] == "critical"
    # a verifier that rejects right answers: the run stops on a critical finding whose first check is the verifier
    # (the merged rules confirm verifier_suspect, which reads the samples, beside reward_constant at step 10)
    assert stop["rule_id"] in {"verifier_suspect", "reward_constant"} and body["first_check"]["what"] == "the verifier"
    assert body["first_check"]["what"] == new[[e["rule_id"] for e in new].index(stop["rule_id"])]["checks"][0]
    assert body["link"] == "http://dash:8501/diagnosis?run=runs%2Fbroken" and body["run"] == "broken"
    paths = {p for p, _, _ in proxy.requests}
    assert paths == {slack}  # the proxy was asked for the Slack address itself
    (page,) = [b for b in proxy.bodies if f"({stop['rule_id']})" in b["text"]]
    assert set(page) == {"text", "blocks"} and page["blocks"][0]["type"] == "section"
    assert body["first_check"]["what"] in page["blocks"][0]["text"]["text"]
    assert "SECRET" not in capsys.readouterr().err


def test_the_trl_guard_callback_alerts_each_finding_once(tmp_path, monkeypatch):
    """A reward broken from the first step: the callback's findings reach a plain JSON endpoint and a Discord
    one; the stop is marked on the finding that stopped the trainer."""
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with endpoint() as plain, endpoint() as discord:
        proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "constant", "--alert", f"json:{plain.url}",
                               "--alert", f"discord:{discord.url}"], capture_output=True, text=True, check=False,
                              timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1].startswith("stopped at step ")
    events = read_findings(tmp_path / "grpo_run")
    new = [(e["rule_id"], e["severity"]) for e in events if e["event"] == "new"]
    (stop,) = [e for e in events if e["event"] == "stop"]
    assert [(b["rule_id"], b["severity"]) for b in plain.bodies] == new  # one each, in the order confirmed
    (stopping,) = [b for b in plain.bodies if b["stop"]]
    assert (stopping["rule_id"], stopping["step"], stopping["run"]) == (stop["rule_id"], stop["step"], "grpo_run")
    assert stopping["first_check"]["what"] and stopping["lang"] == "en"
    titles = [b["embeds"][0]["title"] for b in discord.bodies]
    assert len(titles) == len(new) and f"CRITICAL: {stop['title']}" in titles
    assert all(b["allowed_mentions"] == {"parse": []} for b in discord.bodies)
    json.dumps(plain.bodies)  # what was received is plain JSON

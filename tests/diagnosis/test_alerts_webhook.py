"""Alerts to webhooks (dashboard/diagnosis/guard/webhook.py, post.py), against real HTTP servers on 127.0.0.1:
one that records what it gets, one that never answers, one that answers 500. The shape follows the URL (Slack,
Discord, plain JSON); one message when a finding is confirmed and one when it clears; a dead endpoint costs a
step nothing and the end of a run at most the flush wait; the URL may come from the environment and is never
printed."""

from __future__ import annotations

import json
import time

import pytest
from helpers.paths import SAMPLE_RUNS
from helpers.webhook_server import endpoint
from helpers.zh_words import english_left

from collectors import load_run
from dashboard.diagnosis.cli import main as diagnose_main
from dashboard.diagnosis.engine import diagnose
from dashboard.diagnosis.guard.watch import Update
from dashboard.diagnosis.guard.webhook import WebhookSink, parse_target, webhook_sink

SAMPLES = SAMPLE_RUNS
SLACK = "https://hooks.slack.com/services/T0000/B0000/XXXXSECRET"
DISCORD = "https://discord.com/api/webhooks/123456/TOKENSECRET"


@pytest.fixture(scope="module")
def broken():
    """The bundled broken-verifier run's findings: reward_constant critical first (diagnose sorts them)."""
    return diagnose(load_run(SAMPLES / "broken_verifier")).findings


@pytest.fixture(autouse=True)
def no_proxy_for_the_test_servers(monkeypatch):
    """A proxy set in the environment must not carry the posts to 127.0.0.1 away (urllib honours http_proxy)."""
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def test_the_shape_follows_the_url_and_the_url_may_come_from_the_environment():
    assert parse_target(SLACK).shape == "slack"
    assert parse_target(DISCORD).shape == "discord"
    assert parse_target("https://discordapp.com/api/webhooks/1/x").shape == "discord"
    assert parse_target("https://discord.com/channels/1/2").shape == "json"  # a page, not a webhook
    assert parse_target("https://example.org/hooks/grpo").shape == "json"
    assert parse_target("slack:http://127.0.0.1:9/hook").shape == "slack"  # named outright: a Slack-like server
    t = parse_target("discord:env:HOOK", {"HOOK": DISCORD})
    assert (t.shape, t.url, t.public) == ("discord", DISCORD, "https://discord.com")
    assert parse_target("env:HOOK", {"HOOK": SLACK}).shape == "slack"
    with pytest.raises(ValueError, match="environment variable 'NOPE' is not set"):
        parse_target("env:NOPE", {})
    with pytest.raises(ValueError, match="not an http") as e:
        parse_target("env:HOOK", {"HOOK": "ftp://files.example/SECRETPATH"})
    assert "SECRETPATH" not in str(e.value)


def test_each_shape_carries_the_finding_and_its_first_check(broken):
    f = broken[0]
    sink = WebhookSink([parse_target(u) for u in (SLACK, DISCORD, "https://example.org/h")], "runs/broken",
                       link="http://dash:8501/diagnosis?run=runs%2Fbroken")
    m = sink.message(f, 40, "new", stop=True)
    slack, discord, plain = (sh.body(m) for sh, _ in sink.posters)
    text = json.dumps(slack["blocks"], ensure_ascii=False)
    assert slack["text"].startswith("runs/broken: grposcope CRITICAL at step 40: ")
    assert f.checks[0].what in text and "stops the run" in text and "<http://dash:8501/diagnosis?run=" in text
    (embed,) = discord["embeds"]
    assert embed["title"] == f"CRITICAL: {f.title}" and embed["color"] == 0xD62728
    assert discord["allowed_mentions"] == {"parse": []}
    assert any(fd["value"].startswith(f.checks[0].what) for fd in embed["fields"])
    assert plain["rule_id"] == f.rule_id and plain["severity"] == "critical" and plain["step"] == 40
    assert plain["first_check"] == {"what": f.checks[0].what, "how": f.checks[0].how} and plain["stop"] is True
    assert [e["text"] for e in plain["evidence"]] == [e.text for e in f.evidence]
    cleared = sink.message(f, 90, "cleared")
    assert json_body_of(sink, cleared)["event"] == "cleared" and "no longer holds" in cleared.line


def json_body_of(sink, m):
    return sink.posters[2][0].body(m)


def test_one_message_when_confirmed_and_one_when_cleared_in_chinese(broken):
    f = broken[0]
    with endpoint() as ep:
        sink = webhook_sink([ep.url], "runs/broken", lang="zh", run_dir="/x/runs/broken",
                            dashboard="http://dash:8501/", environ={})
        for update in (Update(10, new=[f]), Update(20), Update(30, cleared=[f])):
            sink(update)
        sink.close(5)
    new, cleared = ep.bodies
    assert (new["event"], cleared["event"], new["lang"], new["rule_id"]) == ("new", "cleared", "zh", f.rule_id)
    assert new["link"] == "http://dash:8501/diagnosis?run=runs%2Fbroken"
    assert new["text"].startswith("grposcope 严重，第 10 步") and "优先检查" in new["text"]
    assert cleared["text"].endswith("已不再成立")
    words = " ".join([new["text"], new["title"], new["symptom"], new["first_check"]["what"],
                      new["first_check"]["how"], *(e["text"] for e in new["evidence"])])
    assert english_left(words, {"grposcope"}) == []


def test_a_hanging_endpoint_costs_a_step_nothing_and_the_end_at_most_the_wait(broken):
    with endpoint("hang") as ep:
        sink = webhook_sink([ep.url], "r", timeout=1.0, retries=1, backoff=0.1, environ={})
        lines = []
        sink.write = lines.append
        t0 = time.perf_counter()
        sink(Update(10, new=list(broken)))
        queued = time.perf_counter() - t0
        t0 = time.perf_counter()
        sink.close(wait=0.5)
        closed = time.perf_counter() - t0
    assert queued < 0.2  # five bodies queued, none waited for (the first try alone takes the 1 s timeout)
    assert 0.4 < closed < 1.0  # the flush waited its 0.5 s, no more: the dead endpoint is left behind
    assert ep.requests and lines == []  # the first body reached the server, which never answered


def test_a_500_is_retried_then_told_once_without_the_secret(broken):
    with endpoint("fail") as ep:
        lines = []
        sink = webhook_sink([ep.url + "/SECRETTOKEN"], "r", retries=2, backoff=0.05, environ={})
        sink.write = lines.append
        sink(Update(10, new=[broken[0]]))
        sink.close(5)
    assert len(ep.requests) == 3 and len({json.dumps(b) for b in ep.bodies}) == 1  # the same body, three tries
    (line,) = lines
    host = ep.url.split("/hook")[0]
    assert line == f"grposcope alert: {host} did not take a message: HTTP 500 (after 3 tries)"
    assert "SECRET" not in line


def test_a_refusal_is_not_retried(broken):
    with endpoint("refuse") as ep:
        sink = webhook_sink([ep.url], "r", retries=2, backoff=0.05, environ={})
        sink.write = lambda line: None
        sink(Update(10, new=[broken[0]]))
        sink.close(5)
    assert len(ep.requests) == 1


def test_watch_alerts_each_finding_of_a_finished_run_once(tmp_path, capsys):
    with endpoint() as ep:
        code = diagnose_main([str(SAMPLES / "broken_verifier"), "--watch", "--interval", "0", "--format", "json",
                              "--alert", f"json:{ep.url}", "--lang", "en"])
    printed = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert code == 0
    new = [(p["finding"]["rule_id"], p["finding"]["severity"]) for p in printed if p["event"] == "new"]
    assert sorted((b["rule_id"], b["severity"]) for b in ep.bodies) == sorted(new) and len(new) == 5
    assert {b["run"] for b in ep.bodies} == {str(SAMPLES / "broken_verifier")}


def test_watch_refuses_an_alert_without_watch_or_with_an_unset_variable(capsys):
    assert diagnose_main([str(SAMPLES / "healthy"), "--alert", "http://127.0.0.1:9/h"]) == 2
    assert "--alert needs --watch" in capsys.readouterr().err
    assert diagnose_main([str(SAMPLES / "healthy"), "--watch", "--alert", "env:GRPOSCOPE_TEST_UNSET"]) == 2
    assert "'GRPOSCOPE_TEST_UNSET' is not set" in capsys.readouterr().err



def test_a_slack_and_a_discord_message_in_chinese_keep_no_english(broken):
    sink = WebhookSink([parse_target(SLACK), parse_target(DISCORD)], "broken", lang="zh")
    m = sink.message(broken[0], 10, "new", stop=True)
    slack, discord = (sh.body(m) for sh, _ in sink.posters)
    texts = [slack["blocks"][0]["text"]["text"], slack["blocks"][1]["elements"][0]["text"],
             discord["embeds"][0]["description"], *(f["name"] + " " + f["value"] for f in discord["embeds"][0]["fields"])]
    assert "grposcope 在这一步之后停止训练" in texts[0]
    assert [english_left(t, {"grposcope", "broken", "CRITICAL"}) for t in texts] == [[]] * len(texts)


def test_a_proxy_set_after_urllib_was_first_used_still_carries_the_post(monkeypatch):
    """urlopen's shared opener keeps the proxy variables of its first call in the process: a post made after
    another urlopen (here: one to a server on 127.0.0.1) ignored an http_proxy set later, and Slack's address was
    looked up directly (found by the full suite, where another test in the same worker had used urlopen first)."""
    import urllib.request

    from dashboard.diagnosis.guard.post import Poster

    with endpoint() as first, endpoint() as proxy:
        urllib.request.urlopen(urllib.request.Request(first.url, data=b"{}", method="POST"), timeout=5).close()
        monkeypatch.setenv("http_proxy", proxy.url.removesuffix("/hook"))
        poster = Poster("http://hooks.slack.com/services/T0000/B0000/X", "hooks.slack.com", retries=0)
        poster.put({"text": "hello"})
        assert poster.close(wait=10)
        assert poster.sent == 1 and len(proxy.bodies) == 1

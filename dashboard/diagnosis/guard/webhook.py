"""Findings to webhooks: a Slack incoming webhook, a Discord webhook, or any URL (a plain JSON body).

    sink = webhook_sink(["env:SLACK_WEBHOOK_URL"], run="runs/my-run", lang="zh")
    Guard(watcher, sinks=[..., sink]); ...; guard.close()   # what is queued goes out, waiting FLUSH_S at most

One message when a finding is confirmed at its severity and one when it clears (the Watcher's Update.new and
Update.cleared: never one per step). Each target's body is built by the first shape in SHAPES whose test
takes the URL (a Slack or Discord address), else the plain JSON shape; `slack:URL`, `discord:URL`, `json:URL`
name the shape outright (a Slack-compatible chat server, a test server). `env:NAME` reads the URL from the
environment variable NAME, so the secret stays out of command lines, configs and logs; messages about a
target name only its host. Posting is done by post.Poster, in the background (see there).

The plain JSON body, one per event:
    {"source": "grposcope", "event": "new" | "cleared", "run", "step", "rule_id", "severity", "title",
     "symptom", "evidence": [{"metric", "value", "threshold", "statistic", "text"}], "first_check": {"what",
     "how"} | null, "checks": [...], "stop": bool, "link": URL | null, "lang", "text"}
"""

from __future__ import annotations

import os
import sys
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dashboard.diagnosis.findings import Finding
from dashboard.diagnosis.guard.post import BACKOFF_S, RETRIES, TIMEOUT_S, Poster
from dashboard.diagnosis.guard.watch import Update, alert_line

ENV_PREFIX = "env:"
DASHBOARD_ENV = "GRPOSCOPE_DASHBOARD_URL"  # the dashboard's address, for the link to a run's Diagnosis page
FLUSH_S = TIMEOUT_S  # at the end of a run: the most it waits for queued messages (one try's timeout)
# Slack's and Discord's own limits on a message (characters): text of a section block, an embed's title,
# description and field value; longer texts are cut, not refused by the endpoint
SLACK_TEXT_MAX = 3000
DISCORD_TITLE_MAX, DISCORD_DESCRIPTION_MAX, DISCORD_FIELD_MAX = 256, 4096, 1024
COLOURS = {"critical": 0xD62728, "warning": 0xFF9F1C, "info": 0x1F77B4, "cleared": 0x2CA02C}  # Discord embeds
EMOJI = {"critical": ":red_circle:", "warning": ":large_orange_circle:", "info": ":large_blue_circle:",
         "cleared": ":white_check_mark:"}  # Slack's emoji codes


@dataclass(frozen=True)
class Message:
    """One event of one finding, in the language of the run's alerts (texts already localised)."""

    run: str
    event: str  # "new" or "cleared"
    step: int | None
    finding: Finding
    line: str  # alert_line: the console's one line for it
    evidence: tuple[str, ...]  # the evidence lines, localised
    stop: bool  # this finding stops the run
    link: str | None
    lang: str
    labels: Mapping[str, str] = field(default_factory=dict)  # the words around the texts, in `lang`


@dataclass(frozen=True)
class Shape:
    matches: Callable[[urllib.parse.SplitResult], bool]
    body: Callable[[Message], dict[str, Any]]


SHAPES: dict[str, Shape] = {}


def shape(name: str, matches: Callable[[urllib.parse.SplitResult], bool] = lambda u: False):
    """Register a payload shape: `matches(url)` picks it for an address; `slack:URL` picks it by name."""
    def register(body: Callable[[Message], dict[str, Any]]):
        SHAPES[name] = Shape(matches, body)
        return body
    return register


def _first_check(m: Message) -> dict[str, str] | None:
    return {"what": m.finding.checks[0].what, "how": m.finding.checks[0].how} if m.finding.checks else None


@shape("slack", lambda u: u.hostname == "hooks.slack.com")
def slack_body(m: Message) -> dict[str, Any]:
    """Slack's incoming-webhook shape: `text` (the notification and fallback) and mrkdwn section blocks."""
    kind = "cleared" if m.event == "cleared" else m.finding.severity
    head = f"{EMOJI[kind]} *{_slack(m.line)}*"
    parts = [head] if m.event == "cleared" else [head, *(f"• {_slack(e)}" for e in m.evidence)]
    if m.event != "cleared" and (check := _first_check(m)):
        parts.append(f"*{_slack(m.labels['check_first'])}*: {_slack(check['what'])}: {_slack(check['how'])}")
    if m.stop:
        parts.append(f"*{_slack(m.labels['stopping'])}*")
    context = f"{_slack(m.labels['run'])}: `{_slack(m.run)}`"
    if m.link:
        context += f" · <{m.link}|{_slack(m.labels['open'])}>"
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(parts)[:SLACK_TEXT_MAX]}},
              {"type": "context", "elements": [{"type": "mrkdwn", "text": context[:SLACK_TEXT_MAX]}]}]
    return {"text": f"{m.run}: {m.line}"[:SLACK_TEXT_MAX], "blocks": blocks}


def _slack(text: str) -> str:
    """Slack mrkdwn's three control characters, escaped as Slack asks."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@shape("discord", lambda u: (u.hostname or "").removeprefix("ptb.").removeprefix("canary.")
       in ("discord.com", "discordapp.com") and u.path.startswith("/api/webhooks/"))
def discord_body(m: Message) -> dict[str, Any]:
    """Discord's webhook shape: one embed; no mentions are parsed (a title never pings @everyone)."""
    kind = "cleared" if m.event == "cleared" else m.finding.severity
    fields = [{"name": m.labels["run"], "value": m.run[:DISCORD_FIELD_MAX], "inline": True},
              {"name": m.labels["step"], "value": str(m.step), "inline": True}]
    if m.event != "cleared" and (check := _first_check(m)):
        fields.append({"name": m.labels["check_first"],
                       "value": f"{check['what']}: {check['how']}"[:DISCORD_FIELD_MAX]})
    if m.stop:
        fields.append({"name": m.labels["stopping"], "value": m.finding.rule_id})
    description = m.line if m.event == "cleared" else "\n".join([m.finding.symptom, *m.evidence])
    embed = {"title": f"{m.finding.severity.upper()}: {m.finding.title}"[:DISCORD_TITLE_MAX],
             "description": description[:DISCORD_DESCRIPTION_MAX], "color": COLOURS[kind], "fields": fields}
    if m.link:
        embed["url"] = m.link
    return {"content": m.line[:2000], "embeds": [embed], "allowed_mentions": {"parse": []}}


@shape("json")
def json_body(m: Message) -> dict[str, Any]:
    """The plain shape (the module docstring lists its keys)."""
    f = m.finding
    return {"source": "grposcope", "event": m.event, "run": m.run, "step": m.step, "rule_id": f.rule_id,
            "severity": f.severity, "title": f.title, "symptom": f.symptom,
            "evidence": [{"metric": e.metric, "value": e.value, "threshold": e.threshold, "statistic": e.statistic,
                          "text": t} for e, t in zip(f.evidence, m.evidence)],
            "first_check": _first_check(m), "checks": [{"what": c.what, "how": c.how} for c in f.checks],
            "stop": m.stop, "link": m.link, "lang": m.lang, "text": m.line}


@dataclass(frozen=True)
class Target:
    url: str
    shape: str
    public: str  # scheme://host[:port]: how messages name it


def parse_target(spec: str, environ: Mapping[str, str] | None = None) -> Target:
    """`[slack:|discord:|json:][env:NAME | URL]` -> Target; ValueError (one line, no secret in it) otherwise."""
    environ = os.environ if environ is None else environ
    name, _, rest = spec.partition(":")
    forced = name if name in SHAPES and not rest.startswith("//") else None
    url = rest if forced else spec
    if url.startswith(ENV_PREFIX):
        var = url[len(ENV_PREFIX):]
        url = environ.get(var, "").strip()
        if not url:
            raise ValueError(f"--alert {spec}: the environment variable {var!r} is not set")
    parts = urllib.parse.urlsplit(url)
    public = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
    if parts.scheme not in ("http", "https") or not parts.hostname:  # named by its start: a URL may be a secret
        raise ValueError(f"--alert {spec[:12]}...: not an http(s) URL (or slack:, discord:, json:, env:NAME)")
    chosen = forced or next(n for n, s in SHAPES.items() if s.matches(parts) or n == "json")
    return Target(url, chosen, public)


def diagnosis_link(dashboard: str | None, run_dir: Path | str | None) -> str | None:
    """The run's Diagnosis page on a dashboard at `dashboard` (grpo-dash launched on the run's parent folder,
    whose name is the run key's root: dashboard/paths.py)."""
    if not dashboard or run_dir is None:
        return None
    path = Path(run_dir).resolve()
    key = f"{path.parent.name}/{path.name}"
    return f"{dashboard.rstrip('/')}/diagnosis?{urllib.parse.urlencode({'run': key})}"


class WebhookSink:
    """A Guard sink (callable on an Update) posting each new and cleared finding to every target;
    close() lets what is queued go out, waiting at most `wait` seconds in all."""

    __name__ = "webhook"

    def __init__(self, targets: list[Target], run: str, lang: str = "en", link: str | None = None,
                 timeout: float = TIMEOUT_S, retries: int = RETRIES, backoff: float = BACKOFF_S,
                 write: Callable[[str], None] | None = None) -> None:
        from dashboard.diagnosis.i18n import label

        self.run, self.lang, self.link = run, lang, link
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self.labels = {k: label(f"webhook_{k}", lang) for k in ("run", "step", "check_first", "stopping", "open")}
        self.posters = [(SHAPES[t.shape], Poster(t.url, t.public, timeout, retries, backoff, self._failed))
                        for t in targets]

    def __call__(self, update: Update) -> None:
        for event, items in (("new", update.new), ("cleared", update.cleared)):
            for f in items:
                m = self.message(f, update.step, event, stop=event == "new" and f is update.stop)
                for sh, poster in self.posters:
                    poster.put(sh.body(m))

    def message(self, f: Finding, step: int | None, event: str, stop: bool = False) -> Message:
        from dashboard.diagnosis.i18n import evidence_text, localise_finding

        local = localise_finding(f, self.lang)
        return Message(self.run, event, step, local, alert_line(f, step, event, self.lang),
                       tuple(evidence_text(e.text, self.lang) for e in f.evidence), stop, self.link, self.lang,
                       self.labels)

    def close(self, wait: float = FLUSH_S) -> None:
        import time

        end = time.monotonic() + wait
        for _, poster in self.posters:
            poster.close(max(0.0, end - time.monotonic()))

    def _failed(self, public: str, error: str, tries: int) -> None:
        from dashboard.diagnosis.i18n import label

        self.write(label("webhook_failed", self.lang, target=public, error=error, tries=tries))


def webhook_sink(specs: list[str], run: str, lang: str = "en", run_dir: Path | str | None = None,
                 dashboard: str | None = None, environ: Mapping[str, str] | None = None, **posting) -> WebhookSink:
    """--alert values -> one sink; ValueError naming the bad one. dashboard: its address (default
    $GRPOSCOPE_DASHBOARD_URL) for a link to the run's Diagnosis page; posting: timeout, retries, backoff."""
    environ = os.environ if environ is None else environ
    targets = [parse_target(s, environ) for s in specs]
    link = diagnosis_link(dashboard or environ.get(DASHBOARD_ENV), run_dir)
    return WebhookSink(targets, run, lang, link, **posting)


"""Small pure text helpers for the app: Markdown escaping, "how long ago", health labels."""

from __future__ import annotations

import math
import re
import time

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")
_AUTOLINK = re.compile(r"(\w:(?=//)|\bwww(?=\.)|@(?=\w))", re.IGNORECASE)


def escape_md(text: object) -> str:
    """Text safe to put in a Streamlit label or Markdown string: every Markdown/HTML character escaped,
    so `![x](http://...)` is shown literally and fetches nothing. Model output never goes through this:
    it is shown with st.code / st.text / st.dataframe only. A URL would still become a link (GFM autolinks
    escaped text too): a zero-width space after its scheme or `www` keeps it plain text."""
    text = _AUTOLINK.sub("\\1\u200b", str(text))
    return _MD_SPECIAL.sub(r"\\\1", text).replace("\n", " ")


AGO = {"en": ("never", "{v} s ago", "{v} min ago", "{v} h ago", "{v} d ago"),
       "zh": ("从未", "{v} 秒前", "{v} 分钟前", "{v} 小时前", "{v} 天前")}


def ago(unix_s: float | None, now: float | None = None, lang: str = "en") -> str:
    """'12 s ago', '3 min ago', '2.5 h ago', '4 d ago'; 'never' for None or NaN (Chinese with lang="zh")."""
    never, s, m, h, d = AGO.get(lang, AGO["en"])
    if _missing(unix_s):
        return never
    dt = max(0.0, (time.time() if now is None else now) - float(unix_s))
    if dt < 90:
        return s.format(v=f"{dt:.0f}")
    if dt < 90 * 60:
        return m.format(v=f"{dt / 60:.0f}")
    if dt < 36 * 3600:
        return h.format(v=f"{dt / 3600:.1f}")
    return d.format(v=f"{dt / 86400:.0f}")


def _missing(value: float | None) -> bool:
    # a table column of times holds NaN, not None, where some rows have no time
    return value is None or math.isnan(float(value))


def fmt_time(unix_s: float | None) -> str:
    if _missing(unix_s):
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(unix_s)))


def update_cell(unix_s: float | None, now: float | None = None, lang: str = "en") -> str:
    """The Runs table's last-update cell: '18.7 h ago · 2026-12-03 04:12:09', the same "ago" as the run's header
    (both from collectors.run.last_update_of); '' for a run with no time."""
    if _missing(unix_s):
        return ""
    return f"{ago(unix_s, now, lang)} · {fmt_time(unix_s)}"


def phase_text(phase: object, lang: str = "en") -> tuple[str, float | None] | None:
    """What a running run does before its first step (run.json's `phase`, collectors.meta.phase_progress), in
    words, and how far along it is (0..1, None when its total is unknown); None for no phase.

    {"name": "warm_start", "done": 300, "total": 2000, "detail": {"sampled_pass_rate": 0.21,
    "target_pass_rate": 0.4}} -> ("supervised warm start before the first step: step 300 of at most 2000 ·
    sampled pass rate 0.21 (stops at 0.4)", 0.15)."""
    from collectors.meta import phase_progress
    from dashboard.diagnosis.i18n import label

    parsed = phase_progress(phase)
    if parsed is None:
        return None
    name, done, total, detail = parsed
    fraction = min(1.0, done / total) if done is not None and total else None
    if name == "warm_start" and done is not None and total is not None:
        text = label("phase_warm_start", lang, done=done, total=total)
        rate, target = detail.get("sampled_pass_rate"), detail.get("target_pass_rate")
        if isinstance(rate, (int, float)) and isinstance(target, (int, float)):
            text += " · " + label("phase_warm_start_rate", lang, rate=f"{rate:.2f}", target=f"{target:g}")
        return text, fraction
    if f"phase_{name}" in _PHASES:
        return label(f"phase_{name}", lang), fraction
    text = label("phase_other", lang, name=name)
    if done is not None and total is not None:
        text += " · " + label("phase_progress", lang, done=done, total=total)
    return text, fraction


_PHASES = ("phase_first_rollout",)  # phases named by a label of their own, beside warm_start's


def health_label(health, status: str = "", lang: str = "en") -> str:
    """The Runs table's health cell: the diagnosis' verdict (a `data.Health`), with its finding counts.

    "ok" only for a run judged healthy: a run the diagnosis cannot judge says so, and a failed or stopped
    run is never "ok" (the rules read metrics; a crash they cannot see in them is still not a healthy run).
    """
    from dashboard.diagnosis.i18n import label

    if health.refused:
        return label("health_refused", lang)
    if health.verdict is None:
        return label("health_not_judged", lang)
    counts = label("health_join", lang).join(
        label(f"health_n_{sev}", lang, n=n) for sev, n in (("critical", health.critical),
                                                           ("warning", health.warning)) if n)
    if health.verdict == "healthy":  # "failed, no finding in the metrics" only where there is none
        failed = "health_failed_with" if counts else "health_failed"
        # "ok: 2 warning(s)" read as a contradiction: a healthy run with warnings says they are to read
        ok = "health_ok_with" if counts else "health_ok"
        head = label({"failed": failed, "stopped": "health_stopped"}.get(status, ok), lang)
    else:
        icon = "❔" if health.verdict == "cant_judge" else "🔴" if health.critical else "🟠"
        head = f"{icon} {label('health_' + health.verdict, lang)}"
    return f"{head}{label('sep', lang)}{counts}" if counts else head


SEVERITY_ICONS = {"critical": "🔴", "warning": "🟠", "info": "🔵"}
STATUS_ICONS = {"running": "🟢", "finished": "⚪", "failed": "❌", "stopped": "🛑", "stale": "⏸️", "unknown": "❔"}


GUARD_EVENTS = ("new", "cleared", "rule_error", "stop")


def guard_event_line(e: dict, lang: str = "en") -> str:
    """One findings.jsonl event as a markdown line: icon, step, what happened, title, rule (in `lang`)."""
    from dashboard.diagnosis.i18n import label

    icon = "🛑" if e.get("event") == "stop" else SEVERITY_ICONS.get(e.get("severity") or "", "⚠️")
    event = e.get("event", "")
    what = label(f"guard_{event}", lang) if event in GUARD_EVENTS else str(event)
    return (f"{icon} {label('guard_line_step', lang, step=e.get('step'))}{label('sep', lang)}{what}{label('sep', lang)}"
            f"**{escape_md(str(e.get('title', '')))}** ({escape_md(str(e.get('rule_id', '')))})")

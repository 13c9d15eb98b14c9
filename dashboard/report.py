"""A diagnosis as a report to share: Markdown (renders on GitHub, in an issue or a chat) or one self-contained
HTML file (every chart inline with Plotly's JavaScript, no network: it opens offline). Pure: diagnoses and runs
in, text out; no streamlit. Used by `grpo-diagnose --format markdown|html` and the Diagnosis page's buttons.

A report holds, per run, what the Diagnosis page shows: the verdict, the findings with their severity, their
evidence (HTML: each with the chart of the metric it names; Markdown: a one-line sparkline of it, and a sentence
saying where the charts are: a report pasted into a GitHub issue keeps no files beside it, and GitHub draws no
scripts), the checks to make first, the rules that could not judge, and the five configuration
questions; all in the chosen language. Model output (examples) is escaped as text, never rendered.
"""

from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dashboard import charts
from dashboard.diagnosis import i18n
from dashboard.diagnosis.i18n import label
from dashboard.diagnosis.terminal import example_value, reader_notes
from dashboard.text import SEVERITY_ICONS

SPARK = "▁▂▃▄▅▆▇█"
SPARK_POINTS = 40  # characters of a sparkline
MAX_EXAMPLES = 3
MAX_NOTES = 20  # reader notes listed in full; a log with a note per step (250 seen) says how many more there are
PLOT_CONFIG = {"displaylogo": False, "responsive": True}


@dataclass(frozen=True)
class Item:
    """One run of a report: its name (the target or run key), its diagnosis (English, as the engine gives it) and
    the run (for its metrics, source and status)."""

    name: str
    diagnosis: Any
    run: Any


def file_stem(name: str) -> str:
    """A file name for a run's report: its name with anything but letters, digits, '-', '_' and '.' as '_'."""
    return re.sub(r"[^\w.\-]+", "_", str(name)).strip("._") or "run"


def sparkline(values: np.ndarray, points: int = SPARK_POINTS) -> str:
    """A series as block characters (▁ lowest .. █ highest), `points` wide, each the mean of its bucket; a
    constant is a flat line at the middle, a gap (no finite value) a space."""
    v = np.asarray(values, dtype=np.float64)
    if not len(v):
        return ""
    buckets = np.array_split(v, min(points, len(v)))
    means = np.array([np.nanmean(b) if np.isfinite(b).any() else np.nan for b in buckets])
    finite = means[np.isfinite(means)]
    if not len(finite):
        return ""
    lo, hi = float(finite.min()), float(finite.max())
    out = []
    for m in means:
        if not np.isfinite(m):
            out.append(" ")
        elif hi - lo <= abs(hi) * 1e-12:
            out.append(SPARK[3])
        else:
            out.append(SPARK[round((m - lo) / (hi - lo) * (len(SPARK) - 1))])
    return "".join(out)


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def _series(run: Any, metric: str) -> np.ndarray | None:
    frame = getattr(run, "metrics", None)
    if frame is None or metric not in frame or metric in ("step", "wall_time"):
        return None
    if not pd.api.types.is_numeric_dtype(frame[metric]):
        return None
    y = frame[metric].to_numpy(dtype=np.float64)
    return y if np.isfinite(y).any() else None


def _head(item: Item, lang: str) -> dict[str, Any]:
    d, run = item.diagnosis, item.run
    meta = getattr(run, "meta", None)
    return {"source": getattr(meta, "source", "") or label("unknown", lang),
            "status": label(f"status_{getattr(run, 'status', 'unknown')}", lang)
            if i18n.has_label(f"status_{getattr(run, 'status', 'unknown')}") else getattr(run, "status", ""),
            "steps": d.steps, "last": d.last_step if d.last_step is not None else label("none", lang)}


# -- Markdown ---------------------------------------------------------------------------------------------------

_MD = re.compile(r"([\\`*_{}\[\]<>#|~])")


def md(text: object) -> str:
    """Text safe in GitHub Markdown, tables included: its markup characters escaped, lines joined."""
    return _MD.sub(r"\\\1", str(text)).replace("\n", " ")


def _md_code(text: str) -> str:
    """A fenced block that no line of `text` can close (the fence is longer than any backtick run in it)."""
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", text)), default=0))
    return f"{fence}text\n{text}\n{fence}"


def markdown(items: list[Item], lang: str = "en") -> str:
    """The report of one or more runs as GitHub Markdown."""
    parts = [f"# {md(label('report_title', lang))}", "", f"*{md(label('report_charts', lang))}*", ""]
    for item in items:
        parts += _md_run(item, lang)
    parts.append(f"<sub>{md(label('report_footer', lang))}</sub>")
    return "\n".join(parts) + "\n"


def _md_run(item: Item, lang: str) -> list[str]:
    d = i18n.localise(item.diagnosis, lang)
    sep = label("sep", lang)
    out = [f"## {md(item.name)}", "", md(label("report_head", lang, **_head(item, lang))), "",
           f"**{md(label('verdict_page', lang))}{sep}{md(d.verdict.label)}**{sep}{md(d.verdict.reason)}", ""]
    if not d.findings and d.verdict.kind != "cant_judge":
        out += [md(label("no_findings_page", lang)), ""]
    for f in d.findings:
        span = i18n.span(f.step_range, lang)
        out += [f"### {SEVERITY_ICONS.get(f.severity, '')} {md(f.title)}", "",
                (f"*{md(label(f.severity, lang))} · `{f.rule_id}` · {md(label('symptom', lang))}{sep}{md(f.symptom)} · "
                f"{md(span)}*"), "", f"**{md(label('evidence_page', lang))}**", ""]
        for ev in f.evidence:
            out.append(f"- {md(i18n.evidence_text(ev.text, lang))}")
            y = _series(item.run, ev.metric)
            if y is not None:
                finite = y[np.isfinite(y)]
                out.append(f"  `{sparkline(y)}` `{ev.metric}` {_fmt(finite.min())} .. {_fmt(finite.max())}")
        out += ["", f"**{md(label('check_first_page', lang))}**", ""]
        out += [f"{n}. **{md(c.what)}**{sep}{md(c.how)}" for n, c in enumerate(f.checks, start=1)]
        if f.examples:
            out += ["", f"**{md(label('report_examples', lang))}**", "",
                    _md_code("\n".join(", ".join(f"{k}={example_value(k, v, lang)!r}" for k, v in ex.items())
                                       for ex in f.examples[:MAX_EXAMPLES]))]
        out.append("")
    if d.config_answers:
        out += [f"### {md(label('five_questions', lang))}", "",
                f"| # | {md(label('question', lang))} | {md(label('answer', lang))} | {md(label('config_keys', lang))} |",
                "|---|---|---|---|"]
        out += [f"| {a.number} | {md(a.question)} | {md(a.answer)} | {md(', '.join(a.keys))} |" for a in d.config_answers]
        out.append("")
    if d.not_judged:
        out += [f"<details><summary>{md(label('could_not_judge_n', lang, n=len(d.not_judged)))}</summary>", ""]
        out += [f"- `{n.rule_id}`{sep}{md(i18n.reason_text(n.reason, lang))}" for n in d.not_judged]
        out += ["", "</details>", ""]
    if notes := _notes(item.run, lang):
        out += [f"### {md(label('reader_notes', lang, n=len(reader_notes(item.run))))}", ""]
        out += [f"- {md(n)}" for n in notes] + [""]
    return out


def _notes(run: Any, lang: str) -> list[str]:
    """The reader's notes in `lang`, at most MAX_NOTES of them and a line saying how many more."""
    notes = reader_notes(run)
    shown = [i18n.note_text(n, lang) for n in notes[:MAX_NOTES]]
    return shown + ([label("more_notes", lang, n=len(notes) - MAX_NOTES)] if len(notes) > MAX_NOTES else [])


# -- HTML -------------------------------------------------------------------------------------------------------

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","WenQuanYi Zen Hei",sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#262730;line-height:1.5}
h1{font-size:1.8em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
.verdict{padding:.8em 1em;border-radius:.5em;margin:1em 0}
.healthy{background:#dff5e3}.not_learning,.unstable{background:#fde4e4}.cant_judge{background:#e3eefc}
.finding{border:1px solid #ddd;border-radius:.5em;padding:.5em 1.2em;margin:1em 0}
.meta{color:#666;font-size:.9em}.chart{margin:.3em 0 1em}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ddd;padding:.4em;vertical-align:top;text-align:left}
pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap;word-break:break-word}
"""


def _h(text: object) -> str:
    return _html.escape(str(text))


def html(items: list[Item], lang: str = "en") -> str:
    """The report of one or more runs as one HTML file: Plotly's JavaScript inline once, each chart a div."""
    from plotly.offline import get_plotlyjs

    body = []
    for n, item in enumerate(items):
        body += _html_run(item, lang, n)
    title = label("report_title", lang)
    return ("<!DOCTYPE html>\n"
            f'<html lang="{"zh-CN" if lang == "zh" else "en"}"><head><meta charset="utf-8">'
            f"<title>{_h(title)}: {_h(', '.join(i.name for i in items))}</title>"
            f"<style>{CSS}</style><script>{get_plotlyjs()}</script></head><body>"
            f"<h1>{_h(title)}</h1>{''.join(body)}<p class=\"meta\">{_h(label('report_footer', lang))}</p>"
            "</body></html>\n")


def _chart(fig) -> str:
    return f'<div class="chart">{fig.to_html(full_html=False, include_plotlyjs=False, config=PLOT_CONFIG)}</div>'


def _html_run(item: Item, lang: str, n: int) -> list[str]:
    d = i18n.localise(item.diagnosis, lang)
    sep = label("sep", lang)
    frame = getattr(item.run, "metrics", None)
    out = [f"<h2>{_h(item.name)}</h2>", f'<p class="meta">{_h(label("report_head", lang, **_head(item, lang)))}</p>',
           (f'<div class="verdict {_h(d.verdict.kind)}"><b>{_h(label("verdict_page", lang))}{sep}{_h(d.verdict.label)}'
           f"</b>{sep}{_h(d.verdict.reason)}</div>")]
    if not d.findings and d.verdict.kind != "cant_judge":
        out.append(f"<p>{_h(label('no_findings_page', lang))}</p>")
    if d.verdict.kind == "cant_judge" and frame is not None and len(frame):
        # nothing to judge yet, but the steps it has are worth a look (the page shows them too)
        panels = tuple(p for p in charts.CHECKLIST if any(c in frame and frame[c].notna().any() for c in p.columns))
        if panels:
            out += [f"<h3>{_h(label('report_logged', lang))}</h3>",
                    _chart(charts.checklist_figure(frame, panels, lang=lang))]
    for f in d.findings:
        span = i18n.span(f.step_range, lang)
        out += ['<div class="finding">', f"<h3>{SEVERITY_ICONS.get(f.severity, '')} {_h(f.title)}</h3>",
                (f'<p class="meta">{_h(label(f.severity, lang))} · {_h(f.rule_id)} · {_h(label("symptom", lang))}{sep}'
                f"{_h(f.symptom)} · {_h(span)}</p>")]
        for ev in f.evidence:
            out.append(f"<p>{_h(label('evidence_page', lang))}{sep}{_h(i18n.evidence_text(ev.text, lang))}</p>")
            fig = None if frame is None else charts.evidence_figure(frame, ev.metric, ev.threshold, f.step_range,
                                                                   f.severity, statistic=ev.statistic, lang=lang)
            if fig is not None:
                out.append(_chart(fig))
        out.append(f"<p><b>{_h(label('check_first_page', lang))}</b></p><ol>")
        out += [f"<li><b>{_h(c.what)}</b>{sep}{_h(c.how)}</li>" for c in f.checks]
        out.append("</ol>")
        if f.examples:
            text = "\n".join(", ".join(f"{k}={example_value(k, v, lang)!r}" for k, v in ex.items()) for ex in f.examples[:MAX_EXAMPLES])
            out.append(f"<p><b>{_h(label('report_examples', lang))}</b></p><pre>{_h(text)}</pre>")
        out.append("</div>")
    if d.config_answers:
        out += [f"<h3>{_h(label('five_questions', lang))}</h3><table>",
                (f"<tr><th>#</th><th>{_h(label('question', lang))}</th><th>{_h(label('answer', lang))}</th>"
                f"<th>{_h(label('config_keys', lang))}</th></tr>")]
        out += [f"<tr><td>{a.number}</td><td>{_h(a.question)}</td><td>{_h(a.answer)}</td><td>{_h(', '.join(a.keys))}"
                "</td></tr>" for a in d.config_answers]
        out.append("</table>")
    if d.not_judged:
        out += [f"<details><summary>{_h(label('could_not_judge_n', lang, n=len(d.not_judged)))}</summary><ul>"]
        out += [f"<li>{_h(x.rule_id)}{sep}{_h(i18n.reason_text(x.reason, lang))}</li>" for x in d.not_judged]
        out.append("</ul></details>")
    if notes := _notes(item.run, lang):
        out += [f"<h3>{_h(label('reader_notes', lang, n=len(reader_notes(item.run))))}</h3><ul>"]
        out += [f"<li>{_h(n)}</li>" for n in notes] + ["</ul>"]
    return out

"""Reports to share (dashboard/report.py, grpo-diagnose --format markdown|html): what they hold, in both
languages, model text escaped, and the sparklines worked by hand. The HTML report in Chromium, offline, is
tested in test_dashboard_charts_browser.py."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers.paths import REPO

from collectors import open_run
from dashboard import report
from dashboard.diagnosis import diagnose

RUN = REPO / "sample_runs" / "lr_too_high"


@pytest.fixture(scope="module")
def item():
    run = open_run(str(RUN))
    return report.Item("sample_runs/lr_too_high", diagnose(run), run)


def test_sparkline_by_hand():
    # 0..7 rise one block a value; a constant sits in the middle; a gap is a space
    assert report.sparkline(np.arange(8.0), points=8) == "▁▂▃▄▅▆▇█"
    assert report.sparkline(np.full(5, 0.05), points=5) == "▄▄▄▄▄"
    assert report.sparkline(np.array([0.0, np.nan, 1.0]), points=3) == "▁ █"
    # 6 values in 3 buckets: means 0.5, 2.5, 4.5 -> lowest, middle, highest
    assert report.sparkline(np.arange(6.0), points=3) == "▁▅█"
    assert report.sparkline(np.array([]), points=3) == ""


def test_markdown_holds_the_verdict_findings_evidence_checks_and_questions(item):
    md = report.markdown([item], "en")
    d = item.diagnosis
    assert md.startswith("# grposcope diagnosis\n")
    assert f"**Verdict: {d.verdict.label}**" in md
    heads = re.findall(r"^### (\S+) (.+)$", md, flags=re.MULTILINE)
    assert [t for _, t in heads[:len(d.findings)]] == [report.md(f.title) for f in d.findings]
    assert heads[0][0] == "🔴" and "`kl_clip_explode`" in md
    assert "- optim/lr max 0.05" in md  # an evidence line, with the sparkline of its metric under it
    assert re.search(r"^  `▄{40}` `optim/lr` 0\.05 \.\. 0\.05$", md, flags=re.MULTILINE)
    assert "1. **the learning rate**: " in md
    assert "| # | question | answer | from config keys |" in md and md.count("\n| ") >= 6
    assert "step" not in re.findall(r"`([\w/]+)` [-\d.e]+ \.\. ", md)  # no sparkline of the step itself


def test_markdown_in_chinese(item):
    md = report.markdown([item], "zh")
    assert md.startswith("# grposcope 诊断\n") and "**结论：不稳定**" in md
    assert "- optim/lr 最大值 0.05" in md and "**优先检查**" in md and "五个问题" in md


def test_model_text_and_names_cannot_inject_markup(item):
    evil = "<img src=x onerror=alert(1)> **bold** | cell"
    run = item.run
    bad = report.Item(evil, item.diagnosis, run)
    md = report.markdown([bad], "en")
    assert not re.search(r"(?<!\\)<img", md) and "\\*\\*bold\\*\\*" in md and "\\| cell" in md
    html = report.html([bad], "en")
    assert "<img src=x" not in html and "&lt;img src=x" in html


def test_html_is_one_file_with_plotly_inline(item):
    html = report.html([item], "en")
    assert html.startswith("<!DOCTYPE html>") and "<script src=" not in html and "<link" not in html
    charts = html.count('class="plotly-graph-div"')
    ev = sum(1 for f in item.diagnosis.findings for e in f.evidence
             if e.metric in item.run.metrics and e.metric not in ("step", "wall_time"))
    assert charts == ev and charts >= 5


def test_file_stem():
    assert report.file_stem("sample_runs/lr_too_high") == "sample_runs_lr_too_high"
    assert report.file_stem("../x y#1") == "x_y_1" and report.file_stem("...") == "run"


def test_grpo_diagnose_format_markdown_and_html(capsys):
    from dashboard.diagnosis.cli import main

    assert main([str(RUN), "--format", "markdown", "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# grposcope diagnosis") and "## " in out
    assert main([str(RUN), "--format", "html", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<!DOCTYPE html>") and "grposcope 诊断" in out


# What GitHub keeps of raw HTML in Markdown that the report uses (its sanitizer's allowlist holds these); every other
# tag must be one cmark-gfm makes from Markdown itself.
GFM_TAGS = {"h1", "h2", "h3", "p", "strong", "em", "code", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th",
            "td", "pre", "sub", "details", "summary", "a"}


def rendered(md: str) -> tuple[str, str]:
    """The report as GitHub renders it (cmark-gfm, GitHub's own Markdown library, with its extensions): the HTML
    and its text."""
    import html as html_lib

    import cmarkgfm  # the dev extra's
    from cmarkgfm.cmark import Options

    out = cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)
    return out, html_lib.unescape(re.sub(r"<[^>]+>", "", out))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_markdown_renders_on_github(item, lang):
    """Headings, the five questions as a table, every title, evidence line and answer as the reader's text (no
    escape left showing), no raw HTML GitHub strips, and the sentence saying where the charts are."""
    from dashboard.diagnosis import i18n
    from dashboard.diagnosis.i18n import label

    d = i18n.localise(item.diagnosis, lang)
    out, text = rendered(report.markdown([item], lang))
    assert set(re.findall(r"<(\w+)", out)) <= GFM_TAGS, set(re.findall(r"<(\w+)", out)) - GFM_TAGS
    assert out.count("<h1>") == 1 and out.count("<h2>") == 1
    assert out.count("<h3>") == len(d.findings) + 1  # each finding, and the five questions
    table = re.search(r"<table>.*?</table>", out, flags=re.DOTALL).group()
    assert table.count("<tr>") == 6 and table.count("<th>") == 4  # a header and the five answers, four columns
    for a in d.config_answers:
        assert f"<td>{a.answer}</td>".replace("&", "&amp;") in table.replace("&#39;", "'").replace("&quot;", '"')
    assert "\\" not in text  # every escape consumed: sample_runs/lr_too_high reads as it is written
    for f in d.findings:
        assert f.title in text
        for ev in f.evidence:
            assert i18n.evidence_text(ev.text, lang) in text
    assert label("report_charts", lang) in text
    assert "sample_runs/lr_too_high" in text


def test_markdown_with_markup_in_names_renders_as_text_on_github(item):
    evil = "<img src=x onerror=alert(1)> **bold** | cell ![pic](http://example.com/x.png)"
    out, text = rendered(report.markdown([report.Item(evil, item.diagnosis, item.run)], "en"))
    assert "<img" not in out and "<strong>bold" not in out
    assert evil in text  # shown as written

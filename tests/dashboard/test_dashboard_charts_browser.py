"""What a user reads first, checked in the browser (grpo-dash on sample_runs/, Debian's Chromium): the rendered
SVG of the charts (axis ranges, legends, right-hand ticks, overlapping labels), cut table cells, the Samples
page's "all groups", /runs, the Chinese pages with no English left but metric keys and names, and the HTML
report opened offline. One server for the module; screenshots in tests/artifacts/.
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest
from helpers.browser_fixtures import (  # noqa: F401 - fixtures are looked up by name
    RENDER_TIMEOUT_MS,
    browser,
    page,
    screenshot,
    server,
    sync_api,
    wait_rendered,
)
from helpers.paths import REPO
from helpers.zh_words import english_left

from collectors import open_run
from dashboard.chart_scales import SCALES
from dashboard.charts import CHECKLIST
from dashboard.diagnosis import RULES

RUN = "sample_runs/lr_too_high"  # explodes at step 1: evidence of a constant lr and of the step itself


@pytest.fixture(scope="module")
def root() -> Path:
    return REPO / "sample_runs"


@pytest.fixture(scope="module")
def frame():
    return open_run(str(REPO / RUN)).metrics


SI = {"p": 1e-12, "n": 1e-9, "µ": 1e-6, "μ": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9}


def number(text: str) -> float:
    """A tick label as Plotly draws it ("−0.5", "1e−8", "0.5µ", "2k") as a number."""
    t = text.strip().replace("\u2212", "-").replace(",", "")
    scale = SI.get(t[-1:], 1.0)
    return float(t[:-1] if scale != 1.0 else t) * scale


CHARTS_JS = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')].map(c => {
  const ticks = {};
  for (const g of c.querySelectorAll('g')) {
    const m = /^(y\\d*)tick$/.exec(g.getAttribute('class') || '');
    if (m) (ticks[m[1]] = ticks[m[1]] || []).push(
      {text: g.textContent, x: g.getBoundingClientRect().x});
  }
  return {ytitle: [...c.querySelectorAll('.g-ytitle')].map(e => e.textContent).join('|'), ticks,
          right: c.querySelector('.main-svg').getBoundingClientRect().right,
          legends: [...c.querySelectorAll('g')].filter(g => /^legend\\d*$/.test(g.getAttribute('class') || ''))
            .map(g => { const r = g.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left}; }),
          texts: [...c.querySelectorAll('.annotation-text, .legendtext, .gtitle')]
            .map(e => { const r = e.getBoundingClientRect();
                        return {t: e.textContent, l: r.left, r: r.right, top: r.top, b: r.bottom}; })};
})"""


def charts_of(pg) -> list[dict]:
    pg.locator("[data-testid=stPlotlyChart] .main-svg").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    pg.wait_for_function("""() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')]
                            .every(c => c.querySelector('.main-svg'))""", timeout=RENDER_TIMEOUT_MS)
    return pg.evaluate(CHARTS_JS)


def tick_values(ticks: list[dict]) -> list[float]:
    return sorted(number(t["text"]) for t in ticks if t["text"].strip())


def nice(values: list[float]) -> bool:
    """Ticks a reader can use: evenly spaced by 1, 2, 2.5 or 5 times a power of ten, each a multiple of it."""
    if len(values) < 2:
        return True
    step = values[1] - values[0]
    mant = step / 10 ** math.floor(math.log10(step))
    even = all(math.isclose(b - a, step, rel_tol=1e-6) for a, b in itertools.pairwise(values))
    return even and any(math.isclose(mant, m, rel_tol=1e-6) for m in (1, 2, 2.5, 5, 10)) and all(
        math.isclose(v / step, round(v / step), abs_tol=1e-6) for v in values)


def test_evidence_charts_show_their_metric_on_an_axis_holding_its_values(server, page, frame):
    """Each evidence chart names a logged metric on its y axis (never the step: a chart of step against step is a
    diagonal), and the axis holds the metric's values without dwarfing them (the constant lr 0.05 was drawn on
    -1..1, where it read as 0)."""
    page.goto(f"{server}/diagnosis?run={RUN}")
    wait_rendered(page, "Diagnosis")
    page.get_by_text("optim/lr max 0.05").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    charts = charts_of(page)
    screenshot(page, "evidence_lr_too_high")
    assert len(charts) >= 5
    for c in charts:
        metric = c["ytitle"]
        assert metric in frame.columns and metric != "step", c["ytitle"]
        y = frame[metric].to_numpy(dtype=np.float64)
        lo, hi = float(np.nanmin(y)), float(np.nanmax(y))
        ticks = tick_values(c["ticks"]["y"])
        step = ticks[1] - ticks[0]
        assert ticks[0] - step <= lo and hi <= ticks[-1] + step, (metric, lo, hi, ticks)
        # ...within its metric's scale, which it always holds: a fraction of 0.06 on 0 .. 1 (issue 39)
        scale = SCALES.get(metric)
        least = scale.hi - scale.lo if scale else 0.0
        assert ticks[-1] - ticks[0] <= 4 * max(hi - lo, abs(hi), abs(lo), least), (metric, lo, hi, ticks)
    lr = next(c for c in charts if c["ytitle"] == "optim/lr")
    assert 0.05 in [round(v, 6) for v in tick_values(lr["ticks"]["y"])]


def test_checklist_legend_beside_each_chart_right_ticks_and_no_overlap(server, page):
    """One legend per chart, at its top right (one legend for all eight sat at the top of the page); a right-hand
    axis's own ticks, evenly spaced from 0 (they came from the left grid: 0.103, 0.328, ... and -0.56µ for
    |ratio - 1|); no two texts drawn over each other (the shaded findings' labels overlapped)."""
    page.goto(f"{server}/checklist?run={RUN}")
    wait_rendered(page, "Checklist")
    (c,) = charts_of(page)
    screenshot(page, "checklist_lr_too_high")
    titles = sorted((t for t in c["texts"] if any(t["t"].startswith(p.title) for p in CHECKLIST)),
                    key=lambda t: t["top"])
    assert len(titles) == 8
    legends = sorted(c["legends"], key=lambda g: g["top"])
    assert len(legends) == len(titles)
    for legend, title in zip(legends, titles, strict=True):  # beside its chart: at the top, under the title
        assert title["b"] - 5 <= legend["top"] <= title["b"] + 40, (legend, title)
        assert legend["left"] > title["r"], (legend, title)
    lefts = min(t["x"] for ts in c["ticks"].values() for t in ts)
    right = {a: tick_values(ts) for a, ts in c["ticks"].items() if min(t["x"] for t in ts) > lefts + 300}
    assert len(right) == 2  # completion length's truncated fraction, first-step ratio's max |ratio - 1|
    for axis, ticks in right.items():
        assert ticks[0] >= 0 and nice(ticks), (axis, ticks)
    boxes = [t for t in c["texts"] if t["t"].strip()]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart = a["r"] <= b["l"] + 1 or b["r"] <= a["l"] + 1 or a["b"] <= b["top"] + 1 or b["b"] <= a["top"] + 1
            assert apart, (a, b)


def test_every_axis_ticks_read_apart(server, page):
    """No two ticks of an axis with the same text: the healthy run's first-step ratio (1 +- 2e-6) drew its left
    ticks as 1, 1, 1, 1 with six significant digits."""
    page.goto(f"{server}/checklist?run=sample_runs/healthy")
    wait_rendered(page, "Checklist")
    (c,) = charts_of(page)
    screenshot(page, "checklist_healthy")
    same = {a: [t["text"] for t in ts] for a, ts in c["ticks"].items()
            if len({t["text"] for t in ts}) < len(ts)}
    assert not same, same


def test_config_questions_are_shown_whole(server, page):
    """The five questions and their answers wrap in their cells (a data grid cut both columns mid-sentence)."""
    from dashboard.diagnosis.rules.config_questions import QUESTIONS

    page.goto(f"{server}/config?run={RUN}")
    wait_rendered(page, "Config")
    page.get_by_test_id("stTable").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    screenshot(page, "config_lr_too_high")
    text = page.get_by_test_id("stTable").first.inner_text()
    assert all(q in text for q in QUESTIONS)
    cut = page.evaluate("""() => [...document.querySelectorAll('[data-testid=stTable] td, [data-testid=stTable] th')]
                           .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)""")
    assert not cut
    # st.table renders its cells as Markdown: the index named "#" was an empty <h1> that made the header row
    # three rows tall (98 px against 30)
    assert page.evaluate("() => document.querySelectorAll('[data-testid=stTable] h1, [data-testid=stTable] h2')"
                         ".length") == 0


def test_samples_all_groups_are_compact_and_top_n_applies(server, page):
    """"all groups" of a step of 16 groups x 8 short answers: Top N = 3 shows three groups, each one block of
    one line a response (every response was its own block, ~17,700 px, and Top N did not apply)."""
    page.goto(f"{server}/samples?run=sample_runs/healthy&filter=all")
    wait_rendered(page, "Samples")
    box = page.get_by_test_id("stNumberInput").locator("input").first
    box.fill("3")
    box.press("Enter")
    page.get_by_text("first 24 response(s) in 3 group(s)").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    page.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=RENDER_TIMEOUT_MS)
    try:  # the blocks of the run before go once this one has drawn
        page.wait_for_function("""() => [...document.querySelectorAll('[data-testid=stText]')]
                                  .filter(e => /^step \\d+ · group/.test(e.innerText)).length <= 3""", timeout=15_000)
    except sync_api.Error:
        pass  # counted below, where a failure says how many
    try:  # and the new blocks' listings have drawn (under load they follow their headers by seconds)
        page.wait_for_function("""() => [...document.querySelectorAll('[data-testid=stCode]')]
                                  .filter(e => e.innerText.includes('│')).length >= 3""", timeout=30_000)
    except sync_api.Error:
        pass
    screenshot(page, "samples_all_groups")
    heads = [t for t in page.get_by_test_id("stText").all_inner_texts() if re.match(r"step \d+ · group", t)]
    listings = [c for c in page.get_by_test_id("stCode").all_inner_texts() if "│" in c]
    assert len(heads) == 3 and len(listings) == 3
    assert all(len(c.strip().splitlines()) == 9 for c in listings)  # a header and 8 responses
    height = page.evaluate("document.querySelector('[data-testid=stMainBlockContainer]').scrollHeight")
    assert height < 3_500, height


def test_runs_path_serves_the_runs_page(server, page):
    page.goto(f"{server}/runs")
    wait_rendered(page, "Runs")
    assert "Page not found" not in page.inner_text("body")
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=RENDER_TIMEOUT_MS)


ZH_PAGES = ["/", "/checklist", "/diagnosis", "/samples", "/config", "/live"]

TEXT_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('[data-testid=stSidebar], [data-testid=stMain]')) {
      const clone = el.cloneNode(true);
      clone.querySelectorAll('[data-testid=stCode], [data-testid=stIconMaterial], [data-testid=stDataFrame], svg')
        .forEach(e => e.remove());
      out.push(clone.innerText);
    }
  };
  walk(document);
  document.querySelectorAll('[data-testid=stPlotlyChart] svg text').forEach(t => out.push(t.textContent));
  // what innerText leaves out: the widgets' placeholders (Streamlit's own "Choose options") and the cells of
  // the tables, which draw on a canvas and are read from the grid's accessible table (an empty cell: "None")
  document.querySelectorAll('[data-testid=stMain] input[placeholder], [data-testid=stMain] textarea[placeholder]')
    .forEach(e => out.push(e.getAttribute('placeholder')));
  document.querySelectorAll('[data-testid=stDataFrame] [role=gridcell], [data-testid=stDataFrame] [role=columnheader]')
    .forEach(e => out.push(e.textContent));
  return out.join('\\n');
}"""


def test_chinese_pages_have_no_english_but_ids_names_and_the_notes_terms(server, browser):
    """Every page in Chinese for the run with the most findings: the sidebar, titles, captions, evidence
    sentences, links, chart titles and legends, the Run label; English is left only in metric keys, rule ids,
    config keys, run names and the terms the notes themselves write in English."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    # and the config keys the Compare page lists (name, out: grpo_core's own keys have no dot)
    # and the config's own values ("tiny", the model kind), which are the run's data, not the page's words
    config = open_run(str(REPO / RUN)).meta.config
    names = {"lr_too_high", "healthy", "sample_runs", *RULES, *config,
             *(k.rsplit(".", 1)[-1] for k in config), *(str(v) for v in config.values())}
    found = {}
    try:
        for path in ZH_PAGES + ["/compare"]:
            runs = f"run={RUN}" + ("&run=sample_runs/healthy" if path == "/compare" else "")
            pg.goto(f"{server}{path}?{runs}&lang=zh")
            pg.get_by_test_id("stHeading").first.wait_for(timeout=RENDER_TIMEOUT_MS)
            pg.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=RENDER_TIMEOUT_MS)
            if path in ("/checklist", "/diagnosis", "/compare", "/live"):
                charts_of(pg)
            screenshot(pg, f"zh{path.replace('/', '_') or '_runs'}")
            left = english_left(pg.evaluate(TEXT_JS), names)
            if left:
                found[path] = sorted(set(left))
    finally:
        ctx.close()
    assert not found, "\n".join(f"{p}: {' '.join(w)}" for p, w in found.items())


REPORT_CHARTS_JS = """() => [...document.querySelectorAll('.plotly-graph-div')].map(c => ({
  ytitle: [...c.querySelectorAll('.g-ytitle')].map(e => e.textContent).join('|'),
  lines: c.querySelectorAll('.js-line').length,
  points: c.querySelectorAll('.scatterlayer .point').length,
  ticks: c.querySelectorAll('.ytick').length}))"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_html_report_shows_every_chart_offline(tmp_path, browser, lang):
    """grpo-diagnose --format html: one file that Chromium opens with the network cut; the charts drawn there
    (read from the rendered SVG) are one per evidence line of a logged metric, in the findings' order, each
    naming its metric on its y axis and drawing its line (or points), with ticks."""
    from dashboard import charts, report
    from dashboard.diagnosis import diagnose

    run = open_run(str(REPO / RUN))
    d = diagnose(run)
    expected = [charts.plot_text(ev.metric) for f in d.findings for ev in f.evidence
                if charts.evidence_figure(run.metrics, ev.metric, ev.threshold, f.step_range, f.severity,
                                          statistic=ev.statistic, lang=lang) is not None]
    out = tmp_path / "report.html"
    out.write_text(report.html([report.Item(RUN, d, run)], lang), encoding="utf-8")
    ctx = browser.new_context(viewport={"width": 1200, "height": 900}, offline=True)
    asked = []
    try:
        pg = ctx.new_page()
        pg.on("request", lambda r: asked.append(r.url))
        pg.goto(out.as_uri())
        pg.wait_for_function(f"document.querySelectorAll('.plotly-graph-div .main-svg').length >= {2 * len(expected)}",
                             timeout=RENDER_TIMEOUT_MS)
        drawn = pg.evaluate(REPORT_CHARTS_JS)
        screenshot(pg, f"report_lr_too_high_{lang}")
    finally:
        ctx.close()
    assert len(expected) >= 5
    assert [c["ytitle"] for c in drawn] == expected
    assert all((c["lines"] or c["points"]) and c["ticks"] >= 2 for c in drawn), drawn
    assert [u for u in asked if not u.startswith(("file:", "data:", "blob:"))] == []

"""The Chinese diagnosis page in a real browser: grpo-dash, Debian's Chromium, a CJK font (tests/ensure_chromium.sh).

Uses the server, browser and page fixtures of browser_fixtures.py (it skips the same way without
Chromium outside `make test` and CI, and fails there). The screenshot goes to tests/artifacts/diagnosis_zh.png for a person to look at.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.browser_fixtures import (  # noqa: F401 - fixtures are looked up by name
    RENDER_TIMEOUT_MS,
    browser,
    page,
    screenshot,
    server,
    wait_rendered,
)
from helpers.dash_fixtures import make_root

from dashboard.diagnosis.i18n import zh


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return make_root(tmp_path_factory.mktemp("browser_zh") / "root")

# Draw each character on a canvas in the page's own font and compare the pixels: without a CJK font every
# character falls back to the same empty box ("tofu"), so distinct characters would draw identically.
GLYPHS_DIFFER = """(chars) => {
  const font = getComputedStyle(document.querySelector('h1')).fontFamily;
  const draw = (ch) => {
    const c = document.createElement('canvas'); c.width = 64; c.height = 64;
    const g = c.getContext('2d'); g.font = '48px ' + font; g.fillText(ch, 4, 52);
    return Array.from(g.getImageData(0, 0, 64, 64).data).join(',');
  };
  const shots = chars.map(draw);
  return new Set(shots).size === shots.length && shots.every(s => /[1-9]/.test(s));
}"""


def test_chinese_diagnosis_page_renders(server, page):
    page.goto(server + "/diagnosis?run=root/broken_verifier&lang=zh")
    wait_rendered(page, "诊断")
    page.get_by_text("整个训练的 reward 恒为 0").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    page.get_by_text(zh.CHECKS["verifier"][1]).first.wait_for(timeout=RENDER_TIMEOUT_MS)
    page.get_by_test_id("stPlotlyChart").first.locator(".main-svg").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    shot = screenshot(page, "diagnosis_zh")
    assert shot.stat().st_size > 10_000
    body = page.inner_text("body")
    assert "优先检查" in body and "结论：" in body and "Check first" not in body
    assert page.evaluate(GLYPHS_DIFFER, ["诊", "断", "组", "同"]), "CJK characters draw as identical boxes"
    # the switch shows the choice, and a link to a check keeps the language in its URL
    assert page.get_by_test_id("stRadio").filter(has_text="中文").first.is_visible()
    link = page.get_by_test_id("stPageLink").filter(has_text="打开 样本").first
    link.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert "lang=zh" in (link.locator("a").first.get_attribute("href") or "")


@pytest.mark.parametrize(("lang", "shown"), [("zh", False), ("en", True)])
def test_typing_in_a_box_shows_no_english_hint_on_chinese_pages(server, page, lang, shown):
    # Streamlit writes "Press Enter to apply" under a text box being typed in, in English only: hidden on the
    # Chinese pages (the box applies on Enter all the same), left as Streamlit draws it on the English ones
    page.goto(f"{server}/?lang={lang}")
    wait_rendered(page, "训练列表" if lang == "zh" else "Runs")
    box = page.get_by_test_id("stTextInput").locator("input").first
    box.click()
    box.type("broken")
    hint = page.get_by_test_id("InputInstructions").first
    hint.wait_for(state="attached", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_timeout(500)
    assert hint.is_visible() == shown
    if lang == "zh":
        assert "Press Enter" not in page.inner_text("body")

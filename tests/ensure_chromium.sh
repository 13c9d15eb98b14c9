#!/bin/sh
# Make sure Debian's chromium is installed for the dashboard's real-browser test (tests/test_dashboard_browser.py).
# Installs it with apt when it is missing and we are root; otherwise says why and exits 0, and the browser
# test then skips with that reason. Playwright drives this system browser; it never downloads its own.
set -u
# the emoji font: without it the status and severity icons render as empty boxes in the screenshots;
# a CJK font (WenQuanYi Zen Hei, 7 MB against Noto CJK's 60) for the Chinese diagnosis page (?lang=zh)
PACKAGES="chromium fonts-noto-color-emoji fonts-wqy-zenhei"
if command -v chromium >/dev/null 2>&1 && [ -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] \
    && [ -e /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc ]; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "ensure_chromium: chromium or a font is missing and we are not root; the browser test may skip" >&2
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_chromium: chromium or a font is missing and there is no apt-get; the browser test may skip" >&2
    exit 0
fi
echo "ensure_chromium: installing $PACKAGES with apt-get (once)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq $PACKAGES; } >/tmp/ensure_chromium.log 2>&1; then
    echo "ensure_chromium: apt-get could not install chromium (see /tmp/ensure_chromium.log); the browser test will skip" >&2
fi
exit 0

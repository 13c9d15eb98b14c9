#!/bin/sh
# Make sure Debian's chromium (and the fonts the screenshots need) is installed for the dashboard's real-browser
# tests (tests/*/test_*browser.py). Installs them with apt when missing and we are root. Playwright drives this
# system browser; it never downloads its own.
#
# Under `make test` (GRPOSCOPE_REQUIRE_BROWSER=1, set by the Makefile) and in CI (CI=true) the browser is
# required: when it cannot be provided this exits 1 with the reason, and the browser tests fail rather than skip.
# Run by hand without either, it says why and exits 0, and the browser tests then skip with that reason.
set -u
# the emoji font: without it the status and severity icons render as empty boxes in the screenshots;
# a CJK font (WenQuanYi Zen Hei, 7 MB against Noto CJK's 60) for the Chinese diagnosis page (?lang=zh)
PACKAGES="chromium fonts-noto-color-emoji fonts-wqy-zenhei"
case "${CI:-}" in 1|true|TRUE|True|yes) REQUIRED=1 ;; *) REQUIRED="${GRPOSCOPE_REQUIRE_BROWSER:-0}" ;; esac

have_all() {
    command -v chromium >/dev/null 2>&1 && [ -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] \
        && [ -e /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc ]
}

give_up() {  # $1: why
    if [ "$REQUIRED" = "1" ]; then
        echo "ensure_chromium: $1; the browser tests cannot run (required under make test and CI)" >&2
        exit 1
    fi
    echo "ensure_chromium: $1; the browser tests will skip" >&2
    exit 0
}

if have_all; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    give_up "chromium or a font is missing and we are not root (install: apt-get install $PACKAGES)"
fi
if ! command -v apt-get >/dev/null 2>&1; then
    give_up "chromium or a font is missing and there is no apt-get"
fi
echo "ensure_chromium: installing $PACKAGES with apt-get (once)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq $PACKAGES; } >/tmp/ensure_chromium.log 2>&1; then
    give_up "apt-get could not install $PACKAGES (see /tmp/ensure_chromium.log)"
fi
if ! have_all; then
    give_up "apt-get ran but chromium or a font is still missing (see /tmp/ensure_chromium.log)"
fi
exit 0

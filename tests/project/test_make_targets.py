"""`make test` without a browser points to `make test-no-browser`, which runs the rest with the browser tests
skipping; CI stays strict (issue 39, item 13)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from helpers.paths import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make here")


def dry(target: str) -> str:
    return subprocess.run(["make", "-n", target], cwd=REPO, capture_output=True, text=True, check=True).stdout


def test_the_target_without_the_browser_runs_pytest_and_installs_nothing():
    out = dry("test-no-browser")
    assert "pytest" in out and "ensure_chromium" not in out
    assert "make test-no-browser" in dry("test")  # the hint where ensure_chromium.sh gives up


@pytest.mark.parametrize("env, required", [({"GRPOSCOPE_REQUIRE_BROWSER": "0"}, False),
                                           ({"GRPOSCOPE_REQUIRE_BROWSER": "1"}, True),
                                           ({"GRPOSCOPE_REQUIRE_BROWSER": "0", "CI": "true"}, True)])
def test_ci_requires_the_browser_whatever_the_target_says(env, required):
    code = "import sys; sys.path.insert(0, 'tests'); import helpers.browser_fixtures as b; print(b.REQUIRED)"
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "GRPOSCOPE_REQUIRE_BROWSER")}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**clean, **env}, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == str(required), out.stderr[-500:]

"""grpo-dash sets what the dashboard relies on itself, so a `.streamlit/config.toml` in the working folder cannot
switch it off (error details off, XSRF on, cross-origin requests refused), and says how to point it at runs when
there are none to watch (an installed wheel has no sample_runs/). The same server, started from a folder holding
such a config.toml, refuses a WebSocket from another origin in tests/dashboard/test_roots_browser.py; the installed
command without runs in tests/project/test_install.py::test_light_install_dash_without_runs_says_how_to_point_it."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers.hostile_roots import hostile_folder

from dashboard import cli, paths

# and what the environment could say, read by Streamlit too
HOSTILE_ENV = {"STREAMLIT_SERVER_ENABLE_CORS": "false", "STREAMLIT_CLIENT_SHOW_ERROR_DETAILS": "full",
               "STREAMLIT_SERVER_ENABLE_XSRF_PROTECTION": "false"}


def shown_config(cwd: Path, flags: list[str], env: dict[str, str] | None = None) -> dict:
    """Streamlit's own view of its options (`streamlit config show`), run in `cwd` with `flags`."""
    out = subprocess.run([sys.executable, "-m", "streamlit", "config", "show", *flags], cwd=cwd,
                         env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout
    return tomllib.loads(text[text.index("\n[") + 1:])  # past the header's prose


def test_a_config_toml_cannot_switch_off_what_grpo_dash_sets(tmp_path):
    cwd = hostile_folder(tmp_path)
    assert shown_config(cwd, [])["server"]["enableXsrfProtection"] is False  # the file is read there
    cmd = cli.streamlit_command(cli.parse_args(["--port", "8765"]))
    assert cmd[1:4] == ["-m", "streamlit", "run"]
    cfg = shown_config(cwd, cmd[5:], HOSTILE_ENV)
    assert cfg["client"]["showErrorDetails"] == "none" and cfg["client"]["showErrorLinks"] == "false"
    assert cfg["server"]["enableXsrfProtection"] is True and cfg["server"]["enableCORS"] is True
    assert cfg["server"]["corsAllowedOrigins"] == ["http://127.0.0.1:8765"]  # not evil.example
    assert cfg["server"]["enableAgentApi"] is False and cfg["server"]["enableStaticServing"] is False
    flags = dict(zip(cmd[5::2], cmd[6::2], strict=True))
    assert flags["--global.developmentMode"] == "false"  # hidden from `config show`; the WebSocket test holds it


def test_without_runs_grpo_dash_says_how_to_point_it_at_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no ./runs here
    monkeypatch.setattr(paths, "BUNDLED_SAMPLES", tmp_path / "site-packages" / "sample_runs")  # as from a wheel
    assert paths.default_roots() == [tmp_path / "runs"]
    for lang, says in (("en", "Point it at runs:  grpo-dash PATH"), ("zh", "指向你的训练：grpo-dash PATH")):
        with pytest.raises(SystemExit) as e:
            cli.main(["--lang", lang])
        err = capsys.readouterr().err
        assert e.value.code == 2 and says in err and "grpo-train --out runs/NAME" in err, err
        assert str(tmp_path / "runs") in err
    # a root named on the command line is watched even before it exists; so is ./runs once there is one
    env = cli.environment(cli.parse_args([str(tmp_path / "later")]))
    assert env[paths.ROOTS_ENV] == str(tmp_path / "later")
    (tmp_path / "runs").mkdir()
    assert cli.environment(cli.parse_args([]))[paths.ROOTS_ENV] == str(tmp_path / "runs")

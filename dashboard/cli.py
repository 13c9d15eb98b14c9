"""grpo-dash: start the dashboard on one or more roots of runs.

    grpo-dash [ROOT ...] [--host 127.0.0.1] [--port 8501] [--stale-after 60] [--map THEIRS=OURS ...]
              [--source NAME]

Runs `streamlit run dashboard/server.py` (app.py behind the origin guard) headless: no browser is opened, no
usage statistics are sent, and it binds to 127.0.0.1 unless told otherwise. Default roots: ./runs and, in a
source checkout, the bundled sample_runs/; with neither, it says how to point it at runs and exits 2.

The server's protections are set on its command line (SERVER_OPTIONS), which wins over any
.streamlit/config.toml, environment variable or home config: error details stay in the server log, never in
the browser; XSRF protection is on; cross-origin requests and WebSocket connections are refused (Streamlit's
`server.enableCORS` is that protection, so it is on); no agent API, static files or development mode. The
app runs behind dashboard/origin_guard.py (dashboard/server.py), which refuses every origin but the server's own:
Streamlit's own check lets in any port of localhost.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from collectors.version import version_flag
from dashboard.paths import ROOTS_ENV, SOURCE_ENV, STALE_ENV, default_roots
from dashboard.relay import relay_output

APP = Path(__file__).resolve().parent / "app.py"
SERVER = APP.parent / "server.py"  # the app behind dashboard.origin_guard: only the server's own page reaches it
# dashboard.diagnosis.i18n's LANGS and LOCALE_VARS[0], not imported: that would load the engine at every start
LANGS, LANG_ENV = ("en", "zh"), "GRPOSCOPE_LANG"


def _pair(text: str) -> str:
    theirs, sep, ours = text.partition("=")
    if not (sep and theirs and ours) or "," in text:
        raise argparse.ArgumentTypeError(f"{text!r}: expected theirs=ours")
    return text


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="grpo-dash", description=__doc__.split("\n\n")[0])
    p.add_argument("roots", nargs="*", type=Path, help="folders holding runs, or a log file (its folder is "
                   "watched); default: ./runs (and sample_runs/ in a source checkout)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p.add_argument("--map", action="append", default=[], metavar="THEIRS=OURS", type=_pair,
                   help="rename a logged metric of text logs to a canonical name; repeat for several")
    p.add_argument("--stale-after", type=float, default=None, metavar="S",
                   help="a running run silent for S seconds is shown as stale (default 60)")
    p.add_argument("--source", default=None, metavar="NAME",
                   help="read each ROOT as one run with this reader (trl, verl, generic, kvtext, trl-console, "
                   "tensorboard, wandb, ...) instead of finding runs in it; a file ROOT means its folder")
    p.add_argument("--lang", choices=LANGS, default=None,
                   help="language of the findings until a user picks one (default: from the locale)")
    p.add_argument("--version", **version_flag("grpo-dash"))
    args = p.parse_args(argv)
    if args.source is not None:
        _check_source(p, args)
    return args


def _check_source(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--source names a known reader and applies to roots given here (not to ./runs by default)."""
    from collectors.sources import source_names  # only with --source: loading the readers takes a while

    if args.source not in (known := source_names()):
        p.error(f"--source {args.source}: unknown reader; known: {', '.join(known)}")
    if not args.roots:
        p.error("--source applies to the ROOTs given: grpo-dash LOG_OR_FOLDER --source NAME")


# What the dashboard relies on, given on Streamlit's command line so that a config.toml cannot switch it off.
SERVER_OPTIONS = {
    "client.showErrorDetails": "none",  # an exception's type, message and traceback go to the log only
    "client.showErrorLinks": "false",  # no "Ask Google / ChatGPT" links carrying an error's text
    "server.enableXsrfProtection": "true",
    "server.enableCORS": "true",  # CORS *protection*: with false, any origin may open the WebSocket
    "global.developmentMode": "false",  # development mode lets every origin in as well
    "server.enableAgentApi": "false",  # no HTTP / MCP client driving the app
    "server.enableStaticServing": "false",
    "server.headless": "true",
    "browser.gatherUsageStats": "false",
    "server.fileWatcherType": "none",
    "server.runOnSave": "false",
    "client.toolbarMode": "minimal",
}


def streamlit_command(args: argparse.Namespace) -> list[str]:
    # the allowed cross-origin list holds only the server's own address (a config.toml's list is replaced)
    options = {**SERVER_OPTIONS, "server.address": args.host, "server.port": str(args.port),
               "server.corsAllowedOrigins": f"http://{args.host}:{args.port}"}
    return [sys.executable, "-m", "streamlit", "run", str(SERVER),
            *(x for name, value in options.items() for x in (f"--{name}", value))]


def root_folder(path: Path) -> Path:
    """A root is a folder: a log file given instead (a verl log, an event file, trainer_state.json) means
    the folder it lies in, where discovery finds it."""
    path = path.expanduser().resolve()
    return path.parent if path.is_file() else path


def environment(args: argparse.Namespace) -> dict[str, str]:
    roots = list(dict.fromkeys(root_folder(r) for r in (args.roots or default_roots())))
    env = dict(os.environ)
    env[ROOTS_ENV] = os.pathsep.join(str(r) for r in roots)
    if args.stale_after is not None:
        env[STALE_ENV] = str(args.stale_after)
    if args.lang is not None:
        env[LANG_ENV] = args.lang
    env.pop(SOURCE_ENV, None)
    if args.source is not None:  # the app reads each root as one run with it (dashboard.data.source_for)
        env[SOURCE_ENV] = args.source
    if args.map:  # the text readers in the app's process read it (collectors.readers.synonyms.MAP_ENV)
        env["GRPOSCOPE_MAP"] = ",".join(args.map)
    # The app imports `dashboard` and `collectors`; make them importable even from a source checkout.
    src = str(APP.parents[1])
    env["PYTHONPATH"] = os.pathsep.join(x for x in (src, env.get("PYTHONPATH", "")) if x)
    env.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    return env


def no_runs_message(lang: str | None = None) -> str:
    """What grpo-dash says, started with no ROOT where there is no ./runs and no bundled sample_runs/ (an
    installed wheel): how to point it at runs. In the dashboard's language (--lang, else the locale)."""
    from dashboard.diagnosis import i18n  # only here: loading it takes a while, and this start ends now

    lang = lang or i18n.default_lang()
    return i18n.label("dash_no_runs", lang, runs=Path.cwd() / "runs")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not args.roots and not any(r.is_dir() for r in default_roots()):
        # nothing to watch but a folder that does not exist: say how to point it at runs instead
        print(no_runs_message(args.lang), file=sys.stderr)
        sys.exit(2)
    env = environment(args)
    for r in args.roots:
        if r.expanduser().is_file():
            print(f"grpo-dash: note: {r} is a file; watching its folder {root_folder(r)}", file=sys.stderr)
    missing = [r for r in env[ROOTS_ENV].split(os.pathsep) if not Path(r).is_dir()]
    for r in missing:
        print(f"grpo-dash: note: root {r} does not exist (yet); runs appearing there will show up", file=sys.stderr)
    host = "localhost" if args.host in ("127.0.0.1", "localhost") else args.host
    print(f"grpo-dash: http://{host}:{args.port}  (roots: {env[ROOTS_ENV].replace(os.pathsep, ', ')})", flush=True)
    sys.stdout.flush()
    cmd = streamlit_command(args)
    relay_output()  # piped output that its reader left must not stop the server from stopping (relay.py)
    os.execve(cmd[0], cmd, env)  # streamlit replaces this process: Ctrl-C and SIGTERM reach it directly


if __name__ == "__main__":
    main()

"""grpo-dash: start the dashboard on one or more roots of runs.

    grpo-dash [ROOT ...] [--host 127.0.0.1] [--port 8501] [--stale-after 60] [--map THEIRS=OURS ...]
              [--source NAME]

Runs `streamlit run dashboard/app.py` headless: no browser is opened, no usage statistics are sent, and
it binds to 127.0.0.1 unless told otherwise. Default roots: ./runs and the bundled sample_runs/.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from collectors.version import version_flag
from dashboard.paths import ROOTS_ENV, SOURCE_ENV, STALE_ENV, default_roots

APP = Path(__file__).resolve().parent / "app.py"
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
                   "watched); default: ./runs and sample_runs/")
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


def streamlit_command(args: argparse.Namespace) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", str(APP),
            "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--server.address", args.host, "--server.port", str(args.port),
            "--server.fileWatcherType", "none", "--server.runOnSave", "false",
            "--client.toolbarMode", "minimal"]


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


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
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
    os.execve(cmd[0], cmd, env)  # streamlit replaces this process: Ctrl-C and SIGTERM reach it directly


if __name__ == "__main__":
    main()

"""grpo-diagnose RUN [RUN ...]: the findings in the terminal (or as JSON), with an exit status to gate on.

Exit status: 0 when every run could be read (whatever it found), 1 when --fail-on is given and a finding
of that severity or worse was found, 2 when a target could not be read (the readable ones are still
diagnosed; the message names each unreadable one), 3 when every
run was read but one cannot be judged yet (no rows, or too few points for the trend tests; its verdict says why).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from collectors.readers.synonyms import add_map_option, parse_args_with_map, parse_map, set_user_map
from collectors.version import version_flag
from dashboard.diagnosis import i18n
from dashboard.diagnosis.engine import Diagnosis, diagnose
from dashboard.diagnosis.findings import SEVERITY_ORDER
from dashboard.diagnosis.i18n import label
from dashboard.diagnosis.terminal import format_finding, reader_notes

EXIT_CODES = """exit status:
  0  every run was read (whatever it found)
  1  --fail-on was given and a finding of that severity or worse was found
  2  a RUN could not be read, or a bad argument (the readable runs are still diagnosed)
  3  every run was read, but one cannot be judged yet (no rows, or too few points; its verdict says why)
  when several apply, 2 wins over 1, and 1 over 3"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="grpo-diagnose", description="Diagnose GRPO runs: symptoms mapped to the "
                                "checks to make first, with evidence from the metrics and samples.",
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXIT_CODES)
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folder (ours, TRL, verl, TensorBoard, wandb, ...) "
                   "or a wandb://entity/project/run URI")
    p.add_argument("--format", choices=("text", "json", "markdown", "html"), default="text",
                   help="text (default), json, or a report to share: markdown (renders on GitHub) or html (one "
                        "self-contained file, every chart inline, opens offline)")
    p.add_argument("--fail-on", choices=("warning", "critical"), default=None,
                   help="exit 1 when a finding of this severity or worse is found")
    p.add_argument("--watch", action="store_true", help="re-check the run(s) as they grow; print only new findings")
    p.add_argument("--interval", type=float, default=5.0, help="seconds between checks with --watch")
    p.add_argument("--stop-file", default=None, metavar="PATH",
                   help="with --watch: write PATH (the finding as JSON) once a finding at --fail-on severity or worse "
                        "(default critical) has held for --hold checks, and exit 1; a wrapper stops the run on it")
    p.add_argument("--hold", type=int, default=None, metavar="N",
                   help="with --watch: checks on new steps a finding must hold before it is printed (default 3), or "
                        "two at least (N - 1) x 10 steps apart")
    p.add_argument("--alert", action="append", default=[], metavar="URL",
                   help="with --watch: post each new and cleared finding to this webhook (repeatable; Slack and "
                        "Discord get their own shape, any other URL plain JSON; slack:URL, discord:URL, json:URL "
                        "name the shape; env:NAME reads the URL from the environment variable NAME)")
    p.add_argument("--dashboard", metavar="URL", default=None,
                   help="with --alert: the dashboard's address, for a link to each run's Diagnosis page "
                        "(default: $GRPOSCOPE_DASHBOARD_URL)")
    p.add_argument("--until-step", type=int, default=None, metavar="N",
                   help="diagnose the run(s) as they stood at step N (post-mortem: when would it have warned?)")
    p.add_argument("--verbose", "-v", action="store_true", help="also list the rules that could not judge")
    p.add_argument("--lang", choices=i18n.LANGS, default=None,
                   help="language of the findings (en, zh: the notes' Chinese); default: from the locale (LANG)")
    p.add_argument("--source", default=None, metavar="NAME",
                   help="read every RUN with this reader (trl, verl, generic, kvtext, trl-console, ...); default: detected")
    add_map_option(p)  # grpo-import's --map: one syntax, one parser (parse_map)
    p.add_argument("--version", **version_flag("grpo-diagnose"))
    args = parse_args_with_map(p, argv)
    args.lang = args.lang or i18n.default_lang()
    return args


def open_any(target: str, source: str | None = None):
    from collectors import open_run  # imported late so --help stays fast

    return open_run(target, source)


def open_launches(target: str, source: str | None = None) -> dict[str, Any]:
    """{name: run} for every run a target holds: a sweep's launches written into one folder are judged each on
    its own (named TARGET#LAUNCH), so no finding spans the seam between two launches."""
    from collectors.sources import launches_of

    # each launch is a target of its own: TARGET#LAUNCH (TensorBoard) or a run folder inside (wandb/)
    names = launches_of(target, source) or [target]
    return {name: open_any(name, source) for name in names}


def format_text(name: str, d: Diagnosis, verbose: bool, lang: str = "en") -> str:
    d = i18n.localise(d, lang)
    head = f"== {name}: " + label("run_head", lang, steps=d.steps, last=d.last_step, **d.counts())
    body = [format_finding(f, lang) for f in d.findings] or [label("no_findings", lang)]
    if d.config_answers:
        body.append(label("config_heading", lang))
        body += [f"  {a.number}. {a.question}\n     -> {a.answer}" for a in d.config_answers]
    if verbose and d.not_judged:
        body.append(label("could_not_judge", lang))
        body += [f"  {n.rule_id}{label('sep', lang)}{i18n.reason_text(n.reason, lang)}" for n in d.not_judged]
    if not d.findings and d.verdict.kind == "cant_judge":
        body = body[1:]  # the verdict says "can't judge" and why; "no findings" would read as a clean bill
    return "\n".join([head, f"{label('verdict', lang)}{label('sep', lang)}{d.verdict.text}", *body])


def worst(d: Diagnosis) -> int:
    return min((SEVERITY_ORDER[f.severity] for f in d.findings), default=99)


def run_status(run: Any) -> dict[str, Any]:
    """The run's status (running, finished, failed, stopped, stale, unknown) and why it failed or stopped."""
    return {"status": getattr(run, "status", "unknown"), "status_reason": getattr(getattr(run, "meta", None), "error", None)}


def user_map(pairs: list[str], runs: list[str] = ()) -> None:
    """Hand `--map` to the text readers; raises ValueError on a bad pair (parse_map, grpo-import's parser)."""
    set_user_map(parse_map(pairs, runs))


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `grpo-diagnose ... | head`: the reader left; no traceback for that
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush does not fail again
        return 0


def _main(argv: list[str] | None) -> int:
    args = parse_args(argv)
    if args.map:
        try:
            user_map(args.map, args.runs)
        except ValueError as e:
            print(f"grpo-diagnose: {e}", file=sys.stderr)
            return 2
    runs: dict[str, Any] = {}
    unreadable = []
    for target in args.runs:  # every readable target is diagnosed; the unreadable ones are named, exit 2 at the end
        try:
            runs.update(open_launches(target, args.source))
        except Exception as e:  # noqa: BLE001 - any reader error is "cannot read this run", exit 2
            msg = str(e) if target in str(e) else f"{target}: {e}"
            said = msg.startswith(("no permission to read", "cannot read"))  # collectors.oserrors says it already
            print(f"grpo-diagnose: {'' if said else 'cannot read '}{msg}", file=sys.stderr)
            unreadable.append(target)
    if args.map:
        user_map([])  # each run keeps the map it was opened with; later opens in this process start clean
    if not runs:
        return 2
    if args.watch and args.until_step is not None:
        print("grpo-diagnose: --watch and --until-step do not go together", file=sys.stderr)
        return 2
    if args.alert and not args.watch:
        print("grpo-diagnose: --alert needs --watch", file=sys.stderr)
        return 2
    if args.watch:
        from dashboard.diagnosis.guard.watch_cli import watch

        return watch(runs, args)
    if args.until_step is not None:
        runs = {name: run.until(args.until_step) for name, run in runs.items()}
    results = {name: diagnose(run) for name, run in runs.items()}
    if args.format in ("markdown", "html"):
        from dashboard import report  # imported late: plotly and the charts only for a report

        items = [report.Item(name, d, runs[name]) for name, d in results.items()]
        sys.stdout.write(report.markdown(items, args.lang) if args.format == "markdown" else report.html(items, args.lang))
    elif args.format == "json":
        print(json.dumps({name: {**i18n.to_dict(d, args.lang), **run_status(runs[name]), "notes": reader_notes(runs[name])}
                          for name, d in results.items()}, indent=2, ensure_ascii=False))
    else:
        for name, d in results.items():
            problems = getattr(runs[name], "problems", [])
            print(format_text(name, d, args.verbose, args.lang))
            if (st := run_status(runs[name]))["status"] in ("stopped", "failed"):
                print(label("run_status_line", args.lang, status=label(f"status_{st['status']}", args.lang),
                            reason=i18n.note_text(str(st["status_reason"]), args.lang)))
            for p in problems:
                print(f"  {label('note', args.lang)}{label('sep', args.lang)}{i18n.note_text(str(p), args.lang)}")
    if unreadable:
        print(f"grpo-diagnose: {len(unreadable)} of {len(args.runs)} target(s) could not be read: "
              f"{', '.join(unreadable)}", file=sys.stderr)
        return 2
    if args.fail_on is not None:
        bar = SEVERITY_ORDER[args.fail_on]
        if any(worst(d) <= bar for d in results.values()):
            return 1
    if any(d.verdict.kind == "cant_judge" for d in results.values()):
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""grpo-train: the command line over config.Config, generated from its fields (one source of truth).

Every field is a flag `--section.field VALUE` whose help is the field's docstring; `--set key=value`,
`--task` and `--out` are other spellings of the same overrides, applied in command-line order after the
preset and the TOML file. Any bad value stops with a one-line error before training starts.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback

from collectors.extras import MissingExtra, require
from collectors.meta import RunError
from collectors.version import version_flag
from grpo_core.config import (
    PRESETS,
    Config,
    ConfigError,
    build_config,
    field_docs,
    leaf_fields,
    to_dict,
    validate,
)
from grpo_core.guard import TrainGuard
from grpo_core.tasks import TaskError

SHORTCUTS = {"preset", "out"}  # top-level fields that have their own flag below
EXIT = {"finished": 0, "stopped": 3}  # any other status: interrupted (130)


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


class Override(argparse.Action):
    """Append (dotted key, raw value) to namespace.overrides, keeping command-line order."""

    def __init__(self, *args, key: str | None = None, **kwargs) -> None:
        self.key = key
        super().__init__(*args, **kwargs)

    def __call__(self, parser, namespace, value, option_string=None) -> None:
        if self.key is None:  # --set key=value
            key, sep, value = value.partition("=")
            if not sep or not key:
                parser.error(f"--set expects key=value, got {value!r}")
        else:
            key = self.key
        namespace.overrides = [*getattr(namespace, "overrides", []), (key.strip(), value)]


def make_parser() -> OneLineParser:
    presets = "\n".join(f"  {name:8s} {source}" for name, (source, _) in PRESETS.items())
    p = OneLineParser(
        prog="grpo-train", usage="grpo-train [--preset NAME] [--task NAME] [--out RUN_DIR] [--config FILE] "
                                  "[--set KEY=VALUE ...] [--SECTION.FIELD VALUE ...]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a policy with GRPO and write a grposcope run folder.",
        epilog=f"presets:\n{presets}\n\nprecedence: field defaults < --preset < --config file < --set and "
               "field flags (in order).\nopen a run with: grpo-dash RUN_DIR")
    p.set_defaults(overrides=[])
    docs = field_docs(Config)
    p.add_argument("--preset", choices=list(PRESETS), help=f"{docs['preset']} (default: grpo)")
    p.add_argument("--config", metavar="FILE", help="TOML file of overrides ([algo] kl_coef = 0 or algo.kl_coef = 0)")
    p.add_argument("--set", metavar="KEY=VALUE", action=Override, help="override any field, e.g. algo.kl_coef=0")
    p.add_argument("--task", metavar="NAME", action=Override, key="task.name", help="shortcut for --set task.name=NAME")
    p.add_argument("--out", metavar="RUN_DIR", action=Override, key="out", help=docs["out"])
    p.add_argument("--print-config", action="store_true", help="print the resolved configuration and exit")
    p.add_argument("--scenario", metavar="NAME",
                   help="a named failure scenario (grpo_core/scenarios.py): its preset and overrides, applied "
                        "before --config and --set; see --list-scenarios")
    p.add_argument("--list-scenarios", action="store_true", help="list the scenarios and exit")
    p.add_argument("--version", **version_flag("grpo-train"))
    g = p.add_argument_group("guard (docs/diagnosis.md, The guard)")
    g.add_argument("--watch", action=argparse.BooleanOptionalAction, default=True,
                   help="diagnose the run as it trains: print each new finding with its checks and record it in "
                        "the run folder (default: on)")
    g.add_argument("--stop-on", choices=("critical", "warning"), default=None,
                   help="end the run after the current step, with status stopped, once a finding of this severity "
                        "or worse has held for 3 checks, or two 20 steps apart (exit status 3)")
    g.add_argument("--watch-every", type=int, default=10, metavar="N", help="steps between checks (default: 10)")
    g.add_argument("--watch-budget", type=float, default=0.01, metavar="FRACTION",
                   help="the most of the training time the checks may take; a check that would exceed it waits "
                        "(default: 0.01; a tiny model on a CPU may want more to be checked every N steps)")
    g.add_argument("--alert", action="append", default=[], metavar="URL",
                   help="post each new and cleared finding to this webhook, in the background (repeatable): a Slack "
                        "or Discord webhook gets its own shape, any other URL plain JSON; slack:URL, discord:URL, "
                        "json:URL name the shape; env:NAME reads the URL from the environment variable NAME")
    g.add_argument("--dashboard", metavar="URL", default=None,
                   help="the dashboard's address (grpo-dash on the run's parent folder), for a link to the run's "
                        "Diagnosis page in each alert (default: $GRPOSCOPE_DASHBOARD_URL)")
    g.add_argument("--lang", choices=("en", "zh"), default=None,
                   help="language of the guard's lines and alerts (default: GRPOSCOPE_LANG or the locale)")
    groups: dict[str, argparse._ArgumentGroup] = {}
    for key, (default, kind, doc) in leaf_fields(Config()).items():
        if key in SHORTCUTS:
            continue
        section = key.split(".")[0] if "." in key else "run"
        group = groups.setdefault(section, p.add_argument_group(f"{section} fields"))
        group.add_argument(f"--{key}", metavar=kind.__name__.upper(), action=Override, key=key,
                           help=f"{doc} (default: {default!r})".replace("%", "%%"))
    return p


def resolve(argv: list[str] | None = None) -> tuple[Config, argparse.Namespace]:
    """argv -> validated Config; ConfigError (one line) on any problem."""
    args = make_parser().parse_args(argv)
    preset, overrides = args.preset, list(args.overrides)
    if args.scenario:
        from grpo_core.scenarios import SCENARIOS, overrides_for

        if args.scenario not in SCENARIOS:
            raise ConfigError(f"--scenario: {SCENARIOS.unknown(args.scenario)}")
        scenario_preset, scenario_sets = overrides_for(args.scenario)
        preset = preset or scenario_preset
        # named after its folder like any run (--out runs/a and --out runs/b are two rows, not two "lr_too_high");
        # after the scenario only when no --out names a folder
        named = [("name", args.scenario)] if not any(k == "out" for k, _ in overrides) else []
        overrides = scenario_sets + named + overrides
    cfg = build_config(preset, args.config, overrides)
    validate(cfg)
    return cfg, args


def report(result, seconds: float) -> str:
    ws, s = result.info.get("warm_start", {}), result.info.get("summary", {})
    lines = [f"run {result.status}: {result.steps} steps in {seconds:.1f} s"]
    if s:
        lines.append(f"sampled pass rate: first {s['pass_rate_first']:.3f} -> last {s['pass_rate_last']:.3f} "
                     f"(mean of the first and last {s['window']} steps)")
    if result.final_eval and "greedy_eval_pass_rate" in ws:
        lines.append(f"greedy eval pass rate: after warm start {ws['greedy_eval_pass_rate']:.3f} -> "
                     f"final {result.final_eval['eval/pass_rate']:.3f}")
    if result.error:
        lines.append(f"stopped: {result.error}")
    lines += [f"run folder: {result.run_dir}", f"open it:    grpo-dash {result.run_dir}"]
    return "\n".join(lines)


def console_say(cfg, args: argparse.Namespace):
    """The warm start's console lines (grpo_core.console) where progress is shown, in --lang or the locale's."""
    if not cfg.log.progress:
        return None
    from dashboard.diagnosis.i18n import default_lang
    from grpo_core.console import console

    return console(args.lang or default_lang())


def make_guard(args: argparse.Namespace) -> TrainGuard:
    """The guard the flags ask for; ConfigError on a bad --alert (before any training)."""
    try:
        return TrainGuard(args.stop_on, args.watch_every, args.watch_budget, alerts=args.alert, lang=args.lang,
                          dashboard=args.dashboard)
    except ValueError as e:
        raise ConfigError(str(e)) from None


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if "--list-scenarios" in argv:  # a list of names and words: no torch needed, so none imported
        from grpo_core.scenarios import describe

        print(f"scenarios (grpo-train --scenario NAME):\n{describe()}")
        return 0
    try:
        require("torch", "train", "training")
    except MissingExtra as e:  # the base install reads and diagnoses runs; --version and --help still answer
        make_parser().parse_known_args(argv)
        print(f"grpo-train: {e}", file=sys.stderr)
        return 2
    from grpo_core.train import train

    try:
        cfg, args = resolve(argv)
        if args.print_config:
            print("\n".join(f"{k} = {v!r}" for k, v in to_dict(cfg).items()))
            return 0
        if (args.stop_on or args.alert) and not args.watch:
            raise ConfigError(f"{'--stop-on' if args.stop_on else '--alert'} needs the guard: drop --no-watch")
        guard = make_guard(args) if args.watch else None
        t0 = time.perf_counter()
        result = train(cfg, guard, console_say(cfg, args))
    except (ConfigError, TaskError) as e:
        print(f"grpo-train: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("grpo-train: interrupted; the run folder records the stop", file=sys.stderr)
        return 130
    except RunError as e:  # the run folder cannot be written (a full disk): one line, run.json says failed
        print(f"grpo-train: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - the run folder already holds status failed and this text
        traceback.print_exc()
        print(f"grpo-train: training failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if result.main:  # under torchrun, one report: rank 0 wrote the run
        print(report(result, time.perf_counter() - t0))
    return EXIT.get(result.status, 130)


if __name__ == "__main__":
    sys.exit(main())

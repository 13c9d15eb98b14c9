"""make screenshots: a full-page PNG of every dashboard page, in English and Chinese, for the demo run, each
sample run and three real runs, and an index.html that shows them all at once, for a reviewer.

    python scripts/screenshots.py [--out build/screenshots] [--runs NAME ...] [--lang en zh] [--demo-steps 30]

The demo run is runs/demo when `make demo` left one, else a short one trained here (the warm start is cached
after the first). The real runs are read from ../shared/fixtures/real-runs (never copied); without that folder
they are left out. grpo-dash runs on a free port; Debian's Chromium (tests/ensure_chromium.sh), driven by
Playwright, takes each page once it has drawn: its charts drawn, the app idle, the page as tall as its content.
"""

from __future__ import annotations

import argparse
import html
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REAL_RUNS = REPO.parent / "shared" / "fixtures" / "real-runs"
# three real runs of three sources, by their paths under the real-runs root: a TRL output folder (sparse reward,
# not learning), a verl console log (healthy PPO), a TRL console log (a saturating task)
REAL = ("trl_redteam_sparse", "verl_qwen05b_gsm8k_ppo", "trl_console_gsm8k_saturating/easy_standard.log")
RUN_PAGES = ("checklist", "diagnosis", "samples", "config", "live")
CHROMIUM = "/usr/bin/chromium"
# what a page shows once it has drawn (the app may look idle before): the Runs table, the compared charts, a run's
# header (its name under the page title)
READY = {"runs": "[data-testid=stDataFrame]", "compare": "[data-testid=stPlotlyChart] .main-svg",
         "run": "h3"}
WIDTH = 1400


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def demo_root(steps: int, work: Path) -> Path:
    """The folder holding a run named demo: runs/ when `make demo` left runs/demo, else one trained here."""
    if (REPO / "runs" / "demo" / "run.json").exists():
        return REPO / "runs"
    root = work / "demo-root"
    train = Path(sys.executable).with_name("grpo-train")
    print(f"screenshots: training a {steps}-step demo run (runs/demo is absent)", flush=True)
    subprocess.run([str(train), "--preset", "grpo", "--out", str(root / "demo"), "--set", f"steps={steps}",
                    "--set", "task.digits=2", "--set", "log.progress=false"], check=True, cwd=REPO,
                   stdout=subprocess.DEVNULL)
    return root


def start_dash(roots: list[Path], port: int) -> subprocess.Popen:
    dash = Path(sys.executable).with_name("grpo-dash")
    cmd = [str(dash), *map(str, roots), "--port", str(port), "--host", "127.0.0.1"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    end = time.monotonic() + 90
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return proc
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise SystemExit("screenshots: grpo-dash did not start")


SETTLED_JS = """() => {
  const busy = document.querySelector('[data-testid=stStatusWidget], [data-testid=stSkeleton]');
  const charts = document.querySelectorAll('[data-testid=stPlotlyChart]').length;
  const drawn = document.querySelectorAll('[data-testid=stPlotlyChart] .main-svg').length;
  return [!busy && drawn >= charts, document.querySelectorAll('[data-testid=stElementContainer]').length];
}"""
HEIGHT_JS = """() => { const m = document.querySelector('[data-testid=stMainBlockContainer]');
  return m ? Math.ceil(m.getBoundingClientRect().top + m.scrollHeight + 40) : 1000; }"""


def settle(page, timeout_s: float = 120.0, quiet_checks: int = 3) -> None:
    """Until the app has been idle with every chart drawn and no new element for `quiet_checks` checks 0.4 s
    apart (174 pages: each second of waiting is three minutes of the whole run)."""
    quiet, last, end = 0, -1, time.monotonic() + timeout_s
    while quiet < quiet_checks and time.monotonic() < end:
        idle, n = page.evaluate(SETTLED_JS)
        quiet = quiet + 1 if idle and n == last and n >= 3 else 0
        last = n
        time.sleep(0.4)


def shoot(page, url: str, out: Path, ready: str) -> None:
    """`ready`: a selector the page has once it has drawn its content (the Runs table; a run page's header)."""
    page.set_viewport_size({"width": WIDTH, "height": 1000})
    page.goto(url)
    page.get_by_test_id("stHeading").first.wait_for(timeout=90_000)
    try:  # the Runs page diagnoses every run for its table: minutes on a busy machine
        page.locator(ready).first.wait_for(timeout=600_000)
    except Exception:  # noqa: BLE001 - a page that shows an error instead is taken as it is
        print(f"screenshots: {url} never showed {ready}; taken as it is", flush=True)
    settle(page)
    page.set_viewport_size({"width": WIDTH, "height": max(1000, page.evaluate(HEIGHT_JS))})
    time.sleep(0.5)  # Plotly redraws at the new size
    settle(page, 30, quiet_checks=2)
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out), full_page=True)


def index(out: Path, shots: list[tuple[str, str, str, Path]]) -> Path:
    """One page showing every screenshot, a row per run and language."""
    rows: dict[tuple[str, str], list[tuple[str, Path]]] = {}
    for run, lang, page, path in shots:
        rows.setdefault((run, lang), []).append((page, path))
    body = []
    for (run, lang), items in rows.items():
        cells = "".join(f'<figure><a href="{html.escape(str(p.relative_to(out)))}"><img loading="lazy" '
                        f'src="{html.escape(str(p.relative_to(out)))}"></a><figcaption>{html.escape(page)}</figcaption>'
                        "</figure>" for page, p in items)
        body.append(f"<h2>{html.escape(run)} · {lang}</h2><div class=row>{cells}</div>")
    doc = ("<!DOCTYPE html><meta charset=utf-8><title>grposcope screenshots</title><style>"
           "body{font-family:sans-serif;margin:1em}.row{display:flex;gap:8px;align-items:flex-start;overflow-x:auto}"
           "figure{margin:0}img{width:260px;border:1px solid #ccc}figcaption{font-size:12px}</style>"
           f"<h1>grposcope: every page, both languages ({len(shots)} screenshots)</h1>{''.join(body)}")
    path = out / "index.html"
    path.write_text(doc, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=REPO / "build" / "screenshots")
    p.add_argument("--runs", nargs="*", default=None, help="only these runs (names: demo, sample runs, real runs)")
    p.add_argument("--lang", nargs="*", default=["en", "zh"])
    p.add_argument("--demo-steps", type=int, default=30)
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a TERM ends it like Ctrl-C: the server stopped
    started = time.monotonic()

    with tempfile.TemporaryDirectory(prefix="grposcope-shots-") as tmp:
        demo = demo_root(args.demo_steps, Path(tmp))
        roots = [demo, REPO / "sample_runs"] + ([REAL_RUNS] if REAL_RUNS.is_dir() else [])
        keys = {"demo": f"{demo.name}/demo"}
        keys |= {p.name: f"sample_runs/{p.name}" for p in sorted((REPO / "sample_runs").iterdir())
                 if (p / "run.json").exists()}
        keys |= {name.split("/")[0]: f"real-runs/{name}" for name in REAL if (REAL_RUNS / name).exists()}
        if args.runs:
            keys = {k: v for k, v in keys.items() if k in args.runs}
        port = free_port()
        dash = start_dash(roots, port)
        base = f"http://127.0.0.1:{port}"
        shots: list[tuple[str, str, str, Path]] = []
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
                page = browser.new_context(viewport={"width": WIDTH, "height": 1000}).new_page()
                for lang in args.lang:
                    jobs = [("(all runs)", "runs", f"{base}/?lang={lang}")]
                    if "demo" in keys and "healthy" in keys:
                        jobs.append(("(demo vs healthy)", "compare",
                                     f"{base}/compare?run={keys['demo']}&run={keys['healthy']}&lang={lang}"))
                    jobs += [(name, pg, f"{base}/{pg}?run={key}&lang={lang}") for name, key in keys.items()
                             for pg in RUN_PAGES]
                    for run, pg, url in jobs:
                        out = args.out / lang / run.strip("()").replace(" ", "_") / f"{pg}.png"
                        t0 = time.monotonic()
                        shoot(page, url, out, READY.get(pg, READY["run"]))
                        shots.append((run, lang, pg, out))
                        print(f"screenshots: {out.relative_to(args.out)} ({time.monotonic() - t0:.1f} s)", flush=True)
                browser.close()
        finally:
            dash.terminate()
            dash.wait(timeout=20)
    print(f"screenshots: {len(shots)} pages in {time.monotonic() - started:.0f} s; open {index(args.out, shots)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

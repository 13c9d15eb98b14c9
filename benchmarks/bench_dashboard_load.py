"""Ten pages on a live run: does every page keep updating, and does the server's memory come back after?

    python benchmarks/bench_dashboard_load.py [--pages 10] [--seconds 60] [--rounds 2] [--settle 150]

Starts `grpo-dash` on a temporary root with a live run (a RunWriter logging a step and its samples every
0.5 s), opens N pages of the Live view in Debian's headless Chromium (Playwright), keeps them open for the
given time, closes them, waits `--settle` seconds (Streamlit drops a closed page's session after a while),
and repeats. Prints the server's RSS (psutil) at each point and the steps each page saw, as a Markdown table.
A bounded cache shows as memory back near its level after the first round; a leak, as a climb every round.

    python benchmarks/bench_dashboard_load.py --lag [--tabs 1,3,10] [--seconds 60] [--rate 20] [--profile OUT]

The lag (issue 38): a RunWriter logging `--rate` steps a second (default flush: every 1 s), and for each tab
count N tabs of the Live page (refresh every 2 s, its default) sampled in turns about once a second: the lag of a
sample is how long the oldest step the tab does not show yet has been logged (0 when it shows the writer's
newest). Prints the median and p95 lag per tab count, the server's CPU (share of one core; a Streamlit server
runs its pages' Python under one GIL, so 100% is its ceiling), its RSS, and the time a reload takes until the
tile shows a step again. `--profile OUT` runs the server with `stack_sampler.py` and writes where the pages'
threads spent their time to OUT (JSON).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from collectors import RunWriter

CHROMIUM = "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _live_writer(folder: Path, stop: threading.Event, every_s: float = 0.5, logged: list | None = None,
                 flush_interval_s: float = 0.5) -> None:
    """A run that grows like a training run: 40 metrics per step, 16 samples of 300 characters; a step every
    `every_s` seconds, paced on the clock (a late step does not push back the next). logged[i]: the monotonic
    time step i was handed to the writer."""
    with RunWriter(folder, name="live", handle_signals=False, flush_interval_s=flush_interval_s) as w:
        step, start = 0, time.monotonic()
        while not stop.is_set():
            w.log_step(step, {"reward/mean": (step % 50) / 50, **{f"extra/m{i}": float(i * step) for i in range(40)}})
            w.log_samples([{"step": step, "group": g, "sample": s, "reward": float(s % 2),
                            "completion": f"step {step} " + "x" * 300} for g in range(4) for s in range(4)])
            if logged is not None:
                logged.append(time.monotonic())
            step += 1
            time.sleep(max(0.0, start + step * every_s - time.monotonic()))


def _rss_mb(pid: int) -> float:
    proc = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)]) / 2**20


def _last_step(page) -> int | None:
    try:
        text = page.get_by_test_id("stMetric").filter(has_text="last step").first.get_by_test_id(
            "stMetricValue").inner_text(timeout=2000)
    except Exception:  # noqa: BLE001 - a page still loading shows nothing yet
        return None
    m = re.search(r"\d+", text)
    return int(m.group()) if m else None


def _round(browser, url: str, pages: int, seconds: float, pid: int, rows: list[str], label: str) -> None:
    contexts = [browser.new_context(viewport={"width": 1200, "height": 900}) for _ in range(pages)]
    tabs = [c.new_page() for c in contexts]
    for t in tabs:
        t.goto(url, wait_until="commit", timeout=180_000)
    first = [None] * pages
    end = time.monotonic() + seconds
    peak = 0.0
    while time.monotonic() < end:
        time.sleep(5)
        peak = max(peak, _rss_mb(pid))
        for i, t in enumerate(tabs):
            if first[i] is None:
                first[i] = _last_step(t)
    last = [_last_step(t) for t in tabs]
    updating = sum(1 for a, b in zip(first, last) if a is not None and b is not None and b > a)
    during = _rss_mb(pid)
    for c in contexts:
        c.close()
    rows.append(f"| {label} | {pages} | {updating}/{pages} | {peak:.0f} | {during:.0f} |")


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


def _lag_round(browser, url: str, tabs_n: int, seconds: float, logged: list[float], pid: int) -> dict:
    """N tabs of the Live page for `seconds`: lag samples (s), server CPU share and RSS, reload times (s)."""
    contexts = [browser.new_context(viewport={"width": 1200, "height": 900}) for _ in range(tabs_n)]
    tabs = [c.new_page() for c in contexts]
    for t in tabs:
        t.goto(url, wait_until="commit", timeout=180_000)
    end = time.monotonic() + 120
    while time.monotonic() < end and any(_last_step(t) is None for t in tabs):
        time.sleep(1)  # every tab drew its tile once: the lag is of a page that is up, not of its first load
    proc = psutil.Process(pid)
    cpu0, wall0 = sum(proc.cpu_times()[:2]), time.monotonic()
    lags, rss = [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for t in tabs:
            shown = _last_step(t)
            now = time.monotonic()
            if shown is not None:
                newer = shown + 1
                lags.append(max(0.0, now - logged[newer]) if newer < len(logged) else 0.0)
        rss.append(_rss_mb(pid))
        time.sleep(max(0.0, 1.0 - 0.05 * len(tabs)))
    cpu = (sum(proc.cpu_times()[:2]) - cpu0) / (time.monotonic() - wall0)
    reloads = []
    for t in tabs[:3]:
        before = len(logged)
        start = time.monotonic()
        t.reload(wait_until="commit", timeout=180_000)
        while time.monotonic() - start < 120 and (_last_step(t) or -1) < before - 1:
            time.sleep(0.1)
        reloads.append(time.monotonic() - start)
    for c in contexts:
        c.close()
    return {"tabs": tabs_n, "lags": lags, "cpu": cpu, "rss": max(rss) if rss else float("nan"), "reloads": reloads}


def _start_server(root: Path, profile: str | None) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = dict(os.environ)
    if profile:
        hook = Path(tempfile.mkdtemp(prefix="hook-"))
        (hook / "sitecustomize.py").write_text(
            f"import sys\nsys.path.insert(0, {str(ROOT / 'benchmarks')!r})\nimport stack_sampler\nstack_sampler.start()\n")
        env["PYTHONPATH"] = os.pathsep.join([str(hook), env.get("PYTHONPATH", str(ROOT))])
        env["GRPOSCOPE_STACKS"] = str(Path(profile).resolve())
    server = subprocess.Popen([sys.executable, "-m", "dashboard.cli", str(root), "--port", str(port)],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(base + "/_stcore/health", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    return server, base


def _launch(p):
    return p.chromium.launch(executable_path=CHROMIUM, headless=True,
                             args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])


def _memory(args, root: Path, url_of) -> None:
    from playwright.sync_api import sync_playwright

    server, base = _start_server(root, None)
    url = url_of(base)
    settled = []
    rows = ["| round | pages | pages updating | server RSS peak (MB) | RSS before closing (MB) |", "|---|---|---|---|---|"]
    try:
        with sync_playwright() as p:
            browser = _launch(p)
            _round(browser, url, 1, 20, server.pid, rows, "warm-up (1 page, 20 s)")
            time.sleep(args.settle)
            settled.append(("after warm-up", _rss_mb(server.pid)))
            for r in range(args.rounds):
                _round(browser, url, args.pages, args.seconds, server.pid, rows, f"round {r + 1}")
                time.sleep(args.settle)
                settled.append((f"{args.settle:.0f} s after round {r + 1}", _rss_mb(server.pid)))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    print("\n".join(rows))
    print()
    print("| server RSS, pages closed | MB |\n|---|---|")
    print("\n".join(f"| {name} | {mb:.0f} |" for name, mb in settled))


def _lag(args, root: Path, url_of, logged: list[float]) -> None:
    from playwright.sync_api import sync_playwright

    server, base = _start_server(root, args.profile)
    url = url_of(base)
    results = []
    try:
        with sync_playwright() as p:
            browser = _launch(p)
            for n in [int(x) for x in args.tabs.split(",")]:
                load0 = os.getloadavg()[0]
                results.append({**_lag_round(browser, url, n, args.seconds, logged, server.pid),
                                "load": (load0, os.getloadavg()[0])})
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    print("| tabs | lag median (s) | lag p95 (s) | samples | server CPU (one core = 100%) | server RSS peak (MB) "
          "| reload, median of 3 (s) | load average (1 min, before / after) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        print(f"| {r['tabs']} | {_pct(r['lags'], 50):.2f} | {_pct(r['lags'], 95):.2f} | {len(r['lags'])} "
              f"| {100 * r['cpu']:.0f}% | {r['rss']:.0f} | {_pct(r['reloads'], 50):.1f} "
              f"| {r['load'][0]:.1f} / {r['load'][1]:.1f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--settle", type=float, default=150, help="seconds after closing the pages before measuring")
    ap.add_argument("--lag", action="store_true", help="measure the Live page's lag per tab count instead")
    ap.add_argument("--tabs", default="1,3,10", help="tab counts for --lag")
    ap.add_argument("--rate", type=float, default=20.0, help="steps a second the writer logs under --lag")
    ap.add_argument("--profile", default=None, help="--lag: where the pages' threads spend their time, to this JSON")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="load-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        stop = threading.Event()
        logged: list[float] = []
        every, flush = (1 / args.rate, 1.0) if args.lag else (0.5, 0.5)
        writer = threading.Thread(target=_live_writer, args=(root / "live", stop, every, logged, flush), daemon=True)
        writer.start()
        try:
            url_of = lambda base: f"{base}/live?run=root/live"
            if args.lag:
                _lag(args, root, url_of, logged)
            else:
                _memory(args, root, url_of)
        finally:
            stop.set()
            writer.join(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())

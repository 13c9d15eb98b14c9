"""Ten pages on a live run: does every page keep updating, and does the server's memory come back after?

    python benchmarks/bench_dashboard_load.py [--pages 10] [--seconds 60] [--rounds 2] [--settle 150]

Starts `grpo-dash` on a temporary root with a live run (a RunWriter logging a step and its samples every
0.5 s), opens N pages of the Live view in Debian's headless Chromium (Playwright), keeps them open for the
given time, closes them, waits `--settle` seconds (Streamlit drops a closed page's session after a while),
and repeats. Prints the server's RSS (psutil) at each point and the steps each page saw, as a Markdown table.
A bounded cache shows as memory back near its level after the first round; a leak, as a climb every round.
"""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from collectors import RunWriter

CHROMIUM = "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _live_writer(folder: Path, stop: threading.Event) -> None:
    """A run that grows like a training run: 40 metrics per step, 16 samples of 300 characters."""
    with RunWriter(folder, name="live", handle_signals=False, flush_interval_s=0.5) as w:
        step = 0
        while not stop.is_set():
            w.log_step(step, {"reward/mean": (step % 50) / 50, **{f"extra/m{i}": float(i * step) for i in range(40)}})
            w.log_samples([{"step": step, "group": g, "sample": s, "reward": float(s % 2),
                            "completion": f"step {step} " + "x" * 300} for g in range(4) for s in range(4)])
            step += 1
            time.sleep(0.5)


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--settle", type=float, default=150, help="seconds after closing the pages before measuring")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="load-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        stop = threading.Event()
        writer = threading.Thread(target=_live_writer, args=(root / "live", stop), daemon=True)
        writer.start()
        port = _free_port()
        server = subprocess.Popen([sys.executable, "-m", "dashboard.cli", str(root), "--port", str(port)],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        url = f"{base}/live?run=root/live"
        try:
            for _ in range(120):
                try:
                    urllib.request.urlopen(base + "/_stcore/health", timeout=2)
                    break
                except OSError:
                    time.sleep(0.5)
            settled = []
            rows = ["| round | pages | pages updating | server RSS peak (MB) | RSS before closing (MB) |",
                    "|---|---|---|---|---|"]
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
                _round(browser, url, 1, 20, server.pid, rows, "warm-up (1 page, 20 s)")
                time.sleep(args.settle)
                settled.append(("after warm-up", _rss_mb(server.pid)))
                for r in range(args.rounds):
                    _round(browser, url, args.pages, args.seconds, server.pid, rows, f"round {r + 1}")
                    time.sleep(args.settle)
                    settled.append((f"{args.settle:.0f} s after round {r + 1}", _rss_mb(server.pid)))
                browser.close()
        finally:
            stop.set()
            server.terminate()
            server.wait(timeout=20)
    print("\n".join(rows))
    print()
    print("| server RSS, pages closed | MB |\n|---|---|")
    print("\n".join(f"| {name} | {mb:.0f} |" for name, mb in settled))
    return 0


if __name__ == "__main__":
    sys.exit(main())

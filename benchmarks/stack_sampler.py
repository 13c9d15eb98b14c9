"""A poor man's py-spy for the dashboard server (py-spy is not installed here): started inside the server by a
`sitecustomize.py` that `bench_dashboard_load.py --profile` puts on its PYTHONPATH, a thread that looks at
every other thread's stack every few milliseconds and counts, per function, the samples whose stack holds it
(inclusive) and those where it is on top (self). Only threads running a Streamlit script are counted (their
stack holds `exec_func_with_error_handling`: the page's code), so the figures say where a page's refresh spends
its wall time, waits for the GIL included. Written to $GRPOSCOPE_STACKS every 5 s as JSON.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import threading
import time

INTERVAL_S = 0.005  # 200 samples a second: a 100 ms phase gets ~20 samples
SCRIPT_MARK = "exec_func_with_error_handling"  # streamlit's ScriptRunner frame that runs the page


def _label(code) -> str:
    path = code.co_filename
    for cut in ("site-packages/", "wt-hard2/", "/work/main/"):
        if cut in path:
            path = path.split(cut, 1)[1]
            break
    return f"{path}:{code.co_name}"


def _run(out: str) -> None:
    me = threading.get_ident()
    inclusive: collections.Counter = collections.Counter()
    own: collections.Counter = collections.Counter()
    total = 0
    last_dump = time.monotonic()
    while True:
        time.sleep(INTERVAL_S)
        for tid, frame in sys._current_frames().items():
            if tid == me:
                continue
            names, f = [], frame
            while f is not None:
                names.append(_label(f.f_code))
                f = f.f_back
            if not any(SCRIPT_MARK in n for n in names):
                continue
            total += 1
            own[names[0]] += 1
            inclusive.update(set(names))
        if time.monotonic() - last_dump > 5:
            last_dump = time.monotonic()
            with open(out + ".tmp", "w") as fh:
                json.dump({"samples": total, "interval_s": INTERVAL_S, "inclusive": inclusive.most_common(200),
                           "self": own.most_common(80)}, fh)
            os.replace(out + ".tmp", out)


def start() -> None:
    out = os.environ.get("GRPOSCOPE_STACKS")
    if out:
        threading.Thread(target=_run, args=(out,), daemon=True, name="stack-sampler").start()

#!/usr/bin/env bash
# make demo: train a live demo run into runs/demo in the background and open the dashboard on runs/ and
# sample_runs/. Ctrl-C (or SIGTERM) stops both and ends quietly (exit 0); the demo run is then recorded as failed
# ("interrupted"). The trainer opens runs/demo before its supervised warm start, so the dashboard lists the run
# from the first second, with the warm start's progress (run.json's `phase`); the terminal shows the Live
# page's address as soon as the run exists.
# Env: PORT (default 8501), DEMO_STEPS (default 600), VENV (default .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
PORT="${PORT:-8501}"
STEPS="${DEMO_STEPS:-600}"
mkdir -p runs
if [ -e runs/demo ]; then  # keep the previous demo for comparison instead of refusing to start
  mv runs/demo "runs/demo-$(date +%Y%m%d-%H%M%S)"
fi

pids=()
stop() {
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
# Ctrl-C is how a demo ends: stop both and exit 0 (the dashboard killed by our TERM made `wait` return 143,
# and make printed "Error 143")
trap 'stop; echo "demo: stopped"; exit 0' INT TERM
trap stop EXIT

# The first run pays the supervised warm start (about 500 steps: 20 s on 2 quiet cores, a minute on busy ones;
# its progress on the page and each check in runs/demo.log), then cached under ~/.cache/grposcope.
# 2-digit addition: its held-out split (~2,000 prompts, 64 scored per eval) shows generalisation; 1-digit has
# only 20 held-out prompts, and by step 300 the model has solved its 80 training prompts, so groups go
# all-pass and the run (rightly) warns that it has stopped learning.
"$VENV/bin/grpo-train" --preset grpo --out runs/demo --set steps="$STEPS" --set task.digits=2 > runs/demo.log 2>&1 &
pids+=($!)
echo "demo: training into runs/demo in the background ($STEPS steps; log in runs/demo.log, where the first run's"
echo "      supervised warm start says how far it is before the first GRPO step)"

"$VENV/bin/grpo-dash" runs sample_runs --port "$PORT" &
pids+=($!)
echo "demo: open http://localhost:$PORT in a browser; Ctrl-C stops the dashboard and the training"

# the Live page's address once the run exists (seconds: the trainer opens it before its warm start)
(
  while [ ! -e runs/demo/run.json ] && kill -0 "${pids[0]}" 2>/dev/null; do
    sleep 1
  done
  [ -e runs/demo/run.json ] && echo "demo: runs/demo is on the dashboard: http://localhost:$PORT/live?run=runs/demo"
) &
pids+=($!)
wait "${pids[1]}"

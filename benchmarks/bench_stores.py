"""Opening trackio and MLflow stores with our readers vs reading the same data with each library's own API.

`python benchmarks/bench_stores.py --steps 1000 --keys 30 --runs 2 --repeats 5`

The stores are written by trackio and MLflow themselves (tests/fixtures/tracker_stores.py's calls, with
`--keys` of TRL's GRPOTrainer keys and more under their own names), in subprocesses. Then, in this process,
each side reads every run of a store, all its metric points and its config:

- ours: `collectors.sources.open_runs(store)` (the run's table pivoted by step, keys mapped);
- trackio: `SQLiteStorage.get_run_records`, then per run `get_logs(project, run_id=...)` (what trackio's
  dashboard and `trackio.Api` read through) and `get_run_config`; trackio's read cache is emptied before
  each repeat, so both sides read the file;
- MLflow: `MlflowClient(uri).search_runs` over the experiments, then per run `get_metric_history` of each key
  (the only call that returns every point) and the params that search_runs returns, for `mlflow.db` through
  SQLAlchemy and for `mlruns/` through its FileStore.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_time

WRITE = r"""
import json, math, os, re, sys
kind, out, steps, keys, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
TRL = ["loss", "grad_norm", "learning_rate", "num_tokens", "completions/mean_length", "completions/clipped_ratio",
       "reward", "reward_std", "frac_reward_zero_std", "kl", "entropy", "clip_ratio/region_mean", "epoch"]
names = (TRL + [f"rewards/func_{i}/mean" for i in range(keys)])[:keys]
config = {"num_generations": 8, "beta": 0.04, "learning_rate": 1e-6, "max_completion_length": 256}
def logs(s):
    return {k: math.sin(s * (i + 1)) + s / 100 for i, k in enumerate(names)}
if kind == "trackio":
    import trackio
    for r in range(runs):
        trackio.init(project="bench", name=f"run-{r}", config=config)
        for s in range(1, steps + 1):
            trackio.log({**{"train/" + k: v for k, v in logs(s).items()}, "train/global_step": s})
        trackio.finish()
else:
    import mlflow
    mlflow.set_tracking_uri(f"sqlite:///{out}/mlflow.db" if kind == "mlflow.db" else Path(out, "mlruns").as_uri())
    mlflow.set_experiment("bench")
    for r in range(runs):
        with mlflow.start_run(run_name=f"run-{r}"):
            mlflow.log_params(config)
            for s in range(1, steps + 1):
                mlflow.log_metrics(logs(s), step=s)
"""


def write(kind: str, out: Path, steps: int, keys: int, runs: int) -> float:
    env = {**os.environ, "TRACKIO_DIR": str(out / "trackio"), "MLFLOW_ALLOW_FILE_STORE": "true",
           "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1"}
    code = "from pathlib import Path\n" + WRITE
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, kind, str(out), str(steps), str(keys), str(runs)], env=env,
                   check=True, capture_output=True, timeout=3600)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--keys", type=int, default=30)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--reuse", type=Path, default=None,
                    help="a folder an earlier run of this script wrote (same --steps/--keys/--runs): read only")
    args = ap.parse_args()
    out = args.reuse or Path(tempfile.mkdtemp(prefix="bench_stores_"))
    for kind in ("trackio", "mlflow.db", "mlruns") if args.reuse is None else ():
        took = write(kind, out, args.steps, args.keys, args.runs)
        print(f"wrote {kind}: {args.runs} runs x {args.steps} steps x {args.keys} keys in {took:.1f} s", flush=True)
    print(f"stores in {out}", flush=True)

    os.environ["TRACKIO_DIR"] = str(out / "trackio")  # read by trackio at import
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    import trackio.sqlite_storage as ts
    from mlflow import MlflowClient

    from collectors.sources import open_runs

    def ours(target: Path):
        def read():
            runs = open_runs(target)
            assert sum(len(r.metrics) for r in runs) == args.runs * args.steps
        return read

    def trackio_api():
        ts._LOGS_READ_CACHE.clear()
        n = 0
        for rec in ts.SQLiteStorage.get_run_records("bench"):
            logs = ts.SQLiteStorage.get_logs("bench", run_id=rec["id"])
            ts.SQLiteStorage.get_run_config("bench", run_id=rec["id"])
            n += len(logs)
        assert n == args.runs * args.steps, n

    def mlflow_api(uri: str):
        def read():
            client = MlflowClient(uri)
            exps = [e.experiment_id for e in client.search_experiments()]
            n = 0
            for run in client.search_runs(exps):
                _ = run.data.params
                for key in run.data.metrics:
                    n += len(client.get_metric_history(run.info.run_id, key))
            assert n == args.runs * args.steps * args.keys, n
        return read

    rows = []
    for name, target, lib in (("trackio", out / "trackio", trackio_api),
                              ("mlflow.db", out / "mlflow.db", mlflow_api(f"sqlite:///{out}/mlflow.db")),
                              ("mlruns/", out / "mlruns", mlflow_api((out / "mlruns").as_uri()))):
        lib()  # warm: imports, SQLAlchemy's engine, the OS page cache, for both sides alike
        ours(target)()
        t_lib = median_time(lib, args.repeats)
        t_ours = median_time(ours(target), args.repeats)
        rows.append((name, t_ours, t_lib))
        print(f"{name}: ours {t_ours * 1000:.1f} ms, library API {t_lib * 1000:.1f} ms, "
              f"ours / library = {t_ours / t_lib:.2f}", flush=True)
    import mlflow
    import trackio

    print(json.dumps({"python": platform.python_version(), "trackio": trackio.__version__,
                      "mlflow": mlflow.__version__, "cpus": os.cpu_count(),
                      "load": os.getloadavg(), "rows": rows}))


if __name__ == "__main__":
    main()

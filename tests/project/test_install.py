"""The light install: what `pip install grposcope` gives someone who only reads logs.

The fast tests check, in this environment, that importing the readers, the diagnosis and the CLIs pulls in
no torch, wandb, TensorBoard or transformers, and that every command prints the package's version.

The slow test (marked `slow_install`, about 1-2 minutes: it builds the wheel, creates a fresh virtual
environment and pip-installs pandas, pyarrow and streamlit into it) installs the wheel WITHOUT extras and
there runs grpo-diagnose on a sample run and on a real TRL run, grpo-import and grpo-diagnose on real verl and
TRL console logs, JSONL and CSV, starts grpo-dash and asks its health endpoint, and checks torch cannot be
imported. Downloaded wheels are kept in .cache/light-install-wheels
(git-ignored) so a second run installs offline; the versions are pinned to this environment's.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from importlib import metadata
from pathlib import Path

import pytest
from helpers.paths import REPO

REAL_RUNS = REPO.parent / "shared" / "fixtures" / "real-runs"
REAL_TRL = REAL_RUNS / "trl_redteam_sparse"
# a real log of each text format the base install promises to read -> the reader that must take it, its steps
REAL_LOGS = {"verl_qwen05b_gsm8k_ppo/main_ppo.log": ("verl", 435),
             "trl_console_gsm8k_saturating/easy_standard.log": ("trl-console", 200),
             "custom_jsonl_countdown/metrics.jsonl": ("generic", 500)}
WHEELHOUSE = REPO / ".cache" / "light-install-wheels"
HEAVY = ("torch", "wandb", "tensorboard", "transformers", "trl", "datasets", "tqdm")
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "grpo_core", "collectors", "dashboard")
CLIS = {"grpo-diagnose": "dashboard.diagnosis.cli", "grpo-dash": "dashboard.cli", "grpo-import": "collectors.cli",
        "grpo-train": "grpo_core.cli"}


def run(cmd: list[str], timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, **kw)


def test_importing_readers_diagnosis_and_clis_pulls_no_heavy_package():
    """In this environment torch & co. ARE installed: only a fresh interpreter shows what an import pulls."""
    code = ("import sys\n"
            "import collectors, collectors.cli, collectors.extras, dashboard, dashboard.cli\n"
            "import dashboard.diagnosis, dashboard.diagnosis.cli, dashboard.diagnosis.i18n, dashboard.data\n"
            "from collectors import open_run\n"
            "from dashboard.diagnosis import diagnose\n"
            f"d = diagnose(open_run({str(REPO / 'sample_runs' / 'small_group')!r}))\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = run([sys.executable, "-c", code], cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize("cli", sorted(CLIS))
def test_every_command_prints_the_version(cli):
    out = run([sys.executable, "-m", CLIS[cli], "--version"], cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"{cli} {metadata.version('grposcope')}\n"


def test_package_metadata():
    meta = metadata.metadata("grposcope")
    assert meta["License-Expression"] == "Apache-2.0"
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Source", "Issues"} <= set(urls)
    base = [r for r in metadata.requires("grposcope") if "extra ==" not in r]
    assert not [r for r in base if r.split("<")[0].split(">")[0].split("=")[0].strip().lower() in HEAVY], base
    extras = set(meta.get_all("Provides-Extra"))
    assert {"train", "tensorboard", "wandb", "trl", "all", "dev"} <= extras


def test_missing_extra_says_which_to_install():
    from collectors.extras import MissingExtra, require

    with pytest.raises(MissingExtra, match=r"^reading X needs the wandb package, which the base install leaves "
                                           r"out: pip install 'grposcope\[wandb\]'$") as e:
        require("no_such_module_grposcope.proto", "wandb", "reading X")
    assert isinstance(e.value, ImportError)
    with pytest.raises(ModuleNotFoundError):  # a different module missing inside an installed package is a bug
        require("collectors.no_such_submodule", "wandb", "reading X")


# -- the wheel in a fresh environment -------------------------------------------------------------------


def pins() -> list[str]:
    """name==version of this environment, so the fresh one gets what the suite is tested with."""
    out = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and name.lower() != "grposcope" and "+" not in dist.version:
            out[name.lower()] = f"{name}=={dist.version}"
    return sorted(out.values())


def build_wheel(tmp: Path) -> Path:
    """Build from a copy of the sources, so the shared working tree gets no build/ or egg-info."""
    src = tmp / "src"
    for name in SOURCES:
        p = REPO / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, src / name)
    out = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
               str(tmp / "dist"), str(src)])
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = (tmp / "dist").glob("grposcope-*.whl")
    return wheel


def install(venv_python: Path, wheel: Path, constraints: Path) -> None:
    """Offline from the wheelhouse when it already holds everything; otherwise fill it from the index first."""
    pip = [sys.executable, "-m", "pip", "--python", str(venv_python)]
    # --no-compile: byte-compiling pyarrow, pandas and streamlit at install is most of the install's CPU time
    # (73 s against 20 s here); the few modules the tests import compile when imported
    base = ["install", "-q", "--no-compile", "-c", str(constraints), str(wheel)]
    if WHEELHOUSE.is_dir():
        out = run(pip + base + ["--no-index", "--find-links", str(WHEELHOUSE)], timeout=600)
        if out.returncode == 0:
            return
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    for stale in WHEELHOUSE.glob("grposcope-*"):  # a wheel of an earlier checkout, same version: pip would reuse
        stale.unlink()                            # it, and resolve the dependencies that checkout declared
    got = run([sys.executable, "-m", "pip", "download", "-q", "-d", str(WHEELHOUSE), "-c", str(constraints),
               "--only-binary", ":all:", "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}",
               str(wheel)], timeout=600)
    assert got.returncode == 0, got.stderr[-2000:]
    out = run(pip + base + ["--no-index", "--find-links", str(WHEELHOUSE)], timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]


@pytest.fixture(scope="module")
def light(tmp_path_factory) -> Path:
    """A fresh venv holding the wheel without extras; returns its bin/ folder."""
    tmp = tmp_path_factory.mktemp("light_install")
    wheel = build_wheel(tmp)
    constraints = tmp / "constraints.txt"
    constraints.write_text("\n".join(pins()) + "\n")
    venv = tmp / "venv"
    out = run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert out.returncode == 0, out.stderr
    install(venv / "bin" / "python", wheel, constraints)
    return venv / "bin"


def bare_env() -> dict[str, str]:
    """The environment of a user's shell: nothing of this checkout on PYTHONPATH."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


@pytest.mark.slow_install
def test_light_install_has_no_heavy_package(light):
    code = f"import importlib.util as u; print([m for m in {HEAVY!r} if u.find_spec(m) is not None])"
    out = run([str(light / "python"), "-c", code], cwd=light, env=bare_env())
    assert out.returncode == 0 and out.stdout.strip() == "[]", (out.stdout, out.stderr)
    torch = run([str(light / "python"), "-c", "import torch"], cwd=light, env=bare_env())
    assert torch.returncode != 0 and "No module named 'torch'" in torch.stderr
    for cli in sorted(CLIS):
        out = run([str(light / cli), "--version"], env=bare_env())
        assert out.stdout == f"{cli} {metadata.version('grposcope')}\n", (cli, out.stdout, out.stderr)
    train = run([str(light / "grpo-train"), "--preset", "grpo", "--out", "x"], cwd=light, env=bare_env())
    hint = ("grpo-train: training needs torch, which the base install leaves out: pip install 'grposcope[train]' "
            "(on a machine without a GPU, first the CPU build of torch: pip install 'torch>=2.2,<3' --index-url "
            "https://download.pytorch.org/whl/cpu)\n")  # a wheel has no scripts/install_torch.sh
    assert (train.returncode, train.stderr) == (2, hint)
    scenarios = run([str(light / "grpo-train"), "--list-scenarios"], cwd=light, env=bare_env())
    assert scenarios.returncode == 0 and "  healthy " in scenarios.stdout, scenarios.stderr  # no torch needed


@pytest.mark.slow_install
def test_light_install_diagnoses_a_sample_run(light, tmp_path):
    out = run([str(light / "grpo-diagnose"), str(REPO / "sample_runs" / "broken_verifier"), "--format", "json",
               "--lang", "zh"], cwd=tmp_path, env=bare_env())
    assert out.returncode == 0, out.stderr[-2000:]
    (d,) = json.loads(out.stdout).values()
    rules = {f["rule_id"] for f in d["findings"]}
    assert {"reward_flat", "verifier_suspect"} <= rules and d["lang"] == "zh"


@pytest.mark.slow_install
def test_light_install_diagnoses_a_real_trl_run(light, tmp_path):
    if not REAL_TRL.is_dir():
        pytest.skip(f"{REAL_TRL} is absent (the shared corpus of real runs is not beside this checkout)")
    out = run([str(light / "grpo-diagnose"), str(REAL_TRL)], cwd=tmp_path, env=bare_env())
    assert out.returncode == 0, out.stderr[-2000:]
    assert "(reward_flat," in out.stdout and "(zero_variance_groups," in out.stdout


@pytest.mark.slow_install
def test_light_install_names_the_extra_a_reader_needs(light, tmp_path):
    out = run([str(light / "grpo-diagnose"), "wandb://someone/project/run1"], cwd=tmp_path, env=bare_env())
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == ("grpo-diagnose: cannot read wandb://someone/project/run1: reading wandb:// runs needs the "
                          "wandb package, which the base install leaves out: pip install 'grposcope[wandb]'\n")
    callback = run([str(light / "python"), "-c", "from collectors.trl import GrpoScopeCallback"], cwd=tmp_path,
                   env=bare_env())
    assert callback.returncode == 1 and callback.stderr.strip().splitlines()[-1] == (
        "collectors.extras.MissingExtra: GrpoScopeCallback needs transformers, which the base install leaves out: "
        "pip install 'grposcope[trl]'")
    import torch.utils.tensorboard as summary  # here (the dev venv), not in the light install
    w = summary.SummaryWriter(log_dir=str(tmp_path / "tb"))
    for step in range(3):
        w.add_scalar("train/reward", 0.1 * step, step)
    w.close()
    out = run([str(light / "grpo-diagnose"), str(tmp_path / "tb")], cwd=tmp_path, env=bare_env())
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().endswith("reading TensorBoard event files needs the tensorboard package, which the "
                                       "base install leaves out: pip install 'grposcope[tensorboard]'"), out.stderr


def diagnose_json(light: Path, path: Path, cwd: Path) -> dict:
    out = run([str(light / "grpo-diagnose"), str(path), "--format", "json"], cwd=cwd, env=bare_env())
    assert out.returncode == 0, out.stderr[-2000:]
    (d,) = json.loads(out.stdout).values()
    return d


@pytest.mark.slow_install
@pytest.mark.parametrize("log", [*sorted(REAL_LOGS), "a CSV written by pandas"])
def test_light_install_imports_and_diagnoses_real_logs(light, tmp_path, log):
    """grpo-import and grpo-diagnose on a verl console log, a TRL console log, JSONL and CSV: the import holds
    every step and diagnoses as the log itself does."""
    csv = log.startswith("a CSV")
    jsonl = REAL_RUNS / "custom_jsonl_countdown" / "metrics.jsonl"
    if not (jsonl if csv else REAL_RUNS / log).is_file():
        pytest.skip(f"{REAL_RUNS} is absent (the shared corpus of real runs is not beside this checkout)")
    if csv:
        import pandas as pd

        source, (reader, steps) = tmp_path / "metrics.csv", REAL_LOGS["custom_jsonl_countdown/metrics.jsonl"]
        pd.read_json(jsonl, lines=True).to_csv(source, index=False)
    else:
        source, (reader, steps) = REAL_RUNS / log, REAL_LOGS[log]
    out = run([str(light / "grpo-import"), str(source), "--to", str(tmp_path / "run")], cwd=tmp_path,
              env=bare_env())
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout == f"{tmp_path / 'run'}: {steps} steps imported\n"
    assert json.loads((tmp_path / "run" / "run.json").read_text())["source"] == reader
    direct, imported = diagnose_json(light, source, tmp_path), diagnose_json(light, tmp_path / "run", tmp_path)
    assert direct["steps"] == imported["steps"] == steps
    assert [f["rule_id"] for f in direct["findings"]] == [f["rule_id"] for f in imported["findings"]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow_install
def test_light_install_serves_the_dashboard(light, tmp_path):
    port = free_port()
    proc = subprocess.Popen([str(light / "grpo-dash"), str(REPO / "sample_runs"), "--port", str(port)],
                            cwd=tmp_path, env=bare_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        end, status = time.monotonic() + 90, None
        while time.monotonic() < end and status is None:
            assert proc.poll() is None, proc.stdout.read()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    status = (r.status, r.read().decode())
            except OSError:
                time.sleep(0.3)
        assert status == (200, "ok")
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.slow_install
def test_light_install_dash_without_runs_says_how_to_point_it(light, tmp_path):
    """The wheel has no sample_runs/: started where there is no ./runs, grpo-dash says how to point it at runs
    and exits, instead of watching folders that do not exist."""
    locale = ("GRPOSCOPE_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES")  # the message's language: English here
    env = {**{k: v for k, v in bare_env().items() if k not in locale}, "LANG": "C.UTF-8"}
    out = run([str(light / "grpo-dash")], cwd=tmp_path, env=env, timeout=120)
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith(f"grpo-dash: no runs to show: {tmp_path / 'runs'} does not exist and this "
                                 "install has no sample runs.\n")
    assert "grpo-dash PATH [PATH ...]" in out.stderr and "grpo-train --out runs/NAME" in out.stderr

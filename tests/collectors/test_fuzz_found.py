"""What fuzzing the readers found (tests/collectors/test_fuzz_readers.py, benchmarks/fuzz_readers.py), each case
reduced to the smallest input that shows it."""

from __future__ import annotations

from helpers.fuzz.harness import time_limit

from collectors import open_run
from collectors.readers.verl.config import command_overrides
from collectors.run import MAX_NAME_CHARS, MAX_NOTE_CHARS


def test_a_metric_name_longer_than_any_logger_writes_is_left_out_with_a_note(tmp_path):
    """trl-console case 16: a quote broken inside a printed dict made the rest of an 8 MB line one key; numpy held
    the chunk's 44 column labels at 8 MB each (+1.3 GB). The name is dropped, the row's other values kept."""
    long = "y" * (MAX_NAME_CHARS + 1)
    log = tmp_path / "train.log"
    log.write_text("".join(f"{{'loss': {0.1 * s:.1f}, 'reward': 0.5, 'epoch': {s / 10}}}\n" for s in (1, 2))
                   + f"{{'loss': 0.3, 'reward': 0.5, '{long}': 1.0, 'epoch': 0.3}}\n")
    run = open_run(log, source="trl-console")
    assert long not in run.metrics and list(run.metrics["loss/total"]) == [0.1, 0.2, 0.3]
    assert [p.message for p in run.problems if p.file == "metrics"] == [
        "1 column(s) with a name of up to 4,097 characters, no metric's name (over 4,096); left out"]
    said = [str(p) for p in run.problems]  # the reader's own note names the key: cut, with its length
    assert max(map(len, said)) < MAX_NOTE_CHARS + 50 and any(s.endswith(" characters)") for s in said)


def test_an_8_mb_verl_command_line_is_read_in_linear_time():
    """verl case 190: an 8 MB line after `-m verl.trainer.main_ppo` went through shlex (a character at a time in
    Python): over 10 s of CPU, the fuzz harness's bound. Past 64 KiB it is split at blanks; 2 s is 20x what that
    takes here."""
    line = "python3 -m verl.trainer.main_ppo data.train_batch_size=8 'x" + "y" * (8 << 20) + "' trainer.n_gpus=2"
    with time_limit(2, cpu=True):
        got = command_overrides(line)
    assert got == {"data.train_batch_size": 8, "trainer.n_gpus": 2}


def test_a_meta_yaml_of_megabytes_is_refused_before_yaml_reads_it(tmp_path):
    """mlflow case 146: a meta.yaml with a 17 MB line (endless_line) took PyYAML's pure-Python loader 14 s; MLflow
    writes a few hundred bytes there. Refused at once, naming the file."""
    run_dir = tmp_path / "mlruns" / "0" / "abc123"
    (run_dir / "metrics").mkdir(parents=True)
    (run_dir / "metrics" / "loss").write_text("1 0.5 1\n")
    (run_dir / "meta.yaml").write_text("run_id: abc123\nname: " + "x" * (2 << 20) + "\n")
    with time_limit(2, cpu=True):
        try:
            open_run(run_dir, source="mlflow")
        except Exception as e:  # the library's one-line error
            said = str(e)
        else:
            said = ""
    assert "meta.yaml: not MLflow's meta.yaml (2 MB; MLflow writes a few hundred bytes)" in said

"""Key-value text logs: `Name: number` lines as rows, steps from counters or line order, stray lines skipped."""

from __future__ import annotations

from collectors.readers.text.kvtext import KvTextRun, pairs, step_of
from collectors.sources import detect_source, open_run


def minimind_line(epoch, epochs, i, n, reward, kl, loss, length):
    # the format MiniMind's train_grpo.py prints (see ../shared/fixtures/real-runs/custom_log_minimind)
    return (f"Epoch:[{epoch}/{epochs}]({i}/{n}), Reward: {reward:.4f}, KL_ref: {kl:.4f}, Adv Std: 0.9258, "
            f"Adv Mean: {-0.0:.4f}, Actor Loss: {loss:.4f}, Avg Response Len: {length:.2f}, "
            f"Learning Rate: {3e-7:.8f}\n")


def test_pairs_and_counters():
    line = minimind_line(2, 2, 3, 10, -1.5, 0.01, 0.0, 271.375)
    assert pairs(line)[:2] == [("Reward", "-1.5000"), ("KL_ref", "0.0100")]
    assert step_of(line, pairs(line))[0] == 13  # (epoch - 1) * N + i
    assert pairs("{'loss': 0.1, 'reward': 0.2, 'kl': 0.3}") == []  # dict keys belong to the TRL console reader
    assert step_of("step=7 loss=0.4 reward=1 kl=0", pairs("step=7 loss=0.4 reward=1 kl=0"))[0] == 7


def test_minimind_style_log_maps_and_skips_stray_lines(tmp_path):
    f = tmp_path / "grpo.log"
    text = "Model Params: 30.03M\nTrainable Params: 30.025M\n"
    text += minimind_line(1, 1, 1, 4, -2.3041, -0.001, 0.0, 271.38)
    text += "[DEBUG] gen[2] reward=-2.6518\nint x = 5, y = 3, z = 4; return x\n"  # a printed sample
    text += minimind_line(1, 1, 2, 4, -1.7233, 0.0002, 0.0, 297.0)
    text += minimind_line(1, 1, 3, 4, -1.4468, 0.0409, 0.0065, 286.75)
    f.write_text(text)
    assert detect_source(f) == "kvtext"
    run = open_run(f)
    m = run.metrics
    assert list(m["step"]) == [1, 2, 3] and list(m["reward/mean"]) == [-2.3041, -1.7233, -1.4468]
    assert list(m["completions/len_mean"]) == [271.38, 297.0, 286.75] and m["optim/lr"].iloc[0] == 3e-7
    assert list(m["policy/kl_ref"]) == [-0.001, 0.0002, 0.0409] and "adv/mean" in m  # "-0.0000" is measured
    assert "x" not in m and "int x" not in m
    assert any("step taken from the `(i/N)` counter" in str(p) for p in run.problems)
    with f.open("a") as fh:
        fh.write(minimind_line(1, 1, 4, 4, -1.0, 0.0, 0.0, 100.0))
    assert run.refresh() == 1 and run.last_step == 4


def test_no_counter_means_line_order_said_as_an_assumption(tmp_path):
    f = tmp_path / "train.log"
    f.write_text("loss: 0.5, reward: 0.1, kl: 0.2\nloss: 0.4, reward: 0.3, kl: 0.1\n")
    run = KvTextRun(f, {"reward": "reward/pass_rate"})
    assert list(run.metrics["step"]) == [1, 2] and list(run.metrics["reward/pass_rate"]) == [0.1, 0.3]
    assert any("position among the key-value lines" in p.message and "assumption" in p.message for p in run.problems)


def test_verl_and_trl_console_lines_are_not_taken(tmp_path):
    verl = tmp_path / "main_ppo.log"
    verl.write_text("step:1 - critic/score/mean:0.5 - actor/pg_loss:0.1 - actor/lr:1e-6\n" * 2)
    trl = tmp_path / "train.log"
    trl.write_text("{'loss': 0.1, 'reward': 0.5, 'kl': 0.0, 'epoch': 0.1}\n" * 2)
    from collectors.readers.text.kvtext import detect

    assert not detect(str(verl)) and not detect(str(trl))


def test_a_printed_step_word_gives_the_step():
    line = "Step 10/1000 | loss: 0.3 | reward: 0.5 | kl: 0.01"
    assert step_of(line, pairs(line)) == (10, "the step the line prints")
    line = "[iter 7] Reward: 0.5, KL: 0.1, Entropy: 2.0"
    assert step_of(line, pairs(line))[0] == 7

"""Tasks and verifiers: answers are right, the eval split is disjoint from training, bad files fail in
one line naming the file and line."""

import json
import random
import sys

import pytest

from grpo_core.config import TaskConfig
from grpo_core.tasks import TaskError, build_task, is_eval
from grpo_core.verifiers import Score, resolve


@pytest.mark.parametrize("name,check", [
    ("addition", lambda p, a: eval(p.rstrip("=")) == int(a)),
    ("reverse", lambda p, a: p[4:-1][::-1] == a),
    ("sort", lambda p, a: "".join(sorted(p[5:-1])) == a),
    ("count", lambda p, a: p.split(" in ")[1][:-1].count(p[6]) == int(a)),
])
def test_synthetic_answers_and_split(name, check):
    task = build_task(TaskConfig(name=name, digits=2))
    train = task.sample(random.Random(0), 300)
    assert all(check(p.prompt, p.answer) for p in train + task.eval_set)
    assert not {p.prompt for p in train} & {p.prompt for p in task.eval_set}
    assert all(is_eval(p.prompt, task.eval_frac) for p in task.eval_set)
    assert task.score(train[0].answer, train[0]) == Score(1.0, True)
    assert task.score(train[0].answer + "x", train[0]) == Score(0.0, False)


def test_difficulty_knob_changes_the_problems():
    one = build_task(TaskConfig(name="addition", digits=1)).sample(random.Random(0), 200)
    three = build_task(TaskConfig(name="addition", digits=3)).sample(random.Random(0), 200)
    assert max(len(p.prompt) for p in one) == 4 and max(len(p.prompt) for p in three) == 8
    assert len(build_task(TaskConfig(name="reverse", length=6)).eval_set[0].answer) == 6


def test_eval_split_is_the_same_for_every_seed():
    a = build_task(TaskConfig(name="sort")).eval_set
    b = build_task(TaskConfig(name="sort")).eval_set
    assert [p.prompt for p in a] == [p.prompt for p in b] and len(a) == 64


@pytest.mark.parametrize("verifier,completion,answer,passed", [
    ("exact", " 42 ", "42", True), ("exact", "42.0", "42", False),
    ("numeric", "1,000", "1000", True), ("numeric", "42.0", "42", True), ("numeric", "x42", "42", False),
    ("regex", "abc123", r"abc\d+", True), ("regex", "abc", r"\d+", False),
    ("last_number", "3 apples and 5 pears, so 8", "#### 8", True),
    ("last_number", "the answer is 1,234.", "blah #### 1234", True),
    ("last_number", "8 then 9", "8", False), ("last_number", "none", "8", False),
])
def test_verifiers(verifier, completion, answer, passed):
    assert resolve(verifier)(completion, answer).passed is passed


def test_module_function_verifier(tmp_path, monkeypatch):
    (tmp_path / "my_checks.py").write_text(
        "def half(completion, answer):\n    return (0.5, completion == answer)\n"
        "def yes(completion, answer):\n    return True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert resolve("my_checks:half")("a", "a") == Score(0.5, True)
    assert resolve("my_checks:yes")("a", "b") == Score(1.0, True)
    with pytest.raises(ValueError, match="my_checks:nope"):
        resolve("my_checks:nope")
    sys.modules.pop("my_checks", None)


def write_jsonl(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return str(path)


def test_jsonl_task_with_named_verifier(tmp_path):
    rows = [{"prompt": f"q{i}: {i}*2=", "answer": f"#### {2 * i}"} for i in range(200)]
    task = build_task(TaskConfig(name="jsonl", path=write_jsonl(tmp_path / "t.jsonl", rows), verifier="last_number"))
    p = task.sample(random.Random(0), 1)[0]
    assert task.score(f"it is {p.answer.split()[-1]}", p).passed
    assert p.id.startswith("t:")
    assert not {q.prompt for q in task.problems} & {q.prompt for q in task.eval_set}


def test_jsonl_separate_eval_file(tmp_path):
    train = write_jsonl(tmp_path / "a.jsonl", [{"prompt": "1+1=", "answer": 2}])
    held = write_jsonl(tmp_path / "b.jsonl", [{"prompt": "2+2=", "answer": 4}])
    task = build_task(TaskConfig(name="jsonl", path=train, eval_path=held))
    assert [p.prompt for p in task.eval_set] == ["2+2="] and task.problems[0].answer == "2"


@pytest.mark.parametrize("rows,message", [
    (['{"prompt": "a", "answer": "b"}', "{not json"], r"t.jsonl:2: not valid JSON"),
    (['{"prompt": "a"}'], r"t.jsonl:1: expected an object"),
    ([], r"no problems"),
])
def test_malformed_jsonl_fails_in_one_line(tmp_path, rows, message):
    path = write_jsonl(tmp_path / "t.jsonl", rows) if rows else str((tmp_path / "t.jsonl").write_text("") or tmp_path / "t.jsonl")
    with pytest.raises(TaskError, match=message) as e:
        build_task(TaskConfig(name="jsonl", path=path))
    assert "\n" not in str(e.value)


def test_missing_file_and_unknown_names():
    with pytest.raises(TaskError, match="not found"):
        build_task(TaskConfig(name="jsonl", path="/no/such.jsonl"))
    with pytest.raises(TaskError, match="unknown task 'additon'.*did you mean 'addition'"):
        build_task(TaskConfig(name="additon"))
    with pytest.raises(TaskError, match="unknown verifier"):
        build_task(TaskConfig(name="addition", verifier="exactly"))

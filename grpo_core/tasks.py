"""Tasks: prompts with reference answers, a verifier, and a held-out eval split. Pure Python, no torch.

The split is decided by a hash of the prompt text, so a prompt is either always eval or always train,
whatever the seed, and the training sampler never draws an eval prompt.
"""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grpo_core.registry import Registry
from grpo_core.verifiers import Score, resolve

EVAL_SEED = 1234  # the eval split is the same for every run seed


class TaskError(ValueError):
    """A task that cannot be built (missing or malformed file); one line naming the file and line."""


@dataclass(frozen=True)
class Problem:
    prompt: str
    answer: str  # what the verifier compares against
    target: str  # what the supervised warm start imitates (usually the answer)
    id: str  # stable across steps and runs


def prompt_id(prompt: str) -> str:
    return f"{zlib.crc32(prompt.encode()):08x}"


def is_eval(prompt: str, eval_frac: float) -> bool:
    return zlib.crc32(prompt.encode()) % 10_000 < eval_frac * 10_000


class Task:
    """A problem source plus a verifier. `draw` is a generator fn(rng) -> (prompt, answer)."""

    def __init__(self, name: str, draw: Callable[[random.Random], tuple[str, str]], verifier: str,
                 eval_frac: float, eval_size: int, fixed_eval: list[Problem] | None = None) -> None:
        self.name, self._draw, self.eval_frac = name, draw, eval_frac
        self.verifier_name = verifier
        self.verify = resolve(verifier)
        self.eval_set = fixed_eval if fixed_eval is not None else self._eval_split(eval_size)
        if not self.eval_set:
            raise TaskError(f"task {name}: the held-out split is empty; raise task.eval_frac or add prompts")

    def _problem(self, prompt: str, answer: str) -> Problem:
        return Problem(prompt, answer, answer, prompt_id(prompt))

    def _eval_split(self, size: int) -> list[Problem]:
        rng, seen, out = random.Random(EVAL_SEED), set(), []
        for _ in range(200 * size):  # small prompt spaces (1-digit addition) run out of eval prompts
            prompt, answer = self._draw(rng)
            if prompt not in seen and is_eval(prompt, self.eval_frac):
                seen.add(prompt)
                out.append(self._problem(prompt, answer))
                if len(out) == size:
                    break
        return out

    def sample(self, rng: random.Random, n: int) -> list[Problem]:
        """n training problems (with replacement), never from the eval split."""
        out = []
        for _ in range(1000 * n):
            prompt, answer = self._draw(rng)
            if not is_eval(prompt, self.eval_frac):
                out.append(self._problem(prompt, answer))
                if len(out) == n:
                    return out
        raise TaskError(f"task {self.name}: could not draw training prompts outside the eval split")

    def score(self, completion: str, problem: Problem) -> Score:
        return self.verify(completion, problem.answer)


class ListTask(Task):
    """A task over a fixed list of problems (JSONL)."""

    def __init__(self, name: str, problems: list[Problem], verifier: str, eval_frac: float, eval_size: int,
                 eval_problems: list[Problem] | None = None) -> None:
        if eval_problems is None:
            eval_problems = [p for p in problems if is_eval(p.prompt, eval_frac)][:eval_size]
            problems = [p for p in problems if not is_eval(p.prompt, eval_frac)]
        if not problems:
            raise TaskError(f"task {name}: no training prompts left after the eval split")
        self.problems = problems
        super().__init__(name, None, verifier, eval_frac, eval_size, fixed_eval=eval_problems[:eval_size])

    def sample(self, rng: random.Random, n: int) -> list[Problem]:
        return [rng.choice(self.problems) for _ in range(n)]


TASKS: Registry = Registry("task")  # name -> build(task_cfg) -> Task


def _letters(cfg) -> str:
    return "abcdefghijklmnopqrstuvwxyz"[: max(1, min(26, cfg.letters))]


def _word(rng: random.Random, cfg) -> str:
    return "".join(rng.choice(_letters(cfg)) for _ in range(cfg.length))


def _synthetic(name: str, draw, cfg) -> Task:
    return Task(name, draw, cfg.verifier or "exact", cfg.eval_frac, cfg.eval_size)


@TASKS.register("addition")
def addition(cfg) -> Task:
    """"a+b=" -> a + b, operands below 10**digits."""
    hi = 10 ** max(1, cfg.digits) - 1

    def draw(rng):
        a, b = rng.randint(0, hi), rng.randint(0, hi)
        return f"{a}+{b}=", str(a + b)

    return _synthetic("addition", draw, cfg)


@TASKS.register("reverse")
def reverse(cfg) -> Task:
    """"rev abcd=" -> "dcba"."""
    def draw(rng):
        w = _word(rng, cfg)
        return f"rev {w}=", w[::-1]

    return _synthetic("reverse", draw, cfg)


@TASKS.register("sort")
def sort(cfg) -> Task:
    """"sort dbca=" -> "abcd"."""
    def draw(rng):
        w = _word(rng, cfg)
        return f"sort {w}=", "".join(sorted(w))

    return _synthetic("sort", draw, cfg)


@TASKS.register("count")
def count(cfg) -> Task:
    """"count a in abca=" -> "2"."""
    def draw(rng):
        w = _word(rng, cfg)
        c = rng.choice(_letters(cfg))
        return f"count {c} in {w}=", str(w.count(c))

    return _synthetic("count", draw, cfg)


def read_jsonl(path: str) -> list[Problem]:
    """Lines of {"prompt": str, "answer": str|number, optional "target": str}; blank lines skipped."""
    p = Path(path)
    if not path or not p.is_file():
        raise TaskError(f"task file {path!r} not found")
    problems = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise TaskError(f"{path}:{n}: not valid JSON ({e.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str) or "answer" not in row:
            raise TaskError(f"{path}:{n}: expected an object with a string 'prompt' and an 'answer'")
        answer = str(row["answer"])
        problems.append(Problem(row["prompt"], answer, str(row.get("target", answer)), f"{p.stem}:{n}"))
    if not problems:
        raise TaskError(f"{path}: no problems in the file")
    return problems


@TASKS.register("jsonl")
def jsonl(cfg) -> Task:
    held_out = read_jsonl(cfg.eval_path) if cfg.eval_path else None
    return ListTask("jsonl", read_jsonl(cfg.path), cfg.verifier or "exact", cfg.eval_frac, cfg.eval_size, held_out)


def build_task(cfg) -> Task:
    """Build the configured task; every failure is a one-line TaskError."""
    try:
        return TASKS[cfg.name](cfg)
    except KeyError as e:
        raise TaskError(str(e.args[0])) from None
    except ValueError as e:  # a bad verifier name or module:function
        raise TaskError(str(e)) from None

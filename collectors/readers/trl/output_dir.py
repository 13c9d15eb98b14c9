"""TRL GRPOTrainer output folders as a Run: `trainer_state.json` log history plus completions as samples.

What TRL 1.16 writes and how it differs from our names (the key map itself is `keymap.TRL`):
- `log_history` is in the output folder's newest `checkpoint-*/trainer_state.json` (or the folder's own
  `trainer_state.json` after `save_state`); we read the newest. Eval entries share the training step and
  carry `eval_` keys; `eval_reward` is our `eval/reward_mean`, other `eval_*` keys stay as extra columns.
- `reward_std` is the std over the whole batch (our `reward/std`), not a within-group std.
- `frac_reward_zero_std` counts zero-variance groups only with `scale_rewards` "group" or "none"; with
  "batch" it is 0 or 1 for the whole batch.
- With `num_iterations` > 1 rollout metrics appear only on generation steps: those columns stay null in
  between, never filled.
- The closing summary entry (`train_runtime`, `train_loss`, ...) is not a step and is skipped.
- `completions/completions_{step}.parquet` (with `log_completions`): one row per response with the
  prompt, the completion, one column per reward function and the advantage. Groups are rebuilt from the
  prompt. At eval steps the file holds the eval completions, not the training ones, so those are left out.
- The GRPOConfig is in `training_args.bin` beside each state file (a torch pickle), read inertly by
  `collectors.readers.trl.args`. trainer_state.json is written only at checkpoints (`save_steps`) and at the end,
  so a running TRL job shows new steps only then; `GrpoScopeCallback` (collectors.trl) writes
  every log step as it happens.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from collectors.meta import RunError, RunMeta
from collectors.readers import jsontext
from collectors.readers.keymap import TRAINER_SUMMARY_KEYS, TRL, canonical_name, map_row, step_chunks
from collectors.readers.trl.args import ARGS_FILE, read_training_args
from collectors.readers.trl.launches import group_states, launch_key
from collectors.run import Problem, Run
from collectors.schema import SAMPLES
from collectors.sources import launch_target, register_source, split_launch

STATE = "trainer_state.json"
_CKPT_RE = re.compile(r"^checkpoint-(\d+)$")
_COMPLETIONS_RE = re.compile(r"^completions_(\d+)\.parquet$")
ROLLOUT_KEY = "reward"  # logged on generation steps only (with num_iterations > 1 the others lack it)


def logger_name(key: str) -> str:
    """The name transformers' TensorBoard and wandb callbacks give a log key (`rewrite_logs`): `eval_x` ->
    `eval/x`, `test_x` -> `test/x`, anything else -> `train/x`."""
    for prefix in ("eval", "test"):
        if key.startswith(prefix + "_"):
            return f"{prefix}/{key[len(prefix) + 1:]}"
    return f"train/{key}"


def trl_row(logs: dict[str, Any]) -> tuple[dict[str, float], list[str]]:
    """One TRL log dict -> (row, non-numeric keys): TRL keys under our names, the others under the names the
    loggers give them (`num_tokens` -> `train/num_tokens`), so a run reads the same whether it came from
    trainer_state.json, TensorBoard, wandb or the callback."""
    unmapped = {k: logger_name(k) for k in logs if canonical_name(k, [TRL]) == k}
    return map_row(logs, [TRL], overrides=unmapped)


def state_files(folder: Path) -> list[Path]:
    """Candidate trainer_state.json files, newest last (by checkpoint number, the folder's own last)."""
    if folder.is_file():
        return [folder]
    ckpts = [(int(m[1]), p / STATE) for p in folder.glob("checkpoint-*")
             if (m := _CKPT_RE.match(p.name)) and (p / STATE).is_file()]
    out = [p for _, p in sorted(ckpts)]
    if (folder / STATE).is_file():
        out.append(folder / STATE)
    return out


def detect(target: str) -> bool:
    p = Path(target)
    if p.is_file():
        return p.name == STATE
    return p.is_dir() and bool(state_files(p))


def parts(target: str) -> list[str]:
    """The sub-folders a TRL run reads: its checkpoint-N/ folders and completions/."""
    try:
        return [e.name for e in os.scandir(target) if e.is_dir(follow_symlinks=False)
                and (_CKPT_RE.match(e.name) or e.name == "completions")]
    except OSError:
        return []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # removed between the listing and now (a checkpoint rotated away by save_total_limit)
        return -1.0


def _state_step(path: Path) -> int:
    m = _CKPT_RE.match(path.parent.name)
    return int(m[1]) if m else -1


class TrlRun(Run):
    nan_known = True  # trainer_state.json writes a NaN as NaN; a key not logged that step is absent

    def __init__(self, path: Path | str, launch: str | None = None) -> None:
        """`launch`: one launch of an output folder that several wrote into (`trl_launches`)."""
        path = Path(path)
        folder = path.parent if path.is_file() else path
        name = folder.name if launch is None else f"{folder.name}#{launch}"
        super().__init__(path, RunMeta(run_id=name, name=name, source="trl"))
        self.folder = folder
        self.launch = launch
        self._keys: dict[tuple, str | None] = {}  # (state file, mtime, size) -> launch id
        self._several = False
        self._state_sig: tuple | None = None
        self._completions_read: set[Path] = set()
        self._eval_steps: set[int] = set()
        self._logged_steps: set[int] = set()  # train entries seen in the state
        self._rollout_steps: set[int] = set()  # ...of which generated a rollout (they log `reward`)
        self._seq = 0
        self.refresh()

    def _read_new(self) -> list[pd.DataFrame]:
        files = state_files(self.path)
        if not files:
            self._note(Problem(self.path.name, f"no {STATE} here or in checkpoint-*/"))
            return []
        # the folder's own state is written by save_state at the end; a later checkpoint may still be newer
        state = max(self._launch_files(files), key=lambda p: (_state_step(p), _mtime(p)))
        rows = self._read_state(state)
        if self._several:  # completions/ is one folder for every launch: a later launch overwrote the files
            self._note(Problem("completions", "shared by the launches in this folder; not read as samples"))
        else:
            self._read_completions()
        if not rows:
            return []
        out, self._seq = step_chunks(self._table.frame(), rows, self._seq)
        return out

    def _launch_files(self, files: list[Path]) -> list[Path]:
        """The state files of this run's launch. A folder opened without a launch id holds one launch (else
        RunError naming them); if another launch starts there later, this run stays with the one it read."""
        if self.path.is_file():
            return files
        groups = group_states(files, self._key)
        self._several = len(groups) > 1
        if not self._several:
            return files
        if self.launch is None and self._state_sig is None:
            ids = list(groups)
            raise RunError(f"{self.path}: holds {len(ids)} separate launches (runs started from scratch into one "
                           f"output_dir: {', '.join(ids)}); open one as {self.path}#{ids[0]}")
        wanted = self.launch or self._key(self._state_sig[0])
        if wanted not in groups:
            raise RunError(f"{self.path}: no launch {wanted!r} here; launches: {', '.join(groups)}")
        note = (f"one of {len(groups)} separate launches in {self.folder.name} (its checkpoints: "
                f"{', '.join(p.parent.name for p in groups[wanted])})")
        self.meta.notes = [n for n in self.meta.notes if "separate launches" not in n] + [note]
        self.meta.info.update(parent=self.folder.name, launch=wanted, launches=len(groups))
        return groups[wanted]

    def _key(self, state: Path) -> str | None:
        try:
            st = state.stat()
        except OSError:
            return None
        sig = (state, st.st_mtime_ns, st.st_size)
        if sig not in self._keys:
            self._keys[sig] = launch_key(state)
        return self._keys[sig]

    def _read_state(self, state: Path) -> list[dict[str, Any]]:
        try:
            st = state.stat()
            sig = (state, st.st_mtime_ns, st.st_size)
            if sig == self._state_sig:
                return []
            obj, replaced = jsontext.loads(state.read_bytes())  # a 5,000-digit number: infinity, as any beyond float
            history = obj["log_history"]
            if not isinstance(history, list):
                raise TypeError
        except jsontext.JsonProblem as e:  # no JSON or UTF-8, nested too deep: said in words
            self._note(Problem(str(state.relative_to(self.folder)), f"{e}; kept what was read"))
            return []
        except (KeyError, TypeError):
            self._note(Problem(str(state.relative_to(self.folder)), "no log_history list; nothing read"))
            return []
        except OSError:
            return []  # rotated away since the listing (save_total_limit); the next refresh takes the newer one
        self._state_sig = sig
        if replaced:
            self._note(Problem(state.name, f"{replaced} lone surrogate(s) (\\u escapes of half a character, which "
                                           "no UTF-8 text holds) replaced by U+FFFD"))
        self.meta.status = "finished" if obj.get("global_step") == obj.get("max_steps") else "unknown"
        self.meta.config = self._training_args(state)
        self.meta.config.update({k: obj[k] for k in ("max_steps", "logging_steps", "eval_steps", "save_steps",
                                                     "train_batch_size", "num_train_epochs") if k in obj})
        last = self.last_step
        rows = []
        bad_at: dict[str, list[int]] = {}  # non-numeric key -> the steps it was logged at: one note per key
        for i, entry in enumerate(history):
            if not isinstance(entry, dict) or not isinstance(entry.get("step"), int):
                self._note(Problem(state.name, f"log_history[{i}]: no integer step; skipped"))
                continue
            if any(k in entry for k in TRAINER_SUMMARY_KEYS):
                continue
            step = entry["step"]
            if last is not None and step < last:
                continue  # already read from an older checkpoint
            if any(k.startswith("eval_") for k in entry):
                self._eval_steps.add(step)
            else:
                self._logged_steps.add(step)
                if ROLLOUT_KEY in entry:
                    self._rollout_steps.add(step)
            row, bad = trl_row({k: v for k, v in entry.items() if k != "step"})
            for key in bad:
                bad_at.setdefault(key, []).append(step)
            rows.append({"step": step, **row})
        for key, steps in bad_at.items():  # a callback's list of completions on every entry is one note, not 200
            shown = ", ".join(map(str, steps[:3])) + (f" and {len(steps) - 3} more" if len(steps) > 3 else "")
            self._note(Problem(state.name, f"step {shown}: non-numeric {key}; left null"))
        return rows

    def _training_args(self, state: Path) -> dict[str, Any]:
        """The GRPOConfig saved beside the state (every checkpoint has one), or {} with a problem noted."""
        args = state.parent / ARGS_FILE
        if not args.is_file():
            self._note(Problem(str(args.relative_to(self.folder)), "not found; the run's GRPOConfig is unknown"))
            return {}
        try:
            return read_training_args(args)
        except RunError as e:
            self._note(Problem(str(args.relative_to(self.folder)), str(e).split(": ", 1)[-1]))
            return {}

    def _read_completions(self) -> None:
        folder = self.folder / "completions"
        new = []
        for f in sorted(folder.glob("completions_*.parquet")) if folder.is_dir() else []:
            if f in self._completions_read:
                continue
            step = completions_step(f)
            if step is not None and step not in self._eval_steps and step not in self._logged_steps:
                continue  # the state does not have this step yet (written at the next checkpoint): decide then
            self._completions_read.add(f)
            if step is not None and not is_training_rollout(step, self._eval_steps, self._rollout_steps):
                continue
            try:
                new.append(completion_samples(pd.read_parquet(f)))
            except (OSError, ValueError, pa.ArrowException) as e:
                self._note(Problem(f"completions/{f.name}", f"unreadable parquet ({e}); skipped"))
            except (KeyError, TypeError, OverflowError) as e:  # a column missing or of another type
                self._note(Problem(f"completions/{f.name}", f"not TRL's completions table ({type(e).__name__}: "
                                                            f"{e}); skipped"))
        if new:
            self._samples = pd.concat([self._samples, *new], ignore_index=True).sort_values(
                ["step", "group", "sample"], kind="stable").reset_index(drop=True)



def completions_step(path: Path) -> int | None:
    """The step in TRL's file name `completions_{step:05d}.parquet`."""
    m = _COMPLETIONS_RE.match(path.name)
    return int(m[1]) if m else None


def is_training_rollout(step: int, eval_steps: set[int], rollout_steps: set[int]) -> bool:
    """Whether TRL's completions file of `step` holds that step's own training rollout.

    At an eval step it holds the eval completions. With num_iterations > 1 TRL writes the file at every log
    step, but only generation steps (those whose log has `reward`) sampled anew; the others repeat the last
    rollout. A run that never logs `reward` (renamed metrics) keeps every non-eval file.
    """
    if step in eval_steps:
        return False
    return not rollout_steps or step in rollout_steps


def completion_samples(frame: pd.DataFrame) -> pd.DataFrame:
    """TRL completions rows -> our samples: reward is the sum of the reward-function columns.

    TRL weights reward functions (`reward_weights`, default 1 each); the file holds the unweighted
    per-function values, so with non-default weights this sum differs from TRL's `reward`.
    """
    fixed = {"step", "prompt", "completion", "advantage", "image", "images"}
    reward_cols = [c for c in frame.columns if c not in fixed and pd.api.types.is_numeric_dtype(frame[c])]
    out = pd.DataFrame({"step": frame["step"].astype("int64")})
    prompts = frame["prompt"].astype(str)
    out["prompt_id"] = pd.util.hash_pandas_object(prompts, index=False).map(lambda h: f"{h:016x}"[:12])
    out["group"] = prompts.groupby(frame["step"]).transform(lambda s: pd.factorize(s)[0]).astype("int64")
    out["sample"] = out.groupby(["step", "group"]).cumcount().astype("int64")
    out["reward"] = frame[reward_cols].sum(axis=1) if reward_cols else float("nan")
    out["passed"] = None
    out["advantage"] = frame["advantage"] if "advantage" in frame else float("nan")
    out["num_tokens"] = None
    out["truncated"] = None
    out["prompt"] = prompts
    out["completion"] = frame["completion"].astype(str) if "completion" in frame else None
    return out[list(SAMPLES)]


def list_launches(target: str) -> list[str]:
    """`FOLDER#LAUNCH` per launch of an output folder that several launches wrote into; [] for one."""
    path = Path(target)
    groups = group_states(state_files(path)) if path.is_dir() else {}
    return [launch_target(target, k) for k in groups] if len(groups) > 1 else []


@register_source("trl", detect=detect, priority=30, launches=list_launches, parts=parts, hints={
    "samples": "TRL writes completions only with `log_completions=True` in GRPOConfig (completions/*.parquet "
               "in the output folder); or add collectors.trl.GrpoScopeCallback to the trainer.",
    "config": "the GRPOConfig is read from training_args.bin, which TRL saves with each checkpoint; "
              "none was found or it could not be read (see the reading problems).",
    "live": "TRL writes trainer_state.json only when it saves a checkpoint (save_steps), so new steps appear "
            "here then; for every step as it is logged, add collectors.trl.GrpoScopeCallback to the trainer.",
})
def open_trl(target: str) -> TrlRun:
    return TrlRun(*split_launch(target))

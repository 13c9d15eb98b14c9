"""Our trainer against TRL's GRPOTrainer on a mid-size random model, on one GPU (issue 26's table).

    python benchmarks/gpu_vs_trl.py [--steps 8] [--skip 3] [--repeats 1] [--rows off,on,micro,compiled] [--json F]
    python benchmarks/gpu_vs_trl.py --tiny --device cpu --steps 4 --skip 1   # the CPU check that it runs

Builds here (nothing is downloaded) a random Qwen2 of the shape of Qwen2.5-0.5B: 24 layers, width 896, MLP
4864, 14 heads, 2 KV heads, and a byte-level BPE tokenizer learnt from "a+b=c" strings (its vocabulary of a
few hundred tokens is the only part that is not Qwen's); --tiny makes it 2 layers of width 64 and the batch
2 prompts x G = 4, 16 new tokens (a CPU check). Both sides train it with 8 prompts x G = 8 (--prompts,
--group), 128 new tokens (--tokens), beta 0.04 (KL in the loss, k3), one iteration per generation, lr 1e-6,
AdamW, bf16 autocast over fp32 weights on CUDA (TRL bf16=True, ours model.autocast_bf16), every other
setting at each side's default. Rows (--rows):

    off     gradient checkpointing off on both sides (like for like)
    on      on on both: TRL's default, and ours (model.gradient_checkpointing defaults to true); so this row
            is also "with TRL's defaults"
    micro   ours alone, checkpointing on and optim.micro_batch a quarter of the batch (16 of 64): 4
            forward/backward passes per update
    compiled  ours alone, checkpointing on and rollout.compiled_decode=true (static KV cache, compiled
            decode step; CUDA only)

The rows' runs are interleaved (ours, TRL, ours, TRL ...); a run that fails is reported as such and the
others go on, and --json is rewritten after each run. Per run: its steady steps/s (the steps after the
first --skip, from the logged rows' wall time for ours and a step-end callback for TRL), generated tokens/s
(completion tokens per second of step time), the share of the step spent generating (our sampling loop,
TRL's _generate_single_turn, timed with a CUDA sync) and the peak memory over the run less what was held
before it (CUDA: torch.cuda.max_memory_allocated; CPU: the resident set's high-water mark, reset through
/proc/self/clear_refs). Printed: the median of each over the repeats.

Two memory lines come before the runs on CUDA (so that a time limit cuts runs, not them) and after them on
CPU (there glibc is first told to map and unmap every block of 64 kB or more, so that the resident set
follows the tensors, which slows every allocation after it): one optimizer step of ours on a made-up
rollout of the same shape, checkpointing off/on x optim.micro_batch 0 / a quarter of the batch; and one
forward+backward of log-probs and entropy over [16, 129, 151936] logits (Qwen's vocabulary; bf16 on CUDA,
fp32 on CPU), the plain full-vocabulary fp32 expression against grpo_core's blockwise one.

TRL must be importable for its half (`pip install trl`); without it our rows still print. A GPU machine
without a package index takes wheels carried with the tree: `pip download trl==1.16.0 accelerate datasets
-d shared/wheels` here, `pip install --no-index --find-links shared/wheels trl` there. Exits 1 with one line
when --device cuda is asked and no GPU is visible. With the defaults (every row, 8 steps, 1 repeat) the
mid-size model should need about 6-9 minutes of an H200 by the issue's rates (4 s a step) plus the compile
of the compiled row (an estimate: not yet run on a GPU).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("WANDB_MODE", "disabled")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch

BETA, LR = 0.04, 1e-6
PROMPTS, G, TOKENS = 8, 8, 128  # the issue's batch; main() may set others (--prompts, --group, --tokens, --tiny)
MID = {"layers": 24, "width": 896, "ffn": 4864, "heads": 14, "kv_heads": 2}
TINY = {"layers": 2, "width": 64, "ffn": 128, "heads": 4, "kv_heads": 2}
ROWS = {
    "off": {"both": True, "checkpointing": False, "ours": []},
    "on": {"both": True, "checkpointing": True, "ours": []},
    "micro": {"both": False, "checkpointing": True, "ours": [("optim.micro_batch", "quarter")]},
    "compiled": {"both": False, "checkpointing": True, "ours": [("rollout.compiled_decode", "true")]},
}


def build_model(folder: Path, shape: dict) -> tuple[str, int]:
    """A random Qwen2 of the given shape and a BPE tokenizer trained on addition strings; (folder, parameters)."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1000, special_tokens=["<pad>", "<eos>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([f"{a}+{b}={a + b}" for a in range(100) for b in range(100)], trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>")
    fast.save_pretrained(folder)
    config = transformers.Qwen2Config(
        vocab_size=len(fast), hidden_size=shape["width"], intermediate_size=shape["ffn"],
        num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"], num_key_value_heads=shape["kv_heads"],
        max_position_embeddings=512, tie_word_embeddings=True, eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id, bos_token_id=None)
    torch.manual_seed(0)
    model = transformers.Qwen2ForCausalLM(config)
    model.save_pretrained(folder)
    return str(folder), sum(p.numel() for p in model.parameters())


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def rss_peak() -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM"))


def cpu_memory_tracks_tensors() -> None:
    """Make glibc hand every allocation of 64 kB or more straight to mmap and back on free, so that the
    resident set follows the live tensors (by default freed blocks up to 32 MB stay in the heap and a later
    peak reuses them unseen). Idempotent; a no-op where glibc's mallopt is missing."""
    import ctypes
    import ctypes.util

    with contextlib.suppress(OSError, AttributeError, TypeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.mallopt(-3, 64 * 1024)  # M_MMAP_THRESHOLD, fixed (no dynamic raise)
        libc.mallopt(-1, 64 * 1024)  # M_TRIM_THRESHOLD
        libc.malloc_trim(0)


@contextlib.contextmanager
def peak_memory(device: str, exact: bool = False):
    """Yields a dict that receives "peak": the most memory held at once inside the block less what was held
    before it. CUDA: torch.cuda.max_memory_allocated; CPU: the process's resident set (Linux: its high-water
    mark, reset through /proc/self/clear_refs), or None where that cannot be read; exact: first make the
    resident set follow the tensors (cpu_memory_tracks_tensors, for good: it slows every later allocation)."""
    out: dict = {}
    gc.collect()
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
    else:
        if exact:
            cpu_memory_tracks_tensors()
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            before = rss()
        except OSError:
            before = None
    try:
        yield out
    finally:
        if cuda:
            sync(device)
            out["peak"] = torch.cuda.max_memory_allocated() - before
        elif before is not None:
            out["peak"] = rss_peak() - before


def steady(ends: list[float], skip: int) -> float:
    """Steps per second between the end of step `skip` and the last step."""
    return (len(ends) - 1 - skip) / (ends[-1] - ends[skip])


def gen_share(spans: list[tuple[float, float]], ends: list[float], skip: int) -> float:
    """Share of the steady window's time spent in the spans (end time, seconds) that end inside it."""
    inside = sum(sec for end, sec in spans if ends[skip] < end <= ends[-1])
    return inside / (ends[-1] - ends[skip])


def ours(model: str, out: Path, steps: int, skip: int, device: str, checkpointing: bool, extra: list) -> dict:
    """One run of grpo_core; its figures."""
    import grpo_core.rollout as rollout_mod
    from collectors import load_run
    from grpo_core.config import build_config
    from grpo_core.train import train

    cfg = build_config(overrides=[
        ("model.kind", "hf"), ("model.hf_path", model), ("model.device", device), ("warm_start.enabled", "false"),
        ("out", str(out)), ("steps", str(steps)), ("eval_every", "0"), ("log.progress", "false"),
        ("rollout.prompts_per_step", str(PROMPTS)), ("rollout.group_size", str(G)),
        ("rollout.max_new_tokens", str(TOKENS)), ("algo.kl_mode", "loss"), ("algo.kl_coef", str(BETA)),
        ("optim.lr", str(LR)), ("model.autocast_bf16", str(device.startswith("cuda")).lower()),
        ("model.gradient_checkpointing", str(checkpointing).lower()), *extra])
    spans: list[tuple[float, float]] = []
    original = rollout_mod.sample

    def timed(*a, **k):
        t0 = time.perf_counter()
        result = original(*a, **k)
        sync(device)
        spans.append((time.time(), time.perf_counter() - t0))
        return result

    rollout_mod.sample = timed
    try:
        with peak_memory(device) as mem:
            train(cfg)
    finally:
        rollout_mod.sample = original
    m = load_run(out).metrics
    ends = m["wall_time"].tolist()
    rate = steady(ends, skip)
    tokens = float((m["completions/len_mean"].iloc[skip + 1:] * PROMPTS * G).mean())
    return {"steps_s": rate, "tokens_s": tokens * rate, "gen_share": gen_share(spans, ends, skip),
            "peak": mem.get("peak")}


def trl_run(model: str, out: Path, steps: int, skip: int, device: str, checkpointing: bool) -> dict:
    """One run of TRL's GRPOTrainer at its defaults but for the settings of the module docstring."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    ends: list[float] = []
    spans: list[tuple[float, float]] = []

    class StepEnds(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            ends.append(time.time())

    prompts = [f"{a}+{b}=" for a in range(10) for b in range(10)]
    args = GRPOConfig(output_dir=str(out), max_steps=steps, per_device_train_batch_size=PROMPTS * G,
                      num_generations=G, max_completion_length=TOKENS, num_iterations=1, beta=BETA,
                      learning_rate=LR, logging_steps=1, report_to=[], use_cpu=device == "cpu", save_strategy="no",
                      bf16=device.startswith("cuda"), gradient_checkpointing=checkpointing, disable_tqdm=True, seed=0)
    with peak_memory(device) as mem:
        trainer = GRPOTrainer(model=model, args=args, callbacks=[StepEnds()],
                              reward_funcs=lambda completions, answer, **kw: [float(c.strip() == a)
                                                                             for c, a in zip(completions, answer)],
                              train_dataset=Dataset.from_dict({"prompt": prompts,
                                                               "answer": [str(eval(p[:-1])) for p in prompts]}))
        generate = trainer._generate_single_turn

        def timed(*a, **k):
            t0 = time.perf_counter()
            result = generate(*a, **k)
            sync(device)
            spans.append((time.time(), time.perf_counter() - t0))
            return result

        trainer._generate_single_turn = timed
        trainer.train()
    lengths = [h["completions/mean_length"] for h in trainer.state.log_history if "completions/mean_length" in h]
    rate = steady(ends, skip)
    tokens = statistics.mean(lengths[skip + 1:] or lengths) * PROMPTS * G
    del trainer
    return {"steps_s": rate, "tokens_s": tokens * rate, "gen_share": gen_share(spans, ends, skip),
            "peak": mem.get("peak")}


def gib(x) -> str:
    return "-" if x is None else f"{x / 2**30:.2f} GiB"


def run_rows(model: str, a, runs: dict, save) -> None:
    """Run the rows, interleaved, into runs ({"row/side": [figures of each repeat]}), calling save() after
    each run so that a run cut short by a time limit leaves the others' figures on disk."""
    have_trl = True
    try:
        import trl  # noqa: F401
    except ImportError:
        have_trl = False
        print("TRL is not importable: only our rows are run (pip install trl)")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.repeats):
            for row in a.rows.split(","):
                spec = ROWS[row]
                if row == "compiled" and not a.device.startswith("cuda"):
                    print("row compiled: CUDA only, skipped")
                    continue
                for side in ("ours", "trl") if spec["both"] and have_trl else ("ours",):
                    t0 = time.perf_counter()
                    try:
                        if side == "ours":
                            extra = [(k, str(max(1, PROMPTS * G // 4)) if v == "quarter" else v)
                                     for k, v in spec["ours"]]
                            got = ours(model, Path(tmp) / f"ours-{row}-{r}", a.steps, a.skip, a.device,
                                       spec["checkpointing"], extra)
                        else:
                            got = trl_run(model, Path(tmp) / f"trl-{row}-{r}", a.steps, a.skip, a.device,
                                          spec["checkpointing"])
                    except Exception as e:  # noqa: BLE001 - one failing run (a compile) must not cost the others
                        got = {"error": f"{type(e).__name__}: {e}"}
                    got["seconds"] = time.perf_counter() - t0
                    runs.setdefault(f"{row}/{side}", []).append(got)
                    print(f"  repeat {r} {row} {side}: {got}", flush=True)
                    save()


def summary(runs: dict, params: int, a) -> list[dict]:
    """Print the table: the median of each figure over a row's repeats, and our steps/s over TRL's."""
    print(f"\n{params / 1e6:.1f} M parameters, {PROMPTS} prompts x G={G}, {TOKENS} new tokens, beta {BETA}, "
          f"{a.steps} steps a run (rates from step {a.skip} on), median of {a.repeats}, device {a.device}")
    print(f"{'row':>9} {'side':>5} | {'steps/s':>8} {'tokens/s':>9} {'gen share':>9} {'peak memory':>12} | ours/TRL")
    out, rates = [], {}
    for key, got in runs.items():
        row, side = key.split("/")
        good = [g for g in got if "error" not in g]
        if not good:
            print(f"{row:>9} {side:>5} | failed: {got[0]['error']}")
            continue
        med = {k: statistics.median(g[k] for g in good) if good[0][k] is not None else None
               for k in ("steps_s", "tokens_s", "gen_share", "peak")}
        rates[key] = med["steps_s"]
        ratio = f"{rates[row + '/ours'] / med['steps_s']:.2f}x steps/s" if side == "trl" and row + "/ours" in rates \
            else ""
        print(f"{row:>9} {side:>5} | {med['steps_s']:>8.3f} {med['tokens_s']:>9.0f} {med['gen_share']:>9.2f} "
              f"{gib(med['peak']):>12} | {ratio}", flush=True)
        out.append({"row": row, "side": side, **med})
    return out


# --- the log-prob memory line ---------------------------------------------------------------------

def plain_logprobs(logits: torch.Tensor, targets: torch.Tensor):
    """What token_logprobs computed before issue 26: the whole batch's fp32 log-softmax at once."""
    n = targets.shape[1]
    logp_all = torch.nn.functional.log_softmax(logits[:, -n - 1:-1].float(), dim=-1)
    logp = logp_all.gather(-1, targets[..., None]).squeeze(-1)
    return logp, -(logp_all.exp() * logp_all).sum(-1)


def logprob_pass(kind: str, B: int, n: int, V: int, device: str, dtype: torch.dtype) -> int | None:
    """Peak memory (bytes) of one log-prob + entropy forward and backward over random [B, n + 1, V] logits,
    above the logits themselves (the logits' gradient, the same size, is part of it on both sides)."""
    from grpo_core.policy import LOGIT_BLOCK, BlockwiseLogprobs

    def one_pass(logits, targets):
        if kind == "plain":
            logp, _ = plain_logprobs(logits, targets)
        else:
            logp, _ = BlockwiseLogprobs.apply(logits, targets, 1.0, True, LOGIT_BLOCK)
        logp.sum().backward()

    one_pass(torch.randn(1, 3, 10, device=device, requires_grad=True),  # torch's first-use buffers, not counted
             torch.zeros(1, 2, dtype=torch.long, device=device))
    torch.manual_seed(0)
    logits = torch.randn(B, n + 1, V, device=device, dtype=dtype).requires_grad_(True)
    targets = torch.randint(0, V, (B, n), device=device)
    with peak_memory(device, exact=True) as mem:
        one_pass(logits, targets)
    del logits
    return mem.get("peak")


def logprob_memory(device: str, B: int, n: int, V: int) -> dict:
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    peaks = {kind: logprob_pass(kind, B, n, V, device, dtype) for kind in ("plain", "blockwise")}
    size = B * (n + 1) * V * (2 if dtype == torch.bfloat16 else 4)
    ratio = (f" ({peaks['plain'] / peaks['blockwise']:.1f}x less)"
             if peaks["plain"] is not None and peaks["blockwise"] and peaks["blockwise"] > 2**20 else "")
    print(f"\nlog-probs + entropy, forward and backward, logits [{B}, {n + 1}, {V}] {str(dtype)[6:]} "
          f"({gib(size)}) on {device}: peak above the logits, plain {gib(peaks['plain'])}, blockwise "
          f"{gib(peaks['blockwise'])}{ratio}", flush=True)
    return {"shape": [B, n + 1, V], "dtype": str(dtype), **peaks}


def update_memory(model: str, device: str) -> list[dict]:
    """Peak memory of one optimizer step of grpo_core (the update's forwards and backwards, the gradient, the
    AdamW step; a step before it allocated AdamW's state) on a made-up rollout of PROMPTS x G completions of
    TOKENS tokens each, for checkpointing off/on x optim.micro_batch 0 / a quarter of the batch."""
    from grpo_core.config import build_config
    from grpo_core.rollout import Rollout
    from grpo_core.train import optimizer_step, prepare, setup

    out = []
    quarter = max(1, PROMPTS * G // 4)
    for checkpointing, micro in [(False, 0), (True, 0), (False, quarter), (True, quarter)]:
        cfg = build_config(overrides=[
            ("model.kind", "hf"), ("model.hf_path", model), ("model.device", device), ("warm_start.enabled", "false"),
            ("rollout.prompts_per_step", str(PROMPTS)), ("rollout.group_size", str(G)),
            ("rollout.max_new_tokens", str(TOKENS)), ("algo.kl_mode", "loss"), ("algo.kl_coef", str(BETA)),
            ("model.autocast_bf16", str(device.startswith("cuda")).lower()),
            ("model.gradient_checkpointing", str(checkpointing).lower()), ("optim.micro_batch", str(micro))])
        tr = setup(cfg)
        B, V = PROMPTS * G, tr.net.model.get_input_embeddings().num_embeddings
        gen = torch.Generator().manual_seed(0)
        prompt = torch.randint(2, V, (B, 6), generator=gen)
        ids = torch.cat([prompt, torch.randint(2, V, (B, TOKENS), generator=gen)], 1).to(tr.device)
        mask = torch.ones_like(ids, dtype=torch.bool)
        rewards = torch.randint(0, 2, (B,), generator=gen).float()
        host = {"reward": rewards.tolist(), "passed": (rewards > 0).tolist(), "num_tokens": [TOKENS] * B,
                "truncated": [True] * B}
        ro = Rollout(ids=ids, mask=mask, completion_mask=mask[:, -TOKENS:], rollout_logp=torch.zeros(B, TOKENS,
                     device=tr.device), rewards=rewards.to(tr.device), passed=(rewards > 0).to(tr.device),
                     lengths=torch.full((B,), TOKENS, device=tr.device), truncated=torch.ones(B, dtype=torch.bool,
                     device=tr.device), problems=tr.task.sample(tr.rng, PROMPTS), texts=[""] * B, group_size=G,
                     host=host)
        batch, *_ = prepare(tr, ro)
        rows = torch.arange(len(batch.ids))
        optimizer_step(tr, batch, rows, first=True, step=0)  # AdamW's state exists from here on
        with peak_memory(device, exact=True) as mem:
            optimizer_step(tr, batch, rows, first=False, step=1)
        out.append({"checkpointing": checkpointing, "micro_batch": micro, "peak": mem.get("peak")})
        del tr, batch, ro
    print(f"\none optimizer step of ours, {PROMPTS * G} completions of {TOKENS} tokens, peak memory above what "
          f"was held before it: " + ", ".join(f"checkpointing {'on' if r['checkpointing'] else 'off'} micro_batch "
                                              f"{r['micro_batch']} {gib(r['peak'])}" for r in out), flush=True)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--skip", type=int, default=3, help="steps left out of the rates (warm-up)")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--rows", default="off,on,micro,compiled", help=f"comma-separated, of {', '.join(ROWS)}")
    p.add_argument("--device", default="cuda")
    p.add_argument("--prompts", type=int, default=0, help="prompts per step (default 8; --tiny 2)")
    p.add_argument("--group", type=int, default=0, help="G, completions per prompt (default 8; --tiny 4)")
    p.add_argument("--tokens", type=int, default=0, help="new tokens per completion (default 128; --tiny 16)")
    p.add_argument("--tiny", action="store_true", help="a 2-layer model of width 64 and a small batch: the CPU "
                                                       "check that it runs")
    p.add_argument("--lp-shape", default="", help="B,N,V of the log-prob memory line (default 16,128,151936; "
                                                   "--tiny 4,128,151936)")
    p.add_argument("--json", default="", help="also write every figure to this file")
    a = p.parse_args()
    global PROMPTS, G, TOKENS
    PROMPTS, G, TOKENS = (a.prompts or (2 if a.tiny else 8), a.group or (4 if a.tiny else 8),
                          a.tokens or (16 if a.tiny else 128))
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("gpu_vs_trl: no CUDA device is visible; run it on a GPU machine, or --tiny --device cpu to check it")
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name(0) if a.device.startswith('cuda') else 'cpu'}")
    result: dict = {"args": vars(a), "runs": {}}

    def save() -> None:
        if a.json:
            Path(a.json).write_text(json.dumps(result, indent=1, default=str))

    shape = a.lp_shape or ("4,128,151936" if a.tiny else "16,128,151936")
    with tempfile.TemporaryDirectory() as tmp:
        model, params = build_model(Path(tmp) / "model", TINY if a.tiny else MID)
        result["parameters"] = params
        print(f"model: random Qwen2, {params / 1e6:.1f} M parameters", flush=True)

        def memory_lines() -> None:
            result["logprob_memory"] = logprob_memory(a.device, *map(int, shape.split(",")))
            result["update_memory"] = update_memory(model, a.device)
            save()

        # on CUDA first, so that a time limit cuts the runs, not these; on CPU last, as they slow allocations
        if a.device.startswith("cuda"):
            memory_lines()
        run_rows(model, a, result["runs"], save)
        if not a.device.startswith("cuda"):
            memory_lines()
    result["table"] = summary(result["runs"], params, a)
    save()

if __name__ == "__main__":
    main()

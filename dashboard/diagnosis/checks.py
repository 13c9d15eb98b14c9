"""The checks to make first, per symptom, in the order of the notes' table (section 7), each with a short
"how to check" pointing at a chart, a filter of the samples, or a config field. Data, not logic."""

from __future__ import annotations

from dashboard.diagnosis.findings import Check, Link


def chart(metric: str) -> Link:
    return Link("checklist", {"metric": metric})


def samples(filter_key: str, step: int | None = None) -> Link:
    return Link("samples", {"filter": filter_key} | ({"step": step} if step is not None else {}))


def config(key: str) -> Link:
    return Link("config", {"key": key})


ZERO_VARIANCE = Check("the fraction of zero-variance groups",
                      "a group whose responses all score the same has advantage 0 and teaches nothing; "
                      "look at the zero-variance chart and its all-pass / all-fail split",
                      chart("groups/zero_std_frac"))
DIFFICULTY = Check("the task difficulty",
                   "mostly all-fail groups mean the task is too hard for the model, mostly all-pass too easy; "
                   "open the all-fail groups and read what the model answers",
                   samples("all_fail"))
TEMPERATURE = Check("the sampling temperature",
                    "a temperature well below 1 makes a group's responses alike, so their rewards are equal",
                    config("rollout.temperature"))
HARDER_PROMPTS = Check("harder prompts", "groups the model always solves teach nothing: filter solved prompts "
                       "out, add harder ones, or raise the difficulty (a curriculum); this is saturation, not a bug",
                       samples("all_pass"))
VERIFIER = Check("the verifier",
                 "read responses with reward 0: if some are right, the verifier rejects correct answers "
                 "(answer field, whitespace, format, extraction)",
                 samples("zero_reward"))

REWARD_HACKING = Check("reward hacking",
                       "read the highest-reward training responses: do they earn the reward without solving the task?",
                       samples("highest_reward"))
LENGTH_FORMAT = Check("length and format",
                      "compare completion length and truncation over time with the eval drop; read the longest "
                      "responses", samples("longest"))
MEMORISING = Check("memorising the training set",
                   "compare train and eval pass rate on the same chart; a gap that widens means the prompts, "
                   "not the skill, are learned", chart("eval/pass_rate"))

LR = Check("the learning rate", "a learning rate too large moves the policy far in one step; compare optim/lr "
           "and grad norm with a healthy run", config("optim.lr"))
EPOCHS = Check("epochs and minibatches per rollout",
               "every reuse of a rollout makes it staler; clip fraction grows with each reuse",
               config("algo.epochs"))
OLD_LOGPROB_PRECISION = Check("the old log-prob precision",
                              "old log-probs from a bf16/fp16 rollout engine while training in fp32 make the "
                              "first-step ratio differ from 1", chart("policy/ratio_first_step"))
STALENESS = Check("rollout staleness", "how many optimizer steps old is the policy that sampled the batch?",
                  config("algo.old_logprob_source"))

EXPLORATION = Check("too little exploration", "entropy falling fast means the policy stops trying alternatives; "
                    "check temperature, clip-higher and the KL coefficient", chart("policy/entropy"))
DIVERSITY = Check("in-group diversity", "read a few groups: are the responses of one prompt nearly identical?",
                  samples("zero_variance"))
REWARD_SCALE = Check("the reward scale", "a large or unnormalised reward makes a few updates dominate; "
                     "look at reward min/max and advantage std", chart("reward/mean"))

MASK = Check("the completion mask", "the loss must cover the response tokens only, not the prompt or padding; "
             "compare response lengths with the tokens the loss sees", chart("completions/len_mean"))
SIGN = Check("the sign", "a positive advantage must raise the response's log-prob: loss = -A * ratio; "
             "reward that falls while the loss looks fine is the classic sign flip", chart("reward/mean"))
DETACHED = Check("a detached advantage or policy term", "grad norm near 0 with non-zero advantages means the "
                 "gradient does not reach the policy", chart("optim/grad_norm"))
SAME_SCORE = Check("whole groups with the same score", "if every group is zero-variance, advantages are all 0",
                   chart("groups/zero_std_frac"))

FIRST_STEP = (OLD_LOGPROB_PRECISION,
              Check("serving vs training numerics", "compare log-probs of the same tokens from the rollout engine "
                    "and the trainer (policy/rollout_logprob_abs_diff)", chart("policy/rollout_logprob_abs_diff")),
              Check("that old log-probs belong to the policy that sampled", "a stale or shuffled old log-prob "
                    "tensor (wrong order, wrong padding) also moves the ratio", config("algo.old_logprob_source")))

GROUP_SIZE = Check("the group size", "with G < 4 a group's mean and std rest on a couple of rewards; one outlier "
                   "decides the update", config("rollout.group_size"))
LENGTH_AGG = Check("the loss aggregation", "per-token versus per-sequence averaging changes the weight of long "
                   "answers (notes, section 5)", config("algo.loss_agg"))
MAX_TOKENS = Check("the length limit", "truncated responses usually score 0; raise max new tokens or penalise "
                   "overlong answers explicitly", config("rollout.max_new_tokens"))
# huggingface/trl#7039, huggingface/open-r1#363: completions that never end (clipped ratio ~1, terminated length 0)
# come first from a stop token the model never emits (the chat template's end token differs from the generation's
# eos_token_id), then from a cap far below the answers' length
STOP_TOKEN = Check("the stop token", "generation stops only at the eos/stop token id it is given: decode the last "
                   "tokens of a few completions and compare the token the model ends its answers with (its chat "
                   "template's end token) with the tokenizer's and the generation config's eos_token_id; a cap far "
                   "below the answers' length looks the same", config("rollout.max_new_tokens"))
# modelscope/ms-swift#8123, huggingface/trl#5775: a reward function that returns None or NaN for some responses
REWARD_RETURNS = Check("the reward functions' return values", "call each reward function on a few logged "
                       "completions and look for None or NaN (a parse error, a failed API call, an empty answer): "
                       "one in a group makes its advantages NaN, the loss 0 and the gradient NaN", chart("reward/mean"))
# huggingface/trl#6789: top_p / top_k below their "off" values bias the rollout-vs-training ratio
SAMPLING_TRUNCATION = Check("the sampling truncation", "top_p below 1 or a top_k makes the engine sample, and "
                            "report log-probs, from a cut distribution the trainer does not use; rerun a few steps "
                            "with top_p 1 and top_k off and compare the gap", config("rollout.top_p"))
# huggingface/trl#5312 (and #5313, #4571): vLLM's sleep level 2 drops the weights; waking it without a fresh sync
# (or a reload_weights that overwrites the synced ones) leaves the engine sampling from other weights
WEIGHT_SYNC = Check("the weight sync to the inference engine", "after each sync (and after every wake-up from "
                    "sleep) the engine must hold the trainer's weights: generate a few tokens from both and compare "
                    "log-probs; with vLLM sleep mode, check that the weights are synced after the wake-up, not "
                    "reloaded from disk", chart("policy/rollout_logprob_abs_diff"))
# THUDM/slime#1695 (a jump at a resume), #1761 (a resumed scheduler advanced twice)
RESUME_STATE = Check("the optimizer and scheduler state of the resumed checkpoint", "a resume must restore the "
                     "optimizer's moments, the learning-rate schedule's position and the data order with the "
                     "weights: compare optim/lr and the grad norm on both sides of the resume, and load the "
                     "checkpoint's weights in the engine before its first rollout", chart("optim/lr"))
NON_FINITE = Check("where the first NaN/inf appears", "look at grad norm, loss and KL just before it; lower the LR, "
                   "check for log(0) in the KL estimator or a division by a zero std", chart("loss/total"))

REWARD_FLAT = (ZERO_VARIANCE, DIFFICULTY, TEMPERATURE, VERIFIER)
EVAL_DIVERGES = (REWARD_HACKING, LENGTH_FORMAT, MEMORISING)
KL_CLIP = (LR, EPOCHS, OLD_LOGPROB_PRECISION, STALENESS)
ENTROPY = (EXPLORATION, DIVERSITY, REWARD_SCALE)
NO_LEARNING = (MASK, SIGN, DETACHED, SAME_SCORE)

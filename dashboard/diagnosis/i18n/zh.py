"""The Chinese texts of the diagnosis, in the terms of the notes' original (`grpo-notes.zh.txt`).

The notes keep the field's English terms where practitioners say them in English (reward, advantage, ratio,
group, rollout, verifier, old log-prob, clip fraction, entropy, epochs) and write the rest in Chinese; so do
these texts. Their section 7 table gives the words of the symptoms and of the checks (全组同分, 任务难度,
采样温度, 训练集记忆, 探索不足, 组内多样性, ...), section 8 those of the checklist (参考 KL, 第一步 ratio).

Keys are stable ids: rule ids (registry.RULES), check ids (findings.Check.id), question numbers (1-5),
label keys (en.LABELS). A finding's title carries numbers, so titles are matched by pattern per rule: the
English title's pattern and the Chinese template its groups fill in.
"""

from __future__ import annotations

SYMPTOMS: dict[str, str] = {
    "reward_flat": "reward 不动",
    "reward_constant": "整个训练的 reward 恒定不变",
    "sparse_reward": "二元 reward 过于稀疏（pass rate 接近 0 或 1）",
    "zero_variance_groups": "组内同分（zero-variance group）占多数",
    "small_group": "group 太小：单个异常 reward 支配更新",
    "first_step_ratio": "第一步 ratio 偏离 1（old log-prob 或精度不一致）",
    "kl_clip_explode": "KL/clip fraction 暴涨",
    "entropy_collapse": "entropy 快速塌缩",
    "low_diversity": "entropy 低 / 采样温度低：组内多样性不足",
    "no_learning": "loss 看似正常但不学习",
    "eval_diverges": "reward 升但 eval 降",
    "length_drift": "长度效应：截断增多、长度漂移",
    "non_finite": "指标中出现 NaN 或 inf",
    "lr_ends_early": "学习率调度在训练结束之前就结束了",
    "split_groups": "同一个 prompt 分在不同的 group id 下",
    "config_batch_arithmetic": "配置里的 batch 大小除不尽",
    "verifier_suspect": "reward 为 0 的回答看起来是对的：检查 verifier",
    "config_kl_twice": "KL 既并入 reward 又加在 loss 上",
    "config_small_group_adv": "G < 4 仍按组除标准差",
    "config_many_reuses": "每批 rollout 上的 optimizer step 过多",
    "reference_mismatch": "第一步的参考 KL 就远离 0",
    "truncation": "大量 completion 在长度上限处被截断",
    "resume_jump": "断点续训不平滑：续训处出现跳变",
}

# rule id -> ((English title as a full-match regex, Chinese template filled with the named groups), ...)
TITLES: dict[str, tuple[tuple[str, str], ...]] = {
    "reward_flat": ((r"Reward does not move \(stays near (?P<v>.+)\)", "reward 不动（停在 {v} 附近）"),
                    (r"Reward pinned at (?P<v>.+)", "reward 钉死在 {v}")),
    "config_batch_arithmetic": ((r"Batch sizes in the config do not divide", "配置里的 batch 大小除不尽"),),
    "split_groups": ((r"The same prompt under different group ids", "同一个 prompt 分在不同的 group id 下"),),
    "lr_ends_early": ((r"The learning rate reaches 0 at step (?P<s>\S+), before the run ends", "学习率在第 {s} 步降到 0，早于训练结束"),),
    "reward_constant": ((r"Reward is constant \((?P<v>.+)\) over the whole run", "整个训练的 reward 恒为 {v}"),),
    "sparse_reward": ((r"Pass rate (?P<side>.+?): the task looks (?P<what>.+)", "pass rate {side}：任务看来{what}"),),
    "zero_variance_groups": (
        (r"Zero-variance groups dominate \(mostly (?P<top>.+)\)", "全组同分的 group 占多数（多为{top}）"),
        (r"Zero-variance groups dominate \(both all-pass and all-fail\)", "全组同分的 group 占多数（全对、全错都有）"),
        (r"Zero-variance groups dominate", "全组同分的 group 占多数"),
        (r"Zero-variance groups from solved prompts: the task saturates", "全组同分来自已解出的 prompt：任务饱和了")),
    "resume_jump": ((r"The run jumps at its resume \(step (?P<s>\S+)\): the resume is not seamless",
                     "训练在续训处（第 {s} 步）出现跳变：断点续训不平滑"),),
    "small_group": ((r"Group too small \(G = (?P<g>.+)\)", "group 太小（G = {g}）"),),
    "first_step_ratio": (
        (r"First-step ratio is not 1: the clip fraction is not 0 on on-policy steps",
         "第一步 ratio 不为 1：on-policy 的 step 上 clip fraction 不为 0"),
        (r"First-step ratio is not 1: the first step moves far more than its warm-up learning rate can",
         "第一步 ratio 不为 1：第一步的变化远超 warm-up 学习率所能带来的幅度（old log-prob 与训练端不一致）"),
        (r"First-step ratio is not 1.*", "第一步 ratio 不为 1：old log-prob 与训练端不一致"),
        (r"The rollout engine's log-probs are far from the trainer's", "rollout engine 的 log-prob 与训练端相差很大"),
        (r"The rollout engine's log-probs jump away from the trainer's and stay: the engine samples from other weights",
         "rollout engine 的 log-prob 突然偏离训练端并一直保持：引擎在用别的权重采样")),
    "kl_clip_explode": ((r"KL / clip fraction explode", "KL/clip fraction 暴涨"),
                        (r"KL jumps far above its own level", "KL 跳到远高于自身水平的位置"),
                        (r"KL to the reference climbs far from it", "相对 reference 的 KL 一路攀升，远离起点"),
                        (r"KL to the reference climbs far from it while the reward keeps rising",
                         "相对 reference 的 KL 一路攀升，远离起点，但 reward 仍在上升"),
                        (r"KL / clip fraction explode while the reward keeps rising", "KL/clip fraction 暴涨，但 reward 仍在上升"),
                        (r"KL jumps far above its own level while the reward keeps rising",
                         "KL 跳到远高于自身水平的位置，但 reward 仍在上升")),
    "entropy_collapse": ((r"Entropy collapses fast", "entropy 快速塌缩"),
                         (r"Entropy declined slowly below half its early level", "entropy 缓慢降到早期水平的一半以下"),
                         (r"Entropy falls while the reward climbs", "entropy 下降，同时 reward 在上升")),
    "low_diversity": ((r"Little in-group diversity.*", "组内多样性不足（采样温度或 entropy 过低）"),),
    "no_learning": ((r"Nothing is learned: the gradient does not reach the policy", "不学习：梯度没有传到 policy"),
                    (r"Nothing is learned: the policy does not move", "不学习：policy 没有变化"),
                    (r"Reward falls.*", "reward 下降：更新方向可能反了")),
    "eval_diverges": ((r"Train reward rises but eval falls", "训练 reward 升但 eval 降"),),
    "length_drift": ((r"Completion length drifts", "completion 长度漂移"),),
    "non_finite": ((r"NaN/inf in (?P<n>\d+) metric\(s\) from step (?P<s>-?\d+)",
                    "{n} 个指标出现 NaN/inf（从第 {s} 步起）"),),
    "verifier_suspect": ((r"Reward-0 responses look correct.*", "reward 为 0 的回答看起来是对的：verifier 可能把正确答案判错"),),
    "config_kl_twice": ((r"KL is applied twice.*", "KL 用了两次（既并入 reward 又加在 loss 上）"),),
    "config_small_group_adv": ((r"Per-group std normalisation with a group of fewer than 4",
                                "group 不足 4 条却按组除标准差"),),
    "config_many_reuses": ((r"Each rollout is reused (?P<n>.+) times", "每批 rollout 被重复使用 {n} 次"),),
    "truncation": ((r"Completions are pinned at the length cap", "completion 长度顶在上限"),
                   (r"Many completions are cut at the length cap", "许多 completion 在长度上限处被截断")),
    "reference_mismatch": ((r"The reference is not the starting policy \(KL high at step (?P<s>.+)\)",
                            "参考模型不是训练起点的 policy（第 {s} 步参考 KL 就很高）"),),
}

# The one-line verdict (verdict.py): its kinds, and its reasons when they are not a finding's title (those are
# translated as that finding's title). A group named `how` is itself translated by these patterns.
VERDICTS: dict[str, str] = {"healthy": "健康", "not_learning": "不学习", "unstable": "不稳定",
                            "cant_judge": "还无法判断"}
VERDICT_REASONS: tuple[tuple[str, str], ...] = (
    (r"the run has no metric rows yet", "这次训练还没有任何指标行"),
    (r"not diagnosed", "尚未诊断"),
    (r"no reward is logged \((?P<n>.+) logged steps\): whether it learns is unknown",
     "没有记录 reward（已记录 {n} 步）：无法判断是否在学习"),
    (r"only (?P<p>.+) logged step\(s\) with a reward; the trend tests need (?P<m>.+)",
     "只有 {p} 步记录了 reward；趋势检验至少需要 {m} 步"),
    (r"the reward rises: (?P<how>.+); (?P<w>\d+) warning\(s\) to read", "reward 在上升：{how}；另有 {w} 条警告值得一读"),
    (r"the reward rises: (?P<how>.+)", "reward 在上升：{how}"),
    (r"no finding says otherwise: (?P<how>.+); (?P<w>\d+) warning\(s\) to read",
     "没有发现说明有问题：{how}；另有 {w} 条警告值得一读"),
    (r"no finding says otherwise: (?P<how>.+)", "没有发现说明有问题：{how}"),
    ((r"reward (?P<x>\S+) at steps? (?P<a>[^ ]+) -> (?P<y>\S+) at steps? (?P<b>[^ ]+) "
      r"\(trimmed window means; Mann-Kendall p = (?P<p>\S+)\)"),
     "reward 从第 {a} 步的 {x} 到第 {b} 步的 {y}（各为窗口的截尾均值；Mann-Kendall p = {p}）"),
    ((r"(?P<n>\d+) logged steps with a reward show no trend, but their change \((?P<lo>\S+) \.\. (?P<hi>\S+), "
      r"95% interval\) still holds a rise that would count as learning: too early to tell whether it moves"),
     "记录了 reward 的 {n} 步还看不出趋势，但其变化（95% 区间 {lo} .. {hi}）仍包含一个足以算作在学习的上升：判断 reward 动不动还为时过早"),
    (r"no trend test", "没有做趋势检验"),
    (r"almost every group tied over most of the run; the reward rises on the few updates with a signal",
     "几乎每个组在大部分训练中得分都相同（零方差组）；reward 的上升只来自少数仍有学习信号的更新"),
)

# Words an English title carries in a pattern's group, e.g. "(mostly all-fail)"; others pass as they are.
WORDS: dict[str, str] = {
    # kl.py's unsaid(): what a missing config leaves unknown of a KL
    "whether a KL term holds the policy nor the sampling temperature its log-probs are computed at":
        "是否有 KL 项把 policy 拉住，也没有说明计算 log-prob 所用的采样温度",
    "whether a KL term holds the policy": "是否有 KL 项把 policy 拉住",
    "the sampling temperature its log-probs are computed at": "计算 log-prob 所用的采样温度",
    "all-fail": "全错", "all-pass": "全对", "near 0": "接近 0", "near 1": "接近 1",
                         "bottom": "底部", "top": "顶部", "zero-variance groups": "全组同分的 group",
                         "all-fail groups": "全错的 group", "all-pass groups": "全对的 group",
                         "too hard, or the verifier rejects right answers": "过难，或 verifier 把正确答案判错",
                         "too easy": "过易",
                         # consequences.ROOT_WORDS: (what happened at step s, what to check first); a space before a Latin word
                         "the entropy collapsed": " entropy 塌缩", "the collapse": " entropy 塌缩",
                         "the groups tied": " group 全组同分", "the tied groups": "全组同分的 group"}

# check id -> (what, how)
CHECKS: dict[str, tuple[str, str]] = {
    "fraction_of_zero_variance_groups": (
        "zero-variance group 比例",
        "全组同分的 group advantage 为 0，学不到任何东西；看 zero-variance 曲线，以及其中全对 / 全错的拆分"),
    "task_difficulty": (
        "任务难度",
        "全错的 group 居多说明任务对模型过难，全对居多则过易；打开全错的 group，读模型到底答了什么"),
    "harder_prompts": (
        "更难的 prompt",
        ("模型每次都答对的 group 学不到东西：滤掉已解出的 prompt、加入更难的，或提高难度（curriculum）；"
         "这是饱和，不是 bug")),
    "sampling_temperature": ("采样温度", "温度远低于 1 时同组回答彼此相似，reward 也就相同"),
    "verifier": (
        "verifier",
        "读 reward 为 0 的回答：若有答对的，就是 verifier 拒绝了正确答案（答案字段、空白、格式、答案抽取）"),
    "reward_hacking": ("reward hacking", "读训练中 reward 最高的回答：它们是不是没有解题就拿到了 reward？"),
    "length_and_format": ("长度/格式", "把 completion 长度与截断随时间的变化和 eval 的下降对照；读最长的回答"),
    "memorising_the_training_set": (
        "训练集记忆",
        "在同一张图上比较训练与 eval 的 pass rate；差距越拉越大，说明记住的是 prompt，而不是学会了能力"),
    "learning_rate": ("LR", "LR 过大时一步就把 policy 推得很远；把 optim/lr 和 grad norm 与健康的训练对照"),
    "epochs_and_minibatches_per_rollout": (
        "每批 rollout 的 epochs 与 minibatch 数", "rollout 每复用一次就更 stale 一些；clip fraction 随每次复用上升"),
    "old_log_prob_precision": (
        "old log-prob 精度", "rollout engine 用 bf16/fp16 存下的 old log-prob 配上 fp32 训练，第一步 ratio 就会偏离 1"),
    "rollout_staleness": ("rollout staleness", "采出这批数据的 policy 落后了几个 optimizer step？"),
    "too_little_exploration": (
        "探索不足", "entropy 快速下降说明 policy 不再尝试别的回答；检查采样温度、clip-higher 与 KL 系数"),
    "in_group_diversity": ("组内多样性", "读几个 group：同一 prompt 的回答是不是几乎一模一样？"),
    "reward_scale": (
        "reward scale", "reward 过大或未归一化时，少数几次更新就会主导训练；看 reward 的 min/max 和 advantage 的 std"),
    "completion_mask": (
        "completion mask", "loss 只应覆盖回答的 token，不含 prompt 和 padding；把回答长度与 loss 实际看到的 token 数对照"),
    "sign": (
        "sign",
        "positive advantage 必须提高该回答的 log-prob：loss = -A * ratio；loss 看似正常而 reward 下降，是典型的符号反了"),
    "detached_advantage_or_policy_term": (
        "detached advantage 或 policy 项", "advantage 不为 0 而 grad norm 接近 0，说明梯度没有传到 policy"),
    "whole_groups_with_the_same_score": ("全组同分", "若每个 group 都是 zero-variance，advantage 全为 0"),
    "group_size": ("group 大小", "G < 4 时一组的 mean/std 只靠两三个 reward，单个异常 reward 就决定了更新"),
    "loss_aggregation": ("loss 聚合方式", "按 token 还是按 sequence 平均，会改变长回答的权重（笔记第 5 节）"),
    "scheduler_s_total_steps": (
        "调度器的总步数",
        ("把调度器的总步数（max_steps、num_train_epochs x 每个 epoch 的步数、"
         "total_training_steps）与训练实际走的步数对比；每批 rollout 做多个 optimizer step 或用梯度累积时，"
         "两者数的不是同一种步")),
    "reward_functions_return_values": (
        "reward 函数的返回值",
        ("在几条记录下来的 completion 上逐个调用 reward 函数，看有没有空值（None）或 NaN"
         "（解析出错、接口调用失败、空回答）：一个 group 里只要有一个，它的 advantage 就成了 NaN，"
         "loss 为 0，梯度为 NaN")),
    "batch_sizes": (
        "batch 大小",
        ("手算一遍：每张显卡每个 optimizer step 的回答数（小批量 x 每个 prompt 的回答数 / 显卡数）除以 "
         "微批量，必须是不小于 1 的整数；一次生成的 batch 必须覆盖整数个 optimizer step")),
    "weight_sync_to_the_inference_engine": (
        "向推理引擎同步权重",
        ("每次同步之后（以及每次从休眠中唤醒之后），引擎里必须是训练端的权重：让两边对同几个 token 算 log-prob 并比较；"
         "用 vLLM 的休眠模式时，检查唤醒之后权重是重新同步的，而不是从磁盘重新加载的")),
    "optimizer_and_scheduler_state_of_the_resumed_checkpoint": (
        "续训 checkpoint 的 optimizer 与 scheduler 状态",
        ("续训必须连同权重一起恢复 optimizer 的动量、学习率调度所处的位置和数据顺序：对比续训前后的 optim/lr 和 grad norm，"
         "并在第一次 rollout 之前把 checkpoint 的权重载入推理引擎")),
    "sampling_truncation": (
        "采样截断",
        ("top_p 小于 1 或设了 top_k 时，引擎从截断后的分布采样并报告其 log-prob，而训练端用的是完整 softmax；"
         "用 top_p 1、关掉 top_k 跑几步，对比差距")),
    "group_ids": (
        "group 编号",
        ("把回答分组的编号必须是 prompt 的编号（每个 prompt 一个，复制给它的每次重复）；打印某一步的编号和 "
         "prompt，检查同一 prompt 的回答是否共用一个编号")),
    "stop_token": (
        "停止 token",
        ("生成只在给定的 eos/stop token 编号处停止：解码几条 completion 的最后几个 token，把模型结束回答时用的 "
         "token（其对话模板的结束 token）与分词器和生成配置里的 eos_token_id 对比；长度上限远低于回答长度时看起来也一样")),
    "length_limit": ("长度上限", "被截断的回答通常得 0 分；调高 max_new_tokens，或对超长回答显式惩罚"),
    "where_the_first_nan_inf_appears": (
        "第一个 NaN/inf 出现在哪里",
        "看它之前的 grad norm、loss 和 KL；降低 LR，检查 KL estimator 里有没有 log(0)，或除以为零的 std"),
    "serving_vs_training_numerics": (
        "推理引擎与训练端的数值",
        "比较 rollout engine 与训练端对同一批 token 算出的 log-prob（policy/rollout_logprob_abs_diff）"),
    "old_log_probs_belong_to_the_policy_that_sampled": (
        "old log-prob 是否属于采样时的 policy", "old log-prob 张量过时或被打乱（顺序错、padding 错）也会让 ratio 偏离 1"),
    "where_the_kl_goes": ("KL 加在哪里", "二选一：KL penalty 并入 reward，或 KL 项加在 loss 上（笔记第 6 节第 4 问）"),
    "reward_function_s_inputs": (
        "reward 函数的输入", "打印 verifier 对一条回答收到的内容：completion 文本、答案字段及它们的类型"),
    "reference_model": (
        "参考模型",
        ("参考模型是不是训练起点的那个 checkpoint？在 base model 上训练的 adapter 却以 base 为参考，或用错了 "
         "checkpoint，一开始就离参考很远；这时 KL 项把 policy 拉向另一个模型")),
}

# The notes' section 6, verbatim.
QUESTIONS: dict[int, str] = {
    1: "advantage 是按 prompt group、整个 batch，还是不除标准差？",
    2: "ratio 是逐 token 还是 sequence-level？loss 先 token 平均还是 response 平均？",
    3: "rollout engine 保存的 old log-prob 是否与训练端一致？",
    4: "KL 在 objective 外直接加、并入 reward，还是完全不用？",
    5: "多次 epoch 后 rollout 有多 stale？",
}

LABELS: dict[str, str] = {
    "critical": "严重",
    "warning": "警告",
    "info": "提示",
    "symptom": "现象",
    "evidence": "证据",
    "check_first": "优先检查",
    "example": "例子",
    "examples_heading": "**样本中的例子**（模型输出，按纯文本显示）",
    "steps_range": "第 {a}-{b} 步",
    "step_one": "第 {a} 步",
    "whole_run": "整个训练",
    "onset": "始于第 {s} 步",
    "how_sure": "把握",
    "conf_high": "高",
    "conf_medium": "中",
    "conf_low": "低",
    "basis_steps": "依据 {n} 个记录的步",
    "basis_few_steps": "范围内只有 {n} 个记录的步",
    "basis_short_run": "这次训练只记录了 {n} 步",
    "basis_estimate": "由其他指标估计，并非计数",
    "basis_config": "配置如此",
    "run_head": "{steps} 步（最后一步 {last}）；严重 {critical}、警告 {warning}、提示 {info}",
    "no_findings": "没有发现：这次训练没有触发任何规则",
    "config_heading": "配置（笔记第 6 节）：",
    "could_not_judge": "无法判断：",
    "could_not_judge_n": "{n} 条规则无法判断这次训练",
    "sep": "：",  # between a label and its text
    "note": "注意",
    "unknown": "未知",
    "diagnosis": "诊断",
    "language": "语言",
    "open_page": "打开 {page}",
    "no_findings_page": "没有发现：这次训练没有触发任何规则。",
    "verdict_page": "结论",
    "check_first_page": "优先检查",
    "evidence_page": "证据",
    "five_questions": "五个问题（笔记第 6 节）",
    "question": "问题",
    "answer": "回答",
    "config_keys": "依据的配置键",
    "log_key": "日志：{name}",
    "alert_new": "grposcope {sev}，第 {step} 步：{title}（{rule}）",
    "alert_checks": "{head}；优先检查：{checks}",
    "alert_cleared": "grposcope 第 {step} 步：{title}（{rule}）已不再成立",
    "list_sep": "；",
    "verdict_also": "；",
    "verdict_after": "；随后出现的都是它的后果：{v}",
    "webhook_run": "训练",
    "webhook_step": "步",
    "webhook_check_first": "优先检查",
    "webhook_stopping": "grposcope 在这一步之后停止训练",
    "webhook_open": "打开诊断页",
    "webhook_failed": "grposcope 告警：{target} 没有收下消息：{error}（试了 {tries} 次）",
    "verdict": "结论",
    "rule": "规则",
    "reason": "原因",
    "new_finding": "新发现",
    "at_step": "第 {step} 步",
    "rule_raised": "规则 {rule} 运行出错，已忽略：{reason}",
    "stop_line": "停止：{sev}发现 {rule}：{title}",
    "axis_step": "步",
    "axis_wall_time": "时间（UTC）",
    "chart_not_logged": "这次训练没有记录",
    "chart_runs": "训练",
    "chart_threshold": "阈值 {v}",
    "chart_band": "均值 ± std",
    "sum_step": "步",
    "sum_group": "group",
    "sum_prompt_id": "prompt 编号",
    "sum_responses": "回答数",
    "sum_reward_mean": "reward 均值",
    "sum_reward_std": "reward std",
    "sum_pass_frac": "答对比例",
    "reader_notes": "读取这次训练：{n} 条说明，记下读取时跳过、修复或假定的内容",
    "more_notes": "…… 另有 {n} 条（grpo-diagnose 会全部列出）",
    "report_logged": "这次训练目前记录的指标",
    "report_title": "grposcope 诊断",
    "report_head": "来源 {source} · {status} · 记录了 {steps} 步（最后一步 {last}）",
    "report_examples": "样本中的例子（模型输出，按纯文本）",
    "report_charts": ("这里没有图表（GitHub 不运行脚本，粘贴的报告旁边也放不了文件）：每条证据下面有其指标的迷你折线，"
                      "附最低值和最高值。图表见 HTML 报告（grpo-diagnose 训练目录 --format html）和仪表盘的诊断页。"),
    "report_footer": "由 grposcope 根据这次训练自己的指标、样本和配置生成。",
    # 看板的页面（dashboard/app.py、ui.py、views/）；链接里的页面名
    "page_runs": "训练列表",
    "page_checklist": "检查清单",
    "page_diagnosis": "诊断",
    "page_samples": "样本",
    "page_config": "配置",
    "page_compare": "对比",
    "page_live": "实时",
    "link_page_checklist": "检查清单",
    "link_page_diagnosis": "诊断",
    "link_page_samples": "样本",
    "link_page_config": "配置",
    "link_page_compare": "对比",
    "link_page_live": "实时",
    "link_page_runs": "训练列表",
    "param_filter": "筛选 {v}",
    "param_metric": "指标 {v}",
    "param_key": "配置键 {v}",
    "param_step": "第 {v} 步",
    "run": "训练",
    "open_runs": "打开训练",
    "runs_to_compare": "要对比的训练",
    "run_status_line": "状态：{status}（{reason}）",
    "status_running": "运行中",
    "status_finished": "已完成",
    "status_failed": "失败",
    "status_stopped": "已停止",
    "status_stale": "停滞",
    "phase_warm_start": "第一步之前的监督预热：第 {done} 步，最多 {total} 步",
    "phase_warm_start_rate": "采样 pass rate {rate}（到 {target} 即停）",
    "phase_first_rollout": "正在采样第一批 rollout",
    "in_parens": "（{v}）",  # a step range after a title or a series name
    "phase_other": "第一步之前：{name}",
    "phase_progress": "{done} / {total}",
    "choose_options": "请选择",
    "choose_option": "请选择",
    "status_unknown": "未知",
    "none": "无",
    "no_runs_under": "这些根目录下没有找到训练：{roots}",
    "pick_one": "选择一次训练来打开。",
    "pick_at_least": "至少选择 {n} 次训练。",
    "cannot_open": "无法打开训练 {key}：{error}",
    "run_caption": "{key} · 来源 {source} · {status} · 最后一步 {last} · 更新于 {ago}",
    "stopped_by_guard": "被 guard 停止",
    "read_problems": "读取这次训练时的 {n} 条说明（读取时跳过、修复或假定的内容）",
    "roots": "根目录：",
    "no_runs_yet": "还没有找到训练。用 `grpo-train --out runs/NAME` 开始一次，或用一个训练目录启动看板。",
    "filter_name": "按名称筛选",
    "col_name": "名称",
    "col_source": "来源",
    "col_status": "状态",
    "col_last_step": "最后一步",
    "col_last_update": "最后更新",
    "col_health": "健康",
    "col_error": "错误",
    "col_key": "训练键（URL）",
    "x_axis": "横轴",
    "smoothing": "平滑（EMA 权重；原始曲线仍然画出）",
    "shade_findings": "标出发现",
    "no_steps_yet": "这次训练还没有记录任何一步。",
    "focused_on": "聚焦于",
    "focus_not_logged": "这次 {source} 训练没有记录 {metric}；显示它有的图。",
    "focus_not_on_checklist": "{metric} 不在检查清单上；显示所有图。",
    "no_checklist_metrics": "这次 {source} 训练没有记录检查清单上的任何指标；它的列：{columns}",
    "missing_no_hint": "来源没有记录。",
    "missing_samples": "这次 {source} 训练没有样本（回答）：{hint}",
    "missing_config": "这次 {source} 训练没有配置：{hint}",
    "missing_other": "这次 {source} 训练没有 {what}：{hint}",
    "missing_panels": "这次 {source} 训练没有记录，因此没有画出：{names}。诊断页列出了因此无法判断的检查。",
    "list_comma": "、",
    "engine_missing": "这个安装里没有诊断引擎（dashboard.diagnosis）。",
    "download_md": "报告（Markdown）",
    "download_html": "报告（HTML，图内嵌）",
    "step": "步",
    "show": "显示",
    "top_n": "前 N 个（group 或回答）",
    "filter_all": "所有 group",
    "filter_zero_variance": "全组同分的 group（reward 全相等）",
    "filter_all_fail": "全错的 group",
    "filter_all_pass": "全对的 group",
    "filter_longest": "最长的回答",
    "filter_truncated": "被截断的回答",
    "filter_highest_reward": "reward 最高",
    "filter_lowest_reward": "reward 最低",
    "filter_zero_reward": "reward 恰为 0",
    "samples_caption": "第 {step} 步：{g} 个 group 中的 {n} 条回答",
    "samples_shown": "；显示前 {g} 个 group 中的 {n} 条（前 N 个）",
    "pass": "对",
    "fail": "错",
    "truncated_mark": " · 被截断",
    "response_line": "回答 {sample} · reward {reward} · {passed} · advantage {adv} · {tokens} 个 token{trunc}",
    "no_text": "（没有记录文本）",
    "group_line": "第 {step} 步 · group {group} · prompt 编号 {prompt} · reward std {std} · 答对比例 {frac}",
    "group_line_short": "第 {step} 步 · group {group} · prompt 编号 {prompt}",
    "col_reward": "reward",
    "col_passed": "对错",
    "col_advantage": "advantage",
    "col_tokens": "token 数",
    "col_completion": "回答",
    "no_config_no_questions": "没有配置，就无法从这次训练回答笔记第 6 节的五个问题。",
    "full_config": "完整配置",
    "col_key_name": "配置键",
    "col_value": "值",
    "linked_key_first": "链接指向的配置键排在最前：",
    "run_info": "训练信息与备注",
    "none_logs": "这些训练都没有记录：{names}",
    "config_differences": "配置差异",
    "configs_identical": "配置完全相同。",
    "questions_side_by_side": "五个问题，并排对照",
    "absent": "（无）",
    "pause": "暂停",
    "loading_runs": "正在读取各根目录下的训练（首次访问会把每次训练读一遍）……",
    "loading_health": "正在诊断 {n} 次训练，以填写健康一栏……",
    "refresh_every": "刷新间隔（秒）",
    "refresh_backoff": "每 {n} 秒刷新一次：这里刷新一次要 {took} 秒",
    "live_ended": "不再刷新：该运行已结束（{status}）",
    "live_quiet": "暂不刷新：最后一次写入在{ago}；每 {n} 秒再查看一次",
    "tile_status": "状态",
    "tile_last_step": "最后一步",
    "tile_last_update": "最后更新",
    "tile_reward": "reward 均值",
    "stale_warning": "写入方不再发送心跳：这次训练已停滞，不是在运行。",
    "guard_events": "guard：训练中的 {n} 个事件",
    "guard_new": "发现",
    "guard_cleared": "已消除",
    "guard_rule_error": "规则出错（不影响停止）",
    "guard_stop": "停止了训练",
    "guard_line_step": "第 {step} 步",
    # Runs 表的健康一栏（dashboard.text.health_label）：结论，再加发现的数目
    "health_ok": "✅ 健康",
    "health_ok_with": "🟡 健康，值得一读",
    "health_failed": "❌ 失败，指标中没有发现",
    "health_failed_with": "❌ 失败",
    "health_stopped": "🛑 被 guard 停止",
    "health_cant_judge": "还无法判断",
    "health_not_learning": "不学习",
    "health_unstable": "不稳定",
    "health_n_critical": "严重 {n}",
    "health_n_warning": "警告 {n}",
    "health_join": "、",
    "health_not_judged": "未判断",
    "health_refused": "🚫 已拒绝：未读取",
    # 没有给 ROOT，这里又没有 ./runs、也没有 sample_runs/（从 wheel 安装）时 grpo-dash 的提示
    "dash_no_runs": ("grpo-dash：没有可显示的训练：{runs} 不存在，这次安装也不带示例训练（sample_runs）。\n"
                     "  指向你的训练：grpo-dash PATH [PATH ...]   （一个存放训练的文件夹、一个训练文件夹或一个日志文件）\n"
                     "  或先开始一次训练：grpo-train --out runs/NAME，然后在这里再运行 grpo-dash"),
}

# The checklist's charts (dashboard/charts.py), by id: a chart's title (panel.KEY), its name in running text
# (short.KEY), a series' name (series.COLUMN). The notes' section 8 names them.
CHARTS: dict[str, str] = {
    "panel.reward": "raw reward：均值",
    "panel.reward+reward/std": "与 std 带",
    "panel.reward+eval/reward_mean": "，以及 eval reward",
    "panel.zero_var": "全组同分的 group 比例",
    "panel.zero_var+groups/all_pass_frac": "（全对 / 全错拆分）",
    "panel.pass_rate": "pass rate",
    "panel.length": "completion 长度（token）",
    "panel.length+completions/truncated_frac": "与截断比例（右轴）",
    "panel.entropy": "entropy（每 token 的 nats）",
    "panel.kl_ref": "参考 KL",
    "panel.clip": "clip fraction",
    "panel.clip+policy/clipfrac_low": "（low / high）",
    "panel.ratio": "第一步 ratio current/old（应为 1）",
    "panel.ratio+policy/ratio_first_step_max_dev": "；右轴为最大 |ratio - 1|",
    "short.reward": "reward 均值/std",
    "short.zero_var": "全组同分比例",
    "short.pass_rate": "pass rate",
    "short.length": "completion 长度",
    "short.entropy": "entropy",
    "short.kl_ref": "参考 KL",
    "short.clip": "clip fraction",
    "short.ratio": "第一步 ratio",
    "series.reward/mean": "reward 均值",
    "series.eval/reward_mean": "eval reward",
    "series.groups/zero_std_frac": "全组同分",
    "series.groups/all_pass_frac": "全对",
    "series.groups/all_fail_frac": "全错",
    "series.reward/pass_rate": "训练",
    "series.eval/pass_rate": "eval",
    "series.completions/len_mean": "长度均值",
    "series.completions/len_max": "长度最大值",
    "series.completions/truncated_frac": "截断比例",
    "series.policy/entropy": "entropy",
    "series.policy/kl_ref": "参考 KL",
    "series.policy/clipfrac": "clip fraction",
    "series.policy/clipfrac_low": "low",
    "series.policy/clipfrac_high": "high",
    "series.policy/ratio_first_step": "第一步 ratio",
    "series.policy/ratio_first_step_max_dev": "最大 |ratio-1|",
}

# Evidence lines (the rules' `evidence(...)` texts) as full-match patterns of the English, like TITLES: metric
# names, numbers and config keys carried over in the named groups. A group whose name starts with `how` is
# itself translated by these patterns (a clause the rules insert: how a spread or a cap was found). Specific
# patterns first: the first that matches wins.
EVIDENCE: tuple[tuple[str, str], ...] = (
    # config.py
    (r"(?P<n>\S+) optimizer steps per rollout \((?P<v>.+)\): the last ones use rollouts (?P<m>\S+) updates old",
     "每批 rollout 做 {n} 个 optimizer step（{v}）：最后几步用的是 {m} 次更新之前的 rollout"),
    (r"G = (?P<g>\S+) with (?P<k>\S+) = (?P<v>\S+): the std of so few rewards is mostly noise",
     "G = {g}，且 {k} = {v}：这么少的 reward 算出的 std 主要是噪声"),
    # consequences.py
    (r"the groups' responses come out alike \((?P<r>\S+)\): a consequence; check the sampling diversity first",
     "同一 group 的回答几乎一样（{r}）：这是它的后果；先查采样的多样性"),
    (r"begins after the run exploded at step (?P<s>\S+): a consequence; check the explosion first",
     "在训练于第 {s} 步爆炸之后才出现：是爆炸的后果；先查爆炸"),
    ((r"only (?P<n>\S+) logged step\(s\) before the run exploded at step (?P<s>\S+): mostly a consequence; "
     r"check the explosion first"), "训练在第 {s} 步爆炸之前只记录了 {n} 步：多半是爆炸的后果；先查爆炸"),
    # a collapse's or the tied groups' consequence (consequences.ROOT_WORDS): what happened and what to check
    # first are WORDS, so a new root needs only its two phrases there
    (r"begins after (?P<w>.+) at step (?P<s>\S+): a consequence; check (?P<c>.+) first",
     "在第 {s} 步{w}之后才出现：是它的后果；先查{c}"),
    ((r"only (?P<n>\S+) logged step\(s\) before (?P<w>.+) at step (?P<s>\S+): mostly a consequence; "
      r"check (?P<c>.+) first"), "在第 {s} 步{w}之前只记录了 {n} 步：多半是它的后果；先查{c}"),
    # rules/resume.py
    ((r"logged steps jump from (?P<a>\S+) to (?P<b>\S+) \(a logging stride is (?P<s>\S+)\): rows are missing, as after "
      r"a relaunch"), "记录的 step 从 {a} 跳到 {b}（记录间隔为 {s}）：缺了若干行，像是重新启动之后"),
    (r"the reader joined a resumed or restarted launch at step (?P<s>\S+)",
     "读取时在第 {s} 步接上了一次续训或重启的运行"),
    ((r"(?P<m>.+) is (?P<b>\S+) before the seam and (?P<a>\S+) after it \(> (?P<x>\S+), (?P<how>.+?)\): the engine "
      r"samples from other weights than the trainer's right after the resume"),
     "{m} 在续训前为 {b}，续训后为 {a}（> {x}，{how}）：续训一开始引擎用来采样的权重就不是训练端的权重"),
    ((r"reward (?P<b>\S+) before the seam, (?P<a>\S+) after it: a shift of (?P<d>\S+), (?P<n>\S+) times its "
      r"step-to-step noise and (?P<f>\S+) of its spread (?P<s>\S+) \((?P<how>.+)\)"),
     "reward 续训前为 {b}，续训后为 {a}：变化 {d}，是其逐步噪声的 {n} 倍、其回答间离散度 {s}（{how}）的 {f}"),
    # rules/engine_gap.py
    ((r"(?P<m>.+) sits at (?P<a>\S+) \(within numerics\) until step (?P<s>\S+), then jumps to (?P<v>\S+) at step "
      r"(?P<t>\S+) and stays \(median (?P<e>\S+) over (?P<n>\S+) logged steps\): from there the engine samples from "
      r"other weights than the trainer's"),
     ("{m} 到第 {s} 步为止都在 {a}（数值误差之内），第 {t} 步跳到 {v} 并一直保持（之后 {n} 个记录步的中位数 {e}）："
      "从那以后引擎用来采样的权重已不是训练端的权重")),
    ((r"per-response IS ratio \(a product over the response's tokens\): median (?P<x>\S+) over responses of "
      r"(?P<l>\S+) tokens on average is a per-token gap of (?P<v>\S+) nats \(\|log ratio\| / length\) > (?P<b>\S+), "
      r"beyond bf16 numerics"),
     ("按回答计的 IS ratio（回答中各 token ratio 的乘积）：中位数 {x}，回答平均 {l} 个 token，折合每个 token 差 {v} nats"
      "（|log ratio| / 长度）> {b}，超出 bf16 数值误差")),
    ((r"(?P<m>.+) grows from (?P<a>\S+) \(first steps\) to (?P<e>\S+) \(last quarter\), (?P<how>.+?), rising step "
      r"after step \(Mann-Kendall p = (?P<p>\S+)\) while the learning rate is 0: the weights did not move; numerics at "
      r"fixed weights give the same gap at every step"),
     ("{m} 从 {a}（最初几步）增长到 {e}（最后四分之一），{how}，逐步上升（Mann-Kendall p = {p}），而此时 LR 为 0："
      "权重没有变；权重不变时，数值误差每一步给出的差距都一样")),
    ((r"(?P<m>.+) grows from (?P<a>\S+) \(first steps\) to (?P<e>\S+) \(last quarter\), (?P<how>.+?), rising step "
      r"after step \(Mann-Kendall p = (?P<p>\S+)\); numerics at fixed weights give the same gap at every step"),
     ("{m} 从 {a}（最初几步）增长到 {e}（最后四分之一），{how}，逐步上升（Mann-Kendall p = {p}）；权重不变时，"
      "数值误差每一步给出的差距都一样")),
    (r"(?P<n>\S+) times", "{n} 倍"),
    (r"from 0", "从 0 起"),
    # first_step.py
    (r"(?P<m>\S+) \(log p actor - log p reference, signed\) at the first step: (?P<v>\S+)",
     "{m}（log p actor - log p reference，带符号）在第一步：{v}"),
    ((r"(?P<m>\S+) \(log p vLLM - log p trainer on vLLM's tokens, a KL estimate\): median (?P<v>\S+) > (?P<b>\S+) "
     r"nats, beyond bf16 numerics \(at the first logged step (?P<s>\S+): (?P<f>\S+)\)"),
     ("{m}（在 vLLM 的 token 上 log p vLLM - log p trainer，一种 KL 估计）：中位数 {v} > {b} nats，超出 bf16 数值误差"
     "（第一个记录的第 {s} 步：{f}）")),
    ((r"(?P<p>\S+)% of the tokens clipped at step (?P<s>\S+), TRL's first optimizer step, where the policy is the one "
     r"that sampled \(ratio 1 clips nothing\); the run's median is (?P<m>\S+)%: a level present from the on-policy "
     r"step on, not an explosion"),
     ("第 {s} 步（TRL 的第一个 optimizer step，此时 policy 就是采样的那个，ratio 1 什么也不会 clip）有 {p}% 的 token "
     "被 clip；整个训练的中位数是 {m}%：从 on-policy 的那一步起就在这个水平，不是爆炸")),
    ((r"(?P<p>\S+)% of the tokens clipped at step (?P<s>\S+), TRL's first optimizer step, where the policy is the one "
     r"that sampled \(ratio 1 clips nothing\)"),
     ("第 {s} 步（TRL 的第一个 optimizer step，此时 policy 就是采样的那个，ratio 1 什么也不会 clip）有 {p}% 的 token "
     "被 clip")),
    ((r"(?P<m>.+): median (?P<v>\S+) > (?P<b>\S+), beyond bf16 numerics \(at the first logged step (?P<s>\S+): "
     r"(?P<f>\S+)\)"), "{m}：中位数 {v} > {b}，超出 bf16 数值误差（第一个记录的第 {s} 步：{f}）"),
    ((r"at step (?P<s>\S+), (?P<v>\S+) (?P<how>.+?) with the learning rate at (?P<lr>\S+), (?P<r>\S+) of "
     r"(?P<how1>.+?): that moves at most (?P<mv>\S+) \(clip range (?P<c>\S+), (?P<how2>.+)\); over it on (?P<a>\S+) "
     r"of (?P<b>\S+) warm-up step\(s\)"),
     ("第 {s} 步 {v}{how}，而此时 LR 为 {lr}，是{how1}的 {r}：这样的 LR 最多只能移动 {mv}（clip 范围 {c}，{how2}）；"
     "{b} 个 warm-up step 中有 {a} 个超过了它")),
    (r"of the tokens clipped", " 的 token 被 clip"),
    (r"nats old-vs-current KL", " nats 的 old 与 current 之间的 KL"),
    (r"the run's largest logged learning rate (?P<v>\S+)", "训练记录到的最大 LR {v}"),
    (r"config (?P<k>\S+) = (?P<v>\S+)", "配置 {k} = {v}"),
    (r"assumed: not in the config", "假定值：配置中没有"),
    (r"from config (?P<k>.+)", "来自配置 {k}"),
    (r"clip fraction median (?P<v>\S+)", "clip fraction 中位数 {v}"),
    (r"max \|ratio - 1\| before any update: median (?P<v>\S+) > (?P<b>\S+)", "任何更新之前的最大 |ratio - 1|：中位数 {v} > {b}"),
    (r"mean first-step ratio off 1 by (?P<v>\S+) \(median\) > (?P<b>\S+)", "第一步 ratio 均值偏离 1 达 {v}（中位数）> {b}"),
    (r"rollout vs training log-probs of the same tokens differ by (?P<v>\S+) on average",
     "同一批 token 上 rollout 与训练端的 log-prob 平均相差 {v}"),
    ((r"the clip fraction is above 0 on (?P<p>\S+)% of the (?P<n>\S+) first optimizer steps of a generation batch "
     r"\((?P<how>.+)\), where the policy still equals the one that sampled"),
     "在 {n} 个生成批次的第一个 optimizer step 中，有 {p}% 的 clip fraction 大于 0（{how}），而此时 policy 仍等于采样的那个"),
    (r"(?P<v>.+): one optimizer step in (?P<p>\S+) starts a batch", "{v}：每 {p} 个 optimizer step 开始一个批次"),
    # kl.py
    ((r"KL to the reference climbs from (?P<a>\S+) at step (?P<s>\S+) to a median of (?P<m>\S+) nats per token over "
      r"steps (?P<r>\S+) \(> (?P<b>\S+), held over (?P<n>\S+) logged points, to the end of the log\): far from where "
      r"the policy started"),
     ("相对 reference 的 KL 从第 {s} 步的 {a} 一路升到第 {r} 步的中位数 {m} nats/token（> {b}，持续 {n} 个记录点，直到日志结束）："
      "policy 已远离起点")),
    ((r"KL to the reference climbs from (?P<a>\S+) at step (?P<s>\S+) to a median of (?P<m>\S+) nats per token over "
      r"steps (?P<r>\S+) \(> (?P<b>\S+), held over (?P<n>\S+) logged points\): far from where the policy started"),
     "相对 reference 的 KL 从第 {s} 步的 {a} 一路升到第 {r} 步的中位数 {m} nats/token（> {b}，持续 {n} 个记录点）：policy 已远离起点"),
    ((r"no KL term \((?P<c>.+)\): nothing holds the policy near its reference, so its KL to it measures how far the "
      r"policy went; at most a warning on its own"),
     "没有 KL 项（{c}）：没有什么把 policy 拉在参考模型附近，所以它对参考模型的 KL 只是 policy 走了多远；单凭这一点最多是警告"),
    ((r"(?P<k>\S+) = (?P<t>\S+): log-probs of logits / T make a KL about (?P<x>\S+)x what the same change shows "
      r"at T = 1; the KL bars are scaled by it"),
     "{k} = {t}：log-prob 是按 logits / T 算的，同样的变化在这里的 KL 约是 T = 1 时的 {x} 倍；KL 的阈值按此放大"),
    (r"(?P<m>\S+) jumps to (?P<v>\S+) at (?P<how_s>(?:steps? )?\S+) \(median before: (?P<p>\S+)\); (?P<how>.+)",
     "{m} 在{how_s}跳到 {v}（之前的中位数：{p}）；{how}"),
    (r"it comes back: its median over the next (?P<n>\S+) logged points falls back near the level before",
     "又回落了：其后 {n} 个记录点的中位数回到跳升之前的水平附近"),
    (r"(?P<m>\S+) jumps to (?P<v>\S+) at (?P<how_s>(?:steps? )?\S+) \(median before: (?P<p>\S+)\)",
     "{m} 在{how_s}跳到 {v}（之前的中位数：{p}）"),
    ((r"KL to the reference is already (?P<v>\S+) nats per token at step (?P<s>\S+), the first logged row, and "
      r"(?P<z>\S+)% of groups tie over the run \(median\): the policy was wrecked within its first (?P<k>\S+) "
      r"updates, before the first log"),
     "相对 reference 的 KL 在第一个记录的第 {s} 步就已是 {v} nats/token，且整个运行中 {z}% 的组得分全相同（中位数）："
     "policy 在前 {k} 次更新内、第一次记录之前就已被破坏"),
    ((r"the config does not say (?P<w>.+): a KL far from the reference may be how far the policy went, not an "
      r"explosion; at most a warning on its own"),
     "配置没有说明{w}：离参考模型很远的 KL 可能只是 policy 走了多远，而不是爆炸；单凭这一点最多是警告"),
    ((r"KL to the reference is already (?P<v>\S+) nats per token at step (?P<s>\S+), the first logged row: (?P<k>\S+) "
      r"updates do not move a policy that far from where it started"),
     "相对 reference 的 KL 在第一个记录的第 {s} 步就已是 {v} nats/token：{k} 次更新不会让 policy 离起点这么远"),
    ((r"KL to the reference is (?P<v>\S+) nats at step (?P<s>\S+), before the policy could move: a policy that starts "
     r"as its reference gives about 0 there"),
     "第 {s} 步参考 KL 就已是 {v} nats，此时 policy 还来不及变化：从参考模型出发的 policy 在这里应约为 0"),
    (r"median over the run (?P<v>\S+): a level the run starts at, not an explosion",
     "整个训练的中位数 {v}：训练一开始就处在这个水平，不是爆炸"),
    (r"reward rises by (?P<v>\S+) from step (?P<s>\S+) on \(p = (?P<p>\S+)\)", "从第 {s} 步起 reward 上升 {v}（p = {p}）"),
    # learning.py
    ((r"(?P<m>\S+) fell from (?P<a>\S+) to (?P<b>\S+) \((?P<pct>\S+)% of its level, (?P<x>\S+) times its eval-to-eval "
      r"noise (?P<w>\S+); Mann-Kendall p = (?P<p>\S+) over (?P<n>\S+) evals\) while the train reward rose \(p = (?P<rp>\S+)\)"),
     ("{m} 从 {a} 降到 {b}（占其水平的 {pct}%，是两次 eval 之间噪声 {w} 的 {x} 倍；Mann-Kendall p = {p}，共 {n} 次 eval），"
      "而训练 reward 在上升（p = {rp}）")),
    (r"(?P<m>\S+) fell from (?P<a>\S+) to (?P<b>\S+) while train reward changed by (?P<c>\S+)",
     "{m} 从 {a} 降到 {b}，而训练 reward 变化了 {c}"),
    (r"(?P<m>\S+): (?P<n>\S+) NaN/inf value\(s\), first at step (?P<s>\S+)", "{m}：{n} 个 NaN/inf 值，最早在第 {s} 步"),
    (r"KL to the reference never exceeds (?P<v>\S+): the policy did not change", "参考 KL 从未超过 {v}：policy 没有变化"),
    (r"advantage std median (?P<v>\S+)", "advantage std 中位数 {v}"),
    (r"completion length (?P<a>\S+) -> (?P<b>\S+)", "completion 长度 {a} -> {b}"),
    (r"grad norm median (?P<v>\S+) although advantages have std (?P<s>\S+): the gradient is cut",
     "grad norm 中位数 {v}，而 advantage 的 std 为 {s}：梯度被切断了"),
    (r"policy loss median (?P<v>\S+): looks ordinary", "policy loss 中位数 {v}：看似正常"),
    ((r"reward falls by (?P<v>\S+) \(95% CI (?P<a>\S+) \.\. (?P<b>\S+), Theil-Sen's and the least-squares line's "
     r"together; Mann-Kendall p = (?P<p>\S+) over (?P<n>\S+) points\) against a reward spread of (?P<s>\S+) "
     r"\((?P<how>.+)\) while the loss stays finite"),
     ("reward 下降 {v}（95% CI {a} .. {b}，Theil-Sen 与最小二乘两条线合起来；Mann-Kendall p = {p}，共 {n} 个点），"
     "而 reward 的离散程度为 {s}（{how}），loss 却一直是有限值")),
    (r"train reward (?P<v>\S+) up", "训练 reward 上升 {v}"),
    # facts.py: how the reward's spread was found
    (r"spread of a 0/1 reward at its mean pass rate (?P<p>\S+)", "0/1 reward 在其平均 pass rate {p} 处的离散程度"),
    (r"spread of every response over the run \(most steps have none\)", "整个训练所有回答的离散程度（多数步内没有差异）"),
    (r"median per-step reward std", "每步 reward std 的中位数"),
    (r"median within-group reward std", "组内 reward std 的中位数"),
    (r"robust std of the reward over steps", "各步 reward 的稳健 std"),
    (r"std of the reward over steps", "各步 reward 的 std"),
    (r"no spread logged \(taken as 1\)", "没有记录离散程度（按 1 计）"),
    # length.py
    (r"(?P<p>\S+)% of completions cut at the length cap \((?P<how>.+)\)", "{p}% 的 completion 在长度上限处被截断（{how}）"),
    (r"median over the run", "整个训练的中位数"),
    (r"median over those steps", "这些步的中位数"),
    ((r"and the reward does not move \(change (?P<c>\S+), 95% bounds (?P<a>\S+) \.\. (?P<b>\S+)\): nothing the run does "
     r"gets past the cap"), "且 reward 不动（变化 {c}，95% 界 {a} .. {b}）：训练做什么都越不过上限"),
    (r"loss aggregation (?P<k>\S+) = (?P<v>\S+)", "loss 聚合方式 {k} = {v}"),
    ((r"mean completion length (?P<v>\S+) tokens on (?P<n>\S+) logged steps, within 10% of the cap (?P<c>\S+) "
     r"\((?P<how>.+)\)"), "有 {n} 个记录的步 completion 平均长度为 {v} 个 token，距上限 {c} 不到 10%（{how}）"),
    (r"(?P<m>\S+) reaches exactly (?P<c>\S+) on (?P<n>\S+) logged steps", "{m} 在 {n} 个记录的步上恰好达到 {c}"),
    (r"config (?P<k>\S+)", "配置 {k}"),
    ((r"mean completion length grew from (?P<a>\S+) to (?P<b>\S+) tokens \(Mann-Kendall tau (?P<t>\S+), "
     r"p = (?P<p>\S+)\)"), "completion 平均长度从 {a} 增长到 {b} 个 token（Mann-Kendall tau {t}，p = {p}）"),
    (r"no completion ended on (?P<n>\S+) logged steps \((?P<m>\S+) = 0\)", "有 {n} 个记录的步没有任何 completion 正常结束（{m} = 0）"),
    (r"on (?P<a>\S+) of (?P<b>\S+) logged steps \((?P<how_s>(?:steps? )?\S+)\) completions sit at or are cut by the cap",
     "{b} 个记录的步中有 {a} 个（{how_s}）completion 顶在上限或被截断"),
    (r"truncated responses rose from (?P<a>\S+) to (?P<b>\S+)", "被截断的回答比例从 {a} 升到 {b}"),
    # policy.py
    ((r"(?P<p>\S+)% of a step's responses are one text, whatever the prompt: (?P<t>.+) answered (?P<n>\S+) different "
     r"prompts at the last step \(mode collapse\)"),
     "一步中 {p}% 的回答是同一段文本，不论 prompt 是什么：最后一步 {t} 回答了 {n} 个不同的 prompt（mode collapse）"),
    (r"(?P<p>\S+)% of groups answered with one identical text", "{p}% 的 group 所有回答完全相同"),
    (r"(?P<p>\S+)% of groups tied already at the first steps: too easy for this policy from the start",
     "最初几步就有 {p}% 的 group 全组同分：任务从一开始对这个 policy 就太容易"),
    ((r"entropy (?P<a>\S+) nats at the first steps and (?P<b>\S+) over the run: the policy is nearly deterministic from "
     r"the start, so a group's responses agree"),
     "entropy 在最初几步为 {a} nats，整个训练为 {b}：policy 从一开始就几乎是确定的，所以同组回答一致"),
    ((r"the reward's change over the run is (?P<lo>\S+) \.\. (?P<hi>\S+) \(95% bounds\): a rise is not ruled out, "
      r"so the collapse may be the policy locking in what it learns"),
     "reward 在整个运行中的变化为 {lo} .. {hi}（95% 区间）：不能排除仍在上升，熵的下降可能是 policy 在固化它学到的东西"),
    ((r"entropy fell from (?P<a>\S+) to below half of it in (?P<n>\S+) steps \((?P<how_s>(?:steps? )?\S+)\), and to "
      r"(?P<b>\S+) \((?P<p>\S+)% of its early level\) by step (?P<s>\S+)"),
     "entropy 在 {n} 步内（{how_s}）从 {a} 降到不足一半，到第 {s} 步降到 {b}（早期水平的 {p}%）"),
    # why a reward-0 response is cited (rules/samples.py, an example's `why`)
    (r"the prompt's arithmetic gives (?P<v>.+), which the response answers", "按 prompt 的算式答案是 {v}，回答给的正是它"),
    (r"the same answer to this prompt scored > 0 elsewhere", "同一 prompt 的同一答案在别处得分 > 0"),
    # a step range inside a line (build.steps_text), through a `how` group
    (r"steps (?P<a>[^-\s]+)-(?P<b>[^-\s]+)", "第 {a}-{b} 步"),
    (r"step (?P<a>\S+)", "第 {a} 步"),
    (r"sampling temperature (?P<t>\S+) < (?P<b>\S+): a group's responses come out alike",
     "采样温度 {t} < {b}：同组回答彼此相似"),
    # reward.py
    ((r"(?P<how>[^:]+): Mann-Kendall p = (?P<p>\S+) over (?P<n>\S+) "
     r"points; change (?P<c>\S+) \(95% CI (?P<a>\S+) \.\. (?P<b>\S+), Theil-Sen's and the least-squares line's "
     r"together\) against a reward spread of (?P<s>\S+) \((?P<how2>.+)\)"),
     ("{how}：Mann-Kendall p = {p}，共 {n} 个点；变化 {c}（95% CI {a} .. {b}，Theil-Sen 与最小二乘两条线合起来），"
     "而 reward 的离散程度为 {s}（{how2}）")),
    (r"no trend beyond the noise", "没有超出噪声的趋势"),
    (r"a trend too small to matter", "趋势太小，无关紧要"),
    (r"but (?P<m>\S+) rises \((?P<v>\S+), p = (?P<p>\S+)\): something is learned", "但 {m} 在上升（{v}，p = {p}）：确实学到了东西"),
    (r"every response of every step scored (?P<v>\S+) \(range (?P<r>\S+), largest in-batch std (?P<s>\S+)\)",
     "每一步的每个回答都得 {v} 分（范围 {r}，批内最大 std {s}）"),
    (r"group size G = (?P<g>\S+) < (?P<b>\S+): each group's mean and std rest on (?P<n>\S+) rewards",
     "group 大小 G = {g} < {b}：每组的 mean 和 std 只靠 {n} 个 reward"),
    ((r"(?P<p>\S+)% of responses had advantage exactly 0 on (?P<a>\S+) of (?P<b>\S+) logged steps \(windowed median\) "
      r"between steps (?P<s>\S+) and (?P<e>\S+); tied groups are not logged, and every response of one has advantage 0"),
     ("第 {s} 到 {e} 步之间，{b} 个记录的步中有 {a} 个（滑动窗口中位数）有 {p}% 的回答 advantage 恰为 0；日志没有记录全组同分的"
      "比例，而全组同分的 group 里每个回答的 advantage 都是 0")),
    ((r"(?P<p>\S+)% of groups scored all the same \(advantage 0, no signal\) on (?P<a>\S+) of (?P<b>\S+) logged steps "
     r"\(windowed median\) between steps (?P<s>\S+) and (?P<e>\S+)"),
     "第 {s} 到 {e} 步之间，{b} 个记录的步中有 {a} 个（滑动窗口中位数）有 {p}% 的 group 全组同分（advantage 为 0，没有信号）"),
    (r"on (?P<a>\S+) of (?P<b>\S+) logged steps (?P<how>.+): those updates had no signal at all",
     "{b} 个记录的步中有 {a} 个 {how}：这些更新完全没有信号"),
    ((r"on the steps where no group had spread the reward sits at the (?P<w>\S+) of its range: the groups were "
     r"(?P<g>\S+)"), "在没有任何 group 有差异的那些步上，reward 处在其范围的{w}：这些 group 都是{g}"),
    ((r"pass rate (?P<v>\S+) (?P<op>\S+) (?P<b>\S+) for (?P<n>\S+) logged steps: few groups mix successes and failures "
     r"\(from (?P<how>.+)\)"), "pass rate {v} {op} {b}，持续 {n} 个记录的步：很少有 group 同时有成有败（依据 {how}）"),
    (r"(?P<m>\S+) of a 0/1 reward \(std\^2 / p\(1-p\) = (?P<r>\S+) on (?P<n>\S+) steps\)",
     "0/1 reward 的 {m}（{n} 步上 std^2 / p(1-p) = {r}）"),
    (r"(?P<m>\S+) of a 0/1 reward \(every step's mean is k/(?P<n>\S+): (?P=n) responses a step\)",
     "0/1 reward 的 {m}（每步的均值都是 k/{n}：每步 {n} 个回答）"),
    (r"(?P<k>\S+) of (?P<n>\S+) logged steps (?P<how>.+?) \((?P<how2>.+)\)", "{n} 个记录的步中有 {k} 个{how}（{how2}）"),
    ((r"about (?P<v>\S+)% of groups tied \(advantage 0, no signal\), estimated as p\^G \+ \(1 - p\)\^G at pass rate "
      r"p = (?P<p>\S+) and G = (?P<g>\S+) \((?P<how>.+)\); tied groups are not logged"),
     ("约 {v}% 的 group 全组同分（advantage 为 0，没有信号），按 p^G + (1 - p)^G 估计，pass rate p = {p}，G = {g}（{how}）；"
      "日志没有记录全组同分的比例")),
    (r"responses a step, at least the group size", "每步的回答数，不小于 group size"),
    (r"samples: responses per group", "样本：每个 group 的回答数"),
    ((r"the reward sits at exactly (?P<v>\S+)(?P<howsp>( with no spread)?) on (?P<k>\S+) of the last (?P<n>\S+) logged "
      r"steps \((?P<pc>\S+)%\), from step (?P<s>\S+) on: every response gets the same score"),
     "从第 {s} 步起，最后 {n} 个记录的步中有 {k} 个（{pc}%）reward 恰好是 {v}{howsp}：每个回答得分都一样"),
    (r" with no spread", "，组内没有差异"),
    ((r"the reward sits at (?P<v>\S+)% of its range \(its logged min to max, or a pass rate\): saturated"),
     "reward 处在其范围（记录的 min 到 max，或 pass rate）的 {v}%：已饱和"),
    (r"largest spread a reward within its logged min and max has at its mean \(Bhatia-Davis\)",
     "reward 在记录的 min 与 max 之间、在该均值下所能有的最大离散程度（Bhatia-Davis）"),
    (r"(?P<c>.+): no group baseline, so alike responses take no signal away",
     "{c}：没有 group baseline，回答彼此相像也不会减少信号"),
    ((r"the learning rate is (?P<v>\S+) \(under (?P<f>\S+) of its peak (?P<p>\S+)\) from step (?P<s>\S+) to the last logged "
      r"step (?P<e>\S+): the last (?P<pc>\S+)% of the run updates nothing"),
     "从第 {s} 步到最后记录的第 {e} 步，学习率为 {v}（低于峰值 {p} 的 {f}）：训练的最后 {pc}% 什么也没更新"),
    ((r"(?P<a>\S+) = (?P<av>\S+) x (?P<n>\S+) = (?P<nv>\S+) / (?P<g>\S+) GPUs = (?P<sh>\S+) responses per GPU, "
      r"(?P<m>\S+) = (?P<mv>\S+): zero accumulation steps \(a micro-batch larger than a GPU's share of the mini-batch\)"),
     "{a} = {av} x {n} = {nv} / {g} 张 GPU = 每张 GPU {sh} 个回答，{m} = {mv}：梯度累积步数为 0（micro-batch 比一张 GPU 分到的 mini-batch 还大）"),
    ((r"(?P<a>\S+) = (?P<av>\S+) x (?P<n>\S+) = (?P<nv>\S+) / (?P<g>\S+) GPUs = (?P<sh>\S+) responses per GPU, "
      r"(?P<m>\S+) = (?P<mv>\S+): (?P<k>\S+) responses per GPU left out of each optimizer step"),
     "{a} = {av} x {n} = {nv} / {g} 张 GPU = 每张 GPU {sh} 个回答，{m} = {mv}：每个 optimizer step 每张 GPU 有 {k} 个回答没用上"),
    ((r"(?P<s>\S+) = (?P<sv>\S+) is not a multiple of (?P<g>\S+) = (?P<gv>\S+): an optimizer step mixes rollouts of two "
      r"generation batches, sampled by two policies"),
     "{s} = {sv} 不是 {g} = {gv} 的整数倍：一个 optimizer step 混用了两批 generation 的 rollout，它们由两个 policy 采样"),
    ((r"(?P<c>.+): the engine samples from a truncated distribution and reports its log-probs, the "
      r"trainer scores the full softmax"),
     "{c}：引擎从截断后的分布采样并报告其 log-prob，训练端用的是完整 softmax"),
    ((r"(?P<v>\S+)% of the prompts with several responses have each response under its own group id \(groups of "
      r"(?P<g>\S+) response\): e.g. step (?P<s>\S+), (?P<n>\S+) responses to one prompt under (?P<k>\S+) ids"),
     "有多个回答的 prompt 中 {v}% 的每个回答各占一个 group id（每个 group {g} 个回答）：例如第 {s} 步，一个 prompt 的 {n} 个回答分在 {k} 个 id 下"),
    (r"had no update at all", "完全没有更新"),
    (r"had no group with any reward spread", "没有任何 group 有 reward 差异"),
    (r"every group zero-variance \((?P<m>\S+) = 1\)", "每个 group 都全组同分（{m} = 1）"),
    (r"gradient norm exactly 0", "梯度范数恰为 0"),
    (r"(?P<m>\S+) exactly 0 \(no group had any spread\)", "{m} 恰为 0（没有任何 group 有差异）"),
    (r"(?P<m>\S+) exactly 0", "{m} 恰为 0"),
    (r"(?P<m>\S+) varies by (?P<v>\S+)x its mean", "{m} 的波动是其均值的 {v} 倍"),
    (r"sampling temperature (?P<t>\S+)", "采样温度 {t}"),
    # samples.py
    (r"(?P<k>\S+) of (?P<n>\S+) reward-0 responses \((?P<p>\S+)%\) look correct by a looser match",
     "{n} 条 reward 为 0 的回答中有 {k} 条（{p}%）按更宽松的匹配看是对的"),
    # the general forms last: "<label>: median v", "<metric> median v", "<metric> max v", "<label> groups: v", "k = v"
    (r"(?P<m>[^:]+): median (?P<v>\S+)", "{m}：中位数 {v}"),
    (r"(?P<m>\S+) median (?P<v>\S+)", "{m} 中位数 {v}"),
    (r"(?P<m>\S+) max (?P<v>\S+)", "{m} 最大值 {v}"),
    (r"(?P<m>\S+) groups: (?P<v>\S+)", "{m}的 group：{v}"),
    (r"(?P<k>[\w.\-/\[\]]+) = (?P<v>.+)", "{k} = {v}"),
)

# Why a rule could not judge a run (NotJudged.reason), as full-match patterns of the English.
NOT_JUDGED: tuple[tuple[str, str], ...] = (
    (r"(?P<m>\S+) is not logged by this run", "这次训练没有记录 {m}"),
    (r"(?P<m>\S+) has (?P<n>\S+) finite value\(s\); this rule needs (?P<k>\S+)", "{m} 只有 {n} 个有限值；这条规则至少需要 {k} 个"),
    (r"the config does not say both where the reward KL and the loss KL go", "配置没有同时说明 reward 的 KL 和 loss 的 KL 加在哪里"),
    (r"the config does not give the batch sizes to check", "配置没有给出可供核对的 batch 大小"),
    (r"the samples do not give step, group id and prompt", "样本没有给出 step、group 编号和 prompt"),
    ((r"neither groups/zero_std_frac nor reward/std is logged, and no pass rate with a group size to estimate the "
      r"tied groups from"), "groups/zero_std_frac 和 reward/std 都没有记录，也没有可用来估算全组同分比例的 pass rate 和 group 大小"),
    (r"the config does not give epochs or minibatches per rollout", "配置没有给出每批 rollout 的 epochs 或 minibatch 数"),
    (r"the config does not give the group size and advantage mode", "配置没有给出 group 大小和 advantage 的计算方式"),
    (r"(?P<v>.+) has no group baseline: no per-group normalisation", "{v} 没有组内 baseline：不做按组标准化"),
    (r"(?P<v>.+) has no group baseline: group statistics do not apply", "{v} 没有组内 baseline：组内统计不适用"),
    (r"no eval metric \(eval/pass_rate or eval/reward_mean\) is logged", "没有记录 eval 指标（eval/pass_rate 或 eval/reward_mean）"),
    (r"neither policy/ratio_first_step nor a framework's stand-in .*", ("既没有 policy/ratio_first_step，也没有框架的替代量"
     "（TRL 在 on-policy 步上的 clip fraction、LR warm-up 中第 1 步的 clip fraction 或 old 与 current 的 KL、推理引擎的 "
     "rollout 与训练端 log-prob 差：TRL 配 vLLM、verl、OpenRLHF、NeMo-RL、slime、AReaL、prime-rl、ms-swift 记录的那种）")),
    (r"neither policy/kl_ref nor policy/clipfrac is logged", "policy/kl_ref 和 policy/clipfrac 都没有记录"),
    (r"(?P<a>\S+) and (?P<b>\S+) are not logged", "{a} 和 {b} 都没有记录"),
    (r"neither the sampling temperature, the entropy nor sample texts are available", "采样温度、entropy 和样本文本都没有"),
    (r"optim/lr is not logged \(or on fewer than (?P<n>\S+) steps\)", "没有记录 optim/lr（或者记录的步数少于 {n}）"),
    (r"policy/kl_ref is not logged \(or only as placeholder zeros\)", "没有记录 policy/kl_ref（或者只是占位的 0）"),
    (r"the steps are row positions \(no step column\): whether the first KL to the reference comes before any update is unknown",
     "步数是行号（日志没有步数列）：第一个相对 reference 的 KL 是否在任何更新之前，无从得知"),
    (r"the first KL to the reference is logged at step (?P<s>\S+), after updates: the starting KL is unknown",
     "第一个参考 KL 记录在第 {s} 步，已经更新过了：起点的 KL 未知"),
    (r"neither the config nor the samples give the group size", "配置和样本都没有给出 group 大小"),
    (r"no pass rate: reward/pass_rate is not logged and the reward is not recognisably 0/1",
     "没有 pass rate：没有记录 reward/pass_rate，reward 也看不出是 0/1"),
    (r"neither the truncated share, the terminated length nor a length cap is known", "截断比例、正常结束的长度和长度上限都不知道"),
    (r"the run has no sample texts \(prompt, completion, reward\)", "这次训练没有样本文本（prompt、completion、reward）"),
    (r"neither groups/zero_std_frac nor reward/std is logged", "groups/zero_std_frac 和 reward/std 都没有记录"),
    (r"the early entropy level is not positive", "早期的 entropy 水平不是正数"),
    (r"the run has no metric rows", "这次训练没有任何指标行"),
    (r"the rule failed on this run: (?P<e>.+)", "这条规则在这次训练上出错：{e}"),
)

# The answers to the five configuration questions (config_questions), as full-match patterns of the English.
ANSWERS: tuple[tuple[str, str], ...] = (
    # the rarer answers (OpenRLHF, verl, a detail in parentheses), before the general patterns below
    # verl's KL placement read from its log (config_questions/verl.py), a clause after "; "
    ((r"the log has verl's KL coefficient in the reward \(critic/kl_coeff or actor/reward_kl_penalty_coeff\), which "
      r"it logs only when it subtracts the KL from the reward"),
     "日志里有 verl 的 reward 中 KL 系数（critic/kl_coeff 或 actor/reward_kl_penalty_coeff），verl 只在从 reward 里减去 KL 时才记录它"),
    ((r"verl before 0\.4 \(algorithm\.kl_ctrl and no algorithm\.use_kl_in_reward in its config\) subtracts the KL "
      r"from the reward whenever actor\.use_kl_loss is off"),
     "0.4 之前的 verl（配置里有 algorithm.kl_ctrl、没有 algorithm.use_kl_in_reward）只要 actor.use_kl_loss 关着，就从 reward 里减去 KL"),
    (r"the log has actor/kl_coef, which verl logs only when it adds the KL loss",
     "日志里有 actor/kl_coef，verl 只在加上 KL loss 时才记录它"),
    (r"not used: verl logged its KL coefficient in the reward as 0 at every step", "不用：verl 记录的 reward 中 KL 系数每一步都是 0"),
    (r"added to the loss, outside the reward", "加在 loss 上，在 reward 之外"),
    (r"folded into the reward \(per token\) \((?P<how>.+)\)", "并入 reward（逐 token；{how}）"),
    (r"folded into the reward \(subtracted per sequence\) \((?P<how>.+)\)", "并入 reward（按 sequence 减去；{how}）"),
    (r"(?P<how>.+), weighted by pi/pi_old \(bias-corrected\)", "{how}，按 pi/pi_old 加权（偏差校正）"),
    (r"(?P<e>\S+) epoch\(s\) over each rollout", "每批 rollout 训练 {e} 个 epoch"),
    (r"the optimizer steps per epoch are not known from the config \((?P<v>.+)\)",
     "配置里看不出每个 epoch 有几个 optimizer step（{v}）"),
    (r"generated without vLLM engines \(vllm_num_engines (?P<v>\S+)\)", "不经 vLLM 生成（vllm_num_engines {v}）"),
    ((r"ratio per token; loss averaged over all tokens of each micro-batch first \(token-level\), micro-batches then "
      r"averaged by gradient accumulation"), "ratio 逐 token；loss 先在每个微批次的所有 token 上平均（token 级），各微批次再由梯度累积平均"),
    ((r"loss averaged over all tokens of each micro-batch first \(token-level\), micro-batches then averaged by "
      r"gradient accumulation"), "loss 先在每个微批次的所有 token 上平均（token 级），各微批次再由梯度累积平均"),
    (r"loss averaged over each response's tokens, then over responses", "loss 先在每个回答的 token 上平均，再在回答之间平均"),
    (r"vLLM's (?:own )?log-probs feed a truncated importance-sampling correction \(threshold (?P<t>\S+)\)",
     "vLLM 的 log-prob 用于截断的重要性采样修正（阈值 {t}）"),
    (r"vLLM's (?:own )?log-probs feed a truncated importance-sampling correction",
     "vLLM 的 log-prob 用于截断的重要性采样修正"),
    (r"group mean subtracted, not divided by the std \(Dr\. GRPO\)", "减去组均值，不除以 std（Dr. GRPO）"),
    (r"epochs=(?P<e>.*), minibatches=(?P<m>.*)", "epoch 数 {e}，minibatch 数 {m}"),
    (r"estimator (?P<v>\S+)", "estimator {v}"),
    (r"per prompt group: (?P<f>.+)", "按 prompt group：{f}"),
    (r"over the whole batch: (?P<f>.+)", "按整个 batch：{f}"),
    (r"adv_estimator (?P<v>\S+)", "adv_estimator {v}"),
    (r"ratio per token; averaged over each response's tokens, then over responses \(GRPO\)",
     "ratio 逐 token；先在每个回答的 token 上平均，再在回答之间平均（GRPO）"),
    (r"ratio per token; averaged over all tokens of the global batch \(DAPO\)", "ratio 逐 token；在全局 batch 的所有 token 上平均（DAPO）"),
    (r"ratio per token; loss aggregation (?P<v>\S+)", "ratio 逐 token；loss 聚合方式 {v}"),
    (r"recomputed by the training model \(no grad\) before the update, so they match it by construction",
     "更新前由训练模型重新计算（不求梯度），因此按构造就与训练端一致"),
    ((r"taken from the rollout pass in bf16; the training side runs in fp32 \(bf16 autocast on CUDA\), so expect a "
     r"first-step ratio away from 1"), "取自 bf16 的 rollout；训练端用 fp32（CUDA 上 bf16 autocast），所以第一步 ratio 会偏离 1"),
    (r"rollouts by (?P<e>\S+) in (?P<d>\S+); verl recomputes the old log-probs with the actor before the update",
     "rollout 由 {e} 以 {d} 生成；verl 在更新前用 actor 重新计算 old log-prob"),
    (r"rollouts by (?P<e>\S+); verl recomputes the old log-probs with the actor before the update",
     "rollout 由 {e} 生成；verl 在更新前用 actor 重新计算 old log-prob"),
    (r"generated by the training model itself; old log-probs come from the same model",
     "由训练模型自己生成；old log-prob 来自同一个模型"),
    (r"added to the loss, outside the reward \((?P<how>.+)\)", "加在 loss 上，在 reward 之外（{how}）"),
    (r"added to the loss \((?P<how>.+)\)", "加在 loss 上（{how}）"),
    (r"folded into the reward \((?P<how>.+)\)", "并入 reward（{how}）"),
    (r"(?P<e>.+), coef (?P<c>\S+)", "{e}，系数 {c}"),
    (r"not used \(init_kl_coef = 0: no reference model\)", "不用（init_kl_coef = 0：没有参考模型）"),
    (r"not used \((?P<v>.+)\)", "不用（{v}）"),
    (r"folded into the reward", "并入 reward"),
    (r"subtracted per sequence", "按 sequence 减去"),
    (r"per token", "逐 token"),
    (r"adaptive coef from (?P<c>\S+), target (?P<t>\S+)", "自适应系数，从 {c} 起，目标 {t}"),
    (r"coef (?P<c>\S+)", "系数 {c}"),
    (r"both in the loss and in the reward: counted twice", "既加在 loss 上又并入 reward：算了两次"),
    # question 1: the advantage
    (r"group mean subtracted, divided by the std of the whole batch", "减去组均值，再除以整个 batch 的 std"),
    (r"group mean subtracted, not divided by any std \(Dr\. GRPO\)", "减去组均值，不除以任何 std（Dr. GRPO）"),
    (r"group mean subtracted, not divided by the std", "减去组均值，不除以 std"),
    (r"leave-one-out: r minus the mean of the group's other rewards, not divided \(RLOO\)",
     "留一法：r 减去同组其他 reward 的均值，不做除法（RLOO）"),
    (r"no group baseline: rewards whitened over the batch's action tokens \(REINFORCE\+\+\)",
     "没有组内 baseline：reward 在 batch 的 action token 上白化（REINFORCE++）"),
    (r"group mean subtracted, then whitened over the batch's action tokens \(REINFORCE\+\+-baseline\)",
     "减去组均值，再在 batch 的 action token 上白化（REINFORCE++-baseline）"),
    (r"group baseline \(adv_estimator grpo\); whether it divides by the std is not recorded",
     "组内 baseline（adv_estimator grpo）；是否除以 std 没有记录"),
    (r"then the batch mean is subtracted; whether it divides by the batch std is not recorded",
     "再减去 batch 均值；是否除以 batch std 没有记录"),
    (r"then the batch mean is subtracted, not divided by any std \(no_advantage_std_norm\)",
     "再减去 batch 均值，不除以任何 std（no_advantage_std_norm）"),
    (r"then whitened over the whole batch \(minus the batch mean, divided by the batch std\)",
     "再在整个 batch 上白化（减去 batch 均值，除以 batch std）"),
    # question 2: ratio and aggregation (joined by "; ", each part translated)
    (r"ratio per (?P<v>token|sequence)", "ratio 逐 {v}"),
    (r"sequence-level ratio \((?P<how>[^()]+)\)", "sequence-level ratio（{how}）"),
    (r"geometric mean of token ratios, GSPO", "token ratio 的几何平均，GSPO"),
    (r"ratio level unknown", "ratio 粒度未知"),
    (r"aggregation unknown", "聚合方式未知"),
    (r"loss aggregation (?P<v>\S+)", "loss 聚合方式 {v}"),
    (r"loss averaged over all tokens of the batch first \(token-level, DAPO\)", "loss 先在 batch 的所有 token 上平均（token 级，DAPO）"),
    (r"averaged over each response's tokens, then over responses \(GRPO\)", "先在每个回答的 token 上平均，再在回答之间平均（GRPO）"),
    (r"averaged over each response's tokens, then over responses", "先在每个回答的 token 上平均，再在回答之间平均"),
    (r"summed over each response's tokens, divided by a constant, then averaged over responses \(Dr\. GRPO\)",
     "在每个回答的 token 上求和，除以一个常数，再在回答之间平均（Dr. GRPO）"),
    (r"averaged over all tokens of the local batch", "在本地 batch 的所有 token 上平均"),
    (r"averaged over all tokens of the global batch \(DAPO\)", "在全局 batch 的所有 token 上平均（DAPO）"),
    (r"summed over tokens and divided by batch x max_completion_length \(Dr\. GRPO\)",
     "在 token 上求和，再除以 batch x max_completion_length（Dr. GRPO）"),
    (r"truncated completions get no loss \(overlong filtering\)", "被截断的 completion 不计 loss（overlong filtering）"),
    # question 3: old log-probs
    (r"taken from the rollout pass in (?P<d>\S+)", "取自 {d} 的 rollout"),
    (r"taken from the rollout pass", "取自 rollout"),
    (r"the training side runs in fp32 \(bf16 autocast on CUDA\), so expect a first-step ratio away from 1",
     "训练端用 fp32（CUDA 上 bf16 autocast），所以第一步 ratio 会偏离 1"),
    (r"generated by vLLM; the trainer computes the old log-probs with the training model",
     "由 vLLM 生成；trainer 用训练模型计算 old log-prob"),
    (r"no correction for vLLM/training log-prob differences", "不修正 vLLM 与训练端的 log-prob 差异"),
    (r"the actor \(training model\) recomputes the old log-probs before the update",
     "actor（训练模型）在更新前重新计算 old log-prob"),
    (r"rollouts by vLLM \((?P<n>\S+) engine\(s\)\)", "rollout 由 vLLM 生成（{n} 个 engine）"),
    (r"rollouts by (?P<e>\S+)", "rollout 由 {e} 生成"),
    (r"vLLM/training log-prob differences are not corrected \(enable_vllm_is_correction off\)",
     "vLLM 与训练端的 log-prob 差异不做修正（enable_vllm_is_correction 关闭）"),
    (r"rollout/training mismatch corrected by (?P<c>\S+) importance weights in (?P<r>.+)",
     "rollout 与训练端的不一致用 {c} 重要性权重修正，范围 {r}"),
    (r"not used", "不用"),
    (r"one optimizer step per rollout: fully on-policy", "每批 rollout 一个 optimizer step：完全 on-policy"),
    ((r"(?P<n>\S+) optimizer steps per rollout \((?P<e>\S+) epoch\(s\) x (?P<m>\S+) minibatch\(es\)\); only the first is "
     r"on-policy, the last uses rollouts (?P<k>\S+) update\(s\) old"),
     "每批 rollout {n} 个 optimizer step（{e} 个 epoch x {m} 个 minibatch）；只有第一个是 on-policy，最后一个用的是 {k} 次更新之前的 rollout"),
)

# (source, what) -> how a user of that source gets samples, a config or live updates into a run (the readers'
# hints, collectors.sources.missing_hint).
_WANDB_SAMPLES = ("wandb 的 history 只有标量；用 wandb.Table 记录的 completion 表不会被读取。要看样本，TRL 用户可以把 "
                  "collectors.trl.GrpoScopeCallback(\"runs/NAME\") 加进 trainer 的 callbacks：它会写出一个包含每条 completion 的训练目录。")
HINTS: dict[tuple[str, str], str] = {
    ("grpo", "samples"): "grpo-train 默认为每条回答写一行（除非 `log.samples` 为 false）；目前还没有写出任何一行。",
    ("grpo", "config"): "run.json 里没有配置：写入方启动时没有给配置。",
    ("tensorboard", "samples"): "TensorBoard 事件文件只有 trainer 的标量，没有回答；请用框架自己的导出记录回答"
                                "（TRL 的 log_completions、verl 的 rollout_data_dir），并改为打开那个。",
    ("tensorboard", "config"): "只有 transformers 的 TensorBoardCallback（TRL）记录的训练带有配置（`args` 文本摘要）；这些事件文件没有。",
    ("kvtext", "samples"): "键值文本日志只有每步的数字；要有回答，需要一个训练目录（collectors.RunWriter）。",
    ("kvtext", "config"): "键值文本日志不含配置；把训练用的配置以 config*.yaml（或 .json）放在它旁边，就会被读取。",
    ("text-table", "samples"): "文本里打印的指标表只有每步的数字；要有回答，需要一个训练目录（collectors.RunWriter）。",
    ("text-table", "config"): "打印的指标表不含配置；把训练用的配置以 config*.yaml（或 .json）放在它旁边，就会被读取。",
    ("generic", "samples"): "每步一行的日志只有指标；要有回答，需要一个训练目录（collectors.RunWriter）。",
    ("generic", "config"): "每步一行的日志不含配置；把训练用的配置以 config*.yaml（或 .json）放在它旁边，就会被读取。",
    ("verl", "samples"): "verl 只有在设置 `trainer.rollout_data_dir=DIR` 时才导出回答（每步一个 {step}.jsonl）；把那个目录放进"
                         "训练目录（或直接打开它），就能看到样本和全组同分的 group。",
    ("verl", "config"): "verl 的文件日志不写配置；grposcope 从训练目录中 Hydra 的 .hydra/config.yaml（outputs/<date>/<time>/）"
                        "或 main_ppo 在控制台日志里打印的配置读取；这里两者都没有。",
    ("wandb-online", "samples"): _WANDB_SAMPLES,
    ("wandb-online", "config"): "W&B 服务器上这次训练的配置是空的：调用 wandb.init 时没有传 config=...",
    ("wandb", "samples"): _WANDB_SAMPLES,
    ("wandb", "config"): "训练文件里没有配置记录：调用 wandb.init 时没有传 config=...",
    ("openrlhf", "samples"): "OpenRLHF 的控制台日志只有每步的指标和每步一条解码后的样本，没有每个 group 的回答；OpenRLHF 写的"
                             "任何文件都没有。",
    ("openrlhf", "config"): "OpenRLHF 从 0.8 起在启动时打印参数（Namespace(...)，`strategy.print(args)`）；这份日志里没有"
                            "（是节选，或是更早的版本）。它的 wandb 训练把参数保存为配置。",
    ("trl-console", "samples"): "控制台日志只有打印出来的指标；要看 completion，请用 TRL 的 `log_completions=True` 并打开输出目录，"
                                "或加上 collectors.trl.GrpoScopeCallback。",
    ("trl-console", "config"): "控制台日志里没有 grposcope 能读的配置；请打开 TRL 的输出目录（training_args.bin）。",
    ("trl", "samples"): "TRL 只有在 GRPOConfig 里设置 `log_completions=True` 时才写 completion（输出目录中的 "
                        "completions/*.parquet）；或者把 collectors.trl.GrpoScopeCallback 加进 trainer。",
    ("trl", "config"): "GRPOConfig 从 training_args.bin 读取，TRL 每次保存 checkpoint 时都会写它；这里没有找到或读不了"
                       "（见读取问题）。",
    ("trl", "live"): "TRL 只在保存 checkpoint（save_steps）时写 trainer_state.json，所以新的步到那时才出现；要每记录一步就看到，"
                     "把 collectors.trl.GrpoScopeCallback 加进 trainer。",
    ("trackio", "samples"): "trackio 只保存标量（还有媒体，不会被读取）：没有 completion。TRL 用户可以把 "
                            "collectors.trl.GrpoScopeCallback(\"runs/NAME\") 加进 trainer 的 callbacks 来保留它们。",
    ("trackio", "config"): "调用 trackio.init 时没有传 config=...（TRL 的 callback 总是传入 trainer 的参数）",
    ("swanlab", "samples"): "SwanLab 的文本媒体只有按 verl 验证日志的格式（input/output/score）写的才读作样本；这里没有。TRL 用户可以把 "
                            "collectors.trl.GrpoScopeCallback(\"runs/NAME\") 加进 trainer 的 callbacks 来保留它们。",
    ("swanlab", "config"): "这次训练没有 files/config.yaml：调用 swanlab.init 时没有传 config=...",
    ("mlflow", "samples"): "MLflow 保存标量、参数和 artifact：不会读取任何 completion。TRL 用户可以把 "
                           "collectors.trl.GrpoScopeCallback(\"runs/NAME\") 加进 trainer 的 callbacks 来保留它们。",
    ("mlflow", "config"): "这次训练没有参数：启动时没有调用 mlflow.log_params（TRL 的 callback 会记录 trainer 的参数，"
                          "超过 MLflow 长度限制的除外）",
    ("wandb-csv", "samples"): "图表导出只有画出来的指标，没有回答；训练目录（wandb/run-*）或 collectors.trl.GrpoScopeCallback "
                              "会保留它们。",
    ("wandb-csv", "config"): "图表导出里没有配置；请改为打开训练目录（wandb/run-*，其中的 config.yaml），或把配置以 "
                             "config*.yaml 放在 CSV 旁边。",
    ("tensorboard-csv", "samples"): "TensorBoard 的标量下载每个文件只有一个 tag，没有回答；训练的事件文件（logdir）里有它的文本摘要，"
                                    "collectors.trl.GrpoScopeCallback 会保留回答。",
    ("tensorboard-csv", "config"): "标量下载里没有配置；请打开 logdir 本身（它的 `args` 文本摘要），或把配置以 config*.yaml "
                                   "放在 CSV 旁边。",
    ("trl-notebook", "samples"): "notebook 的进度表只有记录的指标；TRL 的 `log_completions=True` 会把 completion 以表格打印进 "
                                 "notebook，collectors.trl.GrpoScopeCallback 会保留它们。",
    ("trl-notebook", "config"): "配置从 notebook 代码中以字面值写出的 GRPOConfig(...) 调用读取；以变量名或表达式给出的值无法得知。",
}

# Why a run key was refused, or an entry of a root not read (dashboard.paths.resolve_run, collectors.discovery),
# as full-match patterns of the English; run keys, paths and file names carried over. A group named `how` is
# itself translated by these patterns (the reason before "; runs are opened only inside the roots").
PATHS: tuple[tuple[str, str], ...] = (
    (r"(?P<how>.+); runs are opened only inside the roots: (?P<roots>.*)", "{how}；训练只在这些根目录内打开：{roots}"),
    (r"empty run name", "训练名称为空"),
    (r"a run name of (?P<n>\d+) characters refused: longer than a path can be",
     "拒绝 {n} 个字符长的训练名称：比路径所能容纳的更长"),
    (r"run (?P<key>'.*') refused: an absolute path is not allowed", "训练 {key} 已拒绝：不允许绝对路径"),
    (r"run (?P<key>'.*') refused: '\.\.', '\.' and empty parts are not allowed in a run name",
     "训练 {key} 已拒绝：训练名称中不允许 '..'、'.' 和空的部分"),
    (r"run (?P<key>'.*') refused: (?P<root>'.*') is not a configured root", "训练 {key} 已拒绝：{root} 不是已配置的根目录"),
    (r"run (?P<key>'.*') refused: it leads outside its root \(symlink\)", "训练 {key} 已拒绝：它通向根目录之外（符号链接）"),
    (r"run (?P<key>'.*') refused: (?P<link>.+) is a link that leads outside the roots: not opened",
     "训练 {key} 已拒绝：{link} 是通向根目录之外的链接，没有打开"),
    (r"run (?P<key>'.*') refused: (?P<name>.+): more than (?P<n>[\d,]+) entries below it; not read",
     "训练 {key} 已拒绝：{name} 下面超过 {n} 个条目，没有读取"),
    (r"run (?P<key>'.*') not found under (?P<root>.+)", "在 {root} 下找不到训练 {key}"),
    (r"run (?P<key>'.*') cannot be opened \((?P<how>.*)\)", "训练 {key} 无法打开（{how}）"),
    (r"a link that leads outside the roots: not opened", "通向根目录之外的链接：没有打开"),
    (r"(?P<link>.+) is a link that leads outside the roots: not opened; this run is not read",
     "{link} 是通向根目录之外的链接，没有打开；这个训练没有读取"),
    (r"more than (?P<n>[\d,]+) entries below it; not read", "下面超过 {n} 个条目，没有读取"),
    (r"a named pipe, not a regular file: skipped", "命名管道，不是普通文件：已跳过"),
    (r"a socket, not a regular file: skipped", "套接字，不是普通文件：已跳过"),
    (r"a device, not a regular file: skipped", "设备文件，不是普通文件：已跳过"),
    (r"could not be read: (?P<how>.*)", "无法读取：{how}"),
    # an unreadable file or a loop of links (collectors.oserrors.cannot_read, discovery.LOOP)
    (r"no permission to read (?P<file>.+)", "没有读取 {file} 的权限"),
    (r"(?P<file>.+) is a loop of symbolic links", "{file} 是符号链接的循环"),
    (r"cannot read (?P<file>.+) \((?P<why>[^()]*)\)", "无法读取 {file}（{why}）"),
    (r"a loop of symbolic links: not opened", "符号链接的循环：没有打开"),
    (r"(?P<link>.+) is a loop of symbolic links: not opened; this run is not read",
     "{link} 是符号链接的循环，没有打开；这个训练没有读取"),
    (r"run (?P<key>'.*') refused: (?P<link>.+) is a loop of symbolic links: not opened",
     "训练 {key} 已拒绝：{link} 是符号链接的循环，没有打开"),
)

# What a reader skipped, repaired or assumed (collectors: Problem "file: message", the run's notes), as the CLI,
# the reports and the pages print them; file names, keys and numbers carried over.
NOTES: tuple[tuple[str, str], ...] = (
    (r"(?P<f>.+?): step (?P<s>\S+): non-numeric (?P<c>.+); left null", "{f}：第 {s} 步的 {c} 不是数值；留空"),
    (r"(?P<f>.+?): not found; the run's GRPOConfig is unknown", "{f}：未找到；这次训练的 GRPOConfig 未知"),
    (r"(?P<f>.+?): step taken from the progress bar's (?P<n>\S+) counter at each printed dict",
     "{f}：step 取自每个打印出的 dict 处进度条的 {n} 计数"),
    (r"(?P<f>.+?): step taken from the `(?P<c>.+)` counter", "{f}：step 取自 `{c}` 计数"),
    (r"(?P<f>.+?): step taken from the `(?P<c>.+)` value", "{f}：step 取自 `{c}` 的值"),
    ((r"(?P<f>.+?): the same value on every row, kept as measured \(a fixed learning rate, a clip fraction never "
      r"hit\): (?P<v>.+) and (?P<n>\d+) more"),
     "{f}：每一行都是同一个值，按测量值保留（如固定的学习率、从未触发的 clip fraction）：{v}，另有 {n} 个"),
    ((r"(?P<f>.+?): the same value on every row, kept as measured \(a fixed learning rate, a clip fraction never "
      r"hit\): (?P<v>.+)"), "{f}：每一行都是同一个值，按测量值保留（如固定的学习率、从未触发的 clip fraction）：{v}"),
    ((r"(?P<f>.+?): (?P<k>.+): the same metric \((?P<m>\S+)\) under (?P<n>\d+) names; one column, the first given "
      r"in a row kept"), "{f}：{k}：同一个指标（{m}）有 {n} 个名字；合为一列，每行保留最先给出的那个"),
    (r"(?P<f>.+?): (?P<n>\d+) step\(s\) logged more than once \((?P<s>.+)\); the last write is kept",
     "{f}：{n} 个 step 被记录了不止一次（{s}）；保留最后一次写入"),
    (r"(?P<f>.+?): text, not metrics: (?P<c>.+); left out", "{f}：是文本而不是指标：{c}；未纳入"),
    (r"(?P<f>.+?): (?P<c>.+): (?P<v>\S+) on every row, so not measured; left out of the metrics",
     "{f}：{c} 每一行都是 {v}，即没有测量；不计入指标"),
    ((r"(?P<f>.+?): holds no logged step \(a launch that stopped before its first log, or only its config\); not a "
      r"run of its own"), "{f}：没有任何记录的 step（在第一次记录前就停止的启动，或只有配置）；不单独算作一次训练"),
    (r"(?P<f>.+?): holds no history records; metrics read from (?P<p>\S+) \(verl console log\)",
     "{f}：没有 history 记录；指标改从 {p} 读取（verl 控制台日志）"),
    ((r"one of (?P<n>\d+) separate launches in (?P<d>\S+) \(its files: (?P<files>.+)\); the others are runs of "
      r"their own"), "{d} 中 {n} 次独立启动之一（它的文件：{files}）；其余各自算作一次训练"),
    (r"imported from (?P<src>.+) \((?P<s>\S+)\)", "从 {src} 导入（{s}）"),
    (r"interrupted", "被中断"),
)

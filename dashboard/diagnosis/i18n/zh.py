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
    "reward_constant": "整个 run 的 reward 恒定不变",
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
    "verifier_suspect": "reward 为 0 的回答看起来是对的：检查 verifier",
    "config_kl_twice": "KL 既并入 reward 又加在 loss 上",
    "config_small_group_adv": "G < 4 仍按组除标准差",
    "config_many_reuses": "每批 rollout 上的 optimizer step 过多",
    "reference_mismatch": "第一步的参考 KL 就远离 0",
    "truncation": "大量 completion 在长度上限处被截断",
}

# rule id -> ((English title as a full-match regex, Chinese template filled with the named groups), ...)
TITLES: dict[str, tuple[tuple[str, str], ...]] = {
    "reward_flat": ((r"Reward does not move \(stays near (?P<v>.+)\)", "reward 不动（停在 {v} 附近）"),),
    "reward_constant": ((r"Reward is constant \((?P<v>.+)\) over the whole run", "整个 run 的 reward 恒为 {v}"),),
    "sparse_reward": ((r"Pass rate (?P<side>.+?): the task looks (?P<what>.+)", "pass rate {side}：任务看来{what}"),),
    "zero_variance_groups": (
        (r"Zero-variance groups dominate \(mostly (?P<top>.+)\)", "全组同分的 group 占多数（多为{top}）"),
        (r"Zero-variance groups dominate \(both all-pass and all-fail\)", "全组同分的 group 占多数（全对、全错都有）"),
        (r"Zero-variance groups dominate", "全组同分的 group 占多数"),
        (r"Zero-variance groups from solved prompts: the task saturates", "全组同分来自已解出的 prompt：任务饱和了")),
    "small_group": ((r"Group too small \(G = (?P<g>.+)\)", "group 太小（G = {g}）"),),
    "first_step_ratio": (
        (r"First-step ratio is not 1: the clip fraction is not 0 on on-policy steps",
         "第一步 ratio 不为 1：on-policy 的 step 上 clip fraction 不为 0"),
        (r"First-step ratio is not 1.*", "第一步 ratio 不为 1：old log-prob 与训练端不一致"),
        (r"The rollout engine's log-probs are far from the trainer's", "rollout engine 的 log-prob 与训练端相差很大")),
    "kl_clip_explode": ((r"KL / clip fraction explode", "KL/clip fraction 暴涨"),
                        (r"KL jumps far above its own level", "KL 跳到远高于自身水平的位置"),
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
    (r"the run has no metric rows yet", "这个 run 还没有任何指标行"),
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
    (r"reward (?P<c>\S+) over steps (?P<a>\S+)-(?P<b>\S+) \(Mann-Kendall p = (?P<p>\S+)\)",
     "第 {a}-{b} 步 reward 变化 {c}（Mann-Kendall p = {p}）"),
    (r"no trend test", "没有做趋势检验"),
    (r"almost every group tied over most of the run; the reward rises on the few updates with a signal",
     "几乎每个组在大部分训练中得分都相同（零方差组）；reward 的上升只来自少数仍有学习信号的更新"),
)

# Words an English title carries in a pattern's group, e.g. "(mostly all-fail)"; others pass as they are.
WORDS: dict[str, str] = {"all-fail": "全错", "all-pass": "全对", "near 0": "接近 0", "near 1": "接近 1",
                         "too hard, or the verifier rejects right answers": "过难，或 verifier 把正确答案判错",
                         "too easy": "过易"}

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
        "读 reward 为 0 的回答：若有答对的，就是 verifier 拒绝了正确答案（answer 字段、空白、格式、答案抽取）"),
    "reward_hacking": ("reward hacking", "读训练中 reward 最高的回答：它们是不是没有解题就拿到了 reward？"),
    "length_and_format": ("长度/格式", "把 completion 长度与截断随时间的变化和 eval 的下降对照；读最长的回答"),
    "memorising_the_training_set": (
        "训练集记忆",
        "在同一张图上比较训练与 eval 的 pass rate；差距越拉越大，说明记住的是 prompt，而不是学会了能力"),
    "learning_rate": ("LR", "LR 过大时一步就把 policy 推得很远；把 optim/lr 和 grad norm 与健康的 run 对照"),
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
    "length_limit": ("长度上限", "被截断的回答通常得 0 分；调高 max new tokens，或对超长回答显式惩罚"),
    "where_the_first_nan_inf_appears": (
        "第一个 NaN/inf 出现在哪里",
        "看它之前的 grad norm、loss 和 KL；降低 LR，检查 KL estimator 里有没有 log(0)，或除以为零的 std"),
    "serving_vs_training_numerics": (
        "serving 与 training 的数值",
        "比较 rollout engine 与训练端对同一批 token 算出的 log-prob（policy/rollout_logprob_abs_diff）"),
    "old_log_probs_belong_to_the_policy_that_sampled": (
        "old log-prob 是否属于采样时的 policy", "old log-prob 张量过时或被打乱（顺序错、padding 错）也会让 ratio 偏离 1"),
    "where_the_kl_goes": ("KL 加在哪里", "二选一：KL penalty 并入 reward，或 KL 项加在 loss 上（笔记第 6 节第 4 问）"),
    "reward_function_s_inputs": (
        "reward 函数的输入", "打印 verifier 对一条回答收到的内容：completion 文本、answer 字段及它们的类型"),
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
    "whole_run": "整个 run",
    "run_head": "{steps} 步（最后一步 {last}）；严重 {critical}、警告 {warning}、提示 {info}",
    "no_findings": "没有发现：这个 run 没有触发任何规则",
    "config_heading": "配置（笔记第 6 节）：",
    "could_not_judge": "无法判断：",
    "could_not_judge_n": "{n} 条规则无法判断这个 run",
    "sep": "：",  # between a label and its text
    "note": "注意",
    "unknown": "未知",
    "diagnosis": "诊断",
    "language": "语言",
    "open_page": "打开 {page}",
    "no_findings_page": "没有发现：这个 run 没有触发任何规则。",
    "verdict_page": "结论",
    "check_first_page": "优先检查",
    "evidence_page": "证据",
    "five_questions": "五个问题（笔记第 6 节）",
    "question": "问题",
    "answer": "回答",
    "config_keys": "依据的配置键",
    "alert_new": "grposcope {sev}，第 {step} 步：{title}（{rule}）",
    "alert_checks": "{head}；优先检查：{checks}",
    "alert_cleared": "grposcope 第 {step} 步：{title}（{rule}）已不再成立",
    "list_sep": "；",
    "verdict": "结论",
    "rule": "规则",
    "reason": "原因",
    "new_finding": "新发现",
    "at_step": "第 {step} 步",
    "rule_raised": "规则 {rule} 运行出错，已忽略：{reason}",
    "stop_line": "停止：{sev}发现 {rule}：{title}",
    "axis_step": "步",
    "axis_wall_time": "时间（UTC）",
    "chart_not_logged": "这个 run 没有记录",
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
    "report_title": "grposcope 诊断",
    "report_head": "来源 {source} · {status} · 记录了 {steps} 步（最后一步 {last}）",
    "report_examples": "样本中的例子（模型输出，按纯文本）",
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
    "status_running": "运行中",
    "status_finished": "已完成",
    "status_failed": "失败",
    "status_stopped": "已停止",
    "status_stale": "停滞",
    "status_unknown": "未知",
    "none": "无",
    "no_runs_under": "这些根目录下没有找到训练：{roots}",
    "pick_one": "选择一次训练来打开。",
    "pick_at_least": "至少选择 {n} 次训练。",
    "cannot_open": "无法打开训练 {key}：{error}",
    "run_caption": "{key} · 来源 {source} · {status} · 最后一步 {last} · 更新于 {ago}",
    "stopped_by_guard": "被 guard 停止",
    "read_problems": "读取这次训练时遇到 {n} 个问题",
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
    "refresh_every": "刷新间隔（秒）",
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
    "health_failed": "❌ 失败，指标中没有发现",
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
    "dash_no_runs": ("grpo-dash：没有可显示的 run：{runs} 不存在，这次安装也不带 sample runs。\n"
                     "  指向你的 run：grpo-dash PATH [PATH ...]   （一个存放 run 的文件夹、一个 run 文件夹或一个日志文件）\n"
                     "  或先开始一个 run：grpo-train --out runs/NAME，然后在这里再运行 grpo-dash"),
}

# The checklist's charts (dashboard/charts.py), by id: a chart's title (panel.KEY), its name in running text
# (short.KEY), a series' name (series.COLUMN). The notes' section 8 names them.
CHARTS: dict[str, str] = {
    "panel.reward": "raw reward：均值与 std 带，以及 eval reward",
    "panel.zero_var": "全组同分的 group 比例（全对 / 全错拆分）",
    "panel.pass_rate": "pass rate：训练与 eval",
    "panel.length": "completion 长度（token）与截断比例（右轴）",
    "panel.entropy": "entropy（每 token 的 nats）",
    "panel.kl_ref": "参考 KL",
    "panel.clip": "clip fraction（low / high）",
    "panel.ratio": "第一步 ratio current/old（应为 1）；右轴为最大 |ratio - 1|",
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
# names, numbers and config keys carried over in the named groups.
EVIDENCE: tuple[tuple[str, str], ...] = (
)

# Why a rule could not judge a run (NotJudged.reason), as full-match patterns of the English.
NOT_JUDGED: tuple[tuple[str, str], ...] = (
)

# The answers to the five configuration questions (config_questions), as full-match patterns of the English.
ANSWERS: tuple[tuple[str, str], ...] = (
)

# (source, what) -> how a user of that source gets samples, a config or live updates into a run (the readers'
# hints, collectors.sources.missing_hint).
HINTS: dict[tuple[str, str], str] = {
}
